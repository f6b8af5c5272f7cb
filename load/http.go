package load

import (
	"context"
	"fmt"
	"net/http"
	"time"

	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	jsonrpcclient "github.com/cometbft/cometbft/rpc/jsonrpc/client"
)

// oneConnection is an HTTP client that keeps one connection to the node open and
// sends every request on it, one at a time.
func oneConnection() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxConnsPerHost, t.MaxIdleConnsPerHost = 1, 1
	t.IdleConnTimeout = rpcIdle
	return &http.Client{Transport: t, Timeout: rpcTimeout}
}

// sendHTTP sends c's transactions as JSON-RPC POSTs on one keep-alive connection,
// each after the answer to the one before: a transaction a full mempool refused is
// sent again after a backoff, until it is taken or sc.retryEnd would pass, before the
// next one is generated.
func sendHTTP(ctx context.Context, sc sendConfig, c *Client, t *tally) error {
	hc := oneConnection()
	defer hc.CloseIdleConnections()
	rpc, err := jsonrpcclient.NewWithHTTPClient(sc.node, hc)
	if err != nil {
		return fmt.Errorf("load: HTTP client of %s: %w", sc.node, err)
	}
	p := pacer{rate: sc.rate}
	for fresh := 0; (sc.count == 0 || fresh < sc.count) && time.Now().Before(sc.end); fresh++ {
		tx, err := c.GenerateTx()
		if err != nil {
			return err
		}
		for refusals := 1; ; refusals++ {
			if err := p.wait(ctx); err != nil {
				return err
			}
			var res coretypes.ResultBroadcastTx
			_, err := rpc.Call(ctx, sc.method, map[string]any{"tx": tx}, &res)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			a := judge(&res, err)
			if a != mempoolFull {
				t.final(a)
				break
			}
			wait := backoff(refusals)
			if time.Now().Add(wait).After(sc.retryEnd) {
				t.final(a)
				break
			}
			if err := sleep(ctx, wait); err != nil {
				return err
			}
			t.retry()
		}
	}
	return nil
}
