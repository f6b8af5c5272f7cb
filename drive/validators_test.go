package drive

import (
	"bytes"
	"crypto/ed25519"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// sampleValidatorRecords are one encoding of each validator record kind.
func sampleValidatorRecords() [][]byte {
	pub := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)).Public().(ed25519.PublicKey)
	a := protocol.ConsensusAddressOf(pub)
	return [][]byte{
		EncodeValidator(Validator{Address: a, PubKey: pub, Power: 10, Operator: protocol.IdentityID{7}}),
		EncodeValidatorProposal(ValidatorProposal{ID: 3, Change: protocol.ValidatorChange{Kind: protocol.ValidatorAdd, PubKey: pub, Power: 5, Operator: protocol.IdentityID{9}}, Proposer: a, CreatedMs: 1, ExpiresMs: 2}),
		EncodeValidatorProposal(ValidatorProposal{ID: 4, Change: protocol.ValidatorChange{Kind: protocol.ValidatorRotate, Validator: a, PubKey: pub}, Proposer: a, PassedMs: 3}),
		EncodeMisbehavior(Misbehavior{Validator: a, Height: 8, RecordedAt: 9, Kind: protocol.MisbehaviorDuplicateVote, Power: 10, Removed: true}),
	}
}

// TestValidatorRecordsRoundTrip: each record decodes to what was encoded.
func TestValidatorRecordsRoundTrip(t *testing.T) {
	pub := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)).Public().(ed25519.PublicKey)
	a := protocol.ConsensusAddressOf(pub)
	v := Validator{Address: a, PubKey: pub, Power: 10, Operator: protocol.IdentityID{7}}
	if got, err := DecodeValidator(a, EncodeValidator(v)); err != nil || !bytes.Equal(got.PubKey, v.PubKey) || got.Power != v.Power || got.Operator != v.Operator {
		t.Fatalf("validator: %+v %v", got, err)
	}
	if _, err := DecodeValidator(protocol.ConsensusAddress{1}, EncodeValidator(v)); err == nil {
		t.Fatal("a validator under another address than its key's decoded")
	}
	for _, c := range []protocol.ValidatorChange{
		{Kind: protocol.ValidatorAdd, PubKey: pub, Power: 5, Operator: protocol.IdentityID{9}},
		{Kind: protocol.ValidatorPower, Validator: a, Power: 6},
		{Kind: protocol.ValidatorRotate, Validator: protocol.ConsensusAddress{2}, PubKey: pub},
		{Kind: protocol.ValidatorRemove, Validator: a},
	} {
		p := ValidatorProposal{ID: 3, Change: c, Proposer: a, CreatedMs: 1, ExpiresMs: 2, PassedMs: 3}
		if c.Kind != protocol.ValidatorAdd {
			spoiled := EncodeValidatorProposal(p)
			spoiled[len(spoiled)-1-3*U64Len-protocol.ConsensusAddressLen-1] = 1 // the operator's last byte
			if _, err := DecodeValidatorProposal(3, spoiled); err == nil {
				t.Errorf("a %s proposal with an operator decoded", c.Kind)
			}
		}
		got, err := DecodeValidatorProposal(3, EncodeValidatorProposal(p))
		if err != nil || got.Change.Kind != c.Kind || got.Change.Target() != c.Target() || !bytes.Equal(got.Change.PubKey, c.PubKey) ||
			got.Change.Power != c.Power || got.Change.Operator != c.Operator || got.Proposer != a || got.ExpiresMs != 2 || got.PassedMs != 3 {
			t.Fatalf("proposal %s: %+v %v", c.Kind, got, err)
		}
	}
	m := Misbehavior{Validator: a, Height: 8, RecordedAt: 9, Kind: protocol.MisbehaviorLightClientAttack, Power: 10, Removed: true}
	if got, err := DecodeMisbehavior(a, 8, EncodeMisbehavior(m)); err != nil || got != m {
		t.Fatalf("misbehaviour: %+v %v", got, err)
	}
}

// FuzzValidatorRecords: the decoders of the validator set's records, which a client
// runs on a node's answers, refuse what is not a record and never panic; what one
// accepts encodes back to the same bytes.
func FuzzValidatorRecords(f *testing.F) {
	for _, b := range sampleValidatorRecords() {
		f.Add(b)
	}
	pub := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)).Public().(ed25519.PublicKey)
	a := protocol.ConsensusAddressOf(pub)
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := DecodeValidator(a, b); err == nil && !bytes.Equal(EncodeValidator(v), b) {
			t.Fatalf("validator %X decodes to %+v, which encodes otherwise", b, v)
		}
		if p, err := DecodeValidatorProposal(1, b); err == nil && !bytes.Equal(EncodeValidatorProposal(p), b) {
			t.Fatalf("proposal %X decodes to %+v, which encodes otherwise", b, p)
		}
		if m, err := DecodeMisbehavior(a, 1, b); err == nil && !bytes.Equal(EncodeMisbehavior(m), b) {
			t.Fatalf("misbehaviour %X decodes to %+v, which encodes otherwise", b, m)
		}
	})
}
