package node

import (
	"context"
	"errors"
	"runtime"
	"sync"

	abcicli "github.com/cometbft/cometbft/abci/client"
	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/cometbft/cometbft/proxy"
)

// gate admits CometBFT's operations on the node's storage (every read and write of the
// databases it opens through cometDBs, every call to the application) until the node
// closes it, after CometBFT has stopped: close waits for the operations in flight and
// closes the storage. An operation that comes after fails with errStopped on a
// goroutine that serves an HTTP request, and waits for good on any other.
//
// NB: CometBFT v0.38's Stop returns while goroutines of its own may still read: the
// consensus reactor's per-peer routines are not waited for (queryMaj23Routine sleeps
// peer_query_maj23_sleep_duration, 2 s, between its check that the node runs and its
// read of the block store), and the RPC server still serves the keep-alive connections
// it accepted before its listener closed. CometBFT panics on any error a store returns
// ("leveldb: closed"), and the application's store is nil once closed. A panic on a
// goroutine of net/http's server ends that request alone (net/http and CometBFT's RPC
// recover it), so the client of a stopped node gets an error; elsewhere it ends the
// process, so the operation waits instead: the process exits, or, in a test, the
// goroutine of a stopped node stays parked.
type gate struct {
	mu       sync.Mutex
	inFlight int // operations admitted and not finished (an open iterator counts)
	// idle, while close waits, is closed by the leave that brings inFlight to 0.
	idle   chan struct{}
	closed bool
	// draining is closed once close waits for operations in flight; parking, at
	// each operation that comes after close and waits for good, which makes the next
	// one anew. Tests wait on them.
	draining, parking chan struct{}
}

// signal is the channel *ch, made on first use; mu must be held.
func signal(ch *chan struct{}) chan struct{} {
	if *ch == nil {
		*ch = make(chan struct{})
	}
	return *ch
}

// fire closes the channel *ch once; mu must be held.
func fire(ch *chan struct{}) {
	c := signal(ch)
	select {
	case <-c:
	default:
		close(c)
	}
}

// enter admits an operation, which must call leave once done. After close it returns
// errStopped on a goroutine that serves an HTTP request, and never returns on another.
//
// NB: an operation is admitted even while close waits, so that one goroutine's nested
// operations (a Get while it holds an iterator of the same database, as CometBFT's
// transaction index does) cannot wait for a close that waits for them.
func (g *gate) enter() error {
	g.mu.Lock()
	if g.closed {
		if servingHTTP() {
			g.mu.Unlock()
			return errStopped
		}
		fire(&g.parking)
		g.parking = nil
		g.mu.Unlock()
		select {}
	}
	g.inFlight++
	g.mu.Unlock()
	return nil
}

// errStopped: an operation on the storage of a node that has stopped.
var errStopped = errors.New("the node has stopped")

// servingHTTP reports whether the calling goroutine serves a request of net/http's
// server, which recovers its handler's panic and ends that request.
func servingHTTP() bool {
	pcs := make([]uintptr, 512)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		switch f.Function {
		case "net/http.(*conn).serve", "net/http.(*http2serverConn).runHandler":
			return true
		}
		if !more {
			return false
		}
	}
}

func (g *gate) leave() {
	g.mu.Lock()
	g.inFlight--
	if g.inFlight == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
	g.mu.Unlock()
}

// close waits until no operation is in flight, then runs closeStorage with the gate
// closed: no operation runs during it or after. Later calls return nil.
func (g *gate) close(closeStorage func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	for g.inFlight > 0 {
		fire(&g.draining)
		idle := signal(&g.idle)
		g.mu.Unlock()
		<-idle
		g.mu.Lock()
	}
	g.closed = true
	return closeStorage()
}

// gatedClients gives CometBFT's connections to the application through g.
type gatedClients struct {
	proxy.ClientCreator
	g *gate
}

func (c gatedClients) NewABCIClient() (abcicli.Client, error) {
	cl, err := c.ClientCreator.NewABCIClient()
	if err != nil {
		return nil, err
	}
	return gatedClient{Client: cl, g: c.g}, nil
}

// gatedClient passes every call to the application through g. Its service methods
// (Start, Stop) and its response callback are the client's own.
type gatedClient struct {
	abcicli.Client
	g *gate
}

// call runs fn through g.
func call[Req, Res any](ctx context.Context, g *gate, fn func(context.Context, Req) (Res, error), req Req) (Res, error) {
	if err := g.enter(); err != nil {
		var none Res
		return none, err
	}
	defer g.leave()
	return fn(ctx, req)
}

func (c gatedClient) Echo(ctx context.Context, msg string) (*abcitypes.ResponseEcho, error) {
	return call(ctx, c.g, c.Client.Echo, msg)
}

func (c gatedClient) Flush(ctx context.Context) error {
	if err := c.g.enter(); err != nil {
		return err
	}
	defer c.g.leave()
	return c.Client.Flush(ctx)
}

func (c gatedClient) Info(ctx context.Context, req *abcitypes.RequestInfo) (*abcitypes.ResponseInfo, error) {
	return call(ctx, c.g, c.Client.Info, req)
}

func (c gatedClient) Query(ctx context.Context, req *abcitypes.RequestQuery) (*abcitypes.ResponseQuery, error) {
	return call(ctx, c.g, c.Client.Query, req)
}

func (c gatedClient) CheckTx(ctx context.Context, req *abcitypes.RequestCheckTx) (*abcitypes.ResponseCheckTx, error) {
	return call(ctx, c.g, c.Client.CheckTx, req)
}

// CheckTxAsync is gated until it returns: the application's client answers on the
// caller's goroutine (abci.Application.ClientCreator).
func (c gatedClient) CheckTxAsync(ctx context.Context, req *abcitypes.RequestCheckTx) (*abcicli.ReqRes, error) {
	return call(ctx, c.g, c.Client.CheckTxAsync, req)
}

func (c gatedClient) InitChain(ctx context.Context, req *abcitypes.RequestInitChain) (*abcitypes.ResponseInitChain, error) {
	return call(ctx, c.g, c.Client.InitChain, req)
}

func (c gatedClient) PrepareProposal(ctx context.Context, req *abcitypes.RequestPrepareProposal) (*abcitypes.ResponsePrepareProposal, error) {
	return call(ctx, c.g, c.Client.PrepareProposal, req)
}

func (c gatedClient) ProcessProposal(ctx context.Context, req *abcitypes.RequestProcessProposal) (*abcitypes.ResponseProcessProposal, error) {
	return call(ctx, c.g, c.Client.ProcessProposal, req)
}

func (c gatedClient) FinalizeBlock(ctx context.Context, req *abcitypes.RequestFinalizeBlock) (*abcitypes.ResponseFinalizeBlock, error) {
	return call(ctx, c.g, c.Client.FinalizeBlock, req)
}

func (c gatedClient) ExtendVote(ctx context.Context, req *abcitypes.RequestExtendVote) (*abcitypes.ResponseExtendVote, error) {
	return call(ctx, c.g, c.Client.ExtendVote, req)
}

func (c gatedClient) VerifyVoteExtension(ctx context.Context, req *abcitypes.RequestVerifyVoteExtension) (*abcitypes.ResponseVerifyVoteExtension, error) {
	return call(ctx, c.g, c.Client.VerifyVoteExtension, req)
}

func (c gatedClient) Commit(ctx context.Context, req *abcitypes.RequestCommit) (*abcitypes.ResponseCommit, error) {
	return call(ctx, c.g, c.Client.Commit, req)
}

func (c gatedClient) ListSnapshots(ctx context.Context, req *abcitypes.RequestListSnapshots) (*abcitypes.ResponseListSnapshots, error) {
	return call(ctx, c.g, c.Client.ListSnapshots, req)
}

func (c gatedClient) OfferSnapshot(ctx context.Context, req *abcitypes.RequestOfferSnapshot) (*abcitypes.ResponseOfferSnapshot, error) {
	return call(ctx, c.g, c.Client.OfferSnapshot, req)
}

func (c gatedClient) LoadSnapshotChunk(ctx context.Context, req *abcitypes.RequestLoadSnapshotChunk) (*abcitypes.ResponseLoadSnapshotChunk, error) {
	return call(ctx, c.g, c.Client.LoadSnapshotChunk, req)
}

func (c gatedClient) ApplySnapshotChunk(ctx context.Context, req *abcitypes.RequestApplySnapshotChunk) (*abcitypes.ResponseApplySnapshotChunk, error) {
	return call(ctx, c.g, c.Client.ApplySnapshotChunk, req)
}
