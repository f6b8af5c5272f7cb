package load

import (
	"errors"
	"strings"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/cometbft/cometbft/mempool"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	rpctypes "github.com/cometbft/cometbft/rpc/jsonrpc/types"
)

// answer is what the node said to one broadcast_tx.
type answer int

const (
	// accepted: broadcast_tx_sync's CheckTx answered code 0, or broadcast_tx_async
	// took the transaction.
	accepted answer = iota
	// refusedAtCheck: CheckTx answered another code (broadcast_tx_sync only).
	refusedAtCheck
	// mempoolFull: the mempool was full; the transaction is sent again later.
	mempoolFull
	// failed: any other error, or no answer.
	failed
)

// fullMempool is how CometBFT's mempool says it is full (mempool.ErrMempoolIsFull,
// "mempool is full: number of txs ..."). NB: the RPC server hands the error to the
// client as the text of a JSON-RPC internal error (-32603), so the text is all a
// client can tell it by.
var fullMempool, _, _ = strings.Cut(mempool.ErrMempoolIsFull{}.Error(), ":")

// judge reads a broadcast_tx answer: res when the call succeeded, err otherwise.
//
// NB: CometBFT v0.38's CheckTx has no code for a full mempool: it refuses with the
// error above before the application sees the transaction. A transaction the
// application accepted while the mempool filled is then dropped without a word (its
// answer says code 0): the run counts it as accepted, and the blocks show it was
// never committed.
func judge(res *coretypes.ResultBroadcastTx, err error) answer {
	var rpcErr *rpctypes.RPCError
	switch {
	case err == nil && res != nil && res.Code == abcitypes.CodeTypeOK:
		return accepted
	case err == nil && res != nil:
		return refusedAtCheck
	case errors.As(err, &rpcErr) && strings.Contains(rpcErr.Data, fullMempool):
		return mempoolFull
	}
	return failed
}
