package load

import (
	"fmt"
	"slices"
	"time"

	"github.com/cometbft/cometbft/test/loadtime/report"
	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/gofrs/uuid"
)

// blockStore hands the loadtime report a run's blocks (consecutive heights) with the
// run's committed transactions replaced by their payloads.
type blockStore []Block

var _ report.BlockStore = blockStore(nil)

func (s blockStore) Base() int64 { return s[0].Height }

// Height is one past the last block. NB: GenerateFromBlockStore dates block H's
// transactions with block H+1's time (when H was committed) and loads blocks Base()
// to Height()-1 only, so this way every block's transactions are read but the last
// block's, which only dates the one before it.
func (s blockStore) Height() int64 { return s[len(s)-1].Height + 1 }

func (s blockStore) LoadBlock(h int64) *cmttypes.Block {
	b := s[h-s.Base()]
	return &cmttypes.Block{Header: cmttypes.Header{Height: b.Height, Time: b.Time}, Data: cmttypes.Data{Txs: b.Payloads}}
}

// Latency summarises the commit latencies of a run's transactions: from the send to
// the time of the block after the one that includes it (when that block was committed).
type Latency struct {
	Min, Avg, Max, P50, P99 time.Duration
	// Negative counts transactions dated before they were sent, which means clocks
	// that disagree (the node's block time against the load tool's).
	Negative int
}

// Summary is what a run committed, from its blocks.
type Summary struct {
	// First and Last are the first and last blocks holding a committed transaction of
	// the run; Span is the block time from the block before First to Last, the time
	// those blocks took.
	First, Last int64
	Span        time.Duration
	// Committed and Refused count the run's transactions included with code 0 and with
	// another code.
	Committed, Refused int
	// TxPerS is Committed over Span.
	TxPerS  float64
	Latency Latency
}

// Summarise reads blocks, consecutive heights from one before the run's first
// transaction to one past its last, whose last block only dates the one before it
// (its transactions are not counted). The latencies are the loadtime report's
// (report.GenerateFromBlockStore) for run.
func Summarise(blocks []Block, run RunID) (Summary, error) {
	if len(blocks) < 2 {
		return Summary{}, fmt.Errorf("load: %d blocks: a summary needs a block before the run and one after it", len(blocks))
	}
	var s Summary
	var before, last time.Time // the times of the block before First, and of Last
	for i, b := range blocks[:len(blocks)-1] {
		if b.Height != blocks[0].Height+int64(i) {
			return Summary{}, fmt.Errorf("load: block %d where %d belongs", b.Height, blocks[0].Height+int64(i))
		}
		s.Refused += b.Refused
		if b.Committed == 0 {
			continue
		}
		if s.Committed == 0 {
			if i == 0 {
				return Summary{}, fmt.Errorf("load: the first block %d holds transactions of the run: start one block earlier", b.Height)
			}
			s.First, before = b.Height, blocks[i-1].Time
		}
		s.Committed += b.Committed
		s.Last, last = b.Height, b.Time
	}
	if s.Committed == 0 {
		return s, fmt.Errorf("load: no transaction of run %s was committed with code 0 (%d refused)", run, s.Refused)
	}
	s.Span = last.Sub(before)
	if s.Span > 0 {
		s.TxPerS = float64(s.Committed) / s.Span.Seconds()
	}
	lat, n, err := latencies(blocks, run)
	if err != nil {
		return Summary{}, err
	}
	if n != s.Committed {
		return Summary{}, fmt.Errorf("load: the loadtime report dated %d transactions of run %s, %d were committed", n, run, s.Committed)
	}
	s.Latency = lat
	return s, nil
}

// latencies asks the loadtime report for the run's latencies over blocks.
func latencies(blocks []Block, run RunID) (Latency, int, error) {
	rs, err := report.GenerateFromBlockStore(blockStore(blocks))
	if err != nil {
		return Latency{}, 0, fmt.Errorf("load: loadtime report: %w", err)
	}
	if rs.ErrorCount() > 0 {
		return Latency{}, 0, fmt.Errorf("load: the loadtime report could not read %d payloads", rs.ErrorCount())
	}
	for _, r := range rs.List() {
		if r.ID != uuid.UUID(run) {
			continue
		}
		d := make([]time.Duration, len(r.All))
		for i, p := range r.All {
			d[i] = p.Duration
		}
		slices.Sort(d)
		return Latency{Min: r.Min, Avg: r.Avg, Max: r.Max, P50: percentile(d, 50), P99: percentile(d, 99), Negative: r.NegativeCount}, len(d), nil
	}
	return Latency{}, 0, nil
}

// percentile is the nearest-rank p-th percentile of sorted d: the smallest value at
// or above p percent of them.
func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	rank := (len(d)*p + 99) / 100
	return d[max(rank, 1)-1]
}
