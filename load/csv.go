package load

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The CSV files a run appends to, so that several runs (both systems, every client,
// indexer and signer count) share one file. Each starts with its header; every row
// starts with the run's combination: its client (ws or http), the node's transaction
// indexer as its status says (on or off) and the ttld workload's signers (0 for
// kvstore).
var (
	// ThroughputHeader: one row per block holding the run's transactions, First to
	// Last; t_s is the block's time since First's, tx_per_s its committed transactions
	// of the run over the time since the block before it.
	ThroughputHeader = []string{"client", "tx_index", "signers", "system", "workload", "t_s", "tx_per_s"}
	// SummaryHeader: one row per run; latencies in milliseconds; then how the node
	// answered the broadcasts (Sending) and how many of the sent were not committed.
	SummaryHeader = []string{"client", "tx_index", "signers", "workload", "system", "tx_per_s", "p50_ms", "p99_ms",
		"sent", "accepted", "refused_checktx", "retries", "gave_up", "failed", "not_committed"}
	// CPUHeader: one row per measured process of a run (the node, the load tool):
	// its CPU time (user and system) over the wall time of the load, the retries and
	// the drain, and their ratio, the cores it kept busy.
	CPUHeader = []string{"client", "tx_index", "signers", "workload", "system", "process", "cpu_s", "wall_s", "cores"}
)

// combination is the first columns of every row of r.
func combination(r Result) []string {
	return []string{string(r.Transport), r.TxIndex, strconv.Itoa(r.Signers)}
}

// ThroughputRows are the throughput rows of r.
func ThroughputRows(r Result) [][]string {
	var rows [][]string
	var first time.Time
	for i := 1; i < len(r.Blocks); i++ {
		b := r.Blocks[i]
		if b.Height < r.First || b.Height > r.Last {
			continue
		}
		if b.Height == r.First {
			first = b.Time
		}
		dt := b.Time.Sub(r.Blocks[i-1].Time).Seconds()
		rate := 0.0
		if dt > 0 {
			rate = float64(b.Committed) / dt
		}
		rows = append(rows, append(combination(r), r.System, string(r.Workload), seconds(b.Time.Sub(first)), strconv.FormatFloat(rate, 'f', 1, 64)))
	}
	return rows
}

// SummaryRow is the summary row of r.
func SummaryRow(r Result) []string {
	s := r.Sending
	return append(combination(r), string(r.Workload), r.System, strconv.FormatFloat(r.TxPerS, 'f', 1, 64), millis(r.Latency.P50), millis(r.Latency.P99),
		strconv.Itoa(r.Sent), strconv.Itoa(s.Accepted), strconv.Itoa(s.RefusedAtCheck), strconv.Itoa(s.Retries), strconv.Itoa(s.GaveUp), strconv.Itoa(s.Failed), strconv.Itoa(r.NotCommitted))
}

// CPURows are the CPU rows of r: the node's when it was measured, and the tool's.
func CPURows(r Result) [][]string {
	row := func(process string, cpu time.Duration) []string {
		return append(combination(r), string(r.Workload), r.System, process, seconds(cpu), seconds(r.Wall), strconv.FormatFloat(cores(cpu, r.Wall), 'f', 2, 64))
	}
	var rows [][]string
	if r.NodeMeasured {
		rows = append(rows, row("node", r.NodeCPU))
	}
	return append(rows, row("load", r.ToolCPU))
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }
func millis(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
}

// cores is cpu over wall.
func cores(cpu, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return cpu.Seconds() / wall.Seconds()
}

// AppendCSV appends rows to the CSV file path, created with its folder and header
// when missing or empty. A file that starts with another header is refused.
func AppendCSV(path string, header []string, rows [][]string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	want := strings.Join(header, ",")
	got, err := firstLine(path)
	if err != nil {
		return err
	}
	if got != "" && got != want {
		return fmt.Errorf("load: %s starts with %q, not this file's header %q", path, got, want)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	w := csv.NewWriter(f)
	if got == "" {
		w.Write(header)
	}
	w.WriteAll(rows)
	if err := errors.Join(w.Error(), f.Close()); err != nil {
		return fmt.Errorf("load: write %s: %w", path, err)
	}
	return nil
}

// firstLine is the first line of path, "" when it is missing or empty.
func firstLine(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("load: %w", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Scan()
	return strings.TrimSpace(s.Text()), s.Err()
}
