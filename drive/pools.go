package drive

import (
	"bytes"
	"encoding/binary"

	"github.com/ttld-dev/ttld/protocol"
)

// CurrentEpoch is the epoch the last block was in.
type CurrentEpoch struct {
	Index       uint32
	FirstHeight uint64 // the height of the epoch's first block
	FirstTimeMs uint64 // that block's time
}

// currentEpochLen is the size of EncodeCurrentEpoch's value.
const currentEpochLen = 20

// EncodeCurrentEpoch: index u32 ++ first height u64 ++ first block time ms u64.
func EncodeCurrentEpoch(e CurrentEpoch) []byte {
	b := binary.BigEndian.AppendUint32(nil, e.Index)
	b = binary.BigEndian.AppendUint64(b, e.FirstHeight)
	return binary.BigEndian.AppendUint64(b, e.FirstTimeMs)
}

// GetCurrentEpoch returns the current epoch; ok is false before the first block.
func GetCurrentEpoch(kv KV) (e CurrentEpoch, ok bool, err error) {
	key := CurrentEpochKey()
	v, err := kv.Get(key)
	if err != nil || v == nil {
		return e, false, err
	}
	if len(v) != currentEpochLen {
		return e, false, ErrCorrupt{Key: key, Reason: "bad current epoch record"}
	}
	return CurrentEpoch{Index: binary.BigEndian.Uint32(v), FirstHeight: binary.BigEndian.Uint64(v[4:]), FirstTimeMs: binary.BigEndian.Uint64(v[12:])}, true, nil
}

// SetCurrentEpoch records the current epoch.
func SetCurrentEpoch(kv KV, e CurrentEpoch) error {
	return kv.Set(CurrentEpochKey(), EncodeCurrentEpoch(e))
}

// GetU64 reads a u64 record (a pool, a count), 0 when absent.
func GetU64(kv KV, key []byte) (uint64, error) {
	n, _, err := getU64(kv, key)
	return n, err
}

// SetU64 writes a u64 record; 0 deletes it, so an empty pool leaves no key.
func SetU64(kv KV, key []byte, n uint64) error {
	if n == 0 {
		return kv.Delete(key)
	}
	return putU64(kv, key, n)
}

// GetNextUnpaidEpoch returns the oldest epoch not yet paid out.
func GetNextUnpaidEpoch(kv KV) (uint32, error) {
	key := NextUnpaidEpochKey()
	v, err := kv.Get(key)
	if err != nil || v == nil {
		return 0, err
	}
	if len(v) != 4 {
		return 0, ErrCorrupt{Key: key, Reason: "want 4 bytes"}
	}
	return binary.BigEndian.Uint32(v), nil
}

// SetNextUnpaidEpoch records the oldest epoch not yet paid out.
func SetNextUnpaidEpoch(kv KV, epoch uint32) error {
	return kv.Set(NextUnpaidEpochKey(), binary.BigEndian.AppendUint32(nil, epoch))
}

// ProposerBlocks is how many blocks one proposer proposed in an epoch.
type ProposerBlocks struct {
	Proposer []byte
	Blocks   uint64
}

// EpochProposers returns an epoch's proposers, in key (address) order.
func EpochProposers(kv KV, epoch uint32) ([]ProposerBlocks, error) {
	prefix := EpochProposersPrefix(epoch)
	var out []ProposerBlocks
	err := kv.Iterate(prefix, PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		_, entry, proposer, ok := ParseEpochKey(k)
		if !ok || entry != EpochEntryProposer || len(v) != U64Len {
			return true, ErrCorrupt{Key: k, Reason: "bad proposer count"}
		}
		out = append(out, ProposerBlocks{Proposer: append([]byte(nil), proposer...), Blocks: binary.BigEndian.Uint64(v)})
		return false, nil
	})
	return out, err
}

// PendingRefund is storage fee paid in epoch PaidIn that owners were refunded
// (Refunded credits), to be taken back from the epochs from From on.
type PendingRefund struct {
	PaidIn, From uint32
	// StorageFee is the part of the original fees that was refunded; Refunded is what
	// the owners got for it (feeschedule.StorageRefund of each part).
	StorageFee, Refunded uint64
}

// pendingRefundLen is the size of a pending refund's value.
const pendingRefundLen = 16

// EncodePendingRefund: storage fee u64 ++ refunded u64.
func EncodePendingRefund(r PendingRefund) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, r.StorageFee), r.Refunded)
}

func decodePendingRefund(k, v []byte) (PendingRefund, error) {
	paidIn, from, ok := ParsePendingRefundKey(k)
	if !ok || len(v) != pendingRefundLen {
		return PendingRefund{}, ErrCorrupt{Key: k, Reason: "bad pending refund"}
	}
	return PendingRefund{PaidIn: paidIn, From: from, StorageFee: binary.BigEndian.Uint64(v), Refunded: binary.BigEndian.Uint64(v[8:])}, nil
}

// AddPendingRefund adds r to the pending refund of its (PaidIn, From). The sums are
// checked: they are bounded by the credits in state.
func AddPendingRefund(kv KV, r PendingRefund) error {
	key := PendingRefundKey(r.PaidIn, r.From)
	v, err := kv.Get(key)
	if err != nil {
		return err
	}
	if v != nil {
		old, err := decodePendingRefund(key, v)
		if err != nil {
			return err
		}
		if old.StorageFee+r.StorageFee < old.StorageFee || old.Refunded+r.Refunded < old.Refunded {
			return ErrCorrupt{Key: key, Reason: "pending refunds pass 2^64-1"}
		}
		r.StorageFee += old.StorageFee
		r.Refunded += old.Refunded
	}
	return kv.Set(key, EncodePendingRefund(r))
}

// PendingRefunds returns every pending refund, in key order (epoch paid in, then from).
func PendingRefunds(kv KV) ([]PendingRefund, error) {
	prefix := PendingRefundsPrefix()
	var out []PendingRefund
	err := kv.Iterate(prefix, PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		r, err := decodePendingRefund(k, v)
		if err != nil {
			return true, err
		}
		out = append(out, r)
		return false, nil
	})
	return out, err
}

// SetPayoutIdentity records the identity validator's rewards are paid to.
func SetPayoutIdentity(kv KV, validator []byte, id protocol.IdentityID) error {
	return kv.Set(PayoutIdentityKey(validator), id[:])
}

// GetPayoutIdentity returns the identity validator's rewards are paid to; ok is false
// when it has none.
func GetPayoutIdentity(kv KV, validator []byte) (id protocol.IdentityID, ok bool, err error) {
	key := PayoutIdentityKey(validator)
	v, err := kv.Get(key)
	if err != nil || v == nil {
		return id, false, err
	}
	if len(v) != protocol.IdentityIDLen {
		return id, false, ErrCorrupt{Key: key, Reason: "bad payout identity"}
	}
	copy(id[:], v)
	return id, true, nil
}

// creditRecord says whether the record at key holds credits by its key alone, and
// whether they count against the total (a pending refund: credits already returned to
// owners that the epochs' pools still hold). It is the one definition of "credits in
// state" that the ledger and the full scan share.
func creditRecord(key []byte) (holds, negative bool) {
	if len(key) == 0 {
		return false, false
	}
	switch key[0] {
	case RootIdentities:
		_, entry, _, is := ParseIdentityKey(key)
		return is && entry == IdentityEntryBalance, false
	case RootAddresses:
		_, is := ParseAddressKey(key)
		return is, false
	case RootPools:
		if bytes.Equal(key, StoragePoolKey()) {
			return true, false
		}
		if _, entry, _, is := ParseEpochKey(key); is {
			return entry == EpochEntryFees || entry == EpochEntryStorage, false
		}
		if _, _, is := ParseLifetimePoolKey(key); is {
			return true, false
		}
		_, _, is := ParsePendingRefundKey(key)
		return is, true
	}
	return false, false
}

// creditsHeld is the amount the record (key, value) holds; ok is false for a record
// that holds none (or a nil value). The amount is a value's first u64, or a pending
// refund's second (what owners were refunded).
func creditsHeld(key, value []byte) (amount uint64, negative, ok bool) {
	holds, negative := creditRecord(key)
	if !holds || len(value) < U64Len {
		return 0, false, false
	}
	if negative {
		if len(value) != pendingRefundLen {
			return 0, false, false
		}
		return binary.BigEndian.Uint64(value[8:]), true, true
	}
	return binary.BigEndian.Uint64(value), false, true
}

// PayoutValidators lists the validators that have a payout identity, by address.
func PayoutValidators(kv KV) ([][]byte, error) {
	prefix := PayoutIdentitiesPrefix()
	var out [][]byte
	err := kv.Iterate(prefix, PrefixEnd(prefix), func(k, _ []byte) (bool, error) {
		out = append(out, append([]byte(nil), k[len(prefix):]...))
		return false, nil
	})
	return out, err
}

// LifetimePool is one lifetime storage fee pool.
type LifetimePool struct {
	Epoch    uint32 // collected in
	Lifetime uint16 // epochs the storage lives
	Credits  uint64
}

// LifetimePools lists the lifetime storage fee pools collected before epoch, oldest
// first.
func LifetimePools(kv KV, before uint32) ([]LifetimePool, error) {
	var out []LifetimePool
	err := kv.Iterate(LifetimePoolsPrefix(), LifetimePoolsFrom(before), func(k, v []byte) (bool, error) {
		e, l, ok := ParseLifetimePoolKey(k)
		if !ok || len(v) != U64Len {
			return true, ErrCorrupt{Key: k, Reason: "not a lifetime storage fee pool"}
		}
		out = append(out, LifetimePool{Epoch: e, Lifetime: l, Credits: binary.BigEndian.Uint64(v)})
		return false, nil
	})
	return out, err
}
