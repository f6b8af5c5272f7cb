package drive

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/query"
)

// Reader is a read-only view that also iterates backwards: a saved version
// (ReadTree). Document queries run on it.
type Reader interface {
	KV
	// IterateReverse calls fn for every key in [start, end) in descending order (end
	// nil: no upper bound) until fn returns stop.
	IterateReverse(start, end []byte, fn func(key, value []byte) (stop bool, err error)) error
}

// KeyRange is the key range [Start, End).
type KeyRange struct{ Start, End []byte }

// QueryRanges returns the ranges of index entries of type t (in contract c) that hold
// q's answer, in the order the answer runs through them; each is read from its start,
// or from its end when q.Reverse. start is q's start document as stored (nil when q
// has none): the ranges are cut at its entry. Ranges left empty are dropped.
//
// The entries with given leading values are one range because index parts are
// self-delimiting; a range clause bounds the next part, whose byte order is the
// value order, or its reverse for a descending part (its bytes are inverted, so
// a lower bound on the value is an upper bound on the key). Only set values are in
// a range clause's ranges: the unset part (0x00, inverted 0xFF) matches no clause.
func QueryRanges(c protocol.ContractID, q query.Query, start *protocol.Document) []KeyRange {
	fields := IndexFields(q.Type, q.Index)
	p := IndexPrefix(c, q.Type.Name, q.Index.Name)
	if q.Window != nil {
		p = WindowEntriesPrefix(c, q.Type.Name, q.Index.TimeRange.Grid(), q.Window.StartMs, q.Index.Name)
	}
	for i, v := range q.Equal {
		p = AppendIndexPart(p, fields[i], v)
	}
	var out []KeyRange
	part := func(v protocol.Value) []byte { return AppendIndexPart(slices.Clone(p), fields[len(q.Equal)], v) }
	switch r := q.Range; {
	case r == nil:
		out = []KeyRange{{p, PrefixEnd(p)}}
	case r.In != nil:
		for _, v := range r.In {
			k := part(v)
			out = append(out, KeyRange{k, PrefixEnd(k)})
		}
	case r.Prefix != nil:
		f := fields[len(q.Equal)]
		body := AppendIndexPartBody(nil, f, *r.Prefix, false)
		if f.Descending {
			invert(body)
		}
		k := append(slices.Clone(p), body...)
		out = []KeyRange{{k, PrefixEnd(k)}}
	default:
		f := fields[len(q.Equal)]
		set := append(slices.Clone(p), 1)
		if f.Descending {
			set[len(set)-1] = ^byte(1)
		}
		lo, hi := set, PrefixEnd(set)
		// at is the first key of v's entries (included) or of the entries after
		// them; past is the first key after v's entries (included) or v's first.
		at := func(v *protocol.Value, included bool) []byte {
			if included {
				return part(*v)
			}
			return PrefixEnd(part(*v))
		}
		past := func(v *protocol.Value, included bool) []byte {
			if included {
				return PrefixEnd(part(*v))
			}
			return part(*v)
		}
		lower, upper := r.Lower, r.Upper
		lowerIn, upperIn := r.LowerIncluded, r.UpperIncluded
		if f.Descending {
			lower, upper = upper, lower
			lowerIn, upperIn = upperIn, lowerIn
		}
		if lower != nil {
			lo = maxKey(lo, at(lower, lowerIn))
		}
		if upper != nil {
			hi = minKey(hi, past(upper, upperIn))
		}
		out = []KeyRange{{lo, hi}}
	}
	slices.SortFunc(out, func(a, b KeyRange) int { return bytes.Compare(a.Start, b.Start) })
	if q.Reverse {
		slices.Reverse(out)
	}
	if start != nil {
		k := EntryKey(c, q, *start)
		for i := range out {
			switch {
			case !q.Reverse && q.StartIncluded:
				out[i].Start = maxKey(out[i].Start, k)
			case !q.Reverse:
				out[i].Start = maxKey(out[i].Start, append(slices.Clone(k), 0))
			case q.StartIncluded:
				out[i].End = minKey(out[i].End, append(slices.Clone(k), 0))
			default:
				out[i].End = minKey(out[i].End, k)
			}
		}
	}
	return slices.DeleteFunc(out, func(r KeyRange) bool { return bytes.Compare(r.Start, r.End) >= 0 })
}

func maxKey(a, b []byte) []byte {
	if bytes.Compare(a, b) >= 0 {
		return a
	}
	return b
}

func minKey(a, b []byte) []byte {
	if bytes.Compare(a, b) <= 0 {
		return a
	}
	return b
}

// ScannedRange is one range of a query's answer as read: its bounds and the index
// entry keys found in it, in the order the answer runs (descending keys when the
// query is reversed).
type ScannedRange struct {
	KeyRange
	Keys [][]byte
	// Cut: the answer's limit was reached in this range, so the range may hold
	// further entries that were not read; the ranges after it were not read at all.
	Cut bool
}

// QueryResult is a query's answer as read: the ranges read, in order, and the
// documents of their entries, in the answer's order.
type QueryResult struct {
	// Start is q's start document, when it has one.
	Start     *StoredDocument
	Ranges    []ScannedRange
	Documents []StoredDocument
}

// ErrStartNotFound: the start document of a query (startAt, startAfter) does not exist.
type ErrStartNotFound struct{ ID protocol.DocumentID }

func (e ErrStartNotFound) Error() string {
	return fmt.Sprintf("drive: the query's start document %s does not exist", e.ID)
}

// QueryDocuments answers q on type t: it walks QueryRanges in order, forwards or
// backwards, collects up to q.Limit index entries and reads their documents.
func QueryDocuments(r Reader, t DocumentType, q query.Query) (QueryResult, error) {
	var res QueryResult
	var start *protocol.Document
	if q.Start != nil {
		d, ok, err := GetDocument(r, t, *q.Start)
		if err != nil {
			return QueryResult{}, err
		}
		if !ok {
			return QueryResult{}, ErrStartNotFound{ID: *q.Start}
		}
		res.Start, start = &d, &d.Document
	}
	found := 0
	for _, kr := range QueryRanges(t.Contract, q, start) {
		if found == q.Limit {
			break
		}
		sr := ScannedRange{KeyRange: kr}
		visit := func(k, _ []byte) (bool, error) {
			sr.Keys = append(sr.Keys, bytes.Clone(k))
			found++
			sr.Cut = found == q.Limit
			return sr.Cut, nil
		}
		var err error
		if q.Reverse {
			err = r.IterateReverse(kr.Start, kr.End, visit)
		} else {
			err = r.Iterate(kr.Start, kr.End, visit)
		}
		if err != nil {
			return QueryResult{}, err
		}
		res.Ranges = append(res.Ranges, sr)
	}
	for _, sr := range res.Ranges {
		for _, k := range sr.Keys {
			id := EntryDocumentID(k)
			d, ok, err := GetDocument(r, t, id)
			if err != nil {
				return QueryResult{}, err
			}
			if !ok {
				return QueryResult{}, ErrCorrupt{Key: k, Reason: "an index entry of a document that does not exist"}
			}
			res.Documents = append(res.Documents, d)
		}
	}
	return res, nil
}

// EntryDocumentID is the document id that ends an index entry key (IndexEntryKey).
func EntryDocumentID(k []byte) protocol.DocumentID {
	var id protocol.DocumentID
	if len(k) >= protocol.DocumentIDLen {
		copy(id[:], k[len(k)-protocol.DocumentIDLen:])
	}
	return id
}

// EntryKey is the key of d's entry in q's index (in q's window, for a window query).
func EntryKey(c protocol.ContractID, q query.Query, d protocol.Document) []byte {
	values, _ := IndexValues(IndexFields(q.Type, q.Index), d)
	if q.Window != nil {
		return WindowEntryKey(c, q.Type.Name, q.Index.TimeRange.Grid(), q.Window.StartMs, q.Index.Name, values, d.ID)
	}
	return IndexEntryKey(c, q.Type.Name, q.Index.Name, values, d.ID)
}

// CountKey is the key of the count record that answers q.
func CountKey(c protocol.ContractID, q query.Count) []byte {
	fields := IndexFields(q.Type, q.Index)
	var prefix []byte
	for i, v := range q.Equal {
		prefix = AppendIndexPart(prefix, fields[i], v)
	}
	if q.Window != nil {
		return WindowCountKey(c, q.Type.Name, q.Index.TimeRange.Grid(), q.Window.StartMs, q.Index.Name, prefix)
	}
	return IndexCountKey(c, q.Type.Name, q.Index.Name, prefix)
}

// RankedRange is the key range a ranked query reads: its window's ranks of its index,
// from the top or right after the cursor, to the end of the ranks.
func RankedRange(c protocol.ContractID, q query.Ranked) KeyRange {
	p := WindowRanksPrefix(c, q.Type.Name, q.Index.TimeRange.Grid(), q.Window.StartMs, q.Index.Name)
	start := p
	if q.After != nil {
		start = append(append(slices.Clone(p), q.After...), 0)
	}
	return KeyRange{Start: start, End: PrefixEnd(p)}
}
