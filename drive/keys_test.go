package drive

import (
	"bytes"
	"math"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// keyParsers are the parsers of drive's key kinds, by name: each reports whether it
// reads the key.
var keyParsers = map[string]func(k []byte) bool{
	"identity":        func(k []byte) bool { _, _, _, ok := ParseIdentityKey(k); return ok },
	"address":         func(k []byte) bool { _, ok := ParseAddressKey(k); return ok },
	"block changes":   func(k []byte) bool { _, ok := ParseBlockChangesKey(k); return ok },
	"compacted":       func(k []byte) bool { _, _, ok := ParseCompactedChangesKey(k); return ok },
	"changes expiry":  func(k []byte) bool { _, _, _, ok := ParseChangesExpiryKey(k); return ok },
	"epoch":           func(k []byte) bool { _, _, _, ok := ParseEpochKey(k); return ok },
	"lifetime pool":   func(k []byte) bool { _, _, ok := ParseLifetimePoolKey(k); return ok },
	"pending refund":  func(k []byte) bool { _, _, ok := ParsePendingRefundKey(k); return ok },
	"contract":        func(k []byte) bool { _, ok := ParseContractKey(k); return ok },
	"document type":   func(k []byte) bool { _, ok := ParseDocumentKey(k); return ok },
	"removal":         func(k []byte) bool { _, _, _, ok := ParseRemovalKey(k); return ok },
	"expiration":      func(k []byte) bool { _, _, ok := ParseExpirationKey(k); return ok },
	"time-range grid": func(k []byte) bool { _, _, _, ok := ParseTimeRangeKey(k); return ok },
	"payout":          func(k []byte) bool { _, ok := ParsePayoutIdentityKey(k); return ok },
	"epoch signals":   func(k []byte) bool { _, ok := ParseEpochSignalsKey(k); return ok },
}

// TestEveryKeyKind: every kind of key, named, built by its builder, is read back by its
// kind's parser to what built it and refused by every other parser; the kinds without a
// parser of their own (single records) are refused by all of them.
func TestEveryKeyKind(t *testing.T) {
	id, a, c, doc := protocol.IdentityID{7, 7, 7}, protocol.Address{9, 9}, protocol.ContractID{5, 5}, protocol.DocumentID{4, 2}
	g := protocol.Grid{On: "$createdAt", Range: 7200, Step: 3600}
	proposer := []byte{1, 2, 3, 4}
	validator := bytes.Repeat([]byte{3}, ConsensusAddressLen)
	for _, kind := range []struct {
		name   string
		key    []byte
		parser string // "" for a record no parser reads
		check  func(k []byte) bool
	}{
		{"identity balance", IdentityBalanceKey(id), "identity", func(k []byte) bool {
			got, e, _, _ := ParseIdentityKey(k)
			return got == id && e == IdentityEntryBalance
		}},
		{"identity nonce", IdentityNonceKey(id), "identity", func(k []byte) bool {
			got, e, _, _ := ParseIdentityKey(k)
			return got == id && e == IdentityEntryNonce
		}},
		{"identity public key", IdentityKeyKey(id, 3), "identity", func(k []byte) bool {
			got, e, i, _ := ParseIdentityKey(k)
			return got == id && e == IdentityEntryKey && i == 3
		}},
		{"address", AddressKey(a), "address", func(k []byte) bool { got, _ := ParseAddressKey(k); return got == a }},
		{"block changes", BlockChangesKey(42), "block changes", func(k []byte) bool { h, _ := ParseBlockChangesKey(k); return h == 42 }},
		{"compacted changes", CompactedChangesKey(40, 45), "compacted", func(k []byte) bool {
			s, e, _ := ParseCompactedChangesKey(k)
			return s == 40 && e == 45
		}},
		{"changes expiry", ChangesExpiryKey(1234, 40, 45), "changes expiry", func(k []byte) bool {
			x, s, e, _ := ParseChangesExpiryKey(k)
			return x == 1234 && s == 40 && e == 45
		}},
		{"current epoch", CurrentEpochKey(), "", nil},
		{"storage pool", StoragePoolKey(), "", nil},
		{"next unpaid epoch", NextUnpaidEpochKey(), "", nil},
		{"epoch fees", EpochFeesKey(70000), "epoch", func(k []byte) bool { e, x, _, _ := ParseEpochKey(k); return e == 70000 && x == EpochEntryFees }},
		{"epoch storage", EpochStorageKey(70000), "epoch", func(k []byte) bool { e, x, _, _ := ParseEpochKey(k); return e == 70000 && x == EpochEntryStorage }},
		{"epoch paid", EpochPaidKey(70000), "epoch", func(k []byte) bool { e, x, _, _ := ParseEpochKey(k); return e == 70000 && x == EpochEntryPaid }},
		{"epoch proposer", EpochProposerKey(70000, proposer), "epoch", func(k []byte) bool {
			e, x, p, _ := ParseEpochKey(k)
			return e == 70000 && x == EpochEntryProposer && bytes.Equal(p, proposer)
		}},
		{"lifetime pool", LifetimePoolKey(70000, 40), "lifetime pool", func(k []byte) bool { e, l, _ := ParseLifetimePoolKey(k); return e == 70000 && l == 40 }},
		{"pending refund", PendingRefundKey(3, 9), "pending refund", func(k []byte) bool { p, f, _ := ParsePendingRefundKey(k); return p == 3 && f == 9 }},
		{"contract", ContractKey(c), "contract", func(k []byte) bool { got, _ := ParseContractKey(k); return got == c }},
		{"document", DocumentKey(c, "note", doc), "document type", func(k []byte) bool {
			p, _ := ParseDocumentKey(k)
			return p.Contract == c && p.Type == "note" && p.Entry == DocumentEntryDocument && p.ID == doc
		}},
		{"document history", DocumentHistoryKey(c, "note", doc, 7), "document type", func(k []byte) bool {
			p, _ := ParseDocumentKey(k)
			return p.Entry == DocumentEntryHistory && p.ID == doc && p.Revision == 7
		}},
		{"index entry", IndexEntryKey(c, "note", "byText", []byte{1, 'a'}, doc), "document type", func(k []byte) bool {
			p, _ := ParseDocumentKey(k)
			return p.Entry == DocumentEntryIndex && p.Index == "byText" && bytes.Equal(p.Values, []byte{1, 'a'}) && p.ID == doc
		}},
		{"index count", IndexCountKey(c, "note", "byText", []byte{1, 'a'}), "document type", func(k []byte) bool {
			p, _ := ParseDocumentKey(k)
			return p.Entry == DocumentEntryCount && p.Index == "byText" && bytes.Equal(p.Values, []byte{1, 'a'})
		}},
		{"window entry", WindowEntryKey(c, "like", g, 3_600_000, "trending", []byte{1, 'a'}, doc), "document type", func(k []byte) bool {
			p, _ := ParseDocumentKey(k)
			return p.Entry == DocumentEntryWindow && p.Window.Part == WindowEntry && p.Window.StartMs == 3_600_000 && p.ID == doc
		}},
		{"window count", WindowCountKey(c, "like", g, 3_600_000, "trending", []byte{1, 'a'}), "document type", func(k []byte) bool {
			p, _ := ParseDocumentKey(k)
			return p.Entry == DocumentEntryWindow && p.Window.Part == WindowCount && p.Window.Grid == g && bytes.Equal(p.Window.Values, []byte{1, 'a'})
		}},
		{"window rank", WindowRankKey(c, "like", g, 3_600_000, "trending", 12, []byte{1, 'a'}), "document type", func(k []byte) bool {
			p, _ := ParseDocumentKey(k)
			return p.Entry == DocumentEntryWindow && p.Window.Part == WindowRank && p.Window.Count == 12 && bytes.Equal(p.Window.Values, []byte{1, 'a'})
		}},
		{"removal", RemovalKey(c, "post", doc), "removal", func(k []byte) bool {
			gc, typ, gid, _ := ParseRemovalKey(k)
			return gc == c && typ == "post" && gid == doc
		}},
		{"expiration", ExpirationKey(1_767_225_600_000, doc), "expiration", func(k []byte) bool {
			at, got, _ := ParseExpirationKey(k)
			return at == 1_767_225_600_000 && got == doc
		}},
		{"time-range grid", TimeRangeKey(c, "like", g), "time-range grid", func(k []byte) bool {
			gc, typ, gg, _ := ParseTimeRangeKey(k)
			return gc == c && typ == "like" && gg == g
		}},
		{"time-range sweep", TimeRangeSweepKey(), "", nil},
		{"version activated", VersionActivatedKey(protocol.V14), "", nil},
		{"protocol upgrade", ProtocolUpgradeKey(), "", nil},
		{"genesis", GenesisKey(), "", nil},
		{"local limits", LocalLimitsKey(), "", nil},
		{"last block", LastBlockKey(), "", nil},
		{"payout", PayoutIdentityKey(validator), "payout", func(k []byte) bool { v, _ := ParsePayoutIdentityKey(k); return bytes.Equal(v, validator) }},
		{"supply", SupplyKey(), "", nil},
		{"total credits", TotalCreditsKey(), "", nil},
		{"protocol version", ProtocolVersionKey(), "", nil},
		{"next version", NextVersionKey(), "", nil},
		{"epoch signals", EpochSignalsKey(70000), "epoch signals", func(k []byte) bool { e, _ := ParseEpochSignalsKey(k); return e == 70000 }},
	} {
		for name, parse := range keyParsers {
			if got, want := parse(kind.key), name == kind.parser; got != want {
				t.Errorf("%s key %x: the %s parser reads it: %v, want %v", kind.name, kind.key, name, got, want)
			}
		}
		if kind.check != nil && !kind.check(kind.key) {
			t.Errorf("%s key %x does not read back to what built it", kind.name, kind.key)
		}
	}
	// Big-endian integers: key order is numeric order.
	for _, pair := range []struct {
		name      string
		low, high []byte
	}{
		{"epochs", EpochFeesKey(255), EpochFeesKey(256)},
		{"block changes", BlockChangesKey(255), BlockChangesKey(256)},
		{"changes expiries", ChangesExpiryKey(255, 0, 0), ChangesExpiryKey(256, 0, 0)},
		{"expirations, by time first", ExpirationKey(255, protocol.DocumentID{9}), ExpirationKey(256, protocol.DocumentID{1})},
		{"lifetime pools, by epoch first", LifetimePoolKey(255, 40), LifetimePoolKey(256, 1)},
	} {
		if bytes.Compare(pair.low, pair.high) >= 0 {
			t.Errorf("%s do not sort in numeric order", pair.name)
		}
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

// An expirations entry's value names its contract and type, read back with its key.
func TestExpirationEntryRoundTrip(t *testing.T) {
	id := protocol.DocumentID{4, 2}
	exp := ExpirationKey(1_767_225_600_000, id)
	e := ExpirationEntry{ExpiresAtMs: 7, ID: id, Contract: protocol.ContractID{1}, Type: "note"}
	if got, ok := DecodeExpirationEntry(ExpirationKey(7, id), EncodeExpiration(e.Contract, e.Type)); !ok || got != e {
		t.Errorf("expiration entry read back as %+v %v", got, ok)
	}
	if _, ok := DecodeExpirationEntry(exp, []byte{1}); ok {
		t.Error("a value without a type name decoded")
	}
}

// TestKeyPrefixes: every prefix a range is read with starts the keys it names and no
// other, and the bounds that end a range sort between the keys on either side.
func TestKeyPrefixes(t *testing.T) {
	c, doc, other := protocol.ContractID{5, 5}, protocol.DocumentID{4, 2}, protocol.DocumentID{9}
	g := protocol.Grid{On: "$createdAt", Range: 7200, Step: 3600}
	validator := bytes.Repeat([]byte{3}, ConsensusAddressLen)
	for _, p := range []struct {
		name          string
		prefix        []byte
		under, beside []byte
	}{
		{"payout identities", PayoutIdentitiesPrefix(), PayoutIdentityKey(validator), SupplyKey()},
		{"index values", IndexValuesPrefix(c, "note", "byText", []byte{1, 'a'}), IndexEntryKey(c, "note", "byText", []byte{1, 'a'}, doc), IndexEntryKey(c, "note", "byText", []byte{1, 'b'}, doc)},
		{"window values", WindowValuesPrefix(c, "like", g, 3_600_000, "trending", []byte{1, 'a'}), WindowEntryKey(c, "like", g, 3_600_000, "trending", []byte{1, 'a'}, doc), WindowEntryKey(c, "like", g, 7_200_000, "trending", []byte{1, 'a'}, doc)},
		{"removals of a type", RemovalsTypePrefix(c, "post"), RemovalKey(c, "post", doc), RemovalKey(c, "posts", other)},
		{"removals of a contract", RemovalsPrefix(c), RemovalKey(c, "post", doc), DocumentKey(c, "post", doc)},
		{"time-range grids", TimeRangesPrefix(), TimeRangeKey(c, "like", g), TimeRangeSweepKey()},
		{"lifetime pools", LifetimePoolsPrefix(), LifetimePoolKey(3, 40), PendingRefundKey(3, 4)},
		{"lifetime pools from an epoch", LifetimePoolsFrom(3), LifetimePoolKey(3, 1), LifetimePoolKey(2, 40)},
	} {
		if !bytes.HasPrefix(p.under, p.prefix) || bytes.HasPrefix(p.beside, p.prefix) {
			t.Errorf("%s: prefix %x, under it %x (%v), beside it %x (%v)", p.name, p.prefix,
				p.under, bytes.HasPrefix(p.under, p.prefix), p.beside, bytes.HasPrefix(p.beside, p.prefix))
		}
	}
	for e := uint32(1); e < 300; e += 37 {
		if from := LifetimePoolsFrom(e); bytes.Compare(LifetimePoolKey(e-1, math.MaxUint16), from) >= 0 || bytes.Compare(from, LifetimePoolKey(e, 0)) > 0 {
			t.Fatalf("LifetimePoolsFrom(%d) = %x is not between the pools of epochs %d and %d", e, from, e-1, e)
		}
	}
}
