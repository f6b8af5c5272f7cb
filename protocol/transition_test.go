package protocol

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"math/rand"
	"testing"
)

func testKey(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte(name))
	return ed25519.NewKeyFromSeed(seed[:])
}

func testContext(t testing.TB) Context {
	ctx, err := ContextFor(Latest, 1_767_225_600_000)
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

// sampleContractJSON is the smallest useful contract: one type, one property.
const sampleContractJSON = `{"documentSchemas":{"note":{"type":"object","properties":{"text":{"type":"string","maxLength":280,"position":0}},"additionalProperties":false}}}`

// sampleTransitions holds one valid transition of every type.
func sampleTransitions() []Transition {
	alice, bob := testKey("alice"), testKey("bob")
	ida := NewIdentityID(AddressOf(alice.Public().(ed25519.PublicKey)), 1)
	idb := NewIdentityID(AddressOf(bob.Public().(ed25519.PublicKey)), 1)
	return []Transition{
		&IdentityCreate{PubKey: alice.Public().(ed25519.PublicKey), Nonce: 1, Amount: 500, Keys: []ed25519.PublicKey{alice.Public().(ed25519.PublicKey), bob.Public().(ed25519.PublicKey)}},
		&IdentityTopUp{PubKey: alice.Public().(ed25519.PublicKey), Nonce: 2, Identity: ida, Amount: 7},
		&IdentityCreditTransfer{Identity: ida, KeyIndex: 1, Nonce: 3, Recipient: idb, Amount: 9},
		&IdentityCreditTransferToAddress{Identity: ida, Nonce: 4, Recipient: AddressOf(bob.Public().(ed25519.PublicKey)), Amount: 11},
		&AddressFundsTransfer{PubKey: alice.Public().(ed25519.PublicKey), Nonce: 5, Recipient: AddressOf(bob.Public().(ed25519.PublicKey)), Amount: 13},
		&DataContractCreate{Identity: ida, KeyIndex: 1, Nonce: 6, Definition: []byte(sampleContractJSON)},
		&DataContractUpdate{Identity: ida, Nonce: 7, Contract: NewContractID(ida, 6), Version: 2, Definition: []byte(sampleContractJSON)},
		sampleBatch(ida, idb, NewContractID(ida, 6)),
		&ValidatorSetProposal{Identity: ida, KeyIndex: 1, Nonce: 9, Change: ValidatorChange{Kind: ValidatorAdd, PubKey: bob.Public().(ed25519.PublicKey), Power: 5, Operator: idb}},
		&ValidatorSetApproval{Identity: idb, Nonce: 10, Proposal: 3},
	}
}

// sampleBatch is a documents batch with one action of every kind.
func sampleBatch(signer, other IdentityID, c ContractID) *DocumentsBatch {
	var id DocumentID
	id[0] = 7
	at := func(i byte) DocumentID { d := id; d[1] = i; return d }
	b := &DocumentsBatch{Identity: signer, Nonce: 8, Contract: c, Actions: []DocumentAction{
		{Kind: ActionCreate, Type: "note", Entropy: [32]byte{1}, Data: []byte(`{"text":"hello"}`)},
		{Kind: ActionReplace, Type: "note", ID: at(1), Revision: 2, Data: []byte(`{"text":"again"}`)},
		{Kind: ActionDelete, Type: "note", ID: at(2)},
		{Kind: ActionTransfer, Type: "note", ID: at(3), Revision: 3, Recipient: other},
		{Kind: ActionPurchase, Type: "note", ID: at(4), Revision: 4, Price: 1000},
		{Kind: ActionUpdatePrice, Type: "note", ID: at(5), Revision: 5, Price: 0},
		{Kind: ActionModerateDelete, Type: "note", ID: at(6), Reason: "spam"},
		{Kind: ActionRestore, Type: "note", ID: at(7), Document: []byte{1, 2, 3}},
		{Kind: ActionRenew, Type: "note", ID: at(8), Revision: 6},
	}}
	b.Actions[0].ID = b.CreateID(b.Actions[0])
	return b
}

func TestRoundTripAndSignature(t *testing.T) {
	l := testContext(t)
	alice := testKey("alice")
	for _, tr := range sampleTransitions() {
		tx := Sign("test-chain", tr, alice)
		s, err := Decode(tx, l)
		if err != nil {
			t.Fatalf("%s: %v", tr.Type(), err)
		}
		if !bytes.Equal(EncodeUnsigned(s.Transition), tx[:len(tx)-SignatureLen]) {
			t.Fatalf("%s: re-encoding differs", tr.Type())
		}
		if s.GetNonce() != tr.GetNonce() || s.Type() != tr.Type() {
			t.Fatalf("%s: decoded %+v", tr.Type(), s.Transition)
		}
		if err := s.VerifySignature("test-chain", alice.Public().(ed25519.PublicKey), VerifyEd25519); err != nil {
			t.Fatalf("%s: %v", tr.Type(), err)
		}
		// The sign bytes are domain-separated by chain id: another chain refuses it.
		var se ErrInvalidSignature
		if err := s.VerifySignature("other-chain", alice.Public().(ed25519.PublicKey), VerifyEd25519); !errors.As(err, &se) {
			t.Fatalf("%s: signature valid on another chain", tr.Type())
		}
		// Every body byte is covered by the signature.
		for i := 0; i < len(tx)-SignatureLen; i++ {
			bad := append([]byte(nil), tx...)
			bad[i] ^= 0x01
			s2, err := Decode(bad, l)
			if err != nil {
				continue
			}
			if s2.VerifySignature("test-chain", alice.Public().(ed25519.PublicKey), VerifyEd25519) == nil {
				t.Fatalf("%s: flipping byte %d keeps the signature valid", tr.Type(), i)
			}
		}
	}
}

// TestRegistry pins every transition type number and name, and checks that the samples
// above cover every registered kind, so a new kind cannot miss the round trip, signature
// and fuzz tests.
func TestRegistry(t *testing.T) {
	pinned := map[TransitionType]string{
		1:  "identity_create",
		2:  "identity_top_up",
		3:  "identity_credit_transfer",
		4:  "identity_credit_transfer_to_address",
		5:  "address_funds_transfer",
		6:  "data_contract_create",
		7:  "data_contract_update",
		8:  "documents_batch",
		9:  "validator_set_proposal",
		10: "validator_set_approval",
	}
	kinds := Kinds()
	if len(kinds) != len(pinned) {
		t.Fatalf("%d kinds registered, %d pinned", len(kinds), len(pinned))
	}
	for i, k := range kinds {
		if i > 0 && kinds[i-1].Type >= k.Type {
			t.Fatalf("Kinds() not in type order at %d", i)
		}
		if pinned[k.Type] != k.Name || k.Type.String() != k.Name {
			t.Errorf("type %d is %q, pinned %q", k.Type, k.Name, pinned[k.Type])
		}
	}
	covered := map[TransitionType]bool{}
	for _, tr := range sampleTransitions() {
		covered[tr.Type()] = true
		sg := tr.Signer()
		switch sg.Kind {
		case SignerAddress:
			if len(sg.PubKey) != ed25519.PublicKeySize {
				t.Errorf("%s: address signer without a key", tr.Type())
			}
		case SignerIdentity:
		default:
			t.Errorf("%s: signer kind %d", tr.Type(), sg.Kind)
		}
		tr.SetNonce(77)
		if tr.GetNonce() != 77 {
			t.Errorf("%s: SetNonce did not set the nonce", tr.Type())
		}
	}
	for _, k := range kinds {
		if !covered[k.Type] {
			t.Errorf("sampleTransitions has no %s", k.Name)
		}
	}
}

// TestVerifyStateless: an address-signed transition's signature is checked without
// state; an identity-signed one is left for the state checks.
func TestVerifyStateless(t *testing.T) {
	ctx := testContext(t)
	alice, bob := testKey("alice"), testKey("bob")
	for _, tr := range sampleTransitions() {
		for _, signer := range []ed25519.PrivateKey{alice, bob} {
			s, err := Decode(Sign("c", tr, signer), ctx)
			if err != nil {
				t.Fatal(err)
			}
			checked, err := s.VerifyStateless("c", VerifyEd25519)
			if checked != (tr.Signer().Kind == SignerAddress) {
				t.Errorf("%s: checked = %v", tr.Type(), checked)
			}
			var se ErrInvalidSignature
			forged := checked && !signer.Public().(ed25519.PublicKey).Equal(tr.Signer().PubKey)
			if forged != errors.As(err, &se) {
				t.Errorf("%s signed by another key: stateless check gave %v", tr.Type(), err)
			}
		}
	}
}

// TestSignBytesSeparateTypes: two transitions whose bodies had the same bytes would still
// sign differently, because the type is part of the domain.
func TestSignBytesSeparateTypes(t *testing.T) {
	body := []byte{TxFormat1, 0, 1, 2, 3}
	a := SignBytes("c", TypeIdentityTopUp, body)
	b := SignBytes("c", TypeAddressFundsTransfer, body)
	if bytes.Equal(a, b) {
		t.Fatal("sign bytes do not depend on the type")
	}
	if bytes.Equal(SignBytes("c1", 1, body), SignBytes("c", 1, body)) {
		t.Fatal("sign bytes do not depend on the chain id")
	}
}

func TestDecodeRefusals(t *testing.T) {
	l := testContext(t)
	alice := testKey("alice")
	good := Sign("c", sampleTransitions()[4], alice)
	cases := []struct {
		name string
		tx   []byte
		code Code
	}{
		{"empty", nil, CodeTxDecode},
		{"truncated", good[:len(good)-1], CodeTxDecode},
		{"trailing byte", append(append([]byte(nil), good...), 0), CodeTxDecode},
		{"oversized", make([]byte, l.Limits.MaxTxBytes+1), CodeTxTooLarge},
		{"unknown format", append([]byte{9}, good[1:]...), CodeUnsupportedTxFormat},
		{"unknown type", append([]byte{TxFormat1, 200}, good[2:]...), CodeUnknownTransitionType},
		{"zero amount", Sign("c", &AddressFundsTransfer{PubKey: alice.Public().(ed25519.PublicKey), Nonce: 1, Recipient: Address{1}}, alice), CodeInvalidTransition},
		{"self transfer", Sign("c", &AddressFundsTransfer{PubKey: alice.Public().(ed25519.PublicKey), Nonce: 1, Recipient: AddressOf(alice.Public().(ed25519.PublicKey)), Amount: 1}, alice), CodeInvalidTransition},
		{"no keys", Sign("c", &IdentityCreate{PubKey: alice.Public().(ed25519.PublicKey), Nonce: 1, Amount: 1}, alice), CodeInvalidTransition},
		{"repeated key", Sign("c", &IdentityCreate{PubKey: alice.Public().(ed25519.PublicKey), Nonce: 1, Amount: 1, Keys: []ed25519.PublicKey{alice.Public().(ed25519.PublicKey), alice.Public().(ed25519.PublicKey)}}, alice), CodeInvalidTransition},
		{"identity self transfer", Sign("c", &IdentityCreditTransfer{Identity: IdentityID{1}, Nonce: 1, Recipient: IdentityID{1}, Amount: 1}, alice), CodeInvalidTransition},
	}
	for _, c := range cases {
		_, err := Decode(c.tx, l)
		got, ok := CodeOf(err)
		if !ok || got != c.code {
			t.Errorf("%s: code %d (%v), want %d", c.name, got, err, c.code)
		}
	}
}

func TestUseNonce(t *testing.T) {
	cases := []struct {
		s    NonceState
		n    uint64
		want NonceReason
		out  NonceState
	}{
		{NonceState{}, 1, 0, NonceState{Last: 1}},
		{NonceState{}, 24, 0, NonceState{Last: 24, Missing: 1<<23 - 1}}, // 1..23 skipped
		{NonceState{}, 25, NonceTooFarInFuture, NonceState{}},
		{NonceState{}, 0, NonceStale, NonceState{}},
		{NonceState{Last: 5}, 5, NonceStale, NonceState{Last: 5}},
		{NonceState{Last: 5}, 4, NonceStale, NonceState{Last: 5}},    // used (not marked missing)
		{NonceState{Last: 5, Missing: 1}, 4, 0, NonceState{Last: 5}}, // skipped: usable once
		{NonceState{Last: 5, Missing: 1}, 6, 0, NonceState{Last: 6, Missing: 2}},
		{NonceState{Last: 7}, 9, 0, NonceState{Last: 9, Missing: 1}}, // 8 skipped
		{NonceState{Last: 100, Missing: 1 << 23}, 76, 0, NonceState{Last: 100}},
		{NonceState{Last: 100, Missing: 1 << 23}, 75, NonceStale, NonceState{Last: 100, Missing: 1 << 23}}, // out of the window
		{NonceState{Last: MaxNonce - 1}, MaxNonce, 0, NonceState{Last: MaxNonce}},
		{NonceState{Last: MaxNonce}, MaxNonce + 1, NonceTooFarInFuture, NonceState{Last: MaxNonce}},
	}
	for _, c := range cases {
		out, got := UseNonce(c.s, c.n, 24)
		if got != c.want || out != c.out {
			t.Errorf("UseNonce(%+v, %d) = %+v, %v; want %+v, %v", c.s, c.n, out, got, c.out, c.want)
		}
		if DecodeNonceState(out.Encode()) != out {
			t.Errorf("%+v does not survive its encoding", out)
		}
	}
}

// TestUseNonceAgainstReference checks UseNonce against a plain model over random
// sequences: the set of nonces used; n is accepted when it is positive, unused, at most
// gap past the highest used, and not more than NonceWindow below it.
func TestUseNonceAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for run := 0; run < 300; run++ {
		used := map[uint64]bool{}
		var last uint64
		var s NonceState
		for step := 0; step < 200; step++ {
			n := last + uint64(rng.Intn(60)) - 30
			if rng.Intn(10) == 0 {
				n = uint64(rng.Intn(5))
			}
			accept := n >= 1 && !used[n] && n <= last+24 && (n > last || last-n <= NonceWindow)
			out, reason := UseNonce(s, n, 24)
			if (reason == 0) != accept {
				t.Fatalf("run %d step %d: last %d, n %d: UseNonce says %v, the model %v", run, step, last, n, reason, accept)
			}
			if accept {
				used[n] = true
				last = max(last, n)
				s = out
			} else if out != s {
				t.Fatalf("a refused nonce changed the record: %+v -> %+v", s, out)
			}
			if s.Last != last {
				t.Fatalf("record's last %d, model's %d", s.Last, last)
			}
			for _, k := range s.Skipped() {
				if used[k] || s.Used(k) {
					t.Fatalf("nonce %d listed as skipped but used", k)
				}
			}
			for k := range used {
				if !s.Used(k) {
					t.Fatalf("nonce %d used but the record says not", k)
				}
			}
		}
	}
}

// FuzzDecode: no input panics, and whatever decodes re-encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	alice := testKey("alice")
	for _, tr := range sampleTransitions() {
		f.Add(Sign("c", tr, alice))
	}
	f.Add([]byte{})
	f.Add([]byte{TxFormat1})
	f.Add([]byte{TxFormat1, 1, 0xff})
	l := testContext(f)
	f.Fuzz(func(t *testing.T, tx []byte) {
		s, err := Decode(tx, l)
		if err != nil {
			if _, ok := CodeOf(err); !ok {
				t.Fatalf("decode error without a code: %v", err)
			}
			return
		}
		re := append(EncodeUnsigned(s.Transition), s.Signature...)
		if !bytes.Equal(re, tx) {
			t.Fatalf("re-encoding differs:\n%x\n%x", re, tx)
		}
	})
}

// TestNonceDropsAgainstUseNonce checks Drops against UseNonce over random records and
// nonces: the nonces it drops are the skipped ones usable before and not after (but n),
// and Drops names the lowest of them.
func TestNonceDropsAgainstUseNonce(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for range 20_000 {
		s := NonceState{Last: 30 + uint64(rng.Intn(40)), Missing: rng.Uint32() & (1<<NonceWindow - 1)}
		n := s.Last - 26 + uint64(rng.Intn(52))
		after, reason := UseNonce(s, n, NonceWindow)
		if reason != 0 {
			continue
		}
		var lowest uint64
		dropped := false
		for _, m := range s.Skipped() { // lowest first
			if !containsNonce(after.Skipped(), m) && m != n {
				lowest, dropped = m, true
				break
			}
		}
		got, ok := s.Drops(n)
		if ok != dropped || got != lowest {
			t.Fatalf("%+v using %d: Drops says %d %v, UseNonce drops %d %v", s, n, got, ok, lowest, dropped)
		}
	}
}

func containsNonce(list []uint64, n uint64) bool {
	for _, m := range list {
		if m == n {
			return true
		}
	}
	return false
}
