package drive

import (
	"fmt"
	"math/bits"
	"strconv"
)

func u64s(n uint64) string { return strconv.FormatUint(n, 10) }

// signed is a two's-complement 128-bit integer: a sum of credits that may pass 2^64-1 or
// go below 0 on the way.
type signed struct{ hi, lo uint64 }

func (s signed) add(n uint64) signed {
	lo, carry := bits.Add64(s.lo, n, 0)
	return signed{s.hi + carry, lo}
}

func (s signed) sub(n uint64) signed {
	lo, borrow := bits.Sub64(s.lo, n, 0)
	return signed{s.hi - borrow, lo}
}

// u64 returns s when 0 <= s < 2^64.
func (s signed) u64() (uint64, bool) { return s.lo, s.hi == 0 }

func (s signed) String() string {
	if s.hi == 0 {
		return fmt.Sprint(s.lo)
	}
	if s.hi == ^uint64(0) && s.lo != 0 {
		return fmt.Sprintf("-%d", -s.lo)
	}
	return fmt.Sprintf("(hi %d, lo %d)", s.hi, s.lo)
}

// Ledger is the KV a block executes on, wrapped to follow the credits its writes move:
// every write of a record that holds credits (creditsHeld) is compared with the value it
// replaces, so the running total of credits in state changes by exactly what the block
// wrote, whoever wrote it, at the cost of the block's writes and not of the state's
// size.
type Ledger struct {
	KV
	net signed // credits the writes added, less those they removed
}

// NewLedger wraps kv.
func NewLedger(kv KV) *Ledger { return &Ledger{KV: kv} }

func (l *Ledger) account(key, value []byte) error {
	if holds, _ := creditRecord(key); !holds {
		return nil
	}
	old, err := l.KV.Get(key)
	if err != nil {
		return err
	}
	if n, negative, ok := creditsHeld(key, old); ok {
		if negative {
			l.net = l.net.add(n)
		} else {
			l.net = l.net.sub(n)
		}
	}
	if n, negative, ok := creditsHeld(key, value); ok {
		if negative {
			l.net = l.net.sub(n)
		} else {
			l.net = l.net.add(n)
		}
	}
	return nil
}

// Set writes key = value and accounts for the credits it moves.
func (l *Ledger) Set(key, value []byte) error {
	if err := l.account(key, value); err != nil {
		return err
	}
	return l.KV.Set(key, value)
}

// Delete removes key and accounts for the credits it held.
func (l *Ledger) Delete(key []byte) error {
	if err := l.account(key, nil); err != nil {
		return err
	}
	return l.KV.Delete(key)
}

// ErrCreditsNotConserved: the credits in state differ from the genesis supply, or the
// running total from a full count. A broken invariant: the node halts on it when asked
// to check (--check-invariants), and tests always check.
type ErrCreditsNotConserved struct {
	Height uint64
	// Total is the credits in state as the check counted them; Want is the supply (or,
	// for a full scan, the running total).
	Total, Want string
	What        string
}

func (e ErrCreditsNotConserved) Error() string {
	return fmt.Sprintf("credits not conserved at height %d: %s %s, want %s", e.Height, e.What, e.Total, e.Want)
}

// UpdateTotal adds the ledger's net movement to the running total kept in state and
// returns the new total. The movement is then reset. A total below 0 or past 2^64-1 is an
// ErrCreditsNotConserved.
func (l *Ledger) UpdateTotal(height uint64) (uint64, error) {
	before, err := GetU64(l.KV, TotalCreditsKey())
	if err != nil {
		return 0, err
	}
	sum := l.net
	sum = sum.add(before)
	total, ok := sum.u64()
	if !ok {
		return 0, ErrCreditsNotConserved{Height: height, What: "running total", Total: sum.String(), Want: "a value in 0..2^64-1"}
	}
	l.net = signed{}
	return total, putU64(l.KV, TotalCreditsKey(), total)
}
