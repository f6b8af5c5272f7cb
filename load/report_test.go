package load

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/cometbft/cometbft/test/loadtime/payload"
	cmttypes "github.com/cometbft/cometbft/types"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// testBlocks are blocks 10 to 13 at t0, +0.5 s, +2.5 s and +3.5 s: block 11 holds
// the run's a (code 0), a foreign transaction and the run's b (code 7); block 12 the
// run's c; block 13 dates block 12. a was sent at t0+0.1 s, b at +0.2 s, c at +0.7 s.
func testBlocks(t *testing.T, p Payloads) []Block {
	t.Helper()
	a, b, c, foreign := []byte("a=1"), []byte("b=2"), []byte("c=3"), []byte("d=4")
	sent := map[[32]byte]int64{
		sha256.Sum256(a): t0.Add(100 * time.Millisecond).UnixNano(),
		sha256.Sum256(b): t0.Add(200 * time.Millisecond).UnixNano(),
		sha256.Sum256(c): t0.Add(700 * time.Millisecond).UnixNano(),
	}
	var out []Block
	for _, x := range []struct {
		at    time.Duration
		txs   [][]byte
		codes []uint32
	}{
		{0, nil, nil},
		{500 * time.Millisecond, [][]byte{a, foreign, b}, []uint32{0, 0, 7}},
		{2500 * time.Millisecond, [][]byte{c}, []uint32{0}},
		{3500 * time.Millisecond, nil, nil},
	} {
		block := &cmttypes.Block{Header: cmttypes.Header{Height: 10 + int64(len(out)), Time: t0.Add(x.at)}}
		var results []*abcitypes.ExecTxResult
		for i, tx := range x.txs {
			block.Txs = append(block.Txs, tx)
			results = append(results, &abcitypes.ExecTxResult{Code: x.codes[i]})
		}
		m, err := MapBlock(block, results, sent, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestMapBlockReplacesTheRunsTransactionsByPayloads: a committed transaction of the
// run becomes a loadtime payload carrying its send time and the run; a refused one is
// counted and left out; a foreign one is left out.
func TestMapBlockReplacesTheRunsTransactionsByPayloads(t *testing.T) {
	p := Payloads{Run: RunID{7}, Connections: 2, Rate: 30, Size: 147}
	blocks := testBlocks(t, p)
	b := blocks[1]
	if b.Committed != 1 || b.Refused != 1 || len(b.Payloads) != 1 {
		t.Fatalf("block 11: %d committed, %d refused, %d payloads; want 1, 1, 1", b.Committed, b.Refused, len(b.Payloads))
	}
	pl, err := payload.FromBytes(b.Payloads[0])
	if err != nil {
		t.Fatal(err)
	}
	if !pl.Time.AsTime().Equal(t0.Add(100*time.Millisecond)) || RunID(pl.Id) != p.Run || pl.Connections != 2 || pl.Rate != 30 || pl.Size != 147 {
		t.Fatalf("payload of a: %v", pl)
	}
	if _, err := MapBlock(&cmttypes.Block{Data: cmttypes.Data{Txs: cmttypes.Txs{[]byte("x")}}}, nil, nil, p); err == nil {
		t.Fatal("a block with more transactions than results was read")
	}
}

// TestSummariseDatesByTheNextBlock: throughput over the blocks' time from the block
// before the first, latencies from the loadtime report (send to the next block's
// time), the refused transaction counted apart.
func TestSummariseDatesByTheNextBlock(t *testing.T) {
	run := RunID{7}
	s, err := Summarise(testBlocks(t, Payloads{Run: run, Connections: 1, Rate: 1, Size: 147}), run)
	if err != nil {
		t.Fatal(err)
	}
	if s.First != 11 || s.Last != 12 || s.Committed != 2 || s.Refused != 1 || s.Span != 2500*time.Millisecond || s.TxPerS != 0.8 {
		t.Fatalf("summary %+v", s)
	}
	// a: included in 11, dated by 12 (t0+2.5 s): 2.4 s; c: in 12, dated by 13: 2.8 s.
	l := s.Latency
	if l.Min != 2400*time.Millisecond || l.Max != 2800*time.Millisecond || l.Avg != 2600*time.Millisecond || l.P50 != l.Min || l.P99 != l.Max || l.Negative != 0 {
		t.Fatalf("latency %+v", l)
	}
}

// TestSummariseRefusesWhatItCannotDate: payloads of another run than the one asked
// for, no committed transaction of the run, a run whose transactions are in the first
// block (no block before to start the span), too few blocks.
func TestSummariseRefusesWhatItCannotDate(t *testing.T) {
	blocks := testBlocks(t, Payloads{Run: RunID{7}, Size: 147})
	if _, err := Summarise(blocks, RunID{8}); err == nil {
		t.Fatal("run 8 was summarised from run 7's payloads")
	}
	if _, err := Summarise(blocks[1:], RunID{7}); err == nil {
		t.Fatal("a run starting in the first block was summarised")
	}
	if _, err := Summarise([]Block{blocks[0], blocks[3]}, RunID{7}); err == nil {
		t.Fatal("blocks without the run's transactions were summarised")
	}
	if _, err := Summarise(blocks[:1], RunID{7}); err == nil {
		t.Fatal("one block was summarised")
	}
}

// TestThroughputCSV: one row per block of the run, time since the first block and
// rate over the time since the block before; the header written once, rows
// appended, and a file with another header refused.
func TestThroughputCSV(t *testing.T) {
	run := RunID{7}
	blocks := testBlocks(t, Payloads{Run: run, Size: 147})
	s, err := Summarise(blocks, run)
	if err != nil {
		t.Fatal(err)
	}
	r := Result{System: "ttld", Workload: Transfers, Transport: HTTP, TxIndex: "off", Signers: 1000, Summary: s, Blocks: blocks,
		Sent: 4, NotCommitted: 1, Sending: Sending{Accepted: 3, RefusedAtCheck: 1, Retries: 5}}
	path := filepath.Join(t.TempDir(), "bench", "throughput.csv")
	for range 2 {
		if err := AppendCSV(path, ThroughputHeader, ThroughputRows(r)); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(path)
	want := "client,tx_index,signers,system,workload,t_s,tx_per_s\n" + strings.Repeat("http,off,1000,ttld,transfers,0.000,2.0\nhttp,off,1000,ttld,transfers,2.000,0.5\n", 2)
	if string(got) != want {
		t.Fatalf("throughput CSV:\n%s\nwant:\n%s", got, want)
	}
	if err := AppendCSV(path, SummaryHeader, [][]string{SummaryRow(r)}); err == nil || !strings.Contains(err.Error(), "header") {
		t.Fatalf("summary rows appended to a throughput file: %v", err)
	}
	sum := filepath.Join(t.TempDir(), "compare.csv")
	if err := AppendCSV(sum, SummaryHeader, [][]string{SummaryRow(r)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(sum); string(got) != "client,tx_index,signers,workload,system,tx_per_s,p50_ms,p99_ms,sent,accepted,refused_checktx,retries,gave_up,failed,not_committed\nhttp,off,1000,transfers,ttld,0.8,2400.0,2800.0,4,3,1,5,0,0,1\n" {
		t.Fatalf("summary CSV:\n%s", got)
	}
}
