package web_test

import (
	"context"
	"encoding/hex"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cmtbytes "github.com/cometbft/cometbft/libs/bytes"
	rpcclient "github.com/cometbft/cometbft/rpc/client"
	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/web"
	"github.com/ttld-dev/ttld/web/check"
)

// countingRPC counts the calls the view makes to the node, by method (and query path),
// and the bytes of the abci_query values it reads; it records the latest height each
// status reported.
type countingRPC struct {
	rpcclient.Client
	mu         sync.Mutex
	calls      map[string]int
	queryBytes int
	latest     []int64
}

func newCountingRPC(rpc rpcclient.Client) *countingRPC {
	return &countingRPC{Client: rpc, calls: map[string]int{}}
}

func (c *countingRPC) count(method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[method]++
}

// take returns the calls, the query bytes and the statuses' heights since the last take.
func (c *countingRPC) take() (map[string]int, int, []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	calls, bytes, latest := c.calls, c.queryBytes, c.latest
	c.calls, c.queryBytes, c.latest = map[string]int{}, 0, nil
	return calls, bytes, latest
}

func (c *countingRPC) Status(ctx context.Context) (*coretypes.ResultStatus, error) {
	c.count("status")
	st, err := c.Client.Status(ctx)
	if err == nil {
		c.mu.Lock()
		c.latest = append(c.latest, st.SyncInfo.LatestBlockHeight)
		c.mu.Unlock()
	}
	return st, err
}

func (c *countingRPC) ABCIInfo(ctx context.Context) (*coretypes.ResultABCIInfo, error) {
	c.count("abci_info")
	info, err := c.Client.ABCIInfo(ctx)
	if err == nil {
		c.mu.Lock()
		c.latest = append(c.latest, info.Response.LastBlockHeight)
		c.mu.Unlock()
	}
	return info, err
}

func (c *countingRPC) ABCIQueryWithOptions(ctx context.Context, path string, data cmtbytes.HexBytes, opts rpcclient.ABCIQueryOptions) (*coretypes.ResultABCIQuery, error) {
	c.count("abci_query " + path)
	res, err := c.Client.ABCIQueryWithOptions(ctx, path, data, opts)
	if err == nil {
		c.mu.Lock()
		c.queryBytes += len(res.Response.Value)
		c.mu.Unlock()
	}
	return res, err
}

func (c *countingRPC) ABCIQuery(ctx context.Context, path string, data cmtbytes.HexBytes) (*coretypes.ResultABCIQuery, error) {
	return c.ABCIQueryWithOptions(ctx, path, data, rpcclient.DefaultABCIQueryOptions)
}

func (c *countingRPC) BlockResults(ctx context.Context, height *int64) (*coretypes.ResultBlockResults, error) {
	c.count("block_results")
	return c.Client.BlockResults(ctx, height)
}

func (c *countingRPC) BlockchainInfo(ctx context.Context, minHeight, maxHeight int64) (*coretypes.ResultBlockchainInfo, error) {
	c.count("blockchain")
	return c.Client.BlockchainInfo(ctx, minHeight, maxHeight)
}

func (c *countingRPC) Block(ctx context.Context, height *int64) (*coretypes.ResultBlock, error) {
	c.count("block")
	return c.Client.Block(ctx, height)
}

func (c *countingRPC) Commit(ctx context.Context, height *int64) (*coretypes.ResultCommit, error) {
	c.count("commit")
	return c.Client.Commit(ctx, height)
}

func (c *countingRPC) Validators(ctx context.Context, height *int64, page, perPage *int) (*coretypes.ResultValidators, error) {
	c.count("validators")
	return c.Client.Validators(ctx, height, page, perPage)
}

// startCountedChain is startChain with the view's calls to the node counted.
func startCountedChain(t testing.TB) (chain, *countingRPC) {
	t.Helper()
	var rpc *countingRPC
	c := startChainThrough(t, func(r rpcclient.Client) rpcclient.Client {
		rpc = newCountingRPC(r)
		return rpc
	})
	return c, rpc
}

// TestViewCosts: what the view asks the node for, on one chain: a bundle is served at
// once, a chart viewed again reads only its new heights, and the address pages of a
// height share their scan.
func TestViewCosts(t *testing.T) {
	t.Parallel()
	c, rpc := startCountedChain(t)
	t.Run("bundle at once", func(t *testing.T) { bundleAtOnce(t, c, rpc) })
	t.Run("charts read new heights only", func(t *testing.T) { chartsReadNewHeightsOnly(t, c, rpc) })
	t.Run("address scan shared", func(t *testing.T) { addressScanShared(t, c, rpc) })
}

// BenchmarkViewCost: what one view of each chart of the overview, and of an address
// page, costs the node: its RPC calls (rpc/op, of which block_results/op and
// blockchain/op), the abci_query bytes it reads, and its time. The chain first grows
// past web.ChartBlocks, so each chart reads its whole span; views come a second apart
// (about a block), as a reader reloading a page would make them.
func BenchmarkViewCost(b *testing.B) {
	c, rpc := startCountedChain(b)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.env.Client.WaitForHeight(ctx, web.ChartBlocks+1); err != nil {
		b.Fatal(err)
	}
	for _, path := range []string{"/chart/backlog.svg", "/chart/blocks.svg", "/chart/rate.svg", "/address/" + c.env.Dev.Address().String()} {
		b.Run(path, func(b *testing.B) {
			var calls, blockResults, blockchain, bytes int
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				time.Sleep(time.Second)
				rpc.take()
				b.StartTimer()
				if status, _, body := c.get(b, path); status != http.StatusOK {
					b.Fatalf("GET %s: %d %.200s", path, status, body)
				}
				n, read, _ := rpc.take()
				for _, k := range n {
					calls += k
				}
				blockResults += n["block_results"]
				blockchain += n["blockchain"]
				bytes += read
			}
			b.ReportMetric(float64(calls)/float64(b.N), "rpc/op")
			b.ReportMetric(float64(blockResults)/float64(b.N), "block_results/op")
			b.ReportMetric(float64(blockchain)/float64(b.N), "blockchain/op")
			b.ReportMetric(float64(bytes)/float64(b.N), "query-B/op")
		})
	}
}

// bundleAtOnce: a proof bundle is served from a header that existed when it was
// asked for, with one look at the latest height, one query and one commit, never by
// polling for the next block; the state it proves is the one the pages read; a height
// the latest block does not prove yet is not found, at once.
func bundleAtOnce(t *testing.T, c chain, rpc *countingRPC) {
	data := hex.EncodeToString(proofs.DocumentData(c.contract, "note", c.document))
	c.get(t, "/proof?path=/document&data="+data) // the view asks the chain id once, here
	for range 3 {
		rpc.take()
		status, _, raw := c.get(t, "/proof?path=/document&data="+data)
		calls, _, latest := rpc.take()
		if status != http.StatusOK {
			t.Fatalf("proof bundle: %d %s", status, raw)
		}
		if want := map[string]int{"status": 1, "abci_query /document": 1, "commit": 1}; !maps.Equal(calls, want) {
			t.Errorf("the bundle's calls %v, want %v", calls, want)
		}
		b, err := check.DecodeBundle([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if r, err := check.Check(b, c.env.Trusted); err != nil || !r.Present {
			t.Fatalf("the bundle does not check: %+v %v", r, err)
		}
		if b.SignedHeader.Height != latest[0] || b.Response.Height != latest[0]-1 {
			t.Errorf("a bundle of the state after block %d with header %d, when the latest block was %d", b.Response.Height, b.SignedHeader.Height, latest[0])
		}
	}
	st, err := c.env.Client.RPC().Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	future := strconv.FormatInt(st.SyncInfo.LatestBlockHeight+5, 10)
	if status, _, body := c.get(t, "/proof?path=/document&data="+data+"&height="+future); status != http.StatusNotFound {
		t.Errorf("a bundle of a state not proven yet: %d %.200s", status, body)
	}
}

// chartsReadNewHeightsOnly: a chart viewed again asks the node only for the
// heights it has not drawn (block results for the backlog, headers for the blocks
// and rate charts), and draws what a view that kept nothing draws.
func chartsReadNewHeightsOnly(t *testing.T, c chain, rpc *countingRPC) {
	// fresh is a view that has kept nothing yet, and what it asks the node.
	fresh := func() (*httptest.Server, *countingRPC) {
		r, err := rpchttp.New(c.env.RPC, "/websocket")
		if err != nil {
			t.Fatal(err)
		}
		counted := newCountingRPC(r)
		s, err := web.New(counted, web.Options{Trusted: c.env.Trusted})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(s.Handler())
		t.Cleanup(srv.Close)
		return srv, counted
	}
	for _, ch := range []struct {
		path, call string
		perCall    int64
	}{
		{"/chart/backlog.svg", "block_results", 1},
		{"/chart/blocks.svg", "blockchain", web.BlocksPerPage},
		{"/chart/rate.svg", "blockchain", web.BlocksPerPage},
	} {
		rpc.take()
		c.get(t, ch.path)
		_, _, seen := rpc.take()
		for view := range 2 {
			// The first view comes after a block, the second as soon as the first
			// ends, when a block may have come or not.
			if view == 0 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				_, err := c.env.Client.WaitForHeight(ctx, seen[0]+1)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
			}
			status, _, cached := c.get(t, ch.path)
			calls, _, latest := rpc.take()
			if status != http.StatusOK {
				t.Fatalf("GET %s: %d %.200s", ch.path, status, cached)
			}
			newHeights := latest[0] - seen[0]
			if want := (newHeights + ch.perCall - 1) / ch.perCall; int64(calls[ch.call]) != want {
				t.Errorf("GET %s, view %d: %d %s calls for %d new heights, want %d", ch.path, view, calls[ch.call], ch.call, newHeights, want)
			}
			seen = latest
			// The same chart from a view that kept nothing, when no block came between.
			srv, counted := fresh()
			_, _, uncached := getFrom(t, srv, ch.path)
			if _, _, at := counted.take(); at[0] == latest[0] && cached != uncached {
				t.Errorf("GET %s, view %d: the chart drawn from what was kept differs from the chart drawn afresh", ch.path, view)
			}
		}
	}
}

// addressScanShared: the balance changes of an address page are read once per
// height for every address: another address's page at the same height asks the node
// for its own value only, and shows its own changes.
func addressScanShared(t *testing.T, c chain, rpc *countingRPC) {
	dev, other := "/address/"+c.env.Dev.Address().String(), "/address/"+strings.Repeat("0", 39)+"2"
	for attempt := 0; ; attempt++ {
		rpc.take()
		_, _, devPage := c.get(t, dev)
		_, _, first := rpc.take()
		status, _, otherPage := c.get(t, other)
		calls, _, second := rpc.take()
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %.200s", other, status, otherPage)
		}
		if first[0] != second[0] {
			if attempt == 5 {
				t.Fatal("a block came between the two views, five times")
			}
			continue // a block came between the views: another height
		}
		if want := map[string]int{"status": 1, "abci_query /address": 1}; !maps.Equal(calls, want) {
			t.Errorf("the second address page's calls %v, want %v", calls, want)
		}
		if change := `<td class="num">`; !strings.Contains(devPage, change) || strings.Contains(otherPage, change) {
			t.Errorf("the dev address's page lists no change, or the other address's lists some")
		}
		return
	}
}

// getFrom is chain.get from another server.
func getFrom(t testing.TB, srv *httptest.Server, path string) (int, http.Header, string) {
	t.Helper()
	return chain{srv: srv}.get(t, path)
}
