package client

import (
	"bytes"
	"context"
	"time"

	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/protocol"
)

// TxOutcome is what became of a transaction a client sent, as the blocks tell
// (Await).
type TxOutcome struct {
	Hash []byte
	// Committed: the transaction is in block Height, and Code and Log are the block's
	// result for it (0: it succeeded; otherwise a refusal, paid: docs/ERRORS.md), Fee
	// what it charged. Not Committed: no block up to the end of the wait holds it, and
	// its fate is not known: it may still be included, or may never be (the mempool
	// of every node may have dropped it).
	Committed bool
	Height    int64
	Code      protocol.Code
	Log       string
	Fee       uint64
}

// awaitPoll is how often Await asks for the latest height.
const awaitPoll = 100 * time.Millisecond

// Await waits until each of the transactions hashes names is in a block at height from
// or later, or ctx ends (the caller gives up), and returns what became of each, in the
// order of hashes. It reads the blocks themselves, one by one, so the node needs no
// transaction index; RPC errors meanwhile are retried until ctx ends. A transaction is
// in at most one block (its nonce is consumed there), so the first found is its block.
func (c *Client) Await(ctx context.Context, from int64, hashes [][]byte) ([]TxOutcome, error) {
	out := make([]TxOutcome, len(hashes))
	waiting := len(hashes)
	for i, h := range hashes {
		out[i].Hash = h
	}
	next := max(from, 1)
	for waiting > 0 {
		latest, err := c.LatestHeight(ctx)
		for err == nil && next <= latest && waiting > 0 {
			var found int
			if found, err = c.awaitIn(ctx, next, out); err == nil {
				waiting -= found
				next++
			}
		}
		if waiting == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return out, nil
		case <-time.After(awaitPoll):
		}
	}
	return out, nil
}

// awaitIn records in out the transactions of block height it waits for, with their
// results, and returns how many it found.
func (c *Client) awaitIn(ctx context.Context, height int64, out []TxOutcome) (int, error) {
	blk, err := c.rpc.Block(ctx, &height)
	if err != nil {
		return 0, err
	}
	var at []int // out's index of each of the block's transactions waited for, and its place
	var pos []int
	for p, tx := range blk.Block.Txs {
		hash := cmttypes.Tx(tx).Hash()
		for i := range out {
			if !out[i].Committed && bytes.Equal(out[i].Hash, hash) {
				at, pos = append(at, i), append(pos, p)
			}
		}
	}
	if len(at) == 0 {
		return 0, nil
	}
	res, err := c.rpc.BlockResults(ctx, &height)
	if err != nil {
		return 0, err
	}
	for k, i := range at {
		if pos[k] >= len(res.TxsResults) {
			return 0, ErrInconsistentAnswer{Path: "block_results", Reason: "fewer results than the block's transactions"}
		}
		r := res.TxsResults[pos[k]]
		out[i].Committed, out[i].Height = true, height
		out[i].Code, out[i].Log, out[i].Fee = protocol.Code(r.Code), r.Log, uint64(max(r.GasUsed, 0))
	}
	return len(at), nil
}
