package client

import (
	"bytes"
	"context"
	"errors"
	"testing"

	rpctypes "github.com/cometbft/cometbft/rpc/jsonrpc/types"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/protocol"
)

// TestBackToBackSendsWithoutCommit: sends that do not wait for their block each get
// the next nonce, from the node's check state, and all of them land in the next block.
func TestBackToBackSendsWithoutCommit(t *testing.T) {
	c, chain := newTestClient(t)
	ctx := context.Background()
	alice := seedKey("alice")
	bob := protocol.AddressOf(pubOf(seedKey("bob")))
	var txs [][]byte
	for want := uint64(1); want <= 3; want++ {
		tr := &protocol.AddressFundsTransfer{PubKey: pubOf(alice), Recipient: bob, Amount: 10}
		tx, err := c.Sign(ctx, tr, alice)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Nonce != want {
			t.Fatalf("send %d signed with nonce %d", want, tr.Nonce)
		}
		res, err := c.Broadcast(ctx, tx, false)
		if err != nil || res.Refused() || res.Committed {
			t.Fatalf("send %d: %+v %v", want, res, err)
		}
		txs = append(txs, tx)
	}
	for i, r := range chain.block(txs) {
		if r.Code != 0 {
			t.Fatalf("tx %d in the block: code %d %s", i, r.Code, r.Log)
		}
	}
	st, err := c.Address(ctx, protocol.AddressOf(pubOf(alice)), 0, false)
	if err != nil || st.Nonce != 3 {
		t.Fatalf("alice after the block: %+v %v", st, err)
	}
	if n, err := c.NextAddressNonce(ctx, st.Address); err != nil || n != 4 {
		t.Fatalf("next nonce after the block: %d %v", n, err)
	}
}

// TestBroadcastErrorsSayWhatHappened: CometBFT's "already in cache" and commit-timeout
// RPC errors become typed errors carrying the transaction's hash.
func TestBroadcastErrorsSayWhatHappened(t *testing.T) {
	c, chain := newTestClient(t)
	ctx := context.Background()
	alice := seedKey("alice")
	tx, err := c.Sign(ctx, &protocol.AddressFundsTransfer{PubKey: pubOf(alice), Recipient: protocol.Address{1}, Amount: 1}, alice)
	if err != nil {
		t.Fatal(err)
	}
	hash := cmttypes.Tx(tx).Hash()

	chain.broadcastErr = &rpctypes.RPCError{Code: -32603, Message: "Internal error", Data: "tx already exists in cache"}
	for _, commit := range []bool{false, true} {
		_, err := c.Broadcast(ctx, tx, commit)
		var inCache ErrTxInCache
		if !errors.As(err, &inCache) || !bytes.Equal(inCache.Hash, hash) {
			t.Fatalf("commit %t: err = %v, want ErrTxInCache", commit, err)
		}
	}

	chain.broadcastErr = &rpctypes.RPCError{Code: -32603, Message: "Internal error", Data: "timed out waiting for tx to be included in a block"}
	_, err = c.Broadcast(ctx, tx, true)
	var timeout ErrCommitTimeout
	if !errors.As(err, &timeout) || !bytes.Equal(timeout.Hash, hash) {
		t.Fatalf("commit timeout: err = %v, want ErrCommitTimeout", err)
	}
	chain.broadcastErr = context.DeadlineExceeded
	if _, err = c.Broadcast(ctx, tx, true); !errors.As(err, &timeout) {
		t.Fatalf("client deadline: err = %v, want ErrCommitTimeout", err)
	}

	other := errors.New("connection refused")
	chain.broadcastErr = other
	if _, err := c.Broadcast(ctx, tx, true); !errors.Is(err, other) || errors.As(err, &timeout) {
		t.Fatalf("another RPC error: %v", err)
	}
}

// TestFutureHeight: a read at a height the node has not reached says so, with the
// latest height.
func TestFutureHeight(t *testing.T) {
	c, chain := newTestClient(t)
	ctx := context.Background()
	_, err := c.Address(ctx, protocol.Address{1}, chain.height+5, false)
	var future ErrFutureHeight
	if !errors.As(err, &future) || future.Height != chain.height+5 || future.Latest != chain.height {
		t.Fatalf("err = %v, want ErrFutureHeight", err)
	}
	if _, err := c.Address(ctx, protocol.Address{1}, chain.height, false); err != nil {
		t.Fatalf("the latest height: %v", err)
	}
}
