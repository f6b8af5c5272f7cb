package client

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	rpctypes "github.com/cometbft/cometbft/rpc/jsonrpc/types"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// NextAddressNonce returns the nonce the next transition of address a must carry: one
// past the last nonce it used, in its latest saved state or in the node's check state
// (the transactions its mempool accepted and no block has included yet), whichever is
// later; 1 for an address never used. So back-to-back sends that do not wait for their
// block each get the next nonce.
func (c *Client) NextAddressNonce(ctx context.Context, a protocol.Address) (uint64, error) {
	st, err := c.Address(ctx, a, 0, false)
	if err != nil {
		return 0, err
	}
	pending, err := c.PendingAddressNonce(ctx, a)
	if err != nil {
		return 0, err
	}
	return max(st.Nonce, pending) + 1, nil
}

// NextIdentityNonce returns the nonce the next transition of identity id must carry:
// one past the last nonce it used, saved or pending (see NextAddressNonce).
func (c *Client) NextIdentityNonce(ctx context.Context, id protocol.IdentityID) (uint64, error) {
	idn, err := c.Identity(ctx, id, 0, false)
	if err != nil {
		return 0, err
	}
	pending, err := c.PendingIdentityNonce(ctx, id)
	if err != nil {
		return 0, err
	}
	return max(idn.Nonce.Last, pending) + 1, nil
}

// PendingAddressNonce returns the last nonce address a used in the node's check state:
// its saved state plus the transactions the mempool accepted. The answer is unproven
// (the check state is never committed): use it to choose a nonce, not to verify one.
func (c *Client) PendingAddressNonce(ctx context.Context, a protocol.Address) (uint64, error) {
	return c.pendingNonce(ctx, a[:])
}

// PendingIdentityNonce is PendingAddressNonce for an identity.
func (c *Client) PendingIdentityNonce(ctx context.Context, id protocol.IdentityID) (uint64, error) {
	return c.pendingNonce(ctx, id[:])
}

func (c *Client) pendingNonce(ctx context.Context, data []byte) (uint64, error) {
	resp, err := c.query(ctx, proofs.PathPendingNonce, data, 0, false)
	if err != nil {
		return 0, err
	}
	if len(resp.Value) != 8 {
		return 0, ErrCorruptValue{Key: data, Err: fmt.Errorf("pending nonce of %d bytes, want 8", len(resp.Value))}
	}
	return binary.BigEndian.Uint64(resp.Value), nil
}

// NextNonce returns the next nonce of t's signer (see NextAddressNonce and
// NextIdentityNonce).
func (c *Client) NextNonce(ctx context.Context, t protocol.Transition) (uint64, error) {
	switch sg := t.Signer(); sg.Kind {
	case protocol.SignerAddress:
		return c.NextAddressNonce(ctx, sg.Address())
	case protocol.SignerIdentity:
		return c.NextIdentityNonce(ctx, sg.Identity)
	}
	return 0, ErrUnknownTransition{Type: t.Type()}
}

// Sign signs t with key for the client's chain. A zero nonce (never a valid one) is
// first replaced in t by the signer's next nonce, so t tells the caller which nonce
// was used (the id of an identity create depends on it). For the transitions an
// address signs, the signer key in t must be key's public key.
func (c *Client) Sign(ctx context.Context, t protocol.Transition, key ed25519.PrivateKey) ([]byte, error) {
	chainID, err := c.ChainID(ctx)
	if err != nil {
		return nil, err
	}
	if t.GetNonce() == 0 {
		n, err := c.NextNonce(ctx, t)
		if err != nil {
			return nil, err
		}
		t.SetNonce(n)
	}
	return protocol.Sign(chainID, t, key), nil
}

// BroadcastResult is what became of a broadcast transaction. Without Committed, a zero
// Code means accepted, and accepted only: the node's CheckTx took the transaction into
// its mempool, which says it is valid on the node's state now, not that any block will
// include it (docs/TX.md, "What accepted means"). Await tells what became of it.
type BroadcastResult struct {
	// Code is CheckTx's code, or, once the transaction is in a block, the block's code
	// for it. Zero: accepted; otherwise a protocol code, or, with a Codespace, a code of
	// the node's.
	Code protocol.Code
	// Codespace is empty for a protocol code; CheckTx's refusals that say something of
	// the node rather than of the transaction carry "ttld-node" (catching up, mempool
	// full: nothing was charged, and it may be sent again, later or to another node),
	// and a failure inside the node "ttld-internal" (docs/ERRORS.md).
	Codespace string
	// CheckCode is CheckTx's code alone.
	CheckCode protocol.Code
	// Log is the readable reason of a refusal.
	Log string
	// Committed: the transaction is in block Height and Code is that block's.
	Committed bool
	Height    int64
	// Fee is the fee the block charged (ExecTxResult.GasUsed): zero when not
	// committed, and positive for a success or a paid refusal.
	Fee uint64
	// FeeEstimate is CheckTx's estimate (GasWanted); broadcast_tx_sync does not report it.
	FeeEstimate uint64
	Hash        []byte
	// Events are the block's events of the transaction, once committed (docs/TX.md,
	// "Events").
	Events []abcitypes.Event
}

// Refused reports whether the transaction was refused, by CheckTx or by its block.
func (r BroadcastResult) Refused() bool { return r.Code != protocol.CodeOK }

// ByNode reports whether CheckTx refused the transaction for what it knows of the node
// (Codespace "ttld-node"): the same bytes may be accepted later, or by another node.
func (r BroadcastResult) ByNode() bool { return r.Codespace == CodespaceNode }

// CodespaceNode is the codespace of CheckTx's refusals for the node's own state
// (abci.CodespaceNode; docs/ERRORS.md, "CheckTx's node codes"), and its codes.
const (
	CodespaceNode = "ttld-node"
	// NodeCodeCatchingUp: the node is catching up with the chain.
	NodeCodeCatchingUp protocol.Code = 1
	// NodeCodeMempoolFull: the transactions the node accepted fill its mempool.
	NodeCodeMempoolFull protocol.Code = 2
)

// Paid reports whether the refusal still charged a fee and consumed the nonce, which
// only a block does.
func (r BroadcastResult) Paid() bool { return r.Committed && r.Fee > 0 }

// Broadcast sends tx with broadcast_tx_sync (CheckTx only), or with commit, with
// broadcast_tx_commit, which waits for the block that includes it. A refusal is a
// result with a non-zero Code. The errors that say something about tx are typed:
// ErrTxInCache (the node already holds these exact bytes) and, with commit,
// ErrCommitTimeout (the wait for the block ended: tx may still commit). Others are the
// RPC's.
func (c *Client) Broadcast(ctx context.Context, tx []byte, commit bool) (BroadcastResult, error) {
	hash := cmttypes.Tx(tx).Hash()
	if !commit {
		res, err := c.rpc.BroadcastTxSync(ctx, cmttypes.Tx(tx))
		if err != nil {
			return BroadcastResult{Hash: hash}, broadcastError(err, hash, false)
		}
		code := protocol.Code(res.Code)
		return BroadcastResult{Code: code, Codespace: res.Codespace, CheckCode: code, Log: res.Log, Hash: res.Hash}, nil
	}
	res, err := c.rpc.BroadcastTxCommit(ctx, cmttypes.Tx(tx))
	if err != nil {
		return BroadcastResult{Hash: hash}, broadcastError(err, hash, true)
	}
	out := BroadcastResult{
		Code:        protocol.Code(res.CheckTx.Code),
		Codespace:   res.CheckTx.Codespace,
		CheckCode:   protocol.Code(res.CheckTx.Code),
		Log:         res.CheckTx.Log,
		FeeEstimate: uint64(res.CheckTx.GasWanted),
		Hash:        res.Hash,
	}
	if res.CheckTx.Code != 0 {
		return out, nil
	}
	out.Committed = true
	out.Height = res.Height
	out.Code = protocol.Code(res.TxResult.Code)
	out.Log = res.TxResult.Log
	out.Fee = uint64(res.TxResult.GasUsed)
	out.Events = res.TxResult.Events
	return out, nil
}

// Attr returns the value of attribute key of the first event of type typ; ok is false
// when there is none.
func (r BroadcastResult) Attr(typ, key string) (string, bool) {
	for _, e := range r.Events {
		if e.Type != typ {
			continue
		}
		for _, a := range e.Attributes {
			if a.Key == key {
				return a.Value, true
			}
		}
	}
	return "", false
}

// What CometBFT v0.38's RPC says, in its error's data, when the mempool cache already
// holds a transaction (mempool.ErrTxInCache) and when broadcast_tx_commit stops
// waiting for the block (rpc/core/mempool.go). They reach a client as text only.
const (
	rpcTxInCache     = "tx already exists in cache"
	rpcCommitTimeout = "timed out waiting for tx to be included in a block"
)

// broadcastError types the RPC errors that say what became of the transaction.
func broadcastError(err error, hash []byte, commit bool) error {
	var rpcErr *rpctypes.RPCError
	if errors.As(err, &rpcErr) {
		switch {
		case strings.Contains(rpcErr.Data, rpcTxInCache):
			return ErrTxInCache{Hash: hash}
		case commit && strings.Contains(rpcErr.Data, rpcCommitTimeout):
			return ErrCommitTimeout{Hash: hash, Err: err}
		}
	}
	if commit && errors.Is(err, context.DeadlineExceeded) {
		return ErrCommitTimeout{Hash: hash, Err: err}
	}
	return err
}

// DryRunResult is what a transaction would do if a block ran it on the node's check
// state now (proofs.PathDryRun): unproven, since the check state is never committed.
type DryRunResult struct {
	Code protocol.Code
	Log  string
	// Fee is what it would be charged on the check state; MaxFee bounds the fee on
	// any later state (never below what a block charges it).
	Fee, MaxFee uint64
}

// DryRun asks the node what tx would do, without sending it.
func (c *Client) DryRun(ctx context.Context, tx []byte) (DryRunResult, error) {
	resp, err := c.query(ctx, proofs.PathDryRun, tx, 0, false)
	if err != nil {
		return DryRunResult{}, err
	}
	var ans proofs.DryRunAnswer
	if err := json.Unmarshal(resp.Value, &ans); err != nil {
		return DryRunResult{}, ErrCorruptValue{Key: nil, Err: err}
	}
	if ans.Codespace != "" {
		return DryRunResult{}, ErrQuery{Path: proofs.PathDryRun, Code: ans.Code, Log: ans.Log}
	}
	return DryRunResult{Code: protocol.Code(ans.Code), Log: ans.Log, Fee: ans.Fee, MaxFee: ans.MaxFee}, nil
}
