package drive

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"fmt"

	"github.com/ttld-dev/ttld/protocol"
)

// The validator set (docs/STATE.md, "Validators"), protocol version 16 on: the set,
// the pending proposals that change it with their approvals, and the misbehaviour
// recorded against validators. Every record is under ValidatorsRoot.

// Validator is one validator of the set.
type Validator struct {
	Address protocol.ConsensusAddress
	PubKey  ed25519.PublicKey
	Power   uint64
	// Operator is the identity that operates it: its keys sign the validator's
	// proposals and approvals, and its payouts go to it.
	Operator protocol.IdentityID
}

// validatorLen is EncodeValidator's length.
const validatorLen = ed25519.PublicKeySize + U64Len + protocol.IdentityIDLen

// EncodeValidator: consensus public key (32) ++ power u64 ++ operator identity (32).
func EncodeValidator(v Validator) []byte {
	out := make([]byte, 0, validatorLen)
	out = append(out, v.PubKey...)
	out = binary.BigEndian.AppendUint64(out, v.Power)
	return append(out, v.Operator[:]...)
}

// DecodeValidator reads what EncodeValidator wrote for the validator at address a,
// refusing a key whose address is not a.
func DecodeValidator(a protocol.ConsensusAddress, b []byte) (Validator, error) {
	if len(b) != validatorLen {
		return Validator{}, fmt.Errorf("want %d bytes, got %d", validatorLen, len(b))
	}
	v := Validator{Address: a, PubKey: append(ed25519.PublicKey(nil), b[:ed25519.PublicKeySize]...), Power: binary.BigEndian.Uint64(b[ed25519.PublicKeySize:])}
	copy(v.Operator[:], b[ed25519.PublicKeySize+U64Len:])
	if protocol.ConsensusAddressOf(v.PubKey) != a {
		return Validator{}, fmt.Errorf("the key's address is not %s", a)
	}
	if v.Power == 0 {
		return Validator{}, fmt.Errorf("power 0")
	}
	return v, nil
}

// SetValidator writes v into the set.
func SetValidator(kv KV, v Validator) error {
	return kv.Set(ValidatorKey(v.Address), EncodeValidator(v))
}

// GetValidator reads the validator at address a; ok is false when it is not in the set.
func GetValidator(kv KV, a protocol.ConsensusAddress) (v Validator, ok bool, err error) {
	key := ValidatorKey(a)
	b, err := kv.Get(key)
	if err != nil || b == nil {
		return v, false, err
	}
	if v, err = DecodeValidator(a, b); err != nil {
		return v, false, ErrCorrupt{Key: key, Reason: err.Error()}
	}
	return v, true, nil
}

// DeleteValidator removes the validator at address a from the set.
func DeleteValidator(kv KV, a protocol.ConsensusAddress) error { return kv.Delete(ValidatorKey(a)) }

// Validators reads the set, by address.
func Validators(kv KV) ([]Validator, error) {
	var out []Validator
	err := kv.Iterate(ValidatorSetPrefix(), PrefixEnd(ValidatorSetPrefix()), func(k, b []byte) (bool, error) {
		a, ok := ParseValidatorKey(k)
		if !ok {
			return true, ErrCorrupt{Key: k, Reason: "not a validator key"}
		}
		v, err := DecodeValidator(a, b)
		if err != nil {
			return true, ErrCorrupt{Key: k, Reason: err.Error()}
		}
		out = append(out, v)
		return false, nil
	})
	return out, err
}

// ValidatorSet is the set as a lookup, with its total power.
type ValidatorSet struct {
	List  []Validator // by address
	Total uint64
}

// ReadValidatorSet reads the set and sums its power.
func ReadValidatorSet(kv KV) (ValidatorSet, error) {
	list, err := Validators(kv)
	if err != nil {
		return ValidatorSet{}, err
	}
	s := ValidatorSet{List: list}
	for _, v := range list {
		s.Total += v.Power // bounded by MaxValidators × MaxValidatorPower
	}
	return s, nil
}

// Operated returns the validator of the set operator operates; ok is false when none.
func (s ValidatorSet) Operated(operator protocol.IdentityID) (Validator, bool) {
	for _, v := range s.List {
		if v.Operator == operator {
			return v, true
		}
	}
	return Validator{}, false
}

// Has reports whether the validator at address a is in the set.
func (s ValidatorSet) Has(a protocol.ConsensusAddress) bool {
	_, ok := s.Get(a)
	return ok
}

// Get returns the validator at address a; ok is false when it is not in the set.
func (s ValidatorSet) Get(a protocol.ConsensusAddress) (Validator, bool) {
	for _, v := range s.List {
		if v.Address == a {
			return v, true
		}
	}
	return Validator{}, false
}

// ValidatorProposal is a pending proposal to change the set.
type ValidatorProposal struct {
	ID     uint64
	Change protocol.ValidatorChange
	// Proposer is the validator whose operator proposed it.
	Proposer protocol.ConsensusAddress
	// CreatedMs and ExpiresMs: the block time it was made at, and the block time from
	// which it expires unpassed.
	CreatedMs, ExpiresMs uint64
	// PassedMs is the block time of the approval that passed it; 0: pending. A passed
	// proposal is applied by the end of a block (docs/STATE.md, "Validators").
	PassedMs uint64
}

// validatorProposalLen is EncodeValidatorProposal's length.
const validatorProposalLen = 1 + protocol.ConsensusAddressLen + ed25519.PublicKeySize + U64Len + protocol.IdentityIDLen + protocol.ConsensusAddressLen + 3*U64Len

// EncodeValidatorProposal: kind u8 ++ validator address (20; the new key's for an add)
// ++ public key (32; zeros unless add or rotate) ++ power u64 (0 unless add or power)
// ++ operator (32; zeros unless add) ++ proposer address (20) ++ created ms u64 ++
// expires ms u64 ++ passed ms u64.
func EncodeValidatorProposal(p ValidatorProposal) []byte {
	out := make([]byte, 0, validatorProposalLen)
	out = append(out, uint8(p.Change.Kind))
	t := p.Change.Target()
	out = append(out, t[:]...)
	pub := make([]byte, ed25519.PublicKeySize)
	copy(pub, p.Change.PubKey)
	out = append(out, pub...)
	out = binary.BigEndian.AppendUint64(out, p.Change.Power)
	out = append(out, p.Change.Operator[:]...)
	out = append(out, p.Proposer[:]...)
	out = binary.BigEndian.AppendUint64(out, p.CreatedMs)
	out = binary.BigEndian.AppendUint64(out, p.ExpiresMs)
	return binary.BigEndian.AppendUint64(out, p.PassedMs)
}

// DecodeValidatorProposal reads what EncodeValidatorProposal wrote for proposal id.
func DecodeValidatorProposal(id uint64, b []byte) (ValidatorProposal, error) {
	if len(b) != validatorProposalLen {
		return ValidatorProposal{}, fmt.Errorf("want %d bytes, got %d", validatorProposalLen, len(b))
	}
	p := ValidatorProposal{ID: id}
	c := &p.Change
	c.Kind = protocol.ValidatorChangeKind(b[0])
	rest := b[1:]
	target := protocol.ConsensusAddress(rest[:protocol.ConsensusAddressLen])
	rest = rest[protocol.ConsensusAddressLen:]
	pub := append(ed25519.PublicKey(nil), rest[:ed25519.PublicKeySize]...)
	rest = rest[ed25519.PublicKeySize:]
	c.Power = binary.BigEndian.Uint64(rest)
	rest = rest[U64Len:]
	copy(c.Operator[:], rest)
	rest = rest[protocol.IdentityIDLen:]
	copy(p.Proposer[:], rest)
	rest = rest[protocol.ConsensusAddressLen:]
	p.CreatedMs = binary.BigEndian.Uint64(rest)
	p.ExpiresMs = binary.BigEndian.Uint64(rest[U64Len:])
	p.PassedMs = binary.BigEndian.Uint64(rest[2*U64Len:])
	zeroKey := bytes.Equal(pub, make([]byte, ed25519.PublicKeySize))
	switch c.Kind {
	case protocol.ValidatorAdd:
		c.PubKey = pub
		if protocol.ConsensusAddressOf(pub) != target {
			return ValidatorProposal{}, fmt.Errorf("an add's address is not its key's")
		}
	case protocol.ValidatorRotate:
		c.PubKey, c.Validator = pub, target
	case protocol.ValidatorPower, protocol.ValidatorRemove:
		c.Validator = target
	default:
		return ValidatorProposal{}, fmt.Errorf("change kind %d", c.Kind)
	}
	// The fields a kind does not carry are zero (EncodeValidatorProposal).
	if (c.Kind == protocol.ValidatorPower || c.Kind == protocol.ValidatorRemove) && !zeroKey ||
		(c.Kind == protocol.ValidatorRotate || c.Kind == protocol.ValidatorRemove) && c.Power != 0 ||
		c.Kind != protocol.ValidatorAdd && c.Operator != (protocol.IdentityID{}) {
		return ValidatorProposal{}, fmt.Errorf("a %s change with fields it does not carry", c.Kind)
	}
	return p, nil
}

// SetValidatorProposal writes p.
func SetValidatorProposal(kv KV, p ValidatorProposal) error {
	return kv.Set(ValidatorProposalKey(p.ID), EncodeValidatorProposal(p))
}

// ValidatorProposalEntry is a pending proposal with the validators that approved it,
// by address.
type ValidatorProposalEntry struct {
	ValidatorProposal
	Approvals []protocol.ConsensusAddress
}

// GetValidatorProposal reads proposal id and its approvals; ok is false when it is
// not pending.
func GetValidatorProposal(kv KV, id uint64) (p ValidatorProposalEntry, ok bool, err error) {
	start := ValidatorProposalKey(id)
	all, err := readValidatorProposals(kv, start, PrefixEnd(start))
	if err != nil || len(all) == 0 {
		return p, false, err
	}
	return all[0], true, nil
}

// ValidatorProposals reads every pending proposal with its approvals, by number.
func ValidatorProposals(kv KV) ([]ValidatorProposalEntry, error) {
	return readValidatorProposals(kv, ValidatorProposalsPrefix(), PrefixEnd(ValidatorProposalsPrefix()))
}

// readValidatorProposals reads the proposals and approvals in [start, end): every
// approval follows its proposal.
func readValidatorProposals(kv KV, start, end []byte) ([]ValidatorProposalEntry, error) {
	var out []ValidatorProposalEntry
	err := kv.Iterate(start, end, func(k, b []byte) (bool, error) {
		id, a, approval, ok := ParseValidatorProposalKey(k)
		switch {
		case !ok:
			return true, ErrCorrupt{Key: k, Reason: "not a validator proposal key"}
		case approval:
			if len(out) == 0 || out[len(out)-1].ID != id || len(b) != U64Len {
				return true, ErrCorrupt{Key: k, Reason: "an approval without its proposal"}
			}
			out[len(out)-1].Approvals = append(out[len(out)-1].Approvals, a)
			return false, nil
		}
		p, err := DecodeValidatorProposal(id, b)
		if err != nil {
			return true, ErrCorrupt{Key: k, Reason: err.Error()}
		}
		out = append(out, ValidatorProposalEntry{ValidatorProposal: p})
		return false, nil
	})
	return out, err
}

// ApproveValidatorProposal records validator a's approval of proposal id at atMs.
func ApproveValidatorProposal(kv KV, id uint64, a protocol.ConsensusAddress, atMs uint64) error {
	return kv.Set(ValidatorApprovalKey(id, a), binary.BigEndian.AppendUint64(nil, atMs))
}

// DeleteValidatorProposal removes proposal p and its approvals.
func DeleteValidatorProposal(kv KV, p ValidatorProposalEntry) error {
	for _, a := range p.Approvals {
		if err := kv.Delete(ValidatorApprovalKey(p.ID, a)); err != nil {
			return err
		}
	}
	return kv.Delete(ValidatorProposalKey(p.ID))
}

// TakeValidatorProposalID returns the next proposal's number and counts it used.
func TakeValidatorProposalID(kv KV) (uint64, error) {
	n, err := GetU64(kv, NextValidatorProposalKey())
	if err != nil {
		return 0, err
	}
	n = max(n, 1)
	return n, SetU64(kv, NextValidatorProposalKey(), n+1)
}

// Misbehavior is evidence recorded against a validator (docs/STATE.md, "Validators").
type Misbehavior struct {
	Validator protocol.ConsensusAddress
	// Height is the height of the misbehaviour; RecordedAt the block that carried the
	// evidence.
	Height, RecordedAt uint64
	Kind               protocol.MisbehaviorKind
	// Power is the validator's power in the set when the evidence came (0: it was not
	// in the set); Removed says whether the evidence removed it.
	Power   uint64
	Removed bool
}

// misbehaviorLen is EncodeMisbehavior's length.
const misbehaviorLen = 1 + 2*U64Len + 1

// EncodeMisbehavior: kind u8 ++ power u64 ++ recorded at height u64 ++ removed u8.
func EncodeMisbehavior(m Misbehavior) []byte {
	out := []byte{uint8(m.Kind)}
	out = binary.BigEndian.AppendUint64(out, m.Power)
	out = binary.BigEndian.AppendUint64(out, m.RecordedAt)
	removed := uint8(0)
	if m.Removed {
		removed = 1
	}
	return append(out, removed)
}

// DecodeMisbehavior reads what EncodeMisbehavior wrote under MisbehaviorKey(a, height).
func DecodeMisbehavior(a protocol.ConsensusAddress, height uint64, b []byte) (Misbehavior, error) {
	if len(b) != misbehaviorLen || b[misbehaviorLen-1] > 1 {
		return Misbehavior{}, fmt.Errorf("want kind u8, power u64, height u64 and removed 0 or 1, got %d bytes", len(b))
	}
	return Misbehavior{Validator: a, Height: height, Kind: protocol.MisbehaviorKind(b[0]), Power: binary.BigEndian.Uint64(b[1:]),
		RecordedAt: binary.BigEndian.Uint64(b[1+U64Len:]), Removed: b[misbehaviorLen-1] == 1}, nil
}

// RecordMisbehavior writes m.
func RecordMisbehavior(kv KV, m Misbehavior) error {
	return kv.Set(MisbehaviorKey(m.Validator, m.Height), EncodeMisbehavior(m))
}

// Misbehaviors reads the misbehaviour recorded, by validator and height.
func Misbehaviors(kv KV) ([]Misbehavior, error) {
	var out []Misbehavior
	err := kv.Iterate(MisbehaviorPrefix(), PrefixEnd(MisbehaviorPrefix()), func(k, b []byte) (bool, error) {
		a, h, ok := ParseMisbehaviorKey(k)
		if !ok {
			return true, ErrCorrupt{Key: k, Reason: "not a misbehaviour key"}
		}
		m, err := DecodeMisbehavior(a, h, b)
		if err != nil {
			return true, ErrCorrupt{Key: k, Reason: err.Error()}
		}
		out = append(out, m)
		return false, nil
	})
	return out, err
}

// GenesisValidator is a validator of the genesis set: its consensus key and power.
type GenesisValidator struct {
	PubKey ed25519.PublicKey
	Power  uint64
}

// RecordGenesisSet writes the genesis set into the state, each validator operated by
// its payout identity: at a genesis on version 16 or later, and at the switch to 16 of
// a chain that started before it, whose set is still the genesis set (no block before
// 16 changes it).
func RecordGenesisSet(kv KV, set []GenesisValidator) error {
	if len(set) == 0 {
		return fmt.Errorf("drive: the validator set becomes state at version %d, and the genesis validators are not known", protocol.V16)
	}
	for _, g := range set {
		if len(g.PubKey) != ed25519.PublicKeySize || g.Power == 0 {
			return fmt.Errorf("drive: genesis validator %x: want an ed25519 key and a power", g.PubKey)
		}
		a := protocol.ConsensusAddressOf(g.PubKey)
		id, ok, err := GetPayoutIdentity(kv, a[:])
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("drive: genesis validator %s has no payout identity to operate it", a)
		}
		if err := SetValidator(kv, Validator{Address: a, PubKey: g.PubKey, Power: g.Power, Operator: id}); err != nil {
			return err
		}
	}
	return nil
}
