package client

import (
	"context"
	"crypto/ed25519"

	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/protocol"
)

// NextAddressNonce returns the nonce the next transition of address a must carry: the
// last one its latest saved state records, plus one (1 for an address never used).
func (c *Client) NextAddressNonce(ctx context.Context, a protocol.Address) (uint64, error) {
	st, err := c.Address(ctx, a, 0, false)
	if err != nil {
		return 0, err
	}
	return st.Nonce + 1, nil
}

// NextIdentityNonce returns the nonce the next transition of identity id must carry:
// the last one its latest saved state records, plus one.
func (c *Client) NextIdentityNonce(ctx context.Context, id protocol.IdentityID) (uint64, error) {
	idn, err := c.Identity(ctx, id, 0, false)
	if err != nil {
		return 0, err
	}
	return idn.Nonce + 1, nil
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

// BroadcastResult is what became of a broadcast transaction.
type BroadcastResult struct {
	// Code is CheckTx's code, or, once the transaction is in a block, the block's code
	// for it. Zero: accepted; otherwise a protocol code (or abci's internal-error code).
	Code protocol.Code
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
}

// Refused reports whether the transaction was refused, by CheckTx or by its block.
func (r BroadcastResult) Refused() bool { return r.Code != protocol.CodeOK }

// Paid reports whether the refusal still charged a fee and consumed the nonce, which
// only a block does.
func (r BroadcastResult) Paid() bool { return r.Committed && r.Fee > 0 }

// Broadcast sends tx with broadcast_tx_sync (CheckTx only), or with commit, with
// broadcast_tx_commit, which waits for the block that includes it. A refusal is a
// result with a non-zero Code; the error is the RPC's (a timeout of the commit wait
// among them).
func (c *Client) Broadcast(ctx context.Context, tx []byte, commit bool) (BroadcastResult, error) {
	if !commit {
		res, err := c.rpc.BroadcastTxSync(ctx, cmttypes.Tx(tx))
		if err != nil {
			return BroadcastResult{}, err
		}
		code := protocol.Code(res.Code)
		return BroadcastResult{Code: code, CheckCode: code, Log: res.Log, Hash: res.Hash}, nil
	}
	res, err := c.rpc.BroadcastTxCommit(ctx, cmttypes.Tx(tx))
	if err != nil {
		return BroadcastResult{}, err
	}
	out := BroadcastResult{
		Code:        protocol.Code(res.CheckTx.Code),
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
	return out, nil
}
