package protocol

// TimeRange is the grid of a time-range index (protocol version 14, Time-Range Index TTL): windows
// start every Step seconds, Phase seconds past a multiple of Step, and each spans Range
// seconds, so a timestamp lies in Range / Step windows (the overlap) and a document is
// stored once under each window its On field lies in, the index's properties under
// the window.
type TimeRange struct {
	// On is the system field the windows are taken on: "$createdAt", "$updatedAt",
	// "$transferredAt" or, from version 15 on, "$renewedAt" (TimeRangeFields).
	On string
	// Range and Step are seconds; Range is a multiple of Step, Range / Step at most the
	// version's MaxTimeRangeOverlapFactor.
	Range, Step uint32
	// Phase is the seconds past a multiple of Step at which windows start (< Step).
	Phase uint32
	// TTL is the seconds past a window's start until which its entries are queryable
	// (the boundary included), 0 for none: then the windows stay. Not part of the grid:
	// declaring or changing it moves no entry.
	TTL uint32
}

// TimeRangeFields are the system fields a time-range index may be taken on (sorted);
// $renewedAt from protocol version 15 on, as the version's meta-schema says.
var TimeRangeFields = []string{"$createdAt", "$renewedAt", "$transferredAt", "$updatedAt"}

// Grid is what identifies where a time-range index's windows are stored: the field and
// the range, step and phase, never the ttl. Indexes of one type with the same grid
// share its windows (Time-Range Index TTL: "Two indexes bucketing the same field with the same grid
// share one storage level"), so they must agree on the ttl.
type Grid struct {
	On                 string
	Range, Step, Phase uint32
}

// Grid returns r's grid.
func (r TimeRange) Grid() Grid { return Grid{On: r.On, Range: r.Range, Step: r.Step, Phase: r.Phase} }

// Overlap is how many windows a timestamp lies in: Range / Step.
func (g Grid) Overlap() int { return int(g.Range / g.Step) }

// Windows returns the starts, in ms, of the windows holding the timestamp atMs, oldest
// first: the Overlap() starts w = Phase + k·Step with w <= atMs < w + Range, less any
// that would start before 0 (a timestamp within Range of the Unix epoch).
func (g Grid) Windows(atMs uint64) []uint64 {
	step, phase := uint64(g.Step)*1000, uint64(g.Phase)*1000
	if atMs < phase {
		return nil
	}
	newest := phase + (atMs-phase)/step*step
	out := make([]uint64, 0, g.Overlap())
	for i := g.Overlap() - 1; i >= 0; i-- {
		back := uint64(i) * step
		if back > newest-phase {
			continue
		}
		out = append(out, newest-back)
	}
	return out
}

// IsStart reports whether startMs is the start of one of g's windows.
func (g Grid) IsStart(startMs uint64) bool {
	step, phase := uint64(g.Step)*1000, uint64(g.Phase)*1000
	return startMs >= phase && (startMs-phase)%step == 0
}

// Expired reports whether the window starting at startMs is past its ttl at nowMs and
// so may be drained: start < now − ttl, the predicate the drain and the query gate
// (package query) share. Never for an index without a ttl.
func (r TimeRange) Expired(startMs, nowMs uint64) bool {
	ttl := uint64(r.TTL) * 1000
	return r.TTL > 0 && nowMs > ttl && startMs < nowMs-ttl
}
