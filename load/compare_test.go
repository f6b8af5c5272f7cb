package load

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCompareMatrix: runs of two clients, both indexers and two signer counts, as
// bench-compare appends them: each ttld run stands beside the kvstore run of its
// client, indexer and workload, with the ratio and the node's cores; a ttld run with
// no kvstore run, and a kvstore run with no ttld run, stand alone.
func TestCompareMatrix(t *testing.T) {
	dir := t.TempDir()
	summary, cpu := filepath.Join(dir, "compare.csv"), filepath.Join(dir, "cpu.csv")
	add := func(tr Transport, txIndex string, signers int, w Workload, system string, tps float64, nodeCPU time.Duration, retries int) {
		r := Result{Transport: tr, TxIndex: txIndex, Signers: signers, Workload: w, System: system, Summary: Summary{TxPerS: tps, Latency: Latency{P50: 1500 * time.Millisecond, P99: 3 * time.Second}},
			Sent: 100, NotCommitted: 2, Sending: Sending{Accepted: 97, Retries: retries, GaveUp: 2, RefusedAtCheck: 1},
			Wall: 10 * time.Second, NodeCPU: nodeCPU, NodeMeasured: true, ToolCPU: time.Second}
		if err := AppendCSV(summary, SummaryHeader, [][]string{SummaryRow(r)}); err != nil {
			t.Fatal(err)
		}
		if err := AppendCSV(cpu, CPUHeader, CPURows(r)); err != nil {
			t.Fatal(err)
		}
	}
	add(HTTP, "off", 0, Transfers, "kvstore", 20000, 17*time.Second, 40)
	add(HTTP, "off", 1000, Transfers, "ttld", 10000, 18*time.Second, 3)
	add(HTTP, "off", 10000, Transfers, "ttld", 5000, 16*time.Second, 0)
	add(WebSocket, "on", 1000, Transfers, "ttld", 3000, 12*time.Second, 0)
	add(HTTP, "on", 0, Documents, "kvstore", 4000, 11*time.Second, 0)

	cs := compareFiles(t, summary, cpu)
	if len(cs) != 4 {
		t.Fatalf("%d comparisons, want 4: %+v", len(cs), cs)
	}
	first := cs[0]
	if first.Client != "http" || first.TxIndex != "off" || first.Signers != 1000 || first.Workload != "transfers" || first.Ratio() != 0.5 {
		t.Fatalf("first comparison %+v, ratio %v", first, first.Ratio())
	}
	if first.TTLD.NodeCores != 1.8 || first.KVStore.NodeCores != 1.7 || first.KVStore.Retries != 40 || first.TTLD.GaveUp != 2 || first.TTLD.P99ms != 3000 {
		t.Fatalf("figures ttld %+v, kvstore %+v", *first.TTLD, *first.KVStore)
	}
	if cs[1].Signers != 10000 || cs[1].KVStore != first.KVStore || cs[1].Ratio() != 0.25 {
		t.Fatalf("10,000 signers: %+v, ratio %v", cs[1], cs[1].Ratio())
	}
	if cs[2].Client != "ws" || cs[2].KVStore != nil || cs[2].Ratio() != 0 {
		t.Fatalf("a ttld run without its kvstore run: %+v", cs[2])
	}
	if cs[3].TTLD != nil || cs[3].Workload != "documents" {
		t.Fatalf("a kvstore run without a ttld run: %+v", cs[3])
	}

	var out bytes.Buffer
	if err := WriteComparison(&out, cs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2+len(cs) {
		t.Fatalf("a table of %d lines:\n%s", len(lines), out.String())
	}
	if want := "| http | null | 1000 | transfers | 10000.0 | 20000.0 | 0.50 | 1.5 / 3.0 | 1.5 / 3.0 | 1.80 | 1.70 | 3 / 2 / 1 / 2 | 40 / 2 / 1 / 2 |"; lines[2] != want {
		t.Fatalf("first row\n%s\nwant\n%s", lines[2], want)
	}
	if !strings.HasPrefix(lines[4], "| ws | kv | 1000 | transfers | 3000.0 | - | - |") || !strings.HasPrefix(lines[5], "| http | kv | - | documents | - | 4000.0 | - |") {
		t.Fatalf("rows of missing runs:\n%s\n%s", lines[4], lines[5])
	}
}

// TestCompareRefusesOtherFiles: a summary file of another header (the throughput file)
// is refused.
func TestCompareRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	tp, cpu := filepath.Join(dir, "throughput.csv"), filepath.Join(dir, "cpu.csv")
	if err := AppendCSV(tp, ThroughputHeader, nil); err != nil {
		t.Fatal(err)
	}
	if err := AppendCSV(cpu, CPUHeader, nil); err != nil {
		t.Fatal(err)
	}
	s, _ := os.Open(tp)
	defer s.Close()
	c, _ := os.Open(cpu)
	defer c.Close()
	if _, err := Compare(s, c); err == nil {
		t.Fatal("a throughput file was read as a summary")
	}
}

func compareFiles(t *testing.T, summary, cpu string) []Comparison {
	t.Helper()
	s, err := os.Open(summary)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := os.Open(cpu)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cs, err := Compare(s, c)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
