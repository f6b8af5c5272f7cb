package load

import (
	"errors"
	"strings"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/cometbft/cometbft/mempool"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	rpctypes "github.com/cometbft/cometbft/rpc/jsonrpc/types"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/protocol"
)

// answer is what the node said to one broadcast_tx.
type answer int

const (
	// accepted: broadcast_tx_sync's CheckTx answered code 0, or broadcast_tx_async
	// took the transaction.
	accepted answer = iota
	// refusedAtCheck: CheckTx answered another code (broadcast_tx_sync only).
	refusedAtCheck
	// mempoolFull: the mempool was full, or the node refused the transaction for now
	// (it is catching up); the transaction is sent again later.
	mempoolFull
	// failed: any other error, or no answer.
	failed
)

// fullMempool is how CometBFT's mempool says it is full (mempool.ErrMempoolIsFull,
// "mempool is full: number of txs ..."). NB: the RPC server hands the error to the
// client as the text of a JSON-RPC internal error (-32603), so the text is all a
// client can tell it by.
var fullMempool, _, _ = strings.Cut(mempool.ErrMempoolIsFull{}.Error(), ":")

// judge reads a broadcast_tx answer: res when the call succeeded, err otherwise. A
// full mempool answers in two ways: CometBFT's error above, when it is full before
// CheckTx, and ttld's node code (client.NodeCodeMempoolFull), when the transactions
// the application accepted fill it; a node catching up answers with a node code too.
// Each is sent again later. (kvstore, the side-by-side runs' other application, knows
// no node codes: its refusals are its own.)
func judge(res *coretypes.ResultBroadcastTx, err error) answer {
	var rpcErr *rpctypes.RPCError
	switch {
	case err == nil && res != nil && res.Code == abcitypes.CodeTypeOK:
		return accepted
	case err == nil && res != nil && res.Codespace == client.CodespaceNode &&
		(protocol.Code(res.Code) == client.NodeCodeMempoolFull || protocol.Code(res.Code) == client.NodeCodeCatchingUp):
		return mempoolFull
	case err == nil && res != nil:
		return refusedAtCheck
	case errors.As(err, &rpcErr) && strings.Contains(rpcErr.Data, fullMempool):
		return mempoolFull
	}
	return failed
}
