package drive

import (
	"bytes"
	"encoding/binary"
)

// BacklogCountLimit bounds how far a drain counts the expired entries it leaves behind:
// a backlog at the limit means "at least this many". It bounds the work of counting,
// not of removing, and is not consensus data (only events and metrics report it).
const BacklogCountLimit = 10_000

// Budget bounds what one block removes from an expiry index.
type Budget struct {
	// MaxCount: at most this many entries (>= 1).
	MaxCount int
	// MaxWeight: at most this much weight in all, except that the first expired entry
	// is always removed whatever it weighs, so the index always drains.
	MaxWeight uint64
}

// DrainStats is what one drain removed and what it left.
type DrainStats struct {
	Removed    int
	WeightUsed uint64
	// Backlog counts the expired entries left for later blocks, at most
	// BacklogCountLimit.
	Backlog int
	// OldestOverdueMs is how long the oldest entry left has been due, at the drain's
	// block time; 0 when nothing expired is left.
	OldestOverdueMs uint64
}

// ExpiryIndex is an index of things that expire: its keys are Prefix ++ expires at
// (u64 big-endian, milliseconds) ++ anything, so key order is expiry order.
type ExpiryIndex struct {
	Prefix []byte
	// Weigh returns the weight of removing the entry (key, value). It may read kv.
	Weigh func(kv KV, key, value []byte) (uint64, error)
	// Remove deletes the entry and what it indexes.
	Remove func(kv KV, key, value []byte) error
}

type expired struct {
	key, value []byte
	expiresAt  uint64
}

// Drain removes the entries of idx that expire at or before nowMs, oldest first, within
// budget, and reports what it removed and what is left. It reads the expired entries
// first and removes them after, so no write happens while the index is iterated.
func Drain(kv KV, idx ExpiryIndex, nowMs uint64, budget Budget) (DrainStats, error) {
	var st DrainStats
	end := PrefixEnd(binary.BigEndian.AppendUint64(append([]byte(nil), idx.Prefix...), nowMs))
	var due []expired
	limit := budget.MaxCount + BacklogCountLimit
	err := kv.Iterate(idx.Prefix, end, func(k, v []byte) (bool, error) {
		rest, ok := bytes.CutPrefix(k, idx.Prefix)
		if !ok || len(rest) < 8 {
			return true, ErrCorrupt{Key: k, Reason: "expiry key without an expiry time"}
		}
		due = append(due, expired{key: append([]byte(nil), k...), value: append([]byte(nil), v...), expiresAt: binary.BigEndian.Uint64(rest)})
		return len(due) == limit, nil
	})
	if err != nil {
		return st, err
	}
	taken := 0
	for ; taken < len(due) && taken < budget.MaxCount; taken++ {
		w, err := idx.Weigh(kv, due[taken].key, due[taken].value)
		if err != nil {
			return st, err
		}
		if taken > 0 && (st.WeightUsed+w < st.WeightUsed || st.WeightUsed+w > budget.MaxWeight) {
			break
		}
		st.WeightUsed += w
	}
	for _, e := range due[:taken] {
		if err := idx.Remove(kv, e.key, e.value); err != nil {
			return st, err
		}
	}
	st.Removed = taken
	if left := due[taken:]; len(left) > 0 {
		st.Backlog = min(len(left), BacklogCountLimit)
		st.OldestOverdueMs = nowMs - left[0].expiresAt
	}
	return st, nil
}
