package load

import (
	"context"
	"fmt"
	"net/http"
	"time"

	rpchttp "github.com/cometbft/cometbft/rpc/client/http"

	"github.com/ttld-dev/ttld/client"
)

// rpcIdle is how long an idle connection to the RPC is kept for the next request.
// NB: below the RPC server's 10 s (its ReadTimeout, which Go's server also takes as
// the idle timeout): otherwise a request sent after the load, on a connection idle
// since before it, can meet the server closing it and fail with a reset.
const rpcIdle = 5 * time.Second

// rpcTimeout bounds one RPC request, such as a block of the run.
const rpcTimeout = 30 * time.Second

// httpClient is the RPC's HTTP client.
func httpClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.IdleConnTimeout = rpcIdle
	return &http.Client{Transport: t, Timeout: rpcTimeout}
}

// drainPoll is how often drain asks for the mempool's size.
const drainPoll = 200 * time.Millisecond

// drain waits, at most limit, for the node's mempool to empty, and returns how many
// transactions it held at the end. The mempool counts as empty when it is at two
// polls with a block between them: one empty poll may fall between a block taking
// every transaction and the node reading the next ones from its connections.
func drain(ctx context.Context, rpc *rpchttp.HTTP, c *client.Client, limit time.Duration) (int, error) {
	deadline := time.Now().Add(limit)
	emptyAt := int64(-1) // the height at the first of the empty polls in a row
	for {
		r, err := rpc.NumUnconfirmedTxs(ctx)
		if err != nil {
			return 0, fmt.Errorf("load: mempool size: %w", err)
		}
		h, err := c.LatestHeight(ctx)
		if err != nil {
			return 0, fmt.Errorf("load: latest height: %w", err)
		}
		switch {
		case r.Total > 0:
			emptyAt = -1
		case emptyAt < 0:
			emptyAt = h
		case h > emptyAt:
			return 0, nil
		}
		if time.Now().After(deadline) {
			return r.Total, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(drainPoll):
		}
	}
}
