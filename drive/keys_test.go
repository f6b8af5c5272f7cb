package drive

import (
	"bytes"
	"math"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// TestKeysRoundTrip: every key builder has its parser, and the parser reads back what
// the builder wrote and refuses what another builder wrote.
func TestKeysRoundTrip(t *testing.T) {
	id := protocol.IdentityID{7, 7, 7}
	a := protocol.Address{9, 9}
	all := [][]byte{
		IdentityBalanceKey(id), IdentityNonceKey(id), IdentityKeyKey(id, 3), AddressKey(a),
		BlockChangesKey(42), CompactedChangesKey(40, 45), ChangesExpiryKey(1234, 40, 45),
		StoragePoolKey(), GenesisKey(), LastBlockKey(), SupplyKey(), ProtocolVersionKey(),
		ContractKey(protocol.ContractID{5, 5}),
	}
	for i, k := range all {
		gotID, entry, index, ok := ParseIdentityKey(k)
		switch i {
		case 0:
			if !ok || gotID != id || entry != IdentityEntryBalance {
				t.Errorf("balance key parsed as %v %v %v", gotID, entry, ok)
			}
		case 1:
			if !ok || gotID != id || entry != IdentityEntryNonce {
				t.Errorf("nonce key parsed as %v %v %v", gotID, entry, ok)
			}
		case 2:
			if !ok || gotID != id || entry != IdentityEntryKey || index != 3 {
				t.Errorf("public key key parsed as %v %v %d %v", gotID, entry, index, ok)
			}
		default:
			if ok {
				t.Errorf("key %x parsed as an identity key", k)
			}
		}
		if got, ok := ParseAddressKey(k); ok != (i == 3) || (ok && got != a) {
			t.Errorf("key %x: ParseAddressKey = %v, %v", k, got, ok)
		}
		if h, ok := ParseBlockChangesKey(k); ok != (i == 4) || (ok && h != 42) {
			t.Errorf("key %x: ParseBlockChangesKey = %d, %v", k, h, ok)
		}
		if s, e, ok := ParseCompactedChangesKey(k); ok != (i == 5) || (ok && (s != 40 || e != 45)) {
			t.Errorf("key %x: ParseCompactedChangesKey = %d %d, %v", k, s, e, ok)
		}
		if c, ok := ParseContractKey(k); ok != (i == len(all)-1) || (ok && c != (protocol.ContractID{5, 5})) {
			t.Errorf("key %x: ParseContractKey = %v, %v", k, c, ok)
		}
		if x, s, e, ok := ParseChangesExpiryKey(k); ok != (i == 6) || (ok && (x != 1234 || s != 40 || e != 45)) {
			t.Errorf("key %x: ParseChangesExpiryKey = %d %d %d, %v", k, x, s, e, ok)
		}
	}
	for _, k := range all {
		if _, _, _, ok := ParseEpochKey(k); ok {
			t.Errorf("key %x parsed as an epoch key", k)
		}
		if _, _, ok := ParsePendingRefundKey(k); ok {
			t.Errorf("key %x parsed as a pending refund", k)
		}
	}
	proposer := []byte{1, 2, 3, 4}
	for _, c := range []struct {
		key      []byte
		entry    EpochEntry
		proposer []byte
	}{
		{EpochFeesKey(70000), EpochEntryFees, nil},
		{EpochStorageKey(70000), EpochEntryStorage, nil},
		{EpochPaidKey(70000), EpochEntryPaid, nil},
		{EpochProposerKey(70000, proposer), EpochEntryProposer, proposer},
	} {
		epoch, entry, p, ok := ParseEpochKey(c.key)
		if !ok || epoch != 70000 || entry != c.entry || string(p) != string(c.proposer) {
			t.Errorf("epoch key %x parsed as %d %d %x %v", c.key, epoch, entry, p, ok)
		}
		if _, _, ok := ParsePendingRefundKey(c.key); ok {
			t.Errorf("epoch key %x parsed as a pending refund", c.key)
		}
	}
	if paidIn, from, ok := ParsePendingRefundKey(PendingRefundKey(3, 9)); !ok || paidIn != 3 || from != 9 {
		t.Errorf("pending refund key parsed as %d %d %v", paidIn, from, ok)
	}
	if bytes.Compare(EpochFeesKey(255), EpochFeesKey(256)) >= 0 {
		t.Error("epoch keys do not sort by epoch")
	}
	// Big-endian heights: key order is numeric order.
	if bytes.Compare(BlockChangesKey(255), BlockChangesKey(256)) >= 0 {
		t.Error("block change keys do not sort by height")
	}
	if bytes.Compare(ChangesExpiryKey(255, 0, 0), ChangesExpiryKey(256, 0, 0)) >= 0 {
		t.Error("expiry keys do not sort by expiry time")
	}
}

// TestCompactedChangesEndingFrom: every record ending at end sorts at or after
// CompactedChangesEndingFrom(end), and before the records ending later.
func TestCompactedChangesEndingFrom(t *testing.T) {
	for _, c := range []struct{ start, end uint64 }{{0, 0}, {2, 65}, {1, math.MaxUint64 - 1}, {5, math.MaxUint64}} {
		k := CompactedChangesKey(c.start, c.end)
		from := CompactedChangesEndingFrom(c.end)
		if !bytes.HasPrefix(k, from) {
			t.Fatalf("CompactedChangesEndingFrom(%d) = %X is not a prefix of %X", c.end, from, k)
		}
		if c.end > 0 && bytes.Compare(CompactedChangesEndingFrom(c.end-1), k) >= 0 {
			t.Fatalf("the record ending at %d sorts before CompactedChangesEndingFrom(%d)", c.end, c.end-1)
		}
		if c.end < math.MaxUint64 && bytes.Compare(k, CompactedChangesEndingFrom(c.end+1)) >= 0 {
			t.Fatalf("the record ending at %d sorts after CompactedChangesEndingFrom(%d)", c.end, c.end+1)
		}
	}
}

// The time-to-live keys: the expirations tree and the lifetime pools read back, refuse
// each other and the other keys, and sort by time and epoch.
func TestTTLKeysRoundTrip(t *testing.T) {
	id := protocol.DocumentID{4, 2}
	exp, pool := ExpirationKey(1_767_225_600_000, id), LifetimePoolKey(70000, 40)
	if at, got, ok := ParseExpirationKey(exp); !ok || at != 1_767_225_600_000 || got != id {
		t.Errorf("expiration key parsed as %d %v %v", at, got, ok)
	}
	if e, l, ok := ParseLifetimePoolKey(pool); !ok || e != 70000 || l != 40 {
		t.Errorf("lifetime pool key parsed as %d %d %v", e, l, ok)
	}
	others := [][]byte{pool, LastBlockKey(), ProtocolUpgradeKey(), VersionActivatedKey(protocol.V14), LocalLimitsKey(), StoragePoolKey(), PendingRefundKey(3, 9), EpochFeesKey(70000)}
	for _, k := range others {
		if _, _, ok := ParseExpirationKey(k); ok {
			t.Errorf("key %x parsed as an expiration key", k)
		}
	}
	for _, k := range append(others[1:], exp) {
		if _, _, ok := ParseLifetimePoolKey(k); ok {
			t.Errorf("key %x parsed as a lifetime pool key", k)
		}
	}
	if _, _, _, ok := ParseEpochKey(pool); ok {
		t.Error("a lifetime pool key parsed as an epoch key")
	}
	if _, _, ok := ParsePendingRefundKey(pool); ok {
		t.Error("a lifetime pool key parsed as a pending refund")
	}
	if bytes.Compare(ExpirationKey(255, protocol.DocumentID{9}), ExpirationKey(256, protocol.DocumentID{1})) >= 0 {
		t.Error("expiration keys do not sort by expiry time first")
	}
	if bytes.Compare(LifetimePoolKey(255, 40), LifetimePoolKey(256, 1)) >= 0 {
		t.Error("lifetime pool keys do not sort by epoch first")
	}
	e := ExpirationEntry{ExpiresAtMs: 7, ID: id, Contract: protocol.ContractID{1}, Type: "note"}
	if got, ok := DecodeExpirationEntry(ExpirationKey(7, id), EncodeExpiration(e.Contract, e.Type)); !ok || got != e {
		t.Errorf("expiration entry read back as %+v %v", got, ok)
	}
	if _, ok := DecodeExpirationEntry(exp, []byte{1}); ok {
		t.Error("a value without a type name decoded")
	}
}
