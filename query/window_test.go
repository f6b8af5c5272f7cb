package query

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// Time-Range Index TTL's running example, as published (protocol's testdata): likes
// feeding a trending index ("posts liked this hour").
var seedLikes = func() string {
	b, err := os.ReadFile("../protocol/testdata/likes.json")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// TestTimeRangeHorizon: "Entries under this index are queryable until ttl seconds past
// their bucket's start (the exact expiry boundary remains inclusive)", and a window is
// drained once "start < block_time − ttl": the same predicate.
func TestTimeRangeHorizon(t *testing.T) {
	r := protocol.TimeRange{On: "$createdAt", Range: 3600, Step: 3600, TTL: 7200}
	start := uint64(10 * 3_600_000)
	for _, c := range []struct {
		now       uint64
		queryable bool
	}{{start, true}, {start + 7_200_000 - 1, true}, {start + 7_200_000, true}, {start + 7_200_001, false}} {
		if got := queryable(r, start, c.now); got != c.queryable {
			t.Errorf("at start+%d ms: queryable %v, want %v", c.now-start, got, c.queryable)
		}
		if r.Expired(start, c.now) == c.queryable {
			t.Errorf("at start+%d ms: expired and queryable agree", c.now-start)
		}
	}
	forever := protocol.TimeRange{On: "$createdAt", Range: 3600, Step: 3600}
	if !queryable(forever, 0, 1<<62) || forever.Expired(0, 1<<62) {
		t.Error("a window of an index without a ttl expired")
	}
}

// TestQueriesSkipTimeRangeIndexes: a query or count with no window never reads a
// time-range index, whose entries are under its windows: with no other index serving
// it, it is refused as not indexed rather than answered from an empty range.
func TestQueriesSkipTimeRangeIndexes(t *testing.T) {
	types, err := protocol.ParseSubmittedDocumentTypes([]byte(seedLikes), protocol.V14)
	if err != nil {
		t.Fatal(err)
	}
	like := types[0]
	q, err := Parse(like, []byte(`{"where":[["post","==",[`+strings.Repeat("1,", 31)+`1]]]}`), protocol.Latest)
	if err != nil || q.Index.Name != "byPost" {
		t.Fatalf("query on post: index %q, %v; want byPost", q.Index.Name, err)
	}
	if c, err := ParseCount(like, nil, protocol.Latest, "", false); err != nil || c.Index.Name != "byPost" {
		t.Fatalf("count: index %q, %v; want byPost", c.Index.Name, err)
	}
	_, err = ParseCount(like, nil, protocol.Latest, "trending", false)
	var qe ErrInvalid
	if !errors.As(err, &qe) || qe.Kind != FieldNotIndexed {
		t.Fatalf("a count of the time-range index with no window: %v", err)
	}
}

// FuzzWindowQueries: no query, count or ranked query of Time-Range Index TTL's likes panics its
// parser or its window's resolution at any block time; every refusal is an
// ErrInvalid of a known kind; and a window resolved, by any selector, is one of the
// grid's windows within its horizon ("The relative selectors (newest / oldest) can never
// address an expired window at all").
func FuzzWindowQueries(f *testing.F) {
	types, err := protocol.ParseSubmittedDocumentTypes([]byte(seedLikes), protocol.V14)
	if err != nil {
		f.Fatal(err)
	}
	like := types[0]
	for _, s := range []string{
		`{"window":{"index":"trending","newest":true}}`,
		`{"window":{"index":"trending","oldest":true},"limit":3}`,
		`{"window":{"index":"trending","byStart":1767229200000},"after":"fffffffffffffffe01610001"}`,
		`{"window":{"index":"trending","byStart":1},"where":[["post","==",[1]]]}`,
		`{"window":{"index":"byPost","newest":true}}`,
		`{"window":{"index":"trending","newest":true,"oldest":true}}`,
		`{"window":null}`,
		`{"window":{"index":"trending","byStart":-1}}`,
	} {
		f.Add([]byte(s), uint64(1767232800000))
	}
	f.Fuzz(func(t *testing.T, raw []byte, nowMs uint64) {
		known := func(what string, err error) {
			var iq ErrInvalid
			if err != nil && (!errors.As(err, &iq) || iq.Kind < NotJSON || iq.Kind > WindowExpired) {
				t.Fatalf("%s(%q) = %v, not an ErrInvalid", what, raw, err)
			}
		}
		check := func(w *Window, ix protocol.Index, err error) {
			if err != nil || w == nil {
				return
			}
			r := *ix.TimeRange
			if !r.Grid().IsStart(w.StartMs) || !queryable(r, w.StartMs, nowMs) {
				t.Fatalf("%q at %d resolved to %d", raw, nowMs, w.StartMs)
			}
		}
		if q, err := Parse(like, raw, protocol.Latest); err == nil {
			err = q.ResolveWindow(nowMs)
			known("ResolveWindow", err)
			check(q.Window, q.Index, err)
		} else {
			known("Parse", err)
		}
		if q, err := ParseCount(like, raw, protocol.Latest, "", false); err == nil {
			err = q.ResolveWindow(nowMs)
			known("ResolveWindow", err)
			check(q.Window, q.Index, err)
		} else {
			known("ParseCount", err)
		}
		if q, err := ParseRanked(like, raw, protocol.Latest); err == nil {
			err = q.ResolveWindow(nowMs)
			known("ResolveWindow", err)
			check(q.Window, q.Index, err)
		} else {
			known("ParseRanked", err)
		}
	})
}
