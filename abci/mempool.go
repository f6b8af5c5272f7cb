package abci

import (
	abcitypes "github.com/cometbft/cometbft/abci/types"
)

// CodespaceNode is the codespace of CheckTx's refusals that say something of this node
// rather than of the transaction: the chain's rules never give them, nothing is
// charged, and the same transaction may be accepted by another node, or by this one
// later (docs/ERRORS.md, "CheckTx's node codes").
const CodespaceNode = "ttld-node"

// The codes of CodespaceNode.
const (
	// NodeCodeCatchingUp: the node is catching up with the chain (block sync, state
	// sync, or no state yet): it would judge the transaction against a state it knows
	// to be behind.
	NodeCodeCatchingUp uint32 = 1
	// NodeCodeMempoolFull: the transactions the node accepted fill its mempool.
	NodeCodeMempoolFull uint32 = 2
)

// nodeRefusal is CheckTx's refusal with a node code.
func nodeRefusal(code uint32, log string) *abcitypes.ResponseCheckTx {
	return &abcitypes.ResponseCheckTx{Codespace: CodespaceNode, Code: code, Log: log}
}

// MempoolConfig is what CheckTx knows of CometBFT's mempool and of when blocks come
// (docs/TX.md, "What accepted means"). The zero value: no limits, the mempool
// rechecked after every block, no margin.
type MempoolConfig struct {
	// Limits is the mempool's room: the check state accepts no more than it holds
	// (accepted).
	Limits MempoolLimits
	// NoRecheck: CometBFT does not recheck its mempool after a block ([mempool]
	// recheck = false), so the check state keeps what it carried over whether or not
	// a recheck asks for it.
	NoRecheck bool
	// MarginMs is how much later than the earliest time the block that includes a
	// transaction may come (app.Judge.MarginMs).
	MarginMs uint64
}

// SetMempool tells the application what CheckTx needs to know of the mempool, and
// stages a fresh check state under it. Call it before the node starts.
func (a *Application) SetMempool(c MempoolConfig) error {
	a.mempool = c
	return a.resetCheckState()
}

// SetCatchingUp gives the application what tells whether CometBFT is catching up with
// the chain (its consensus reactor's WaitSync: block sync or state sync), during which
// CheckTx refuses new transactions (NodeCodeCatchingUp). Safe to call while the node
// runs.
func (a *Application) SetCatchingUp(f func() bool) { a.catchingUp.Store(&f) }
