package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
)

// The chain's statistics: over the last StatsWindow of blocks, how often blocks came
// and how many transactions they held (from the headers, which count each block's
// transactions), and, at the newest proven state, the live documents and those
// expiring within the next StatsWindow (the node's /statistics query, counted from
// the tree's shape). All of it is the node's word.

// StatsWindow is how far back the block figures, and how far ahead the expirations,
// are counted.
const StatsWindow = time.Hour

// StatsMaxBlocks bounds the blocks the figures count: a chain faster than one block
// every StatsWindow/StatsMaxBlocks is counted over its last StatsMaxBlocks blocks, and
// the page says how long they took.
const StatsMaxBlocks = 20_000

type statsPage struct {
	Height int64     `json:"height"`
	Time   time.Time `json:"time"`
	// The window counted: its first block, how many blocks and how long, whether
	// StatsMaxBlocks cut it short of StatsWindow.
	From     int64         `json:"from_height"`
	Blocks   int64         `json:"blocks"`
	Span     time.Duration `json:"span_ns"`
	Cut      bool          `json:"cut,omitempty"`
	Txs      uint64        `json:"transactions"`
	BlockGap time.Duration `json:"block_time_ns"`
	// TxsPerBlock and TxsPerSecond are in thousandths, so that the answer holds
	// integers alone.
	TxsPerBlock  uint64 `json:"transactions_per_block_milli"`
	TxsPerSecond uint64 `json:"transactions_per_second_milli"`
	// State are the statistics of the newest proven state; Due the expirations due at
	// its block time already (the cleanup's backlog).
	StateHeight int64            `json:"state_height"`
	State       drive.Statistics `json:"state"`
	Due         uint64           `json:"due"`
}

// Per writes a figure in thousandths as a decimal, its trailing zeros dropped: 2.34,
// 0.07, 5.
func (statsPage) Per(milli uint64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%d.%03d", milli/1000, milli%1000), "0"), ".")
}

// Rounded writes a duration to the millisecond, or to the second from ten seconds on.
func (statsPage) Rounded(d time.Duration) string {
	if d >= 10*time.Second {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Millisecond).String()
}

// stats shows the chain's statistics.
func (s *Server) stats(r *http.Request) (any, error) {
	ctx := r.Context()
	latest, err := s.latestHeight(ctx)
	if err != nil {
		return nil, err
	}
	p := statsPage{Height: latest}
	if latest < 1 {
		return p, nil
	}
	if p.Time, err = s.timeAt(ctx, latest); err != nil {
		return nil, err
	}
	bottom := max(1, latest-StatsMaxBlocks+1)
	p.Cut = bottom > 1
	// The first block of the window: the lowest at or after Time - StatsWindow.
	since := p.Time.Add(-StatsWindow)
	var searchErr error
	first := bottom + int64(sort.Search(int(latest-bottom+1), func(i int) bool {
		t, err := s.timeAt(ctx, bottom+int64(i))
		if err != nil {
			searchErr = err
			return true
		}
		return !t.Before(since)
	}))
	if searchErr != nil {
		return nil, searchErr
	}
	if first > bottom {
		p.Cut = false
	}
	first = min(first, latest)
	start, err := s.timeAt(ctx, first)
	if err != nil {
		return nil, err
	}
	p.From, p.Blocks, p.Span = first, latest-first+1, p.Time.Sub(start)
	if p.Txs, err = s.txCounts.sum(ctx, s, first, latest); err != nil {
		return nil, err
	}
	if p.Blocks > 1 {
		p.BlockGap = p.Span / time.Duration(p.Blocks-1)
	}
	p.TxsPerBlock = p.Txs * 1000 / uint64(p.Blocks)
	if ms := uint64(p.Span.Milliseconds()); ms > 0 {
		p.TxsPerSecond = p.Txs * 1000 * 1000 / ms
	}
	if latest < 2 {
		return p, nil
	}
	h, err := provenBelow(latest)
	if err != nil {
		return nil, err
	}
	at, err := s.timeAt(ctx, h)
	if err != nil {
		return nil, err
	}
	p.StateHeight = h
	if p.State, err = s.statistics(ctx, h, uint64(at.Add(StatsWindow).UnixMilli())); err != nil {
		return nil, err
	}
	due, err := s.statistics(ctx, h, uint64(at.UnixMilli())+1)
	p.Due = due.Expiring
	return p, err
}

// statistics reads the node's statistics at height, the expirations until untilMs.
func (s *Server) statistics(ctx context.Context, height int64, untilMs uint64) (drive.Statistics, error) {
	var st drive.Statistics
	a, err := s.rawRead(ctx, proofs.PathStatistics, proofs.StatisticsData(untilMs), height)
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(a.Value, &st)
}

// txCounts keeps the running count of transactions of a run of heights, from their
// headers, so that the statistics read each header once: a height's count never
// changes.
type txCounts struct {
	mu sync.Mutex
	// base is the first height counted; total[i] the transactions of heights base to
	// base+i.
	base  int64
	total []uint64
}

// sum is the transactions of heights from to to, reading the headers it does not
// hold yet. Heights below StatsMaxBlocks under the newest asked are let go.
func (c *txCounts) sum(ctx context.Context, s *Server, from, to int64) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.total) == 0 || from < c.base || to-c.base >= 2*StatsMaxBlocks {
		c.base, c.total = from, nil
	}
	for next := c.base + int64(len(c.total)); next <= to; {
		top := min(to, next+BlocksPerPage-1)
		info, err := s.rpc.BlockchainInfo(ctx, next, top)
		if err != nil {
			return 0, err
		}
		// Newest first: count them in height order.
		for i := len(info.BlockMetas) - 1; i >= 0; i-- {
			m := info.BlockMetas[i]
			if m.Header.Height != next {
				return 0, fmt.Errorf("the node's headers from %d skip %d", next, next)
			}
			var before uint64
			if len(c.total) > 0 {
				before = c.total[len(c.total)-1]
			}
			c.total = append(c.total, before+uint64(m.NumTxs))
			next++
		}
		if len(info.BlockMetas) == 0 {
			return 0, fmt.Errorf("the node has no header of height %d", next)
		}
	}
	below := uint64(0)
	if i := from - c.base; i > 0 {
		below = c.total[i-1]
	}
	return c.total[to-c.base] - below, nil
}
