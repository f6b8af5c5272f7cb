package drive

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/ttld-dev/ttld/protocol"
)

// BalanceChange is one address's balance after the block (or the compacted range of
// blocks) that changed it.
type BalanceChange struct {
	Address protocol.Address
	Balance uint64
}

// EncodeBalanceChanges: count u32, then address[20] ++ balance u64 per change, sorted by
// address, each address once.
func EncodeBalanceChanges(changes []BalanceChange) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(changes)))
	for _, c := range changes {
		b = append(b, c.Address[:]...)
		b = binary.BigEndian.AppendUint64(b, c.Balance)
	}
	return b
}

// DecodeBalanceChanges reads a record written by EncodeBalanceChanges.
func DecodeBalanceChanges(v []byte) ([]BalanceChange, error) {
	const entry = protocol.AddressLen + 8
	if len(v) < 4 {
		return nil, fmt.Errorf("balance changes: %d bytes, want at least 4", len(v))
	}
	n := binary.BigEndian.Uint32(v)
	if uint64(len(v)-4) != uint64(n)*entry {
		return nil, fmt.Errorf("balance changes: %d entries need %d bytes, have %d", n, uint64(n)*entry, len(v)-4)
	}
	out := make([]BalanceChange, n)
	for i := range out {
		e := v[4+i*entry:]
		copy(out[i].Address[:], e[:protocol.AddressLen])
		out[i].Balance = binary.BigEndian.Uint64(e[protocol.AddressLen:])
		if i > 0 && bytes.Compare(out[i-1].Address[:], out[i].Address[:]) >= 0 {
			return nil, fmt.Errorf("balance changes: entry %d out of order", i)
		}
	}
	return out, nil
}

// SortBalanceChanges orders changes by address.
func SortBalanceChanges(changes []BalanceChange) {
	sort.Slice(changes, func(i, j int) bool {
		return bytes.Compare(changes[i].Address[:], changes[j].Address[:]) < 0
	})
}

// BlockChanges is one pending per-block record.
type BlockChanges struct {
	Height  uint64
	Changes []BalanceChange
}

// RecordBlockChanges writes the record of the balances block height changed; changes
// must be sorted by address and not empty.
func RecordBlockChanges(kv KV, height uint64, changes []BalanceChange) error {
	return kv.Set(BlockChangesKey(height), EncodeBalanceChanges(changes))
}

// PendingBlockChanges returns the per-block records not yet compacted, oldest first.
func PendingBlockChanges(kv KV) ([]BlockChanges, error) {
	prefix := BlockChangesPrefix()
	var out []BlockChanges
	err := kv.Iterate(prefix, PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		height, ok := ParseBlockChangesKey(k)
		if !ok {
			return true, ErrCorrupt{Key: k, Reason: "bad block changes key"}
		}
		changes, err := DecodeBalanceChanges(v)
		if err != nil {
			return true, ErrCorrupt{Key: k, Reason: err.Error()}
		}
		out = append(out, BlockChanges{Height: height, Changes: changes})
		return false, nil
	})
	return out, err
}

// MergeBalanceChanges merges records, oldest first, into each address's last balance.
func MergeBalanceChanges(records []BlockChanges) []BalanceChange {
	last := map[protocol.Address]uint64{}
	for _, r := range records {
		for _, c := range r.Changes {
			last[c.Address] = c.Balance
		}
	}
	out := make([]BalanceChange, 0, len(last))
	for a, b := range last {
		out = append(out, BalanceChange{Address: a, Balance: b})
	}
	SortBalanceChanges(out)
	return out
}

// CompactBlockChanges replaces the pending records (oldest first, not empty) by one
// compacted record over their heights, which expires at expiresAtMs.
func CompactBlockChanges(kv KV, records []BlockChanges, expiresAtMs uint64) error {
	start, end := records[0].Height, records[len(records)-1].Height
	for _, r := range records {
		if err := kv.Delete(BlockChangesKey(r.Height)); err != nil {
			return err
		}
	}
	if err := kv.Set(CompactedChangesKey(start, end), EncodeBalanceChanges(MergeBalanceChanges(records))); err != nil {
		return err
	}
	return kv.Set(ChangesExpiryKey(expiresAtMs, start, end), []byte{1})
}

// AddressBalanceCleanup is the expiry index of compacted address-balance records: each
// entry weighs 1, and removing it removes the record it names.
var AddressBalanceCleanup = ExpiryIndex{
	Prefix: ChangesExpiryPrefix(),
	Weigh:  func(KV, []byte, []byte) (uint64, error) { return 1, nil },
	Remove: func(kv KV, k, _ []byte) error {
		_, start, end, ok := ParseChangesExpiryKey(k)
		if !ok {
			return ErrCorrupt{Key: k, Reason: "bad expiry key"}
		}
		if err := kv.Delete(CompactedChangesKey(start, end)); err != nil {
			return err
		}
		return kv.Delete(k)
	},
}
