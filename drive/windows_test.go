package drive

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// TestWindowKeysRoundTrip: every window key reads back through ParseDocumentKey to what
// built it, keys of one grid share its prefix and keys of one window its window's, a
// grid's windows are in start order and, under a window, entries sort before counts and
// counts before ranks (the order the drain takes them in), ranks most counted first.
func TestWindowKeysRoundTrip(t *testing.T) {
	c, id := protocol.ContractID{3}, protocol.DocumentID{4}
	for _, on := range protocol.TimeRangeFields {
		g := protocol.Grid{On: on, Range: 7200, Step: 3600, Phase: 60}
		entry := WindowEntryKey(c, "like", g, 3_660_000, "trending", []byte{1, 'a', 0, 1}, id)
		count := WindowCountKey(c, "like", g, 3_660_000, "trending", []byte{1, 'a', 0, 1})
		rank9 := WindowRankKey(c, "like", g, 3_660_000, "trending", 9, []byte{1, 'a', 0, 1})
		rank2 := WindowRankKey(c, "like", g, 3_660_000, "trending", 2, []byte{1, 'b', 0, 1})
		later := WindowEntryKey(c, "like", g, 7_260_000, "trending", nil, id)
		for _, want := range []struct {
			key  []byte
			part WindowKeyParts
		}{
			{entry, WindowKeyParts{Grid: g, StartMs: 3_660_000, Part: WindowEntry, Index: "trending", Values: []byte{1, 'a', 0, 1}, ID: id}},
			{count, WindowKeyParts{Grid: g, StartMs: 3_660_000, Part: WindowCount, Index: "trending", Values: []byte{1, 'a', 0, 1}}},
			{rank9, WindowKeyParts{Grid: g, StartMs: 3_660_000, Part: WindowRank, Index: "trending", Values: []byte{1, 'a', 0, 1}, Count: 9}},
			{later, WindowKeyParts{Grid: g, StartMs: 7_260_000, Part: WindowEntry, Index: "trending", Values: []byte{}, ID: id}},
		} {
			p, ok := ParseDocumentKey(want.key)
			if !ok || p.Entry != DocumentEntryWindow || p.Contract != c || p.Type != "like" || !reflect.DeepEqual(*p.Window, want.part) {
				t.Fatalf("%x parsed as %+v %+v, %v; want %+v", want.key, p, p.Window, ok, want.part)
			}
			if !bytes.HasPrefix(want.key, WindowsPrefix(c, "like", g)) {
				t.Errorf("%x is not under its grid", want.key)
			}
		}
		window := WindowPrefix(c, "like", g, 3_660_000)
		for _, k := range [][]byte{entry, count, rank9, rank2} {
			if !bytes.HasPrefix(k, window) {
				t.Errorf("%x is not under its window", k)
			}
		}
		if !(bytes.Compare(entry, count) < 0 && bytes.Compare(count, rank9) < 0 && bytes.Compare(rank9, rank2) < 0 && bytes.Compare(rank2, later) < 0) {
			t.Errorf("grid on %s: keys out of order", on)
		}
	}
	other := protocol.Grid{On: "$createdAt", Range: 3600, Step: 3600}
	if bytes.HasPrefix(WindowEntryKey(c, "like", other, 0, "x", nil, id), WindowsPrefix(c, "like", protocol.Grid{On: "$createdAt", Range: 7200, Step: 3600})) {
		t.Error("two grids share a prefix")
	}
	if _, ok := ParseDocumentKey(WindowsPrefix(c, "like", other)); ok {
		t.Error("a grid's bare prefix parsed")
	}
}

// TestDecodeIndexParts: what AppendIndexPart writes for every kind of field, ascending
// and descending, set and unset, reads back to the same values and nothing more, and
// a cut part does not read.
func TestDecodeIndexParts(t *testing.T) {
	fields := []IndexField{
		{Name: "s", Kind: FieldString}, {Name: "i", Kind: FieldInteger}, {Name: "b", Kind: FieldBoolean},
		{Name: "x", Kind: FieldBytes}, {Name: "$id", Kind: FieldIdentifier, System: true}, {Name: "$createdAt", Kind: FieldTimestamp, System: true},
	}
	id := bytes.Repeat([]byte{7}, 32)
	sets := [][]protocol.Value{
		{{Set: true, Bytes: []byte("a\x00b\xff")}, {Set: true, Int: -5}, {Set: true, Bool: true}, {Set: true, Bytes: []byte{}}, {Set: true, Bytes: id}, {Set: true, Int: 1767225600000}},
		{{}, {Set: true, Int: 1 << 62}, {Set: true}, {Set: true, Bytes: []byte{0, 0, 1}}, {}, {}},
	}
	for _, desc := range []bool{false, true} {
		fs := slices.Clone(fields)
		for i := range fs {
			fs[i].Descending = desc
		}
		for _, values := range sets {
			var enc []byte
			for i, f := range fs {
				enc = AppendIndexPart(enc, f, values[i])
			}
			got, rest, ok := DecodeIndexParts(fs, append(slices.Clone(enc), 9, 9))
			if !ok || !bytes.Equal(rest, []byte{9, 9}) || !reflect.DeepEqual(got, values) {
				t.Fatalf("descending %v: %x read as %+v, rest %x, %v; want %+v", desc, enc, got, rest, ok, values)
			}
			if _, _, ok := DecodeIndexParts(fs, enc[:len(enc)-1]); ok && values[len(values)-1].Set {
				t.Fatalf("descending %v: a cut encoding %x read", desc, enc[:len(enc)-1])
			}
		}
	}
}

// TestSweepWindows: the epoch sweep drains the expired windows of every registered
// grid, at most its budget a sweep, continuing where the last one stopped and wrapping
// round, and leaves windows within their ttl alone.
func TestSweepWindows(t *testing.T) {
	s, _ := newTestStore(t, 0)
	kv := s.Working()
	const hour = 3_600_000
	types := []protocol.DocumentType{}
	for _, name := range []string{"a", "b"} {
		r := &protocol.TimeRange{On: "$createdAt", Range: 3600, Step: 3600, TTL: 3600}
		types = append(types, protocol.DocumentType{Name: name, Indices: []protocol.Index{{Name: "w", Properties: []protocol.IndexProperty{{Name: "p"}}, TimeRange: r}}})
	}
	c := protocol.ContractID{9}
	standing := map[string]int{}
	for _, dt := range types {
		if n, err := RegisterTimeRanges(kv, c, dt); err != nil || n == 0 {
			t.Fatalf("register %s: %d %v", dt.Name, n, err)
		}
		g := dt.Indices[0].TimeRange.Grid()
		k := TimeRangeKey(c, dt.Name, g)
		if gc, name, gg, ok := ParseTimeRangeKey(k); !ok || gc != c || name != dt.Name || gg != g {
			t.Fatalf("registry key %x parsed as %v %q %+v %v", k, gc, name, gg, ok)
		}
		// 25 keys in each of two old windows, 5 in the window within its ttl.
		for w, n := range map[uint64]int{hour: 25, 2 * hour: 25, 10 * hour: 5} {
			for i := range n {
				key := WindowEntryKey(c, dt.Name, g, w, "w", []byte{1, byte(i), 0, 1}, protocol.DocumentID{byte(i)})
				if err := kv.Set(key, Ephemeral); err != nil {
					t.Fatal(err)
				}
			}
			standing[dt.Name] += n
		}
	}
	now := uint64(10*hour + 10)
	count := func(dt protocol.DocumentType) int {
		n := 0
		p := WindowsPrefix(c, dt.Name, dt.Indices[0].TimeRange.Grid())
		_ = kv.Iterate(p, PrefixEnd(p), func(_, _ []byte) (bool, error) { n++; return false, nil })
		return n
	}
	total := 0
	for sweeps := 1; ; sweeps++ {
		removed, visited, err := SweepWindows(kv, now, 30, 256)
		if err != nil {
			t.Fatal(err)
		}
		if removed > 30 {
			t.Fatalf("sweep %d removed %d, more than its budget", sweeps, removed)
		}
		total += removed
		if removed == 0 {
			if visited != 2 || total != 100 || sweeps != 5 {
				t.Fatalf("after %d sweeps: %d removed, %d grids visited by the last; want 100 in 4 sweeps and an empty fifth", sweeps, total, visited)
			}
			break
		}
	}
	for _, dt := range types {
		if n := count(dt); n != 5 {
			t.Errorf("type %s: %d keys stand, want the 5 of the window within its ttl", dt.Name, n)
		}
	}
	if v, _ := kv.Get(TimeRangeSweepKey()); v != nil {
		t.Errorf("the sweep's cursor stays at %x after a full round", v)
	}
}

// TestSweepVisitsAtMostMaxGrids: a sweep visits at most maxGrids registered grids and
// the next one goes on from there, so a registry of any size costs an epoch change a
// bounded number of reads.
func TestSweepVisitsAtMostMaxGrids(t *testing.T) {
	s, _ := newTestStore(t, 0)
	kv := s.Working()
	c := protocol.ContractID{5}
	for i := range 7 {
		dt := protocol.DocumentType{Name: fmt.Sprintf("t%d", i), Indices: []protocol.Index{{Name: "w", Properties: []protocol.IndexProperty{{Name: "p"}},
			TimeRange: &protocol.TimeRange{On: "$createdAt", Range: 60, Step: 60, TTL: 60}}}}
		if _, err := RegisterTimeRanges(kv, c, dt); err != nil {
			t.Fatal(err)
		}
	}
	var visits []int
	for range 4 {
		_, visited, err := SweepWindows(kv, 1_000_000, 100, 3)
		if err != nil {
			t.Fatal(err)
		}
		visits = append(visits, visited)
	}
	if !slices.Equal(visits, []int{3, 3, 3, 3}) {
		t.Fatalf("grids visited per sweep: %v, want 3 each (7 grids, wrapping)", visits)
	}
}
