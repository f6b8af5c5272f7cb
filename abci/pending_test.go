package abci

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

func (h *harness) pendingNonce(data []byte) uint64 {
	h.t.Helper()
	res, err := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathPendingNonce, Data: data})
	if err != nil {
		h.t.Fatal(err)
	}
	if res.Code != 0 || len(res.Value) != 8 || res.ProofOps != nil {
		h.t.Fatalf("pending nonce of %x: code %d value %x proof %v (%s)", data, res.Code, res.Value, res.ProofOps, res.Log)
	}
	return binary.BigEndian.Uint64(res.Value)
}

func (h *harness) checkTx(tx []byte) *abcitypes.ResponseCheckTx {
	h.t.Helper()
	res, err := h.app.CheckTx(context.Background(), &abcitypes.RequestCheckTx{Tx: tx})
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

// TestPendingNonce: the pending nonce is the check state's, so it counts the mempool's
// accepted transactions before any block includes them, for addresses and identities;
// the committed nonce lags until the block.
func TestPendingNonce(t *testing.T) {
	h := newHarness(t)
	carol := genesisIdentityID("carol")
	h.initChain(genesis.AppState{
		Addresses:  []genesis.Address{{Address: addr("alice").String(), Balance: 1_000_000_000_000}},
		Identities: []genesis.Identity{{ID: carol.String(), Balance: 1_000_000_000_000, Keys: []string{hex.EncodeToString(pub("carol"))}}},
	})
	h.block(genesisTime.Add(time.Second), nil)
	alice := addr("alice")
	never := addr("nobody")
	if n := h.pendingNonce(alice[:]); n != 0 {
		t.Fatalf("alice's pending nonce before any send: %d", n)
	}
	if n := h.pendingNonce(never[:]); n != 0 {
		t.Fatalf("an unknown address's pending nonce: %d", n)
	}

	var txs [][]byte
	for nonce := uint64(1); nonce <= 3; nonce++ {
		tx := protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub("alice"), Nonce: nonce, Recipient: addr("bob"), Amount: 1}, key("alice"))
		if res := h.checkTx(tx); res.Code != 0 {
			t.Fatalf("CheckTx nonce %d: code %d %s", nonce, res.Code, res.Log)
		}
		txs = append(txs, tx)
		if n := h.pendingNonce(alice[:]); n != nonce {
			t.Fatalf("pending nonce after CheckTx of nonce %d: %d", nonce, n)
		}
	}
	itx := protocol.Sign(testChainID, &protocol.IdentityCreditTransferToAddress{Identity: carol, Nonce: 1, Recipient: alice, Amount: 1}, key("carol"))
	if res := h.checkTx(itx); res.Code != 0 {
		t.Fatalf("CheckTx identity: code %d %s", res.Code, res.Log)
	}
	if n := h.pendingNonce(carol[:]); n != 1 {
		t.Fatalf("carol's pending nonce: %d", n)
	}
	committed := h.query(proofs.PathAddress, alice[:], 0)
	if st := committed.Value; len(st) != 16 || binary.BigEndian.Uint64(st[8:]) != 0 {
		t.Fatalf("the committed state moved before a block: %x", st)
	}

	h.block(genesisTime.Add(2*time.Second), append(txs, itx))
	if n := h.pendingNonce(alice[:]); n != 3 {
		t.Fatalf("pending nonce after the block: %d", n)
	}

	for _, c := range []struct {
		name   string
		data   []byte
		height int64
		prove  bool
	}{
		{"bad length", []byte{1, 2, 3}, 0, false},
		{"a proof", alice[:], 0, true},
		{"a height", alice[:], 1, false},
	} {
		res, err := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathPendingNonce, Data: c.data, Height: c.height, Prove: c.prove})
		if err != nil || res.Code != proofs.QueryCodeBadRequest {
			t.Errorf("%s: code %d, err %v", c.name, res.Code, err)
		}
	}
}
