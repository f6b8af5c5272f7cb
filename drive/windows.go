package drive

import (
	"bytes"
	"encoding/binary"
	"maps"
	"slices"

	"github.com/ttld-dev/ttld/protocol"
)

// The windows of time-range indexes (protocol version 14, Time-Range Index TTL). A time-range
// index's entries, counts and ranks live under the windows of its grid, every index of
// the type on that grid under the same window (they "share one storage level"):
//
//	WindowPrefix = DocumentTypePrefix | 'w' | grid | start ms u64
//	WindowPrefix | 'i' | index | parts | id        -> entry
//	WindowPrefix | 'n' | index | leading parts     -> count u64 ++ sum i128
//	WindowPrefix | 'r' | index | ^count u64 | parts -> rank marker
//
// grid = field u8 (1 $createdAt, 2 $updatedAt, 3 $transferredAt) | range u32 | step u32
// | phase u32, seconds; the ttl is not in it. Windows are in start order, so a grid's
// oldest window is its first key, and under a window the entries sort before the
// counts and the counts before the ranks: draining a window in key order takes the
// entries (where the mass is) first, the structure last. The keys are built and read in
// keys.go, with every other.

// Ephemeral is the value of what a ttl'd grid's windows hold besides counts: no
// storage flags (Time-Range Index TTL: "TTL'd subtrees never create refundable storage. No
// StorageFlags"), and IAVL stores no empty value. A permanent grid's entries carry
// flags like any index entry; its ranks hold this marker too.
var Ephemeral = []byte{0}

// hasWindows reports whether t has a time-range index.
func hasWindows(t protocol.DocumentType) bool {
	for _, ix := range t.Indices {
		if ix.TimeRange != nil {
			return true
		}
	}
	return false
}

// WindowItem is one entry a document has under a window of one of its type's
// time-range indexes.
type WindowItem struct {
	Index   protocol.Index
	StartMs uint64
	Values  []byte // all the index's parts
	Expired bool   // the window is past its ttl at the write's block time
}

// WindowItems lists d's entries under t's time-range indexes at block time nowMs, in
// index then window order; a window past its ttl is listed only when withExpired (what
// a removal may still find standing). A timestamp never set ($transferredAt of a
// document never transferred) lies in no window.
func WindowItems(t protocol.DocumentType, d *protocol.Document, nowMs uint64, withExpired bool) []WindowItem {
	if d == nil {
		return nil
	}
	var out []WindowItem
	for _, ix := range t.Indices {
		r := ix.TimeRange
		if r == nil {
			continue
		}
		f, _ := Field(t, r.On)
		at := FieldValue(f, *d)
		if !at.Set || at.Int <= 0 {
			continue
		}
		values, _ := IndexValues(IndexFields(t, ix), *d)
		for _, start := range r.Grid().Windows(uint64(at.Int)) {
			expired := r.Expired(start, nowMs)
			if expired && !withExpired {
				continue // Time-Range Index TTL: "Writes never target expired windows"
			}
			out = append(out, WindowItem{Index: ix, StartMs: start, Values: values, Expired: expired})
		}
	}
	return out
}

// EntryKey is the key of document id's entry in the item's window.
func (w WindowItem) EntryKey(t DocumentType, id protocol.DocumentID) []byte {
	return WindowEntryKey(t.Contract, t.Name, w.Index.TimeRange.Grid(), w.StartMs, w.Index.Name, w.Values, id)
}

// updateWindows moves d's entries, counts and ranks under t's time-range windows from
// before (nil: none) to after (nil: none) at block time s.AtMs:
//
//   - an entry before has and after has not is removed: from a window within its ttl
//     it must stand (ErrCorrupt otherwise); from an expired window, which the drain may
//     have taken in part, it is removed if it still stands and skipped if not
//     (Time-Range Index TTL: "an entry whose bucket ... the drain already took is skipped as cleanly
//     removed; one whose trees still stand is removed normally");
//   - an entry after has and before has not is written, never into an expired window;
//   - counts and sums follow in the windows within their ttl; an expired window's
//     counts and ranks are left to the drain, since no query reads them again;
//   - a ranked index's group moves to its new count.
//
// Everything under a ttl'd grid is Ephemeral: written without storage flags, its bytes
// added counted in s.Ephemeral, its removal refunding nothing. A permanent grid's
// entries are items like any index entry.
func updateWindows(kv KV, s *Storage, t DocumentType, before, after *protocol.Document) error {
	if !hasWindows(t.DocumentType) {
		return nil
	}
	old := WindowItems(t.DocumentType, before, s.AtMs, true)
	next := WindowItems(t.DocumentType, after, s.AtMs, false)
	oldKeys, nextKeys := map[string]WindowItem{}, map[string]WindowItem{}
	for _, w := range old {
		oldKeys[string(w.EntryKey(t, before.ID))] = w
	}
	for _, w := range next {
		nextKeys[string(w.EntryKey(t, after.ID))] = w
	}
	for _, k := range slices.Sorted(maps.Keys(oldKeys)) {
		if _, kept := nextKeys[k]; kept {
			continue
		}
		if err := dropWindowEntry(kv, s, []byte(k), oldKeys[k]); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(nextKeys)) {
		if _, had := oldKeys[k]; had {
			if stampsGrid(t, before, after, nextKeys[k].Index.TimeRange.On, s.AtMs) {
				windowMargin(s, t, after, []byte(k), nextKeys[k])
			}
			continue
		}
		var err error
		if nextKeys[k].Index.TimeRange.TTL > 0 {
			s.Ephemeral += uint64(len(k) + len(Ephemeral))
			err = kv.Set([]byte(k), Ephemeral)
		} else {
			err = s.putItem(kv, []byte(k), nil)
		}
		if err != nil {
			return err
		}
	}
	return updateWindowCounts(kv, s, t, before, after, old, next)
}

// stampsGrid reports whether the write from before to after sets field on, a time-range
// grid's field, to the block time atMs ($updatedAt on a change, $renewedAt on a
// renewal, $transferredAt on a transfer) from another value.
func stampsGrid(t DocumentType, before, after *protocol.Document, on string, atMs uint64) bool {
	f, _ := Field(t.DocumentType, on)
	was, now := FieldValue(f, *before), FieldValue(f, *after)
	return now.Set && uint64(now.Int) == atMs && (!was.Set || was.Int != now.Int)
}

// windowMargin counts what a write that stamps w's grid field with the block time
// (stampsGrid) adds more when, in a later block, that time lies in another window than
// the one it kept here (entry key): the entry written there and the old one removed,
// the count records of both windows, and a ranked index's ranks in both. An estimate
// made just after the last block finds the stamped time in the windows of the time
// before far more often than the block that executes it will. Ephemeral bytes under a
// ttl'd grid go to s.EphemeralMargin; a permanent grid's entry is an item
// (s.addMargin); every write counts in s.Margin.
func windowMargin(s *Storage, t DocumentType, after *protocol.Document, key []byte, w WindowItem) {
	ttl := w.Index.TimeRange.TTL > 0
	entryLen := len(Ephemeral)
	if !ttl {
		entryLen = s.itemValueLen()
		s.addMargin(uint64(len(key) + entryLen))
	} else {
		s.EphemeralMargin += uint64(len(key) + entryLen)
	}
	ops := SetCost(key, entryLen)
	ops.BytesWritten += uint64(len(key)) // the old window's entry removed
	if w.Index.Countable || w.Index.Summable != "" {
		g := w.Index.TimeRange.Grid()
		prefixes := IndexPrefixes(IndexFields(t.DocumentType, w.Index), *after)
		for i, prefix := range prefixes {
			count := WindowCountKey(t.Contract, t.Name, g, w.StartMs, w.Index.Name, prefix)
			if ttl {
				s.EphemeralMargin += uint64(len(count) + indexCountLen)
			}
			// Read and written in both windows.
			ops.Seeks += 2
			ops.BytesLoaded += 2 * uint64(len(count)+indexCountLen)
			ops = ops.Add(SetCost(count, indexCountLen)).Add(SetCost(count, indexCountLen))
			if w.Index.Ranked && i == len(prefixes)-1 {
				rank := WindowRankKey(t.Contract, t.Name, g, w.StartMs, w.Index.Name, 1, prefix)
				if ttl {
					s.EphemeralMargin += uint64(len(rank) + len(Ephemeral))
				}
				// Removed and written in both windows.
				ops.BytesWritten += 2 * uint64(len(rank))
				ops = ops.Add(SetCost(rank, len(Ephemeral))).Add(SetCost(rank, len(Ephemeral)))
			}
		}
	}
	s.Margin = s.Margin.Add(ops)
}

// dropWindowEntry removes the entry at key that w describes.
func dropWindowEntry(kv KV, s *Storage, key []byte, w WindowItem) error {
	if w.Index.TimeRange.TTL == 0 {
		return dropIndexEntry(kv, s, key)
	}
	v, err := kv.Get(key)
	if err != nil {
		return err
	}
	if v == nil {
		if w.Expired {
			return nil // drained already
		}
		return ErrCorrupt{Key: key, Reason: "the window entry of a stored document is missing from a window within its ttl"}
	}
	return kv.Delete(key)
}

// rankOf is the ranked group a window count record is the full count of.
type rankOf struct {
	grid    protocol.Grid
	startMs uint64
	index   string
	group   []byte
	ttl     bool
}

// updateWindowCounts moves the count records of the windows within their ttl from
// old's contributions (of document before) to next's (of after), and the ranks of
// ranked indexes with them.
func updateWindowCounts(kv KV, s *Storage, t DocumentType, before, after *protocol.Document, old, next []WindowItem) error {
	deltas := map[string]*countDelta{}
	ranks := map[string]rankOf{}
	ephemeralKeys := map[string]bool{}
	add := func(d *protocol.Document, items []WindowItem, sign int64) {
		for _, w := range items {
			if w.Expired || (!w.Index.Countable && w.Index.Summable == "") {
				continue
			}
			g := w.Index.TimeRange.Grid()
			prefixes := IndexPrefixes(IndexFields(t.DocumentType, w.Index), *d)
			for i, prefix := range prefixes {
				k := string(WindowCountKey(t.Contract, t.Name, g, w.StartMs, w.Index.Name, prefix))
				deltas[k] = deltas[k].add(sign, SummableValue(t.DocumentType, w.Index, *d))
				if w.Index.TimeRange.TTL > 0 {
					ephemeralKeys[k] = true
				}
				if w.Index.Ranked && i == len(prefixes)-1 {
					ranks[k] = rankOf{grid: g, startMs: w.StartMs, index: w.Index.Name, group: prefix, ttl: w.Index.TimeRange.TTL > 0}
				}
			}
		}
	}
	if before != nil {
		add(before, old, -1)
	}
	if after != nil {
		add(after, next, 1)
	}
	type move struct {
		r        rankOf
		from, to uint64
	}
	var moves []move
	err := applyCountDeltas(kv, deltas, func(key string, from, to IndexCount) {
		switch {
		case !ephemeralKeys[key]:
		case from.Count == 0:
			s.Ephemeral += uint64(len(key) + indexCountLen)
		case to.Count > 0:
			s.EphemeralMargin += uint64(len(key) + indexCountLen)
		}
		if r, ok := ranks[key]; ok && from.Count != to.Count {
			moves = append(moves, move{r, from.Count, to.Count})
		}
	})
	if err != nil {
		return err
	}
	// The ranks' removals first, then their writes, each in the order of their count
	// records.
	for _, m := range moves {
		if m.from > 0 {
			if err := kv.Delete(WindowRankKey(t.Contract, t.Name, m.r.grid, m.r.startMs, m.r.index, m.from, m.r.group)); err != nil {
				return err
			}
		}
	}
	for _, m := range moves {
		if m.to > 0 {
			key := WindowRankKey(t.Contract, t.Name, m.r.grid, m.r.startMs, m.r.index, m.to, m.r.group)
			if m.r.ttl {
				s.Ephemeral += uint64(len(key) + len(Ephemeral))
			}
			if err := kv.Set(key, Ephemeral); err != nil {
				return err
			}
		}
	}
	return nil
}

// TTLGrids returns the time ranges of t's ttl'd time-range indexes, one a grid (the
// parser refuses two ttls on one), in index order.
func TTLGrids(t protocol.DocumentType) []protocol.TimeRange {
	var out []protocol.TimeRange
	for _, ix := range t.Indices {
		r := ix.TimeRange
		if r == nil || r.TTL == 0 || slices.ContainsFunc(out, func(o protocol.TimeRange) bool { return o.Grid() == r.Grid() }) {
			continue
		}
		out = append(out, *r)
	}
	return out
}

// WindowTrees is what one document can create under one window of grid g of type t
// (Time-Range Index TTL's "trees": "everything one document can create under one bucket"): for
// each index of t on g, its entry, for a countable or summable index its count records
// (one per leading prefix, the empty one included), for a ranked one its rank. Shared
// grids count every index on them.
func WindowTrees(t protocol.DocumentType, g protocol.Grid) int {
	n := 0
	for _, ix := range t.Indices {
		if ix.TimeRange == nil || ix.TimeRange.Grid() != g {
			continue
		}
		n++
		if ix.Countable || ix.Summable != "" {
			n += len(ix.Properties) + 1
		}
		if ix.Ranked {
			n++
		}
	}
	return n
}

// DrainBudget is the keys one write into grid g of type t may drain: max(the version's
// min_time_range_ttl_drop_operations_per_write, 2 × overlap × trees).
//
// The bound it keeps (Time-Range Index TTL: "cleanup has capacity above the maximum tree creation
// rate"): a write creates at most overlap × trees keys under g (trees keys in each of
// the overlap windows it lies in, WindowTrees), and every write into g drains up to
// twice that. So over any run of writes the drain can remove at least twice what those
// writes create: every key standing in an expired window is drained after at most
// (expired keys standing) / (2 × overlap × trees) further writes, whatever the writes
// in between add, and the expired backlog never grows while writes continue. A drop
// operation here is one key removed (IAVL has no subtree drop), so the budget counts
// keys.
func DrainBudget(t protocol.DocumentType, g protocol.Grid, lim protocol.Limits) int {
	return max(lim.MinTimeRangeTTLDropOperationsPerWrite, 2*g.Overlap()*WindowTrees(t, g))
}

// DrainWindows drains the expired windows of grid g of type t at block time nowMs,
// oldest first and, under a window, in key order (the entries, then the counts, then
// the ranks), removing at most budget keys. It reads the grid's first key to find its
// oldest window, and stops at the first window within its ttl (Time-Range Index TTL: "When nothing
// is expired, the check is a single bounded range read"). It returns the keys removed.
// The caller bills none of it.
func DrainWindows(kv KV, t DocumentType, r protocol.TimeRange, nowMs uint64, budget int) (int, error) {
	g := r.Grid()
	prefix := WindowsPrefix(t.Contract, t.Name, g)
	removed := 0
	for removed < budget {
		var keys [][]byte
		var window []byte
		err := kv.Iterate(prefix, PrefixEnd(prefix), func(k, _ []byte) (bool, error) {
			if window == nil {
				start := binary.BigEndian.Uint64(k[len(prefix):])
				if !r.Expired(start, nowMs) {
					return true, nil
				}
				window = k[:len(prefix)+8]
			} else if !bytes.HasPrefix(k, window) {
				return true, nil
			}
			keys = append(keys, append([]byte(nil), k...))
			return len(keys) >= budget-removed, nil
		})
		if err != nil {
			return removed, err
		}
		if len(keys) == 0 {
			return removed, nil
		}
		for _, k := range keys {
			if err := kv.Delete(k); err != nil {
				return removed, err
			}
		}
		removed += len(keys)
	}
	return removed, nil
}

// RegisterTimeRanges writes the registry entries of t's ttl'd grids and returns the
// bytes (keys and values) written.
func RegisterTimeRanges(kv KV, c protocol.ContractID, t protocol.DocumentType) (int, error) {
	n := 0
	for _, r := range TTLGrids(t) {
		k := TimeRangeKey(c, t.Name, r.Grid())
		if err := kv.Set(k, binary.BigEndian.AppendUint32(nil, r.TTL)); err != nil {
			return n, err
		}
		n += len(k) + 4
	}
	return n, nil
}

// SweepWindows is the epoch sweep (docs/STATE.md, "Time-range windows"; the backstop
// Time-Range Index TTL leaves as residue: "An epoch-transition sweep could provide a
// backstop"): it drains the expired
// windows of the registered ttl'd grids at block time nowMs, grid after grid in
// registry order from where the last sweep stopped, wrapping round once, at most
// budget keys in all and maxGrids grids (so its reads are bounded however large the
// registry grows), and records where it stopped. It returns the keys removed and the
// grids it visited. Nobody is billed.
func SweepWindows(kv KV, nowMs uint64, budget, maxGrids int) (removed, visited int, err error) {
	prefix := TimeRangesPrefix()
	start, err := kv.Get(TimeRangeSweepKey())
	if err != nil {
		return 0, 0, err
	}
	if start == nil {
		start = prefix
	}
	type grid struct {
		key []byte
		ttl uint32
	}
	// The registry from start to its end, then from its beginning up to start.
	var order []grid
	// One more than the grids visited: the key the next sweep starts at.
	collect := func(from, to []byte) error {
		return kv.Iterate(from, to, func(k, v []byte) (bool, error) {
			if len(v) != 4 {
				return true, ErrCorrupt{Key: k, Reason: "a registry entry that is no ttl"}
			}
			order = append(order, grid{key: bytes.Clone(k), ttl: binary.BigEndian.Uint32(v)})
			return len(order) > maxGrids, nil
		})
	}
	if err := collect(start, PrefixEnd(prefix)); err != nil {
		return 0, 0, err
	}
	if !bytes.Equal(start, prefix) && len(order) <= maxGrids {
		if err := collect(prefix, start); err != nil {
			return 0, 0, err
		}
	}
	next := []byte(nil)
	for i, g := range order {
		if removed >= budget || visited == maxGrids {
			next = g.key
			break
		}
		c, typeName, gr, ok := ParseTimeRangeKey(g.key)
		if !ok {
			return removed, visited, ErrCorrupt{Key: g.key, Reason: "not a time-range registry key"}
		}
		t := DocumentType{Contract: c, DocumentType: protocol.DocumentType{Name: typeName}}
		r := protocol.TimeRange{On: gr.On, Range: gr.Range, Step: gr.Step, Phase: gr.Phase, TTL: g.ttl}
		n, err := DrainWindows(kv, t, r, nowMs, budget-removed)
		if err != nil {
			return removed, visited, err
		}
		removed += n
		visited++
		if removed >= budget && i+1 < len(order) {
			next = g.key // it may hold more: start there next time
			break
		}
	}
	if next == nil {
		return removed, visited, kv.Delete(TimeRangeSweepKey())
	}
	return removed, visited, kv.Set(TimeRangeSweepKey(), next)
}

// GridBacklog is how many keys stand in the expired windows of one registered grid.
type GridBacklog struct {
	Contract protocol.ContractID
	Type     string
	Grid     protocol.Grid
	// Keys is counted up to the caller's cap; Capped says the count stopped there.
	Keys   int
	Capped bool
}

// ExpiredBacklog counts, for the first maxGrids registered ttl'd grids, the keys
// standing in their windows past the ttl at nowMs, each count stopping at perGrid: what
// the drains and sweeps have left (for metrics, off the consensus path).
func ExpiredBacklog(kv KV, nowMs uint64, maxGrids, perGrid int) ([]GridBacklog, error) {
	var out []GridBacklog
	prefix := TimeRangesPrefix()
	err := kv.Iterate(prefix, PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		c, typeName, g, ok := ParseTimeRangeKey(k)
		if !ok || len(v) != 4 {
			return true, ErrCorrupt{Key: k, Reason: "not a time-range registry entry"}
		}
		r := protocol.TimeRange{On: g.On, Range: g.Range, Step: g.Step, Phase: g.Phase, TTL: binary.BigEndian.Uint32(v)}
		b := GridBacklog{Contract: c, Type: typeName, Grid: g}
		windows := WindowsPrefix(c, typeName, g)
		err := kv.Iterate(windows, PrefixEnd(windows), func(wk, _ []byte) (bool, error) {
			if !r.Expired(binary.BigEndian.Uint64(wk[len(windows):]), nowMs) {
				return true, nil
			}
			b.Keys++
			b.Capped = b.Keys >= perGrid
			return b.Capped, nil
		})
		out = append(out, b)
		return err != nil || len(out) >= maxGrids, err
	})
	return out, err
}
