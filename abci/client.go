package abci

import (
	"context"

	abcicli "github.com/cometbft/cometbft/abci/client"
	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/cometbft/cometbft/proxy"
)

// ClientCreator is the proxy.ClientCreator a node runs the application with: CometBFT's
// connection-synchronised local clients (each of the four connections with its own
// lock, the application taking its own locks, so a slow query does not stall
// consensus), whose CheckTx first verifies a new transaction's signature on the
// caller's goroutine, outside the mempool connection's lock.
//
// CometBFT calls CheckTx from the goroutine that received the transaction (an RPC
// connection's, or a peer's), and the mempool connection's lock then runs them one at a
// time; an ed25519 verification is most of a transfer's CheckTx. Verified before the
// lock, on as many goroutines as there are connections sending, the signature is found
// remembered by CheckTx itself (verifiedSignatures), which then only does the state
// checks. A recheck (the mempool's, after each block, on the consensus goroutine) goes
// straight to CheckTx: its signature was remembered when it was new.
func (a *Application) ClientCreator() proxy.ClientCreator { return clientCreator{a} }

type clientCreator struct{ app *Application }

func (c clientCreator) NewABCIClient() (abcicli.Client, error) {
	return verifyingClient{Client: abcicli.NewLocalClient(nil, c.app), app: c.app}, nil
}

// verifyingClient is a local client whose CheckTx verifies a new transaction's
// signature before it takes the connection's lock.
type verifyingClient struct {
	abcicli.Client
	app *Application
}

func (c verifyingClient) CheckTx(ctx context.Context, req *abcitypes.RequestCheckTx) (*abcitypes.ResponseCheckTx, error) {
	c.app.verifyBeforeCheck(req)
	return c.Client.CheckTx(ctx, req)
}

func (c verifyingClient) CheckTxAsync(ctx context.Context, req *abcitypes.RequestCheckTx) (*abcicli.ReqRes, error) {
	c.app.verifyBeforeCheck(req)
	return c.Client.CheckTxAsync(ctx, req)
}

// verifyBeforeCheck verifies a new transaction's signature into the cache, as far as
// the last saved version tells its signer's key. Whatever it cannot tell, or fails to
// read, is left to CheckTx, which verifies and refuses as it always does.
func (a *Application) verifyBeforeCheck(req *abcitypes.RequestCheckTx) {
	ahead := a.ahead.Load()
	if ahead == nil || req.Type != abcitypes.CheckTxType_New {
		return
	}
	c, ok, err := ahead.Check(req.Tx)
	if err != nil || !ok {
		return
	}
	a.signatures.Verify(c.PubKey, c.Message, c.Signature)
}
