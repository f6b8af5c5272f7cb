package abci

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"testing"
	"time"

	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/protocol"
)

// TestVerifyAheadOfBlocks: the signatures of blocks not executed yet are verified ahead
// as far as the last saved version tells their keys; a signer a block in between
// creates is left to its block, a forged signature is not remembered and its block
// refuses it, bytes that do not decode are skipped; and the blocks execute to the same
// results and app hashes as without verifying ahead.
func TestVerifyAheadOfBlocks(t *testing.T) {
	carol := genesisIdentityID("carol")
	start := func() *harness {
		h := newHarness(t)
		st := genesis.AppState{
			Addresses:  []genesis.Address{{Address: addr("alice").String(), Balance: 1_000_000_000}},
			Identities: []genesis.Identity{{ID: carol.String(), Balance: 1_000_000_000, Keys: []string{hex.EncodeToString(pub("carol"))}}},
		}
		h.initChain(st)
		h.block(genesisTime.Add(time.Second), nil)
		return h
	}
	created := protocol.NewIdentityID(addr("alice"), 1)
	forged := protocol.Sign(testChainID, &protocol.IdentityCreditTransfer{Identity: carol, Nonce: 2, Recipient: created, Amount: 1}, key("carol"))
	forged[len(forged)-1] ^= 1
	blocks := [][][]byte{
		{
			protocol.Sign(testChainID, &protocol.IdentityCreate{PubKey: pub("alice"), Nonce: 1, Amount: 1_000_000, Keys: []ed25519.PublicKey{pub("erin")}}, key("alice")),
			protocol.Sign(testChainID, &protocol.IdentityCreditTransfer{Identity: carol, Nonce: 1, Recipient: created, Amount: 7}, key("carol")),
			forged,
			{0xff, 0x01, 0x02},
		},
		{protocol.Sign(testChainID, &protocol.IdentityCreditTransfer{Identity: created, Nonce: 1, Recipient: carol, Amount: 2}, key("erin"))},
	}
	at := func(i int) time.Time { return genesisTime.Add(time.Duration(2+i) * time.Second) }

	ahead := start()
	n := 0
	for i, txs := range blocks {
		n += ahead.app.VerifyAhead(txs, protocol.BlockTimeMs(at(i)))
	}
	if r, v, inv := signatureChecks(ahead); n != 3 || r != 0 || v != 2 || inv != 1 {
		t.Fatalf("ahead: %d checks, remembered %v, verified %v, invalid %v; want 3 (alice, carol, the forged one), 0, 2, 1", n, r, v, inv)
	}
	alone := start()
	for i, txs := range blocks {
		got, want := ahead.block(at(i), txs), alone.block(at(i), txs)
		if !bytes.Equal(got.AppHash, want.AppHash) {
			t.Fatalf("block %d: app hash %X verified ahead, %X not", i, got.AppHash, want.AppHash)
		}
		for j := range txs {
			if g, w := got.TxResults[j], want.TxResults[j]; g.Code != w.Code || g.GasUsed != w.GasUsed {
				t.Fatalf("block %d tx %d: code %d fee %d ahead, code %d fee %d not", i, j, g.Code, g.GasUsed, w.Code, w.GasUsed)
			}
		}
		if i == 0 && (got.TxResults[0].Code != 0 || got.TxResults[1].Code != 0 || got.TxResults[2].Code != uint32(protocol.ErrInvalidSignature{}.Code())) {
			t.Fatalf("block 0: codes %d %d %d", got.TxResults[0].Code, got.TxResults[1].Code, got.TxResults[2].Code)
		}
		if i == 1 && got.TxResults[0].Code != 0 {
			t.Fatalf("the created identity's transfer: code %d", got.TxResults[0].Code)
		}
	}
	// The block found alice's and carol's checks remembered, verified the forged one
	// again and the created identity's for the first time.
	if r, v, inv := signatureChecks(ahead); r != 2 || v != 3 || inv != 2 {
		t.Fatalf("after the blocks: remembered %v, verified %v, invalid %v; want 2, 3, 2", r, v, inv)
	}
}
