package protocol

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// ConsensusAddressLen is the length of a validator's consensus address.
const ConsensusAddressLen = 20

// ConsensusAddress names a validator: the first 20 bytes of the SHA-256 of its ed25519
// consensus public key, as CometBFT derives it (crypto/ed25519.PubKey.Address).
type ConsensusAddress [ConsensusAddressLen]byte

// ConsensusAddressOf returns the address of consensus key pub.
func ConsensusAddressOf(pub ed25519.PublicKey) ConsensusAddress {
	sum := sha256.Sum256(pub)
	var a ConsensusAddress
	copy(a[:], sum[:ConsensusAddressLen])
	return a
}

func (a ConsensusAddress) String() string { return hex.EncodeToString(a[:]) }

// ParseConsensusAddress reads 40 hex digits.
func ParseConsensusAddress(s string) (ConsensusAddress, error) {
	var a ConsensusAddress
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != ConsensusAddressLen {
		return a, fmt.Errorf("want a %d-byte consensus address in hex, got %q", ConsensusAddressLen, s)
	}
	copy(a[:], b)
	return a, nil
}

// ValidatorChangeKind says what a validator set proposal changes (docs/STATE.md,
// "Validators").
type ValidatorChangeKind uint8

// The kinds of change. Numbers are never reused.
const (
	// ValidatorAdd adds a validator: its consensus key, power and operator identity.
	ValidatorAdd ValidatorChangeKind = 1
	// ValidatorPower changes a validator's power.
	ValidatorPower ValidatorChangeKind = 2
	// ValidatorRotate replaces a validator's consensus key; power and operator stay.
	ValidatorRotate ValidatorChangeKind = 3
	// ValidatorRemove removes a validator.
	ValidatorRemove ValidatorChangeKind = 4
)

var validatorChangeNames = map[ValidatorChangeKind]string{
	ValidatorAdd: "add", ValidatorPower: "power", ValidatorRotate: "rotate", ValidatorRemove: "remove",
}

func (k ValidatorChangeKind) String() string {
	if n, ok := validatorChangeNames[k]; ok {
		return n
	}
	return fmt.Sprintf("ValidatorChangeKind(%d)", uint8(k))
}

// ParseValidatorChangeKind reads a kind's name.
func ParseValidatorChangeKind(s string) (ValidatorChangeKind, bool) {
	for _, k := range []ValidatorChangeKind{ValidatorAdd, ValidatorPower, ValidatorRotate, ValidatorRemove} {
		if k.String() == s {
			return k, true
		}
	}
	return 0, false
}

// ValidatorChange is what a proposal changes. Which fields it carries depends on its
// kind: an add its PubKey, Power and Operator; a power change its Validator and Power;
// a rotation its Validator and new PubKey; a removal its Validator. The others are
// zero.
type ValidatorChange struct {
	Kind ValidatorChangeKind
	// Validator is the validator changed (power, rotate, remove).
	Validator ConsensusAddress
	// PubKey is the consensus key added (add) or rotated to (rotate).
	PubKey ed25519.PublicKey
	Power  uint64
	// Operator is the identity that operates the validator added: its keys sign the
	// validator's proposals and approvals, and its epochs' payouts go to it.
	Operator IdentityID
}

// Target is the address of the validator the change makes or changes: the new key's
// for an add, the changed validator's otherwise.
func (c ValidatorChange) Target() ConsensusAddress {
	if c.Kind == ValidatorAdd {
		return ConsensusAddressOf(c.PubKey)
	}
	return c.Validator
}

func (c ValidatorChange) encode(e *encoder) {
	e.u8(uint8(c.Kind))
	switch c.Kind {
	case ValidatorAdd:
		e.bytes(c.PubKey)
		e.u64(c.Power)
		e.bytes(c.Operator[:])
	case ValidatorPower:
		e.bytes(c.Validator[:])
		e.u64(c.Power)
	case ValidatorRotate:
		e.bytes(c.Validator[:])
		e.bytes(c.PubKey)
	case ValidatorRemove:
		e.bytes(c.Validator[:])
	}
}

func (c *ValidatorChange) decode(d *decoder) {
	at := d.off
	c.Kind = ValidatorChangeKind(d.u8("validator change kind"))
	switch c.Kind {
	case ValidatorAdd:
		c.PubKey = d.fixed(ed25519.PublicKeySize, "consensus public key")
		c.Power = d.u64("power")
		copy(c.Operator[:], d.fixed(IdentityIDLen, "operator identity id"))
	case ValidatorPower:
		copy(c.Validator[:], d.fixed(ConsensusAddressLen, "validator address"))
		c.Power = d.u64("power")
	case ValidatorRotate:
		copy(c.Validator[:], d.fixed(ConsensusAddressLen, "validator address"))
		c.PubKey = d.fixed(ed25519.PublicKeySize, "consensus public key")
	case ValidatorRemove:
		copy(c.Validator[:], d.fixed(ConsensusAddressLen, "validator address"))
	default:
		if d.err == nil {
			d.err = ErrTxDecode{Offset: at, Reason: fmt.Sprintf("validator change kind %d is none of add (1), power (2), rotate (3), remove (4)", c.Kind)}
		}
	}
}

// validate checks what needs no state: a power within 1..MaxValidatorPower, and a
// rotation to another key.
func (c ValidatorChange) validate(l Limits) error {
	if c.Kind == ValidatorAdd || c.Kind == ValidatorPower {
		if c.Power == 0 || c.Power > l.MaxValidatorPower {
			return ErrInvalidTransition{Field: "power", Reason: fmt.Sprintf("must be 1 to %d (a removal is its own kind)", l.MaxValidatorPower)}
		}
	}
	if c.Kind == ValidatorRotate && ConsensusAddressOf(c.PubKey) == c.Validator {
		return ErrInvalidTransition{Field: "public key", Reason: "a rotation names a new key"}
	}
	return nil
}

// validatorVotes refuses a validator set transition under a version without them: the
// type names no transition there.
func validatorVotes(ctx Context, t TransitionType) error {
	if !ctx.Limits.ValidatorVotes {
		return ErrUnknownTransitionType{Type: uint8(t)}
	}
	return nil
}

// MovesTooMuch reports whether moving power of a set whose total is total moves a
// third of it or more: the most one block's changes of the set may move
// (docs/STATE.md, "Validators"). The sum cannot overflow: powers are bounded by
// MaxValidatorPower and the set by MaxValidators.
func MovesTooMuch(moved, total uint64) bool { return 3*moved >= total }

// Passes reports whether approvals holding approved of a set's total power pass a
// proposal: more than two thirds.
func Passes(approved, total uint64) bool { return 3*approved > 2*total }

// MisbehaviorKind is the kind of evidence CometBFT reports against a validator
// (RequestFinalizeBlock.Misbehavior).
type MisbehaviorKind uint8

// The kinds, with CometBFT's numbers (abci.MisbehaviorType).
const (
	MisbehaviorUnknown           MisbehaviorKind = 0
	MisbehaviorDuplicateVote     MisbehaviorKind = 1
	MisbehaviorLightClientAttack MisbehaviorKind = 2
)

func (k MisbehaviorKind) String() string {
	switch k {
	case MisbehaviorDuplicateVote:
		return "duplicate_vote"
	case MisbehaviorLightClientAttack:
		return "light_client_attack"
	}
	return "unknown"
}
