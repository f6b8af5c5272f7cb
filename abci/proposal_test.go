package abci

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/protocol"
)

// TestPrepareProposalFits: the proposal keeps the mempool's order and stops before the
// transaction that would pass MaxTxBytes, counted with CometBFT's framing.
func TestPrepareProposalFits(t *testing.T) {
	h := fundedHarness(t, "alice")
	var txs [][]byte
	for n := uint64(1); n <= 3; n++ {
		txs = append(txs, protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub("alice"), Nonce: n, Recipient: addr("bob"), Amount: 1}, key("alice")))
	}
	size := len(txs[0])
	res, err := h.app.PrepareProposal(context.Background(), &abcitypes.RequestPrepareProposal{Txs: txs, MaxTxBytes: int64(2*(size+2) + 50), Height: 2, Time: genesisTime.Add(2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Txs) != 2 || !bytes.Equal(res.Txs[1], txs[1]) {
		t.Fatalf("%d transactions in a proposal with room for 2", len(res.Txs))
	}
}

// TestProposalUnpaidRefusals: a transaction the block would refuse unpaid, whether its
// bytes decide it alone (decoding, size, format, structure, an address signer's
// signature, another chain's signature) or the state does (a nonce used or too far, an
// identity's forged signature, a signer that does not exist or cannot pay the
// processing fee), or a copy of an earlier transaction of the block, is left out by
// PrepareProposal and makes ProcessProposal reject the block; a paid refusal (an amount
// beyond the balance) is proposed and accepted, and charged by the block.
func TestProposalUnpaidRefusals(t *testing.T) {
	h := newHarness(t)
	dave := genesisIdentityID("dave")
	h.initChain(genesis.AppState{
		Addresses:  []genesis.Address{{Address: addr("alice").String(), Balance: 1_000_000_000_000}, {Address: addr("poor").String(), Balance: 100}},
		Identities: []genesis.Identity{{ID: dave.String(), Balance: 1_000_000_000, Keys: []string{fmt.Sprintf("%x", []byte(pub("dave")))}}},
	})
	used := protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub("alice"), Nonce: 1, Recipient: addr("bob"), Amount: 5}, key("alice"))
	h.block(genesisTime.Add(time.Second), [][]byte{used})

	at := genesisTime.Add(2 * time.Second)
	transfer := func(n uint64, amount uint64) *protocol.AddressFundsTransfer {
		return &protocol.AddressFundsTransfer{PubKey: pub("alice"), Nonce: n, Recipient: addr("bob"), Amount: amount}
	}
	good := protocol.Sign(testChainID, transfer(2, 5), key("alice"))
	accepted := [][]byte{
		good,
		// Beyond the balance, and to an identity that does not exist: paid.
		protocol.Sign(testChainID, transfer(3, ^uint64(0)), key("alice")),
		protocol.Sign(testChainID, &protocol.IdentityCreditTransfer{Identity: dave, Nonce: 1, Recipient: genesisIdentityID("erin"), Amount: 1}, key("dave")),
	}
	unpaid := []struct {
		tx   []byte
		code protocol.Code // 0: not a transition code (a proposal's copy)
	}{
		{[]byte{}, protocol.CodeTxDecode},
		{[]byte{0xff}, protocol.CodeTxDecode},
		{append(append([]byte(nil), good...), 0), protocol.CodeTxDecode},
		{protocol.Sign(testChainID, transfer(4, 5), key("mallory")), protocol.CodeInvalidSignature},
		{protocol.Sign("other-chain", transfer(4, 5), key("alice")), protocol.CodeInvalidSignature},
		{protocol.Sign(testChainID, transfer(4, 0), key("alice")), protocol.CodeInvalidTransition},
		{append([]byte{protocol.TxFormat1, 200}, good[2:]...), protocol.CodeUnknownTransitionType},
		{used, protocol.CodeInvalidAddressNonce},
		{protocol.Sign(testChainID, transfer(100, 5), key("alice")), protocol.CodeInvalidAddressNonce},
		{protocol.Sign(testChainID, &protocol.IdentityCreditTransfer{Identity: dave, Nonce: 2, Recipient: genesisIdentityID("erin"), Amount: 1}, key("mallory")), protocol.CodeInvalidSignature},
		{protocol.Sign(testChainID, &protocol.IdentityCreditTransfer{Identity: dave, Nonce: 90, Recipient: genesisIdentityID("erin"), Amount: 1}, key("dave")), protocol.CodeInvalidIdentityNonce},
		{protocol.Sign(testChainID, &protocol.IdentityCreditTransfer{Identity: protocol.IdentityID{1}, Nonce: 1, Recipient: dave, Amount: 1}, key("mallory")), protocol.CodeIdentityNotFound},
		{protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub("mallory"), Nonce: 1, Recipient: addr("bob"), Amount: 1}, key("mallory")), protocol.CodeAddressNotFound},
		{protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub("poor"), Nonce: 1, Recipient: addr("bob"), Amount: 1}, key("poor")), protocol.CodeBalanceIsNotEnough},
		{good, protocol.CodeInvalidAddressNonce}, // a copy: its nonce is used by then
	}
	ctx := context.Background()
	for i, u := range unpaid {
		txs := append(append([][]byte(nil), accepted...), u.tx)
		pp, err := h.app.ProcessProposal(ctx, &abcitypes.RequestProcessProposal{Txs: txs, Time: at, Height: 2})
		if err != nil || pp.Status != abcitypes.ResponseProcessProposal_REJECT {
			t.Errorf("unpaid refusal %d: ProcessProposal %v %v, want REJECT", i, pp.GetStatus(), err)
		}
		if !h.store.Unchanged() {
			t.Fatalf("unpaid refusal %d: the rejected proposal stayed staged", i)
		}
		prep, err := h.app.PrepareProposal(ctx, &abcitypes.RequestPrepareProposal{Txs: txs, MaxTxBytes: 1 << 20, Time: at, Height: 2})
		if err != nil || len(prep.Txs) != len(accepted) {
			t.Errorf("unpaid refusal %d: PrepareProposal took %d of %d (%v)", i, len(prep.GetTxs()), len(txs), err)
		}
		// The block refuses it, unpaid, when it is decided anyway.
		res := h.finalize(at, txs)
		if got := res.TxResults[len(txs)-1]; protocol.Code(got.Code) != u.code || got.GasUsed != 0 {
			t.Errorf("unpaid refusal %d: the block gives %s fee %d, want %s unpaid", i, protocol.Code(got.Code), got.GasUsed, u.code)
		}
	}
	pp, err := h.app.ProcessProposal(ctx, &abcitypes.RequestProcessProposal{Txs: accepted, Time: at, Height: 2})
	if err != nil || pp.Status != abcitypes.ResponseProcessProposal_ACCEPT {
		t.Fatalf("a proposal of paid refusals: %v %v, want ACCEPT", pp.GetStatus(), err)
	}
	res := h.block(at, accepted)
	want := []protocol.Code{protocol.CodeOK, protocol.CodeAddressInsufficientBalance, protocol.CodeRecipientIdentityNotFound}
	for i, tr := range res.TxResults {
		if protocol.Code(tr.Code) != want[i] || tr.GasUsed == 0 {
			t.Errorf("tx %d: %s fee %d, want %s paid", i, protocol.Code(tr.Code), tr.GasUsed, want[i])
		}
	}
}

// TestOptimisticSameAsDirect runs the same blocks on two chains: one executes every
// block in FinalizeBlock alone, as a replay does; the other, a validator, executes
// them before their decision in every way CometBFT v0.38 can call it: the block it
// proposes (PrepareProposal, then its own ProcessProposal), another's, a round that
// changes proposer (two proposals processed, the second decided), a decided block other
// than the last processed (a miss), a rejected proposal before the decided one, and a
// restart between ProcessProposal and FinalizeBlock. Every block's results and app
// hash must be the same on both, from the first block (executed on a branch of the
// genesis state) on, across epoch changes.
func TestOptimisticSameAsDirect(t *testing.T) {
	names := []string{"alice", "bob", "carol", "dave"}
	start := func() *harness {
		h := newHarness(t)
		st := genesis.AppState{EpochTimeLengthS: 3600}
		for _, n := range names {
			st.Addresses = append(st.Addresses, genesis.Address{Address: addr(n).String(), Balance: 1_000_000_000})
			st.Identities = append(st.Identities, genesis.Identity{ID: genesisIdentityID(n).String(), Balance: 1_000_000_000, Keys: []string{fmt.Sprintf("%x", []byte(pub(n)))}})
		}
		h.addValidator("v1", genesisIdentityID("alice"), 10, &st)
		h.addValidator("v2", genesisIdentityID("bob"), 10, &st)
		h.initChain(st)
		return h
	}
	direct, validator := start(), start()
	rng := rand.New(rand.NewSource(23))
	nonces := map[string]uint64{}
	// candidates are a mempool's worth of transfers, some refused unpaid (a nonce used
	// or repeated, a forged signature), some paid (beyond the balance).
	candidates := func() [][]byte {
		var txs [][]byte
		for i := 0; i < 12; i++ {
			from, to := names[rng.Intn(len(names))], names[rng.Intn(len(names))]
			if from == to {
				continue
			}
			nonces[from]++
			n, amount, signer := nonces[from], uint64(rng.Intn(1000)+1), from
			switch rng.Intn(8) {
			case 0:
				n = max(1, n-1) // used, or about to be
			case 1:
				signer = "mallory"
			case 2:
				amount = 5_000_000_000
			}
			if rng.Intn(2) == 0 {
				txs = append(txs, protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub(from), Nonce: n, Recipient: addr(to), Amount: amount}, key(signer)))
			} else {
				txs = append(txs, protocol.Sign(testChainID, &protocol.IdentityCreditTransfer{Identity: genesisIdentityID(from), Nonce: n, Recipient: genesisIdentityID(to), Amount: amount}, key(signer)))
			}
		}
		return txs
	}
	ctx := context.Background()
	v1, v2 := consensusAddress("v1"), consensusAddress("v2")
	process := func(height int64, at time.Time, proposer []byte, txs [][]byte, hash string) abcitypes.ResponseProcessProposal_ProposalStatus {
		res, err := validator.app.ProcessProposal(ctx, &abcitypes.RequestProcessProposal{Height: height, Time: at, ProposerAddress: proposer, Txs: txs, Hash: blockHash(hash)})
		if err != nil {
			t.Fatal(err)
		}
		return res.Status
	}
	modes := []string{"round change", "own", "other", "miss", "rejected", "restart"}
	for height := int64(1); height <= 18; height++ {
		at := genesisTime.Add(time.Duration(height) * 1000 * time.Second)
		mode := modes[int(height-1)%len(modes)]
		// The block decided: what the proposer built of the candidates.
		prep, err := validator.app.PrepareProposal(ctx, &abcitypes.RequestPrepareProposal{Height: height, Time: at, ProposerAddress: v1, Txs: candidates(), MaxTxBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		block := prep.Txs
		want := abcitypes.ResponseProcessProposal_ACCEPT
		result := optimisticHit
		switch mode {
		case "own":
		case "other":
			validator.app.discard()
		case "round change":
			if s := process(height, at, v2, block[:len(block)/2], "round 0"); s != want {
				t.Fatalf("height %d: round 0 %v", height, s)
			}
		case "miss":
			if s := process(height, at.Add(time.Millisecond), v1, block, "later"); s != want {
				t.Fatalf("height %d: %v", height, s)
			}
			result = optimisticMiss
		case "rejected":
			if s := process(height, at, v1, append(append([][]byte(nil), block...), block...), "copies"); s != abcitypes.ResponseProcessProposal_REJECT && len(block) > 0 {
				t.Fatalf("height %d: a proposal of copies %v", height, s)
			}
		case "restart":
			result = optimisticUnprocessed
		}
		if mode != "miss" {
			if s := process(height, at, v1, block, "decided"); s != want {
				t.Fatalf("height %d (%s): the decided block %v", height, mode, s)
			}
		}
		if mode == "restart" {
			validator.open()
		}
		before := validator.optimisticCounts()
		validator.proposer, validator.hash = v1, blockHash("decided")
		got := validator.block(at, block)
		if r := validator.optimisticResult(before); r != result {
			t.Errorf("height %d (%s): FinalizeBlock %s, want %s", height, mode, r, result)
		}
		for i, tr := range got.TxResults {
			if tr.Code != 0 && !protocol.Code(tr.Code).Paid() {
				t.Errorf("height %d: the proposal holds tx %d refused unpaid (%s)", height, i, protocol.Code(tr.Code))
			}
		}
		direct.proposer = v1
		wantRes := direct.block(at, block)
		if !bytes.Equal(got.AppHash, wantRes.AppHash) || fmt.Sprint(got.TxResults) != fmt.Sprint(wantRes.TxResults) || fmt.Sprint(got.Events) != fmt.Sprint(wantRes.Events) {
			t.Fatalf("height %d (%s): app hash %X and results differ from executing directly (%X):\n%v\n%v", height, mode, got.AppHash, wantRes.AppHash, got.TxResults, wantRes.TxResults)
		}
	}
}
