package web

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/cometbft/cometbft/p2p"
	rpcclient "github.com/cometbft/cometbft/rpc/client"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	cmttypes "github.com/cometbft/cometbft/types"
)

// indexRPC answers searches from fixed rows as CometBFT's index does: the rows of a
// query's conditions within its window of heights, newest first, a page at a time,
// refusing a page past the last; its latest height is the highest row's.
type indexRPC struct {
	rpcclient.Client
	rows map[string][]hit // by query, any order
}

func (x indexRPC) Status(context.Context) (*coretypes.ResultStatus, error) {
	var top int64
	for _, rows := range x.rows {
		for _, h := range rows {
			top = max(top, h.height)
		}
	}
	return &coretypes.ResultStatus{NodeInfo: p2p.DefaultNodeInfo{Other: p2p.DefaultNodeInfoOther{TxIndex: "on"}},
		SyncInfo: coretypes.SyncInfo{LatestBlockHeight: top}}, nil
}

// windowRE matches a search of a window of heights: its conditions, then the window.
var windowRE = regexp.MustCompile(`^(?:(.*) AND )?(?:tx|block)\.height >= (\d+) AND (?:tx|block)\.height <= (\d+)$`)

func (x indexRPC) find(query string, page, per int) ([]hit, int, error) {
	m := windowRE.FindStringSubmatch(query)
	if m == nil {
		return nil, 0, fmt.Errorf("not a window: %q", query)
	}
	lo, _ := strconv.ParseInt(m[2], 10, 64)
	hi, _ := strconv.ParseInt(m[3], 10, 64)
	var all []hit
	for _, h := range x.rows[m[1]] {
		if h.height >= lo && h.height <= hi {
			all = append(all, h)
		}
	}
	slices.SortFunc(all, func(a, b hit) int {
		if a.after(b) {
			return -1
		}
		return 1
	})
	if (page-1)*per >= len(all) && page > 1 {
		return nil, 0, fmt.Errorf("page should be within [1, %d] range, given %d", (len(all)+per-1)/per, page)
	}
	return all[min(len(all), (page-1)*per):min(len(all), page*per)], len(all), nil
}

func (x indexRPC) TxSearch(_ context.Context, query string, _ bool, page, per *int, _ string) (*coretypes.ResultTxSearch, error) {
	rows, total, err := x.find(query, *page, *per)
	if err != nil {
		return nil, err
	}
	out := &coretypes.ResultTxSearch{TotalCount: total}
	for _, h := range rows {
		out.Txs = append(out.Txs, &coretypes.ResultTx{Height: h.height, Index: uint32(h.index), TxResult: abcitypes.ExecTxResult{}})
	}
	return out, nil
}

func (x indexRPC) BlockSearch(_ context.Context, query string, page, per *int, _ string) (*coretypes.ResultBlockSearch, error) {
	rows, total, err := x.find(query, *page, *per)
	if err != nil {
		return nil, err
	}
	out := &coretypes.ResultBlockSearch{TotalCount: total}
	for _, h := range rows {
		out.Blocks = append(out.Blocks, &coretypes.ResultBlock{Block: &cmttypes.Block{Header: cmttypes.Header{Height: h.height}}})
	}
	return out, nil
}

// TestHistoryPages: paging through a union of searches with cursors, at any limit,
// lists each row of the union once, newest first, a transaction that several
// searches find once; and rows the chain adds at the top meanwhile change none of
// the pages after the first.
func TestHistoryPages(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 40 {
		searches := []search{{query: "a"}, {query: "b"}, {blocks: true, query: "c"}}
		rows := map[string][]hit{}
		want := map[[2]int64]bool{}
		// Heights of a few rows and now and then one of many (more than a page of
		// CometBFT's), over many windows.
		for h := int64(1); h <= int64(5+rng.IntN(300)); h++ {
			per := rng.IntN(3)
			if rng.IntN(20) == 0 {
				per = rng.IntN(260)
			}
			for i := range per {
				for _, q := range []string{"a", "b"} {
					if rng.IntN(3) == 0 {
						rows[q] = append(rows[q], hit{height: h, index: i})
						want[[2]int64{h, int64(i)}] = true
					}
				}
			}
			if rng.IntN(2) == 0 {
				rows["c"] = append(rows["c"], hit{height: h, index: -1})
				want[[2]int64{h, -1}] = true
			}
		}
		rpc := indexRPC{rows: rows}
		s := &Server{rpc: rpc}
		limit := 1 + rng.IntN(MaxLimit)
		all := len(want)
		// Half the rounds keep the rows of even heights alone.
		var keep func(hit) bool
		if round%2 == 1 {
			keep = func(h hit) bool { return h.height%2 == 0 }
			for k := range want {
				if k[0]%2 != 0 {
					delete(want, k)
				}
			}
		}
		var got []hit
		c := cursor{skip: make([]int, len(searches))}
		for pages := 0; ; pages++ {
			if pages > all+1 {
				t.Fatalf("round %d: the pages do not end", round)
			}
			page, next, err := s.history(context.Background(), searches, c, limit, keep)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if len(page) > limit || (keep == nil && next != "" && len(page) != limit) {
				t.Fatalf("round %d: a page of %d rows at limit %d, next %q", round, len(page), limit, next)
			}
			got = append(got, page...)
			if next == "" {
				break
			}
			// The chain grows at the top: the cursor's pages do not change.
			rows["a"] = append(rows["a"], hit{height: 1000 + int64(pages), index: 0})
			r := httptest.NewRequest("GET", "/txs?"+url.Values{"cursor": {next}}.Encode(), nil)
			if c, err = cursorOf(r, len(searches)); err != nil {
				t.Fatal(err)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("round %d, limit %d: %d rows, want %d", round, limit, len(got), len(want))
		}
		for i := range got {
			if i > 0 && !got[i-1].after(got[i]) {
				t.Fatalf("round %d: row %d (%d,%d) does not follow (%d,%d)", round, i, got[i].height, got[i].index, got[i-1].height, got[i-1].index)
			}
			if !want[[2]int64{got[i].height, int64(got[i].index)}] {
				t.Fatalf("round %d: row (%d,%d) is none of the searches'", round, got[i].height, got[i].index)
			}
		}
	}
}

// TestCursorOf: a cursor is read back as written, and anything else is bad input.
func TestCursorOf(t *testing.T) {
	c := cursor{height: 12, skip: []int{0, 3}}
	r := httptest.NewRequest("GET", "/txs?cursor="+c.String(), nil)
	if got, err := cursorOf(r, 2); err != nil || got.String() != c.String() {
		t.Fatalf("%v %v", got, err)
	}
	for _, v := range []string{"12", "12.0", "0.0.0", "x.0.0", "12.-1.0", "12.0.0.0", "12.0.99999999"} {
		r := httptest.NewRequest("GET", "/txs?cursor="+v, nil)
		if _, err := cursorOf(r, 2); err == nil {
			t.Errorf("cursor %q read", v)
		}
	}
}

// TestStatsFigures: the statistics' decimals and durations as the page writes them.
func TestStatsFigures(t *testing.T) {
	var p statsPage
	for milli, want := range map[uint64]string{0: "0", 70: "0.07", 2339: "2.339", 5000: "5", 12500: "12.5"} {
		if got := p.Per(milli); got != want {
			t.Errorf("Per(%d) = %q, want %q", milli, got, want)
		}
	}
	for d, want := range map[time.Duration]string{1711381386: "1.711s", 30560381: "31ms", 3599400 * time.Millisecond: "59m59s"} {
		if got := p.Rounded(d); got != want {
			t.Errorf("Rounded(%d) = %q, want %q", d, got, want)
		}
	}
}
