package client

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"sync"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	cmtbytes "github.com/cometbft/cometbft/libs/bytes"
	"github.com/cometbft/cometbft/p2p"
	rpcclient "github.com/cometbft/cometbft/rpc/client"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	cmttypes "github.com/cometbft/cometbft/types"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/abci"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
)

const testChainID = "ttld-client-test"

// errNoHeaders: the in-memory chain signs no headers, so it serves no commits.
var errNoHeaders = errors.New("the in-memory chain has no signed headers")

// memChain is an RPC over a real abci.Application and IAVL store in memory, without
// CometBFT: a broadcast with commit runs CheckTx, then a block of that one transaction.
// It serves unproven reads only.
type memChain struct {
	t      testing.TB
	mu     sync.Mutex
	app    *abci.Application
	store  *drive.Store // the application's, for hooks that prove an answer of their own
	height int64
	time   time.Time
	// queryHook, when set, rewrites every query answer.
	queryHook func(path string, resp *abcitypes.ResponseQuery)
	// broadcastErr, when set, is the error every broadcast returns instead of running.
	broadcastErr error
	// heightHook, when set, rewrites the height of every query request, as a
	// tampering proxy between client and node could.
	heightHook func(path string, height int64) int64
	// blocks are the transactions and results of every block, by height.
	blocks map[int64]memBlock
}

type memBlock struct {
	txs     [][]byte
	results []*abcitypes.ExecTxResult
}

func seedKey(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("client-test/" + name))
	return ed25519.NewKeyFromSeed(seed[:])
}

func newMemChain(t testing.TB, state genesis.AppState) *memChain {
	if state.EpochTimeLengthS == 0 {
		state.EpochTimeLengthS = genesis.DefaultEpochLengthS
	}
	store, err := drive.NewStore(dbm.NewMemDB(), drive.Options{CacheSize: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	app, err := abci.New(store, zerolog.Nop(), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &memChain{t: t, app: app, store: store, time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), blocks: map[int64]memBlock{}}
	if _, err := app.InitChain(context.Background(), &abcitypes.RequestInitChain{
		ChainId: testChainID, Time: c.time, InitialHeight: 1, AppStateBytes: state.Encode(),
	}); err != nil {
		t.Fatal(err)
	}
	c.block(nil)
	return c
}

// block executes and commits a block of txs and returns its results.
func (c *memChain) block(txs [][]byte) []*abcitypes.ExecTxResult {
	c.height++
	c.time = c.time.Add(time.Second)
	ctx := context.Background()
	res, err := c.app.FinalizeBlock(ctx, &abcitypes.RequestFinalizeBlock{Height: c.height, Time: c.time, Txs: txs})
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.app.Commit(ctx, &abcitypes.RequestCommit{}); err != nil {
		c.t.Fatal(err)
	}
	c.blocks[c.height] = memBlock{txs: txs, results: res.TxResults}
	return res.TxResults
}

// errNoBlock: the in-memory chain has not made a block of that height.
var errNoBlock = errors.New("the in-memory chain has no block of that height")

func (c *memChain) Block(_ context.Context, height *int64) (*coretypes.ResultBlock, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.blocks[*height]
	if !ok {
		return nil, errNoBlock
	}
	blk := &cmttypes.Block{Header: cmttypes.Header{Height: *height}}
	for _, tx := range b.txs {
		blk.Txs = append(blk.Txs, tx)
	}
	return &coretypes.ResultBlock{Block: blk}, nil
}

func (c *memChain) BlockResults(_ context.Context, height *int64) (*coretypes.ResultBlockResults, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.blocks[*height]
	if !ok {
		return nil, errNoBlock
	}
	return &coretypes.ResultBlockResults{Height: *height, TxsResults: b.results}, nil
}

func (c *memChain) Status(context.Context) (*coretypes.ResultStatus, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &coretypes.ResultStatus{
		NodeInfo: p2p.DefaultNodeInfo{Network: testChainID},
		SyncInfo: coretypes.SyncInfo{LatestBlockHeight: c.height},
	}, nil
}

func (c *memChain) ABCIQueryWithOptions(ctx context.Context, path string, data cmtbytes.HexBytes, opts rpcclient.ABCIQueryOptions) (*coretypes.ResultABCIQuery, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	height := opts.Height
	if c.heightHook != nil {
		height = c.heightHook(path, height)
	}
	resp, err := c.app.Query(ctx, &abcitypes.RequestQuery{Path: path, Data: data, Height: height, Prove: opts.Prove})
	if err != nil {
		return nil, err
	}
	if c.queryHook != nil {
		c.queryHook(path, resp)
	}
	return &coretypes.ResultABCIQuery{Response: *resp}, nil
}

func (c *memChain) BroadcastTxSync(ctx context.Context, tx cmttypes.Tx) (*coretypes.ResultBroadcastTx, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broadcastErr != nil {
		return nil, c.broadcastErr
	}
	res, err := c.app.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: tx})
	if err != nil {
		return nil, err
	}
	return &coretypes.ResultBroadcastTx{Code: res.Code, Codespace: res.Codespace, Log: res.Log, Hash: tx.Hash()}, nil
}

func (c *memChain) BroadcastTxCommit(ctx context.Context, tx cmttypes.Tx) (*coretypes.ResultBroadcastTxCommit, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broadcastErr != nil {
		return nil, c.broadcastErr
	}
	check, err := c.app.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: tx})
	if err != nil {
		return nil, err
	}
	out := &coretypes.ResultBroadcastTxCommit{CheckTx: *check, Hash: tx.Hash()}
	if check.Code != 0 {
		return out, nil
	}
	out.TxResult = *c.block([][]byte{tx})[0]
	out.Height = c.height
	return out, nil
}

func (c *memChain) Commit(context.Context, *int64) (*coretypes.ResultCommit, error) {
	return nil, errNoHeaders
}

func (c *memChain) Validators(context.Context, *int64, *int, *int) (*coretypes.ResultValidators, error) {
	return nil, errNoHeaders
}
