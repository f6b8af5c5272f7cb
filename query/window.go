package query

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ttld-dev/ttld/protocol"
)

// Window selects one window of a time-range index (Time-Range Index TTL): by its start, or the
// newest or the oldest that can be queried, judged at a block time.
type Window struct {
	Index string
	// ByStart is the window's start in ms; nil with Newest or Oldest.
	ByStart        *uint64
	Newest, Oldest bool
	// StartMs is the start resolved, by ResolveWindow.
	StartMs uint64
}

// windowJSON is a window selector's form: {"index": I, "byStart": T | "newest": true |
// "oldest": true}.
type windowJSON struct {
	Index   string  `json:"index"`
	ByStart *uint64 `json:"byStart"`
	Newest  bool    `json:"newest"`
	Oldest  bool    `json:"oldest"`
}

// parseWindow reads a query's window member against type t: the index a time-range
// index of t, exactly one selector.
func parseWindow(t protocol.DocumentType, raw json.RawMessage) (*Window, protocol.Index, error) {
	var wj windowJSON
	if err := decode(raw, &wj, "index", "byStart", "newest", "oldest"); err != nil {
		return nil, protocol.Index{}, err
	}
	i := slices.IndexFunc(t.Indices, func(x protocol.Index) bool { return x.Name == wj.Index })
	if i < 0 || t.Indices[i].TimeRange == nil {
		return nil, protocol.Index{}, ErrInvalid{Kind: FieldNotIndexed, Field: "window", Reason: fmt.Sprintf("type %q has no time-range index %q", t.Name, wj.Index)}
	}
	n := 0
	for _, set := range []bool{wj.ByStart != nil, wj.Newest, wj.Oldest} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, protocol.Index{}, ErrInvalid{Kind: NotJSON, Field: "window", Reason: "a window is selected by exactly one of byStart, newest and oldest"}
	}
	return &Window{Index: wj.Index, ByStart: wj.ByStart, Newest: wj.Newest, Oldest: wj.Oldest}, t.Indices[i], nil
}

// resolveWindow sets w's start for index ix at block time nowMs:
//
//   - byStart: the start of one of the grid's windows (WrongValueType otherwise), and
//     on a ttl'd index one still queryable at nowMs (WindowExpired otherwise: Time-Range Index TTL,
//     "An expired window is not queryable at all — byStart rejects starts past the
//     horizon");
//   - newest: the latest window begun at nowMs;
//   - oldest: on a ttl'd index, the earliest window still queryable at nowMs ("The
//     relative selectors (newest / oldest) can never address an expired window at all
//     (ttl >= range guarantees it)"); a permanent index has no such bound, and oldest
//     is refused there (UnsupportedOperator).
func resolveWindow(w *Window, ix protocol.Index, nowMs uint64) error {
	r := *ix.TimeRange
	g := r.Grid()
	switch {
	case w.ByStart != nil:
		if !g.IsStart(*w.ByStart) {
			return ErrInvalid{Kind: WrongValueType, Field: "byStart", Reason: fmt.Sprintf("%d is no window start of index %q", *w.ByStart, ix.Name)}
		}
		if !queryable(r, *w.ByStart, nowMs) {
			return ErrInvalid{Kind: WindowExpired, Field: "byStart", Reason: fmt.Sprintf("the window at %d of index %q is past its ttl of %d s at %d", *w.ByStart, ix.Name, r.TTL, nowMs)}
		}
		w.StartMs = *w.ByStart
	case w.Newest:
		start, ok := newest(g, nowMs)
		if !ok {
			return ErrInvalid{Kind: WrongValueType, Field: "newest", Reason: "no window of the index has begun"}
		}
		w.StartMs = start
	default:
		if r.TTL == 0 {
			return ErrInvalid{Kind: UnsupportedOperator, Field: "oldest", Reason: fmt.Sprintf("index %q has no ttl, so no oldest window to select", ix.Name)}
		}
		step, phase, ttl := uint64(g.Step)*1000, uint64(g.Phase)*1000, uint64(r.TTL)*1000
		start := phase
		if nowMs > ttl+phase {
			// The first start at or after now - ttl: the earliest one not expired.
			start = phase + (nowMs-ttl-phase+step-1)/step*step
		}
		w.StartMs = start
	}
	return nil
}

// newest is the start of the latest window of g that has begun at nowMs (it holds
// nowMs), false before the first window.
func newest(g protocol.Grid, nowMs uint64) (uint64, bool) {
	w := g.Windows(nowMs)
	if len(w) == 0 {
		return 0, false
	}
	return w[len(w)-1], true
}

// queryable reports whether the window of r starting at startMs may be read at nowMs: a
// window of an index without a ttl always, one with a ttl until TTL seconds past its
// start, the boundary included (Time-Range Index TTL: "Entries under this index are queryable until
// ttl seconds past their bucket's start (the exact expiry boundary remains
// inclusive)"). It is the complement of TimeRange.Expired, the drain's predicate: a
// window is drained exactly when it can no longer be queried.
func queryable(r protocol.TimeRange, startMs, nowMs uint64) bool {
	return r.TTL == 0 || !r.Expired(startMs, nowMs)
}

// ResolveWindow sets the start of q's window at block time nowMs (resolveWindow); a
// query without one is left as it is.
func (q *Query) ResolveWindow(nowMs uint64) error {
	if q.Window == nil {
		return nil
	}
	return resolveWindow(q.Window, q.Index, nowMs)
}

// ResolveWindow sets the start of q's window at block time nowMs (resolveWindow).
func (q *Count) ResolveWindow(nowMs uint64) error {
	if q.Window == nil {
		return nil
	}
	return resolveWindow(q.Window, q.Index, nowMs)
}

// ResolveWindow sets the start of q's window at block time nowMs (resolveWindow).
func (q *Ranked) ResolveWindow(nowMs uint64) error {
	return resolveWindow(q.Window, q.Index, nowMs)
}
