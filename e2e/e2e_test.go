package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"reflect"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	cmted25519 "github.com/cometbft/cometbft/crypto/ed25519"
	rpcclient "github.com/cometbft/cometbft/rpc/client"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// testTimeout bounds every RPC exchange of the scenario.
const testTimeout = 60 * time.Second

type scenario struct {
	t   *testing.T
	ctx context.Context
	env *Env
	c   *client.Client
}

// commit signs t with key (the signer's next nonce) and broadcasts it with commit; the
// transaction must be accepted.
func (s *scenario) commit(t protocol.Transition, key ed25519.PrivateKey) client.BroadcastResult {
	s.t.Helper()
	tx := s.sign(t, key)
	res, err := s.c.Broadcast(s.ctx, tx, true)
	if err != nil {
		s.t.Fatal(err)
	}
	if res.Refused() || !res.Committed || res.Fee == 0 || res.Height == 0 {
		s.t.Fatalf("%s refused or not committed: %+v", t.Type(), res)
	}
	return res
}

func (s *scenario) sign(t protocol.Transition, key ed25519.PrivateKey) []byte {
	s.t.Helper()
	tx, err := s.c.Sign(s.ctx, t, key)
	if err != nil {
		s.t.Fatal(err)
	}
	return tx
}

// refuse broadcasts tx with commit and requires the refusal code want.
func (s *scenario) refuse(tx []byte, want protocol.Code) client.BroadcastResult {
	s.t.Helper()
	res, err := s.c.Broadcast(s.ctx, tx, true)
	if err != nil {
		s.t.Fatal(err)
	}
	if res.Code != want || res.Log == "" {
		s.t.Fatalf("code %d (%s), want %d", res.Code, res.Log, want)
	}
	return res
}

// address reads a at the latest state, or at height h when h > 0.
func (s *scenario) address(a protocol.Address, h int64) client.AddressState {
	s.t.Helper()
	st, err := s.c.Address(s.ctx, a, h, false)
	if err != nil {
		s.t.Fatal(err)
	}
	return st
}

func (s *scenario) identity(id protocol.IdentityID, h int64) client.IdentityState {
	s.t.Helper()
	idn, err := s.c.Identity(s.ctx, id, h, false)
	if err != nil {
		s.t.Fatal(err)
	}
	return idn
}

// nextBlock waits for the block after the latest one, so that the node's check state
// is reset over a committed state.
func (s *scenario) nextBlock() {
	s.t.Helper()
	h, err := s.c.LatestHeight(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := s.c.WaitForHeight(s.ctx, h+1); err != nil {
		s.t.Fatal(err)
	}
}

func pubOf(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

func TestEndToEnd(t *testing.T) {
	t.Parallel()
	env := StartNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s := &scenario{t: t, ctx: ctx, env: env, c: env.Client}
	dev := env.Dev
	devAddr := dev.Address()

	genesisDev := s.address(devAddr, 0)
	if !genesisDev.Present || genesisDev.Balance != DevBalance || genesisDev.Nonce != 0 {
		t.Fatalf("dev at genesis: %+v", genesisDev)
	}

	// 1. An identity funded by the dev address.
	const amount1 = 1_000_000_000_000
	create := &protocol.IdentityCreate{PubKey: dev.Pub, Amount: amount1, Keys: []ed25519.PublicKey{dev.Pub}}
	res := s.commit(create, dev.Priv)
	id1 := protocol.NewIdentityID(devAddr, create.Nonce)
	devNow := s.address(devAddr, res.Height)
	if create.Nonce != 1 || devNow.Balance != DevBalance-amount1-res.Fee || devNow.Nonce != 1 {
		t.Fatalf("dev after create (nonce %d, fee %d): %+v", create.Nonce, res.Fee, devNow)
	}
	idn := s.identity(id1, res.Height)
	if !idn.Present || idn.Balance != amount1 || idn.Nonce.Last != 0 || len(idn.Keys) != 1 || !idn.Keys[0].Equal(dev.Pub) {
		t.Fatalf("identity 1: %+v", idn)
	}

	// 2. Top it up.
	const topUp = 250_000_000
	before := devNow
	res = s.commit(&protocol.IdentityTopUp{PubKey: dev.Pub, Identity: id1, Amount: topUp}, dev.Priv)
	devNow = s.address(devAddr, res.Height)
	if devNow.Balance != before.Balance-topUp-res.Fee || devNow.Nonce != 2 {
		t.Fatalf("dev after top-up (fee %d): %+v", res.Fee, devNow)
	}
	if got := s.identity(id1, res.Height); got.Balance != amount1+topUp || got.Nonce.Last != 0 {
		t.Fatalf("identity 1 after top-up: %+v", got)
	}

	// 3. Address to address: fund a second key.
	bob, err := keyring.Open(env.Home).Add("bob")
	if err != nil {
		t.Fatal(err)
	}
	const toBob = 500_000_000_000
	before = devNow
	fundBob := &protocol.AddressFundsTransfer{PubKey: dev.Pub, Recipient: bob.Address(), Amount: toBob}
	fundBobTx := s.sign(fundBob, dev.Priv)
	res, err = s.c.Broadcast(ctx, fundBobTx, true)
	if err != nil || res.Refused() || !res.Committed {
		t.Fatalf("fund bob: %+v %v", res, err)
	}
	devNow = s.address(devAddr, res.Height)
	if devNow.Balance != before.Balance-toBob-res.Fee || devNow.Nonce != 3 {
		t.Fatalf("dev after funding bob (fee %d): %+v", res.Fee, devNow)
	}
	if got := s.address(bob.Address(), res.Height); !got.Present || got.Balance != toBob || got.Nonce != 0 {
		t.Fatalf("bob: %+v", got)
	}

	// 4. Bob's identity.
	const amount2 = 100_000_000_000
	create2 := &protocol.IdentityCreate{PubKey: bob.Pub, Amount: amount2, Keys: []ed25519.PublicKey{bob.Pub}}
	res = s.commit(create2, bob.Priv)
	id2 := protocol.NewIdentityID(bob.Address(), create2.Nonce)
	if got := s.address(bob.Address(), res.Height); got.Balance != toBob-amount2-res.Fee || got.Nonce != 1 {
		t.Fatalf("bob after create (fee %d): %+v", res.Fee, got)
	}

	// 5. Identity to identity, signed by identity 1's key 0.
	const transfer = 7_000_000
	id1Before := s.identity(id1, 0)
	res = s.commit(&protocol.IdentityCreditTransfer{Identity: id1, Recipient: id2, Amount: transfer}, dev.Priv)
	id1Now := s.identity(id1, res.Height)
	if id1Now.Balance != id1Before.Balance-transfer-res.Fee || id1Now.Nonce.Last != 1 {
		t.Fatalf("identity 1 after transfer (fee %d): %+v, before %+v", res.Fee, id1Now, id1Before)
	}
	if got := s.identity(id2, res.Height); got.Balance != amount2+transfer || got.Nonce.Last != 0 {
		t.Fatalf("identity 2 after transfer: %+v", got)
	}

	// 6. Identity to a new address.
	carol := protocol.AddressOf(pubOf(keyFrom("carol")))
	const toCarol = 3_000_000
	res = s.commit(&protocol.IdentityCreditTransferToAddress{Identity: id1, Recipient: carol, Amount: toCarol}, dev.Priv)
	if got := s.identity(id1, res.Height); got.Balance != id1Now.Balance-toCarol-res.Fee || got.Nonce.Last != 2 {
		t.Fatalf("identity 1 after transfer to carol (fee %d): %+v", res.Fee, got)
	}
	if got := s.address(carol, res.Height); !got.Present || got.Balance != toCarol || got.Nonce != 0 {
		t.Fatalf("carol: %+v", got)
	}
	lastWrite := res.Height

	t.Run("refusals", func(t *testing.T) {
		s := &scenario{t: t, ctx: ctx, env: env, c: env.Client}
		devBefore, bobBefore := s.address(devAddr, 0), s.address(bob.Address(), 0)
		id1Before, id2Before := s.identity(id1, 0), s.identity(id2, 0)

		// Unpaid: refused before the signer is charged.
		s.refuse(protocol.Sign(ChainID, &protocol.AddressFundsTransfer{PubKey: dev.Pub, Nonce: fundBob.Nonce, Recipient: bob.Address(), Amount: 1}, dev.Priv), protocol.CodeInvalidAddressNonce)
		if _, err := s.c.Broadcast(ctx, fundBobTx, true); err == nil {
			t.Fatal("the mempool cache took a committed transaction again")
		}
		forged := protocol.Sign(ChainID, &protocol.AddressFundsTransfer{PubKey: dev.Pub, Nonce: devBefore.Nonce + 1, Recipient: carol, Amount: 1}, bob.Priv)
		s.refuse(forged, protocol.CodeInvalidSignature)

		// Paid in a block, but CheckTx keeps them out of the mempool (abci.CheckTx),
		// so through the RPC they are refused before any block and charge nothing.
		tooMuch := s.sign(&protocol.IdentityCreditTransfer{Identity: id2, Recipient: id1, Amount: id2Before.Balance + 1}, bob.Priv)
		r := s.refuse(tooMuch, protocol.CodeIdentityInsufficientBalance)
		if r.Committed || r.Fee != 0 || r.FeeEstimate == 0 {
			t.Fatalf("insufficient balance: %+v", r)
		}
		nobody := protocol.IdentityID(sha256.Sum256([]byte("no such identity")))
		r = s.refuse(s.sign(&protocol.IdentityCreditTransfer{Identity: id1, Recipient: nobody, Amount: 1}, dev.Priv), protocol.CodeRecipientIdentityNotFound)
		if r.Committed || r.Fee != 0 || r.FeeEstimate == 0 {
			t.Fatalf("unknown recipient: %+v", r)
		}

		s.nextBlock()
		if got := s.address(devAddr, 0); !reflect.DeepEqual(got, withHeight(devBefore, got.Height)) {
			t.Fatalf("dev changed by refusals: %+v, before %+v", got, devBefore)
		}
		if got := s.address(bob.Address(), 0); !reflect.DeepEqual(got, withHeight(bobBefore, got.Height)) {
			t.Fatalf("bob changed by refusals: %+v, before %+v", got, bobBefore)
		}
		for _, before := range []client.IdentityState{id1Before, id2Before} {
			if got := s.identity(before.ID, 0); got.Balance != before.Balance || got.Nonce != before.Nonce {
				t.Fatalf("identity %s changed by refusals: %+v, before %+v", before.ID, got, before)
			}
		}
	})

	t.Run("proofs", func(t *testing.T) {
		s := &scenario{t: t, ctx: ctx, env: env, c: env.Client}
		plain := s.address(devAddr, 0)
		proven, err := s.c.Address(ctx, devAddr, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		if !proven.Verified || !proven.Present || proven.Balance != plain.Balance || proven.Nonce != plain.Nonce {
			t.Fatalf("proven dev %+v, unproven %+v", proven, plain)
		}
		never := protocol.AddressOf(pubOf(keyFrom("never used")))
		absent, err := s.c.Address(ctx, never, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		if !absent.Verified || absent.Present || absent.Balance != 0 {
			t.Fatalf("proven unused address: %+v", absent)
		}
		// A past state is proven against its own next header.
		past, err := s.c.Address(ctx, carol, lastWrite-1, true)
		if err != nil || past.Present || past.Height != lastWrite-1 {
			t.Fatalf("carol before she was paid: %+v %v", past, err)
		}
		idProven, err := s.c.Identity(ctx, id1, 0, true)
		if err != nil || !idProven.Verified || !idProven.Present || idProven.Nonce.Last != 2 || len(idProven.Keys) != 1 {
			t.Fatalf("proven identity 1: %+v %v", idProven, err)
		}
		noID, err := s.c.Identity(ctx, protocol.IdentityID(sha256.Sum256([]byte("absent"))), 0, true)
		if err != nil || !noID.Verified || noID.Present {
			t.Fatalf("proven absent identity: %+v %v", noID, err)
		}
		changes, err := s.c.AddressChanges(ctx, bob.Address(), 0, 0, true)
		if err != nil || !changes.Verified || len(changes.Changes) != 2 {
			t.Fatalf("proven bob changes: %+v %v", changes, err)
		}
		bobNow := s.address(bob.Address(), changes.Height)
		if first, last := changes.Changes[0], changes.Changes[1]; first.Balance != toBob || last.Balance != bobNow.Balance || first.ToHeight >= last.FromHeight {
			t.Fatalf("bob changes %+v, bob now %+v", changes.Changes, bobNow)
		}
	})

	t.Run("tampered answers fail", func(t *testing.T) {
		v := &proofs.Verifier{Client: s.c.RPC(), ChainID: ChainID, Trusted: env.Trusted}
		query := func(a protocol.Address) *rpcQuery {
			res, err := s.c.RPC().ABCIQueryWithOptions(ctx, proofs.PathAddress, a[:], rpcclient.ABCIQueryOptions{Prove: true})
			if err != nil {
				t.Fatal(err)
			}
			return &rpcQuery{resp: res.Response}
		}
		honest := query(devAddr)
		if r, err := v.VerifyQuery(ctx, honest.resp); err != nil || !r.Present {
			t.Fatalf("honest answer: %+v %v", r, err)
		}

		q := query(devAddr)
		q.resp.Value = append([]byte(nil), q.resp.Value...)
		q.resp.Value[7]++ // one more credit
		var vm proofs.ErrValueMismatch
		if _, err := v.VerifyQuery(ctx, q.resp); !errors.As(err, &vm) {
			t.Fatalf("tampered value: %v", err)
		}

		// The same forged value in the answer and in its proof: the proof then computes
		// another root than the signed app hash.
		q = query(devAddr)
		op := &q.resp.ProofOps.Ops[0]
		at := bytes.Index(op.Data, q.resp.Value)
		if at < 0 {
			t.Fatal("the existence proof does not carry the value")
		}
		op.Data = append([]byte(nil), op.Data...)
		op.Data[at+7]++
		q.resp.Value = append([]byte(nil), q.resp.Value...)
		q.resp.Value[7]++
		var am proofs.ErrAppHashMismatch
		if _, err := v.VerifyQuery(ctx, q.resp); !errors.As(err, &am) || am.Height != q.resp.Height {
			t.Fatalf("forged value and proof: %v", err)
		}

		// A sibling hash flipped in the proof.
		q = query(devAddr)
		op = &q.resp.ProofOps.Ops[0]
		op.Data = append([]byte(nil), op.Data...)
		op.Data[len(op.Data)-1] ^= 0x55
		if r, err := v.VerifyQuery(ctx, q.resp); err == nil {
			t.Fatalf("tampered proof verified: %+v, proof %X", r, op.Data)
		}

		// An absence proof of an unused address passed off as dev's absence.
		q = query(protocol.AddressOf(pubOf(keyFrom("never used"))))
		q.resp.Key = honest.resp.Key
		var km proofs.ErrKeyMismatch
		if _, err := v.VerifyQuery(ctx, q.resp); !errors.As(err, &km) {
			t.Fatalf("absence for another key: %v", err)
		}

		// Headers signed by the real validator do not verify against another set.
		other := cmttypes.NewValidatorSet([]*cmttypes.Validator{cmttypes.NewValidator(cmted25519.GenPrivKey().PubKey(), 10)})
		strange := &proofs.Verifier{Client: s.c.RPC(), ChainID: ChainID, Trusted: other}
		var vh proofs.ErrValidatorsHashMismatch
		if _, err := strange.VerifyQuery(ctx, honest.resp); !errors.As(err, &vh) {
			t.Fatalf("untrusted validators: %v", err)
		}
		wrongChain := &proofs.Verifier{Client: s.c.RPC(), ChainID: "another-chain", Trusted: env.Trusted}
		var cm proofs.ErrChainIDMismatch
		if _, err := wrongChain.VerifyQuery(ctx, honest.resp); !errors.As(err, &cm) {
			t.Fatalf("another chain: %v", err)
		}
	})
}

// keyFrom derives a test key from a name.
func keyFrom(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("e2e/" + name))
	return ed25519.NewKeyFromSeed(seed[:])
}

func withHeight(st client.AddressState, h int64) client.AddressState {
	st.Height = h
	return st
}

type rpcQuery struct{ resp abcitypes.ResponseQuery }
