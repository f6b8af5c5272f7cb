package abci

import (
	"context"
	"sync/atomic"

	abcicli "github.com/cometbft/cometbft/abci/client"
	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/cometbft/cometbft/proxy"
)

// ClientCreator is the proxy.ClientCreator a node runs the application with: each of
// CometBFT's four connections (consensus, mempool, query, snapshot) gets a local client
// with its own lock, as CometBFT's connection-synchronised local clients do, so the
// consensus connection's calls stay in order and a slow query does not stall them;
// CheckTx alone takes no lock of the client's.
//
// CometBFT's mempool calls CheckTx on the goroutine that received the transaction (an
// RPC connection's, a peer's), holding its own lock shared, so many arrive at once: the
// application judges them concurrently (checkstate.go), each verifying its signature and
// reading the saved version on its own goroutine. The mempool's recheck after a block
// holds that lock exclusively and sends its transactions one at a time, in the
// mempool's order. CometBFT v0.38's local clients lock every call; its later versions
// have an unsynchronised local client for applications that take their own locks, which
// this one mirrors for CheckTx.
func (a *Application) ClientCreator() proxy.ClientCreator { return clientCreator{a} }

type clientCreator struct{ app *Application }

func (c clientCreator) NewABCIClient() (abcicli.Client, error) {
	return &client{Client: abcicli.NewLocalClient(nil, c.app), app: c.app}, nil
}

// client is a connection-synchronised local client whose CheckTx and CheckTxAsync call
// the application directly.
type client struct {
	abcicli.Client
	app      *Application
	callback atomic.Pointer[abcicli.Callback]
}

// SetResponseCallback sets the callback every answer of CheckTxAsync goes to (the
// mempool's, which handles rechecks).
func (c *client) SetResponseCallback(cb abcicli.Callback) {
	c.callback.Store(&cb)
	c.Client.SetResponseCallback(cb)
}

func (c *client) CheckTx(ctx context.Context, req *abcitypes.RequestCheckTx) (*abcitypes.ResponseCheckTx, error) {
	return c.app.CheckTx(ctx, req)
}

// CheckTxAsync checks on the caller's goroutine, calls the response callback, and
// returns the answered request: the callback the mempool sets on it then runs at once.
func (c *client) CheckTxAsync(ctx context.Context, req *abcitypes.RequestCheckTx) (*abcicli.ReqRes, error) {
	res, err := c.app.CheckTx(ctx, req)
	if err != nil {
		return nil, err
	}
	request, response := abcitypes.ToRequestCheckTx(req), abcitypes.ToResponseCheckTx(res)
	if cb := c.callback.Load(); cb != nil {
		(*cb)(request, response)
	}
	rr := abcicli.NewReqRes(request)
	rr.Response = response
	rr.InvokeCallback()
	rr.Done()
	return rr, nil
}
