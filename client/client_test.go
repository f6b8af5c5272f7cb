package client

import (
	"context"
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/cosmos/iavl"

	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

const funded = 1_000_000_000_000

// newTestClient starts an in-memory chain where key "alice" holds funded credits.
func newTestClient(t *testing.T) (*Client, *memChain) {
	t.Helper()
	alice := protocol.AddressOf(seedKey("alice").Public().(ed25519.PublicKey))
	chain := newMemChain(t, genesis.AppState{Addresses: []genesis.Address{{Address: alice.String(), Balance: funded}}})
	return New(chain, Options{Wait: 300 * time.Millisecond}), chain
}

func pubOf(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

func TestTransferSignsWithNextNonceAndChargesFee(t *testing.T) {
	c, _ := newTestClient(t)
	ctx := context.Background()
	alice, bob := seedKey("alice"), seedKey("bob")
	aliceAddr, bobAddr := protocol.AddressOf(pubOf(alice)), protocol.AddressOf(pubOf(bob))

	for i, amount := range []uint64{1_000, 2_500} {
		before, err := c.Address(ctx, aliceAddr, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		tr := &protocol.AddressFundsTransfer{PubKey: pubOf(alice), Recipient: bobAddr, Amount: amount}
		tx, err := c.Sign(ctx, tr, alice)
		if err != nil {
			t.Fatal(err)
		}
		if want := uint64(i + 1); tr.Nonce != want {
			t.Fatalf("transfer %d signed with nonce %d, want %d", i, tr.Nonce, want)
		}
		res, err := c.Broadcast(ctx, tx, true)
		if err != nil {
			t.Fatal(err)
		}
		if res.Refused() || !res.Committed || res.Fee == 0 || res.Height != before.Height+1 || res.FeeEstimate != res.Fee {
			t.Fatalf("transfer %d: %+v", i, res)
		}
		after, err := c.Address(ctx, aliceAddr, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		if after.Balance != before.Balance-amount-res.Fee || after.Nonce != uint64(i+1) || after.Height != res.Height {
			t.Fatalf("transfer %d: alice %+v before %+v, fee %d", i, after, before, res.Fee)
		}
	}
	got, err := c.Address(ctx, bobAddr, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Present || got.Balance != 3_500 || got.Nonce != 0 {
		t.Fatalf("bob: %+v", got)
	}
	never, err := c.Address(ctx, protocol.AddressOf(pubOf(seedKey("nobody"))), 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if never.Present || never.Balance != 0 || never.Height != got.Height {
		t.Fatalf("unused address: %+v", never)
	}
}

func TestIdentityCreateAndRead(t *testing.T) {
	c, _ := newTestClient(t)
	ctx := context.Background()
	alice, k1 := seedKey("alice"), seedKey("identity-key")
	create := &protocol.IdentityCreate{PubKey: pubOf(alice), Amount: 50_000_000, Keys: []ed25519.PublicKey{pubOf(k1), pubOf(alice)}}
	tx, err := c.Sign(ctx, create, alice)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Broadcast(ctx, tx, true)
	if err != nil || res.Refused() {
		t.Fatalf("create: %+v %v", res, err)
	}
	id := protocol.NewIdentityID(protocol.AddressOf(pubOf(alice)), create.Nonce)
	idn, err := c.Identity(ctx, id, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if !idn.Present || idn.ID != id || idn.Balance != 50_000_000 || idn.Nonce.Last != 0 || len(idn.Keys) != 2 ||
		!idn.Keys[0].Equal(pubOf(k1)) || !idn.Keys[1].Equal(pubOf(alice)) || idn.Height != res.Height {
		t.Fatalf("identity: %+v", idn)
	}
	next, err := c.NextIdentityNonce(ctx, id)
	if err != nil || next != 1 {
		t.Fatalf("next identity nonce %d, %v", next, err)
	}

	// Key 0 signs a transfer to an address; the identity pays amount and fee.
	dest := protocol.AddressOf(pubOf(seedKey("dest")))
	tr := &protocol.IdentityCreditTransferToAddress{Identity: id, Recipient: dest, Amount: 10_000}
	tx, err = c.Sign(ctx, tr, k1)
	if err != nil {
		t.Fatal(err)
	}
	res, err = c.Broadcast(ctx, tx, true)
	if err != nil || res.Refused() || tr.Nonce != 1 {
		t.Fatalf("transfer: %+v nonce %d %v", res, tr.Nonce, err)
	}
	after, err := c.Identity(ctx, id, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if after.Balance != 50_000_000-10_000-res.Fee || after.Nonce.Last != 1 {
		t.Fatalf("identity after transfer: %+v, fee %d", after, res.Fee)
	}

	absent, err := c.Identity(ctx, protocol.NewIdentityID(dest, 1), 0, false)
	if err != nil || absent.Present || absent.Balance != 0 {
		t.Fatalf("absent identity: %+v %v", absent, err)
	}
}

func TestBroadcastRefusals(t *testing.T) {
	c, _ := newTestClient(t)
	ctx := context.Background()
	alice, mallory := seedKey("alice"), seedKey("mallory")
	aliceAddr := protocol.AddressOf(pubOf(alice))
	bob := protocol.AddressOf(pubOf(seedKey("bob")))

	tx, err := c.Sign(ctx, &protocol.AddressFundsTransfer{PubKey: pubOf(alice), Recipient: bob, Amount: 7}, alice)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.Broadcast(ctx, tx, true); err != nil || res.Refused() {
		t.Fatalf("first: %+v %v", res, err)
	}
	before, err := c.Address(ctx, aliceAddr, 0, false)
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		tx   []byte
		want protocol.Code
	}{
		{"replay", tx, protocol.CodeInvalidAddressNonce},
		{"forged signature", protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pubOf(alice), Nonce: 2, Recipient: bob, Amount: 7}, mallory), protocol.CodeInvalidSignature},
		{"other chain", protocol.Sign("other-chain", &protocol.AddressFundsTransfer{PubKey: pubOf(alice), Nonce: 2, Recipient: bob, Amount: 7}, alice), protocol.CodeInvalidSignature},
		{"unknown signer", protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pubOf(mallory), Nonce: 1, Recipient: bob, Amount: 7}, mallory), protocol.CodeAddressNotFound},
	}
	for _, tc := range cases {
		for _, commit := range []bool{false, true} {
			res, err := c.Broadcast(ctx, tc.tx, commit)
			if err != nil {
				t.Fatal(err)
			}
			if res.Code != tc.want || res.CheckCode != tc.want || !res.Refused() || res.Committed || res.Paid() || res.Fee != 0 || res.Log == "" {
				t.Fatalf("%s (commit %t): %+v, want code %d", tc.name, commit, res, tc.want)
			}
		}
	}
	after, err := c.Address(ctx, aliceAddr, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if after.Balance != before.Balance || after.Nonce != before.Nonce {
		t.Fatalf("unpaid refusals changed alice: %+v, before %+v", after, before)
	}
}

func TestAddressChangesAcrossCompaction(t *testing.T) {
	c, chain := newTestClient(t)
	ctx := context.Background()
	alice := seedKey("alice")
	bob := protocol.AddressOf(pubOf(seedKey("bob")))
	// One transfer per block from height 2: the 64th record (height 65) makes the
	// block compact heights 2..65; heights 66 and 67 stay per-block records.
	const transfers = 66
	for i := 0; i < transfers; i++ {
		tx, err := c.Sign(ctx, &protocol.AddressFundsTransfer{PubKey: pubOf(alice), Recipient: bob, Amount: 1}, alice)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := c.Broadcast(ctx, tx, true); err != nil || res.Refused() || res.Height != int64(i+2) {
			t.Fatalf("transfer %d: %+v %v", i, res, err)
		}
	}
	got, err := c.AddressChanges(ctx, bob, 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []BalanceChange{{2, 65, 64}, {66, 66, 65}, {67, 67, 66}}
	if got.Height != chain.height || len(got.Changes) != len(want) {
		t.Fatalf("changes since 0: %+v", got)
	}
	for i := range want {
		if got.Changes[i] != want[i] {
			t.Fatalf("change %d: %+v, want %+v", i, got.Changes[i], want[i])
		}
	}
	since66, err := c.AddressChanges(ctx, bob, 66, 0, false)
	if err != nil || len(since66.Changes) != 2 || since66.Changes[0] != want[1] {
		t.Fatalf("changes since 66: %+v %v", since66, err)
	}
	// At height 40 nothing was compacted yet: 39 per-block records, heights 2..40.
	past, err := c.AddressChanges(ctx, bob, 0, 40, false)
	if err != nil || past.Height != 40 || len(past.Changes) != 39 || past.Changes[38] != (BalanceChange{40, 40, 39}) {
		t.Fatalf("changes at height 40: height %d, %d changes, %v", past.Height, len(past.Changes), err)
	}
	none, err := c.AddressChanges(ctx, protocol.AddressOf(pubOf(seedKey("nobody"))), 0, 0, false)
	if err != nil || len(none.Changes) != 0 {
		t.Fatalf("unused address: %+v %v", none, err)
	}
}

func TestAnswersThatDoNotMatchTheQuestion(t *testing.T) {
	t.Parallel()
	c, chain := newTestClient(t)
	ctx := context.Background()
	alice := protocol.AddressOf(pubOf(seedKey("alice")))

	_, err := c.Address(ctx, alice, 999, false)
	var q ErrQuery
	if !errors.As(err, &q) || q.Code != proofs.QueryCodeVersionMissing {
		t.Fatalf("height not kept: %v", err)
	}

	chain.queryHook = func(path string, resp *abcitypes.ResponseQuery) {
		if path == proofs.PathAddress {
			resp.Key = append([]byte(nil), resp.Key...)
			resp.Key[len(resp.Key)-1] ^= 1
		}
	}
	var wk ErrWrongKey
	if _, err := c.Address(ctx, alice, 0, false); !errors.As(err, &wk) {
		t.Fatalf("answer for another key: %v", err)
	}

	chain.queryHook = func(path string, resp *abcitypes.ResponseQuery) {
		if path == proofs.PathAddressChangesBlocks {
			resp.Height--
		}
	}
	var wh ErrWrongHeight
	if _, err := c.AddressChanges(ctx, alice, 0, 0, false); !errors.As(err, &wh) || wh.Path != proofs.PathAddressChangesBlocks || wh.Want != chain.height || wh.Got != chain.height-1 {
		t.Fatalf("second answer at another height: %v", err)
	}

	// No signed header can be had from this chain: a proven read fails closed.
	chain.queryHook = nil
	var hu proofs.ErrHeaderUnavailable
	if _, err := c.Address(ctx, alice, 0, true); !errors.As(err, &hu) {
		t.Fatalf("proven read without headers: %v", err)
	}
}

// TestRangeInfoMustMatchTheProof: a range answer's info says "more" exactly when the
// range continues after its last entry (docs/PROOFS.md, "Range answers", step 4). An
// answer whose entries and proof are honest but whose info says otherwise is refused,
// both ways: "more" on a complete answer, and nothing on an identity's answer cut
// after its first key (proven cut from the node's own saved state). The in-memory chain
// signs no headers, so the refusal must come before the header is fetched.
func TestRangeInfoMustMatchTheProof(t *testing.T) {
	t.Parallel()
	c, chain := newTestClient(t)
	ctx := context.Background()
	alice := seedKey("alice")
	create := &protocol.IdentityCreate{PubKey: pubOf(alice), Amount: 50_000_000, Keys: []ed25519.PublicKey{pubOf(alice)}}
	tx, err := c.Sign(ctx, create, alice)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.Broadcast(ctx, tx, true); err != nil || res.Refused() {
		t.Fatalf("create: %+v %v", res, err)
	}
	id := protocol.NewIdentityID(protocol.AddressOf(pubOf(alice)), create.Nonce)

	chain.queryHook = func(path string, resp *abcitypes.ResponseQuery) {
		if path == proofs.PathPools {
			resp.Info = proofs.InfoMore
		}
	}
	var mm proofs.ErrMoreMismatch
	if _, err := c.Pools(ctx, 0, true); !errors.As(err, &mm) || !mm.More || mm.Proven {
		t.Fatalf("a complete answer that says more: %v, want ErrMoreMismatch{More: true, Proven: false}", err)
	}

	chain.queryHook = func(path string, resp *abcitypes.ResponseQuery) {
		if path != proofs.PathIdentity {
			return
		}
		target, err := proofs.TargetOf(path, id[:])
		if err != nil {
			t.Fatal(err)
		}
		err = chain.store.View(resp.Height, func(tree *iavl.ImmutableTree) error {
			entries, more, ops, err := proofs.ProveRange(tree, target.Start, target.End, 1)
			if err == nil && !more {
				err = errors.New("the identity holds one key only")
			}
			resp.Value, resp.ProofOps, resp.Info = proofs.EncodeEntries(entries), ops, ""
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	mm = proofs.ErrMoreMismatch{}
	if _, err := c.Identity(ctx, id, 0, true); !errors.As(err, &mm) || mm.More || !mm.Proven {
		t.Fatalf("a cut answer that does not say more: %v, want ErrMoreMismatch{More: false, Proven: true}", err)
	}

	// Honest answers pass the check and fail only for want of a signed header.
	chain.queryHook = nil
	var hu proofs.ErrHeaderUnavailable
	if _, err := c.Identity(ctx, id, 0, true); !errors.As(err, &hu) {
		t.Fatalf("an honest answer: %v, want ErrHeaderUnavailable", err)
	}
}

// TestAnswerForAnotherHeight: a proxy rewrites the height of the request to an older
// one and forwards the node's honest answer for that height. The answer, and its
// proof, are about another state than the one asked: every read refuses it, proven or
// not, before it looks at the proof.
func TestAnswerForAnotherHeight(t *testing.T) {
	c, chain := newTestClient(t)
	ctx := context.Background()
	alice := seedKey("alice")
	aliceAddr, bob := protocol.AddressOf(pubOf(alice)), protocol.AddressOf(pubOf(seedKey("bob")))
	for i := 0; i < 3; i++ {
		tx, err := c.Sign(ctx, &protocol.AddressFundsTransfer{PubKey: pubOf(alice), Recipient: bob, Amount: 1}, alice)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := c.Broadcast(ctx, tx, true); err != nil || res.Refused() {
			t.Fatalf("transfer %d: %+v %v", i, res, err)
		}
	}
	asked := chain.height
	honest, err := c.Address(ctx, aliceAddr, asked, false)
	if err != nil || honest.Height != asked || honest.Nonce != 3 {
		t.Fatalf("honest read at %d: %+v %v", asked, honest, err)
	}
	const older = 2
	chain.heightHook = func(_ string, h int64) int64 {
		if h == asked {
			return older
		}
		return h
	}
	var id protocol.IdentityID
	for _, prove := range []bool{false, true} {
		reads := map[string]func() error{
			proofs.PathAddress:  func() error { _, err := c.Address(ctx, aliceAddr, asked, prove); return err },
			proofs.PathIdentity: func() error { _, err := c.Identity(ctx, id, asked, prove); return err },
			proofs.PathAddressChangesCompacted: func() error {
				_, err := c.AddressChanges(ctx, bob, 0, asked, prove)
				return err
			},
			proofs.PathEpoch:        func() error { _, err := c.Epoch(ctx, 0, asked, prove); return err },
			proofs.PathPools:        func() error { _, err := c.Pools(ctx, asked, prove); return err },
			proofs.PathTotalCredits: func() error { _, err := c.TotalCredits(ctx, asked, prove); return err },
		}
		for path, read := range reads {
			var wh ErrWrongHeight
			if err := read(); !errors.As(err, &wh) || wh.Path != path || wh.Want != asked || wh.Got != older {
				t.Fatalf("%s at %d answered at %d (prove %t): %v, want ErrWrongHeight{%d, %d}", path, asked, older, prove, err, asked, older)
			}
		}
	}
}

func TestWaitForHeight(t *testing.T) {
	t.Parallel()
	c, chain := newTestClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if h, err := c.WaitForHeight(ctx, 1); err != nil || h != chain.height {
		t.Fatalf("reached height: %d %v", h, err)
	}
	if _, err := c.WaitForHeight(ctx, chain.height+1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("unreached height: %v", err)
	}
}
