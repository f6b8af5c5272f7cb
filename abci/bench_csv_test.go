package abci

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// benchCSVEnv names the directory the benchmarks write their figures into as CSV
// files (make bench-perf sets it to docs/bench); unset or empty, they write none.
const benchCSVEnv = "TTLD_BENCH_CSV"

// benchTable is one CSV file of figures, or nothing when benchCSVEnv is unset.
type benchTable struct {
	tb   testing.TB
	path string // "": no output
}

// benchTables are the files this process has started: the first use of a name in a
// process writes the file anew with its header, later uses (the next run of the same
// benchmark) append to it.
var benchTables = struct {
	sync.Mutex
	started map[string]bool
}{started: map[string]bool{}}

// benchCSV returns the table name (cleanup.csv) in the directory benchCSVEnv names,
// started with header if this process has not written it yet.
func benchCSV(tb testing.TB, name string, header ...string) benchTable {
	dir := os.Getenv(benchCSVEnv)
	if dir == "" {
		return benchTable{}
	}
	path := filepath.Join(dir, name)
	benchTables.Lock()
	defer benchTables.Unlock()
	if !benchTables.started[path] {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		writeCSV(tb, path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, header)
		benchTables.started[path] = true
	}
	return benchTable{tb: tb, path: path}
}

// row appends one row of figures.
func (t benchTable) row(fields ...string) {
	if t.path == "" {
		return
	}
	benchTables.Lock()
	defer benchTables.Unlock()
	writeCSV(t.tb, t.path, os.O_APPEND|os.O_WRONLY, fields)
}

func writeCSV(tb testing.TB, path string, flag int, fields []string) {
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	w := csv.NewWriter(f)
	if err := w.Write(fields); err != nil {
		tb.Fatal(err)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}
