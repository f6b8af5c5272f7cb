package abci

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"runtime"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/protocol"
)

// signatureChecks reads the signature check counters of h's application.
func signatureChecks(h *harness) (remembered, verified, invalid float64) {
	m := h.app.metrics.SignatureChecks
	return testutil.ToFloat64(m.WithLabelValues("remembered")), testutil.ToFloat64(m.WithLabelValues("verified")), testutil.ToFloat64(m.WithLabelValues("invalid"))
}

// TestVerifiedSignaturesAnswerAsEd25519: the cache answers every check as
// ed25519.Verify does, and remembers only checks that passed.
func TestVerifiedSignaturesAnswerAsEd25519(t *testing.T) {
	m, err := NewMetrics(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	v, err := newVerifiedSignatures(16, m)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("a message")
	sig := ed25519.Sign(key("alice"), msg)
	flipped := append([]byte(nil), sig...)
	flipped[5] ^= 1
	cases := []struct {
		name     string
		pub      ed25519.PublicKey
		msg, sig []byte
	}{
		{"valid", pub("alice"), msg, sig},
		{"another key", pub("bob"), msg, sig},
		{"another message", pub("alice"), []byte("a massage"), sig},
		{"a flipped signature byte", pub("alice"), msg, flipped},
		{"the message moved into the signature", pub("alice"), msg[1:], append([]byte{msg[0]}, sig...)},
	}
	// Twice: the second round answers the valid check from the cache, and the invalid
	// ones are verified again.
	for round := 0; round < 2; round++ {
		for _, c := range cases {
			if got, want := v.Verify(c.pub, c.msg, c.sig), ed25519.Verify(c.pub, c.msg, c.sig); got != want {
				t.Fatalf("round %d, %s: cache says %v, ed25519 %v", round, c.name, got, want)
			}
		}
	}
	if r, ver, inv := testutil.ToFloat64(v.remembered), testutil.ToFloat64(v.verified), testutil.ToFloat64(v.invalid); r != 1 || ver != 1 || inv != 8 {
		t.Fatalf("remembered %v, verified %v, invalid %v; want 1, 1, 8", r, ver, inv)
	}
}

// TestSignatureVerifiedOnce: a transaction CheckTx verified is not verified again by
// its recheck, the proposal's execution or FinalizeBlock, for an address signer and an
// identity signer (whose key is read from state); and a node that never saw the transactions executes the block to the same
// results and app hash.
func TestSignatureVerifiedOnce(t *testing.T) {
	carol := genesisIdentityID("carol")
	dave := genesisIdentityID("dave")
	start := func() *harness {
		h := newHarness(t)
		st := genesis.AppState{Addresses: []genesis.Address{{Address: addr("alice").String(), Balance: 1_000_000_000}}}
		for _, n := range []string{"carol", "dave"} {
			st.Identities = append(st.Identities, genesis.Identity{ID: genesisIdentityID(n).String(), Balance: 1_000_000_000, Keys: []string{hex.EncodeToString(pub(n))}})
		}
		h.initChain(st)
		h.block(genesisTime.Add(time.Second), nil)
		return h
	}
	txs := [][]byte{
		protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub("alice"), Nonce: 1, Recipient: addr("bob"), Amount: 5}, key("alice")),
		protocol.Sign(testChainID, &protocol.IdentityCreditTransfer{Identity: carol, Nonce: 1, Recipient: dave, Amount: 7}, key("carol")),
	}
	seen := start()
	ctx := context.Background()
	for _, typ := range []abcitypes.CheckTxType{abcitypes.CheckTxType_New, abcitypes.CheckTxType_Recheck} {
		if typ == abcitypes.CheckTxType_Recheck {
			// A recheck runs on the state after a block: start the check state again.
			if err := seen.app.resetCheckState(); err != nil {
				t.Fatal(err)
			}
		}
		for i, tx := range txs {
			res, err := seen.app.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: tx, Type: typ})
			if err != nil || res.Code != 0 {
				t.Fatalf("CheckTx %v of tx %d: code %d, %v", typ, i, res.GetCode(), err)
			}
		}
	}
	// A new transaction's signature is verified before CheckTx runs it, which finds it
	// remembered; the recheck finds it remembered too.
	if r, v, _ := signatureChecks(seen); r != 2+2 || v != 2 {
		t.Fatalf("after CheckTx and its recheck: remembered %v, verified %v; want 4, 2", r, v)
	}
	at := genesisTime.Add(2 * time.Second)
	for _, call := range []func() error{
		func() error {
			_, err := seen.app.PrepareProposal(ctx, &abcitypes.RequestPrepareProposal{Txs: txs, MaxTxBytes: 1 << 20, Time: at, Height: seen.height + 1})
			return err
		},
		func() error {
			res, err := seen.app.ProcessProposal(ctx, &abcitypes.RequestProcessProposal{Txs: txs, Time: at, Height: seen.height + 1})
			if err == nil && res.Status != abcitypes.ResponseProcessProposal_ACCEPT {
				t.Fatalf("proposal rejected")
			}
			return err
		},
	} {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	got := seen.block(at, txs)
	// CheckTx and its recheck (4), then the execution of the block PrepareProposal
	// built (2), which ProcessProposal and FinalizeBlock of the same block use as it was.
	if r, v, _ := signatureChecks(seen); r != 4+2 || v != 2 {
		t.Fatalf("after the proposal checks and the block: remembered %v, verified %v; want 6, 2", r, v)
	}

	fresh := start()
	want := fresh.block(at, txs)
	if r, v, _ := signatureChecks(fresh); r != 0 || v != 2 {
		t.Fatalf("a block of transactions never checked: remembered %v, verified %v; want 0, 2", r, v)
	}
	if !bytes.Equal(got.AppHash, want.AppHash) {
		t.Fatalf("app hash %X with the signatures remembered, %X without", got.AppHash, want.AppHash)
	}
	for i := range txs {
		if got.TxResults[i].Code != 0 || got.TxResults[i].Code != want.TxResults[i].Code || got.TxResults[i].GasUsed != want.TxResults[i].GasUsed {
			t.Fatalf("tx %d: code %d fee %d remembered, code %d fee %d not", i, got.TxResults[i].Code, got.TxResults[i].GasUsed, want.TxResults[i].Code, want.TxResults[i].GasUsed)
		}
	}
}

// TestVerifyAhead: a block of transactions this node never checked has its signatures
// verified ahead on every core, and executes to the same results and app hash as with
// one core (no verification ahead), forged signatures included.
func TestVerifyAhead(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core: nothing is verified ahead")
	}
	const n = 40
	start := func() *harness {
		h := newHarness(t)
		var st genesis.AppState
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("ahead%d", i)
			st.Identities = append(st.Identities, genesis.Identity{ID: genesisIdentityID(name).String(), Balance: 1_000_000_000, Keys: []string{hex.EncodeToString(pub(name))}})
			st.Addresses = append(st.Addresses, genesis.Address{Address: addr(name).String(), Balance: 1_000_000_000})
		}
		h.initChain(st)
		h.block(genesisTime.Add(time.Second), nil)
		return h
	}
	var txs [][]byte
	forged := map[int]bool{}
	for i := 0; i < n; i++ {
		name, next := fmt.Sprintf("ahead%d", i), fmt.Sprintf("ahead%d", (i+1)%n)
		var tx []byte
		if i%2 == 0 {
			tx = protocol.Sign(testChainID, &protocol.IdentityCreditTransfer{Identity: genesisIdentityID(name), Nonce: 1, Recipient: genesisIdentityID(next), Amount: 3}, key(name))
		} else {
			tx = protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub(name), Nonce: 1, Recipient: addr(next), Amount: 3}, key(name))
		}
		if i%7 == 3 {
			tx[len(tx)-1] ^= 1
			forged[i] = true
		}
		txs = append(txs, tx)
	}
	at := genesisTime.Add(2 * time.Second)
	ahead := start()
	got := ahead.block(at, txs)
	valid := float64(n - len(forged))
	if r, v, inv := signatureChecks(ahead); v != valid || r != valid || inv != 2*float64(len(forged)) {
		t.Fatalf("remembered %v, verified %v, invalid %v; want %v, %v, %v", r, v, inv, valid, valid, 2*len(forged))
	}

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	alone := start()
	want := alone.block(at, txs)
	if r, v, _ := signatureChecks(alone); r != 0 || v != valid {
		t.Fatalf("one core: remembered %v, verified %v; want 0, %v", r, v, valid)
	}
	if !bytes.Equal(got.AppHash, want.AppHash) {
		t.Fatalf("app hash %X verified ahead, %X not", got.AppHash, want.AppHash)
	}
	for i := range txs {
		g, w := got.TxResults[i], want.TxResults[i]
		if g.Code != w.Code || g.GasUsed != w.GasUsed || (g.Code == 0) == forged[i] {
			t.Fatalf("tx %d (forged %v): code %d fee %d ahead, code %d fee %d not", i, forged[i], g.Code, g.GasUsed, w.Code, w.GasUsed)
		}
	}
}

// TestClientVerifiesBeforeCheck: through the node's mempool client, CheckTx verifies a
// new transaction's signature before it takes any lock and finds it remembered when it
// runs the transaction; a recheck goes straight to the run; a forged signature is
// refused as ever. CheckTxAsync answers through the response callback and through the
// callback the mempool sets on the request it returns.
func TestClientVerifiesBeforeCheck(t *testing.T) {
	h := fundedHarness(t, "alice")
	client, err := h.app.ClientCreator().NewABCIClient()
	if err != nil {
		t.Fatal(err)
	}
	// The mempool sets its callback for the answers of CheckTxAsync.
	var answered []abcitypes.CheckTxType
	client.SetResponseCallback(func(req *abcitypes.Request, _ *abcitypes.Response) {
		answered = append(answered, req.GetCheckTx().Type)
	})
	ctx := context.Background()
	tx := protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub("alice"), Nonce: 1, Recipient: addr("bob"), Amount: 5}, key("alice"))
	res, err := client.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: tx, Type: abcitypes.CheckTxType_New})
	if err != nil || res.Code != 0 {
		t.Fatalf("CheckTx: code %d, %v", res.GetCode(), err)
	}
	if r, v, _ := signatureChecks(h); r != 1 || v != 1 {
		t.Fatalf("a new transaction: remembered %v, verified %v; want 1 (CheckTx), 1 (before it)", r, v)
	}
	if err := h.app.resetCheckState(); err != nil {
		t.Fatal(err)
	}
	rr, err := client.CheckTxAsync(ctx, &abcitypes.RequestCheckTx{Tx: tx, Type: abcitypes.CheckTxType_Recheck})
	if err != nil {
		t.Fatal(err)
	}
	var code uint32 = 1 << 31
	rr.SetCallback(func(res *abcitypes.Response) { code = res.GetCheckTx().Code })
	if code != 0 || len(answered) != 1 || answered[0] != abcitypes.CheckTxType_Recheck {
		t.Fatalf("the recheck's answer: code %d on the request, %v through the response callback", code, answered)
	}
	if r, v, _ := signatureChecks(h); r != 2 || v != 1 {
		t.Fatalf("its recheck: remembered %v, verified %v; want 2, 1", r, v)
	}
	forged := protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub("alice"), Nonce: 2, Recipient: addr("bob"), Amount: 5}, key("bob"))
	res, err = client.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: forged, Type: abcitypes.CheckTxType_New})
	if err != nil {
		t.Fatal(err)
	}
	if res.Code != uint32(protocol.ErrInvalidSignature{}.Code()) {
		t.Fatalf("forged signature: code %d", res.Code)
	}
	if _, _, inv := signatureChecks(h); inv != 2 {
		t.Fatalf("forged signature checked %v times; want 2 (before CheckTx and in it)", inv)
	}
}
