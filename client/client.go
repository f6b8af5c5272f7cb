package client

import (
	"context"
	"sync"
	"time"

	cmtbytes "github.com/cometbft/cometbft/libs/bytes"
	rpcclient "github.com/cometbft/cometbft/rpc/client"
	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/proofs"
)

// RPC is the part of the CometBFT RPC client this package uses;
// rpc/client/http.HTTP satisfies it.
type RPC interface {
	proofs.Client
	Status(ctx context.Context) (*coretypes.ResultStatus, error)
	ABCIQueryWithOptions(ctx context.Context, path string, data cmtbytes.HexBytes, opts rpcclient.ABCIQueryOptions) (*coretypes.ResultABCIQuery, error)
	BroadcastTxSync(ctx context.Context, tx cmttypes.Tx) (*coretypes.ResultBroadcastTx, error)
	BroadcastTxCommit(ctx context.Context, tx cmttypes.Tx) (*coretypes.ResultBroadcastTxCommit, error)
	Block(ctx context.Context, height *int64) (*coretypes.ResultBlock, error)
	BlockResults(ctx context.Context, height *int64) (*coretypes.ResultBlockResults, error)
}

// Options configure a Client. The zero value asks the node for everything.
type Options struct {
	// ChainID signs transitions and names the chain of checked headers; empty: the
	// network the node's status reports.
	ChainID string
	// Trusted is the validator set checked headers must be signed by, for instance
	// the local genesis's; nil: each header's set, fetched from the node and checked
	// against the header's ValidatorsHash.
	Trusted *cmttypes.ValidatorSet
	// Wait bounds how long a verified read waits for the header after its state;
	// zero: proofs.DefaultWait.
	Wait time.Duration
	// MaxAge bounds how old a verified read of the latest state may be: the signed
	// header after the answer's state (whose app hash proves it) must be at most
	// MaxAge older than the local clock. Zero: proofs.DefaultMaxAge; negative: no bound.
	// Reads at an explicit height are not bounded (the caller chose the state).
	MaxAge time.Duration
	// Light, when set, verifies headers with CometBFT's light client instead of a
	// fixed set (Trusted is then not used): the reads stay verified as the chain's
	// validator set changes (docs/PROOFS.md, "Following the validator set"). Close
	// releases its trusted store.
	Light *LightOptions
}

// Client is a ttld client over one node's RPC. It is safe for concurrent use.
type Client struct {
	rpc  RPC
	opts Options
	// remote is the node's RPC address when the client was dialled.
	remote string

	mu      sync.Mutex
	chainID string // opts.ChainID, or the status's once asked
	// light is the light client of opts.Light, made by the first verified read.
	light *lightHeaders
}

// Dial returns a client of the node whose RPC listens at remote ("tcp://host:port" or
// "http://host:port").
func Dial(remote string, opts Options) (*Client, error) {
	rpc, err := rpchttp.New(remote, "/websocket")
	if err != nil {
		return nil, err
	}
	c := New(rpc, opts)
	c.remote = remote
	return c, nil
}

// New returns a client over rpc.
func New(rpc RPC, opts Options) *Client {
	return &Client{rpc: rpc, opts: opts, chainID: opts.ChainID}
}

// RPC returns the RPC client underneath, for calls this package does not wrap.
func (c *Client) RPC() RPC { return c.rpc }

// ChainID returns Options.ChainID, or the network the node reports (asked once).
func (c *Client) ChainID(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.chainID != "" {
		return c.chainID, nil
	}
	st, err := c.rpc.Status(ctx)
	if err != nil {
		return "", err
	}
	c.chainID = st.NodeInfo.Network
	return c.chainID, nil
}

// Verifier returns the proof verifier verified reads use: this client's RPC, chain id,
// light client (or trusted validators) and wait.
func (c *Client) Verifier(ctx context.Context) (*proofs.Verifier, error) {
	chainID, err := c.ChainID(ctx)
	if err != nil {
		return nil, err
	}
	v := &proofs.Verifier{Client: c.rpc, ChainID: chainID, Trusted: c.opts.Trusted, Wait: c.opts.Wait}
	if c.opts.Light == nil {
		return v, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.light == nil {
		if c.light, err = c.openLight(ctx, chainID); err != nil {
			return nil, err
		}
	}
	v.Headers = c.light
	return v, nil
}

// Close releases what the client holds: its light client's trusted store.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.light == nil {
		return nil
	}
	err := c.light.db.Close()
	c.light = nil
	return err
}

// LatestHeight returns the node's latest block height.
func (c *Client) LatestHeight(ctx context.Context) (int64, error) {
	st, err := c.rpc.Status(ctx)
	if err != nil {
		return 0, err
	}
	return st.SyncInfo.LatestBlockHeight, nil
}

// heightPoll is how often WaitForHeight asks for the latest height.
const heightPoll = 100 * time.Millisecond

// WaitForHeight returns once the node's latest block height is at least h, with that
// height, or with ctx's error; RPC errors meanwhile are retried.
func (c *Client) WaitForHeight(ctx context.Context, h int64) (int64, error) {
	for {
		latest, err := c.LatestHeight(ctx)
		if err == nil && latest >= h {
			return latest, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(heightPoll):
		}
	}
}
