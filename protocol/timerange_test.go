package protocol

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Time-Range Index TTL's running example, as published: likes feeding a trending index
// ("posts liked this hour"). The query package's tests read the same file.
var seedLikes = func() string {
	b, err := os.ReadFile("testdata/likes.json")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// timeRangeType is a type of one indexed string s and one integer n, with the indexes
// given (their JSON, comma-separated).
func timeRangeType(indexes string) string {
	return one(typ(`"s":{"type":"string","maxLength":63,"position":0},"n":{"type":"integer","position":1}`,
		`"required":["$createdAt"],"indices":[`+indexes+`]`))
}

// trIndex is an index on s named name with the timeRange map tr and extra keywords.
func trIndex(name, tr, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return `{"name":"` + name + `","properties":[{"s":"asc"}],"timeRange":` + tr + extra + `}`
}

// TestTimeRangeSeedExample: Time-Range Index TTL's timeRange map parses at version 14 into its grid
// and ttl ("A timeRange index may declare a time to live: "timeRange": { "on":
// "$createdAt", "range": 3600, "step": 3600, "ttl": 604800 }"), and the canonical form
// reads back to the same types; version 13's grammar has no timeRange.
func TestTimeRangeSeedExample(t *testing.T) {
	types, err := ParseSubmittedDocumentTypes([]byte(seedLikes), V14)
	if err != nil {
		t.Fatal(err)
	}
	ix := types[0].Indices[1]
	want := &TimeRange{On: "$createdAt", Range: 3600, Step: 3600, TTL: 604_800}
	if ix.Name != "trending" || !ix.Ranked || !ix.Countable || !reflect.DeepEqual(ix.TimeRange, want) {
		t.Fatalf("trending parsed to %+v (time range %+v)", ix, ix.TimeRange)
	}
	if types[0].Indices[0].TimeRange != nil || types[0].Indices[0].Ranked {
		t.Fatalf("byPost parsed to %+v", types[0].Indices[0])
	}
	again, err := ParseDocumentTypes(CanonicalJSON(types), V14)
	if err != nil || !reflect.DeepEqual(again, types) {
		t.Fatalf("the canonical form reads back to %+v, %v", again, err)
	}
	if !strings.Contains(string(CanonicalJSON(types)), `"timeRange":{"on":"$createdAt","range":3600,"step":3600,"ttl":604800}`) {
		t.Fatalf("canonical form: %s", CanonicalJSON(types))
	}
	_, err = ParseSubmittedDocumentTypes([]byte(seedLikes), V13)
	wantCode(t, "timeRange under version 13", err, CodeJSONSchema)
}

// TestTimeRangeRules: each rule of Time-Range Index TTL's "Grammar and validation" and of the
// grid, refused with its code, and the edges each rule allows accepted.
func TestTimeRangeRules(t *testing.T) {
	hourly := `{"on":"$createdAt","range":3600,"step":3600,"ttl":604800}`
	for _, c := range []struct {
		name    string
		indexes string
		code    Code // 0: accepted
	}{
		{"the published example's grid", trIndex("h", hourly, ""), 0},
		{"overlap 24 (max_time_range_overlap_factor)", trIndex("h", `{"on":"$createdAt","range":86400,"step":3600}`, ""), 0},
		{"overlap 25", trIndex("h", `{"on":"$createdAt","range":90000,"step":3600}`, ""), CodeInvalidContractStructure},
		{"range not a multiple of step", trIndex("h", `{"on":"$createdAt","range":5400,"step":3600}`, ""), CodeInvalidContractStructure},
		{"a phase below the step", trIndex("h", `{"on":"$updatedAt","range":7200,"step":3600,"phase":1800}`, ""), 0},
		{"a phase of the step", trIndex("h", `{"on":"$updatedAt","range":7200,"step":3600,"phase":3600}`, ""), CodeInvalidContractStructure},
		// "ttl ≥ range."
		{"ttl == range", trIndex("h", `{"on":"$createdAt","range":7200,"step":3600,"ttl":7200}`, ""), 0},
		{"ttl < range", trIndex("h", `{"on":"$createdAt","range":7200,"step":3600,"ttl":7199}`, ""), CodeInvalidContractStructure},
		// "ttl ≤ SystemLimits::max_time_range_ttl_seconds (one week in v1)."
		{"ttl of a week", trIndex("h", `{"on":"$createdAt","range":3600,"step":3600,"ttl":604800}`, ""), 0},
		{"ttl past a week", trIndex("h", `{"on":"$createdAt","range":3600,"step":3600,"ttl":604801}`, ""), CodeInvalidContractStructure},
		{"ttl 0", trIndex("h", `{"on":"$createdAt","range":3600,"step":3600,"ttl":0}`, ""), CodeJSONSchema},
		{"step 0", trIndex("h", `{"on":"$createdAt","range":3600,"step":0}`, ""), CodeJSONSchema},
		{"on $id", trIndex("h", `{"on":"$id","range":3600,"step":3600}`, ""), CodeJSONSchema},
		{"on a property", trIndex("h", `{"on":"n","range":3600,"step":3600}`, ""), CodeJSONSchema},
		{"an unknown key", trIndex("h", `{"on":"$createdAt","range":3600,"step":3600,"offset":1}`, ""), CodeJSONSchema},
		{"no step", trIndex("h", `{"on":"$createdAt","range":3600}`, ""), CodeJSONSchema},
		// "unique (range == step, $createdAt)"
		{"unique, range == step, $createdAt", trIndex("h", hourly, `"unique":true`), 0},
		{"unique, range != step", trIndex("h", `{"on":"$createdAt","range":7200,"step":3600}`, `"unique":true`), CodeInvalidContractStructure},
		{"unique on $updatedAt", trIndex("h", `{"on":"$updatedAt","range":3600,"step":3600}`, `"unique":true`), CodeInvalidContractStructure},
		{"countable and ranked", trIndex("h", hourly, `"countable":true,"ranked":true`), 0},
		{"ranked, not countable", trIndex("h", hourly, `"ranked":true`), CodeInvalidContractStructure},
		{"ranked without a timeRange", `{"name":"h","properties":[{"s":"asc"}],"countable":true,"ranked":true}`, CodeInvalidContractStructure},
		// "One TTL per grid per field. Two indexes bucketing the same field with the same
		// grid share one storage level; a differing ttl would give the shared subtree two
		// conflicting lifecycles. Rejected at contract validation."
		{"one grid, one ttl", trIndex("a", hourly, "") + "," + `{"name":"b","properties":[{"n":"asc"}],"timeRange":` + hourly + `}`, 0},
		{"one grid, two ttls", trIndex("a", hourly, "") + "," + `{"name":"b","properties":[{"n":"asc"}],"timeRange":{"on":"$createdAt","range":3600,"step":3600,"ttl":7200}}`, CodeInvalidContractStructure},
		{"one grid, a ttl and none", trIndex("a", hourly, "") + "," + `{"name":"b","properties":[{"n":"asc"}],"timeRange":{"on":"$createdAt","range":3600,"step":3600}}`, CodeInvalidContractStructure},
		{"two grids, two ttls", trIndex("a", hourly, "") + "," + `{"name":"b","properties":[{"n":"asc"}],"timeRange":{"on":"$createdAt","range":7200,"step":3600,"ttl":7200}}`, 0},
		{"another field, another ttl", trIndex("a", hourly, "") + "," + `{"name":"b","properties":[{"n":"asc"}],"timeRange":{"on":"$updatedAt","range":3600,"step":3600,"ttl":7200}}`, 0},
		{"the same properties on two grids", trIndex("a", hourly, "") + "," + trIndex("b", `{"on":"$createdAt","range":7200,"step":3600,"ttl":7200}`, ""), 0},
		{"the same properties, ordinary and windowed", trIndex("a", hourly, "") + "," + `{"name":"b","properties":[{"s":"asc"}]}`, 0},
		{"the same properties on one grid", trIndex("a", hourly, "") + "," + trIndex("b", hourly, `"countable":true`), CodeDuplicateIndex},
	} {
		_, err := ParseSubmittedDocumentTypes([]byte(timeRangeType(c.indexes)), V14)
		if c.code == 0 {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		wantCode(t, c.name, err, c.code)
	}
}

// TestTimeRangeOnIndexOnly: Time-Range Index TTL, "Composes with everything the grid already composes with:
// countable, the range axes, ranked levels below the bucket, unique (range == step,
// $createdAt), indexOnly document types." Its example likes are indexOnly.
func TestTimeRangeOnIndexOnly(t *testing.T) {
	types, err := ParseSubmittedDocumentTypes([]byte(seedLikes), V14)
	if err != nil || !types[0].IndexOnly {
		t.Fatalf("%+v, %v", types, err)
	}
}

// TestGridWindows: a timestamp lies in overlap = range / step windows, the windows
// whose start is at most it and whose end is past it, starts at phase past a multiple
// of step.
func TestGridWindows(t *testing.T) {
	const h = 3_600_000
	for _, c := range []struct {
		name string
		g    Grid
		at   uint64
		want []uint64
	}{
		{"hourly, at a start", Grid{Range: 3600, Step: 3600}, 5 * h, []uint64{5 * h}},
		{"hourly, the last ms of a window", Grid{Range: 3600, Step: 3600}, 6*h - 1, []uint64{5 * h}},
		{"a day of hours, at a start", Grid{Range: 86_400, Step: 3600}, 100 * h, seq(77*h, h, 24)},
		{"a day of hours, inside", Grid{Range: 86_400, Step: 3600}, 100*h + 1, seq(77*h, h, 24)},
		{"two hours of hours, phase 30 min", Grid{Range: 7200, Step: 3600, Phase: 1800}, 5 * h, []uint64{3*h + h/2, 4*h + h/2}},
		{"before the phase", Grid{Range: 3600, Step: 3600, Phase: 1800}, h / 4, nil},
		{"within a range of 0", Grid{Range: 7200, Step: 3600}, h / 2, []uint64{0}},
	} {
		got := c.g.Windows(c.at)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: windows %v, want %v", c.name, got, c.want)
		}
		for _, w := range got {
			if !c.g.IsStart(w) || w > c.at || c.at >= w+uint64(c.g.Range)*1000 {
				t.Errorf("%s: %d is no window holding %d", c.name, w, c.at)
			}
		}
		if len(c.want) > 0 && len(got) != c.g.Overlap() && c.at >= uint64(c.g.Range)*1000 {
			t.Errorf("%s: %d windows, overlap %d", c.name, len(got), c.g.Overlap())
		}
	}
	if (Grid{Range: 3600, Step: 3600, Phase: 60}).IsStart(3_600_000) {
		t.Error("a multiple of the step is a start of a grid with a phase")
	}
}

func seq(from, step uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = from + uint64(i)*step
	}
	return out
}

// TestTimeRangeIndexUpdate: an update keeps a time-range index exactly
// (docs/CONTRACTS.md, "Updates": an index "changed" is DocumentTypeUpdateError): its
// field, range, step, phase, window ttl and ranking. The stored entries lie in the
// windows the registered grid put them in and drain by its ttl; a deletion looks for
// them there, so an update that moved the grid would leave them where nothing finds
// them.
func TestTimeRangeIndexUpdate(t *testing.T) {
	parse := func(tr, extra string) Contract { return typesContract(t, timeRangeType(trIndex("w", tr, extra)), V15) }
	const hourly = `{"on":"$createdAt","range":7200,"step":3600,"ttl":86400}`
	registered := parse(hourly, `"countable":true`)
	if err := CheckContractUpdate(registered, parse(hourly, `"countable":true`)); err != nil {
		t.Fatalf("the same index: %v", err)
	}
	plain := parse(hourly, `"countable":true`)
	plain.DocumentTypes[0].Indices[0].TimeRange = nil
	for name, next := range map[string]Contract{
		"field":         parse(`{"on":"$renewedAt","range":7200,"step":3600,"ttl":86400}`, `"countable":true`),
		"range":         parse(`{"on":"$createdAt","range":3600,"step":3600,"ttl":86400}`, `"countable":true`),
		"step":          parse(`{"on":"$createdAt","range":7200,"step":1800,"ttl":86400}`, `"countable":true`),
		"phase":         parse(`{"on":"$createdAt","range":7200,"step":3600,"phase":60,"ttl":86400}`, `"countable":true`),
		"ttl":           parse(`{"on":"$createdAt","range":7200,"step":3600,"ttl":172800}`, `"countable":true`),
		"no ttl":        parse(`{"on":"$createdAt","range":7200,"step":3600}`, `"countable":true`),
		"ranked":        parse(hourly, `"countable":true,"ranked":true`),
		"no time range": plain,
	} {
		wantCode(t, name, CheckContractUpdate(registered, next), CodeDocumentTypeUpdate)
	}
}
