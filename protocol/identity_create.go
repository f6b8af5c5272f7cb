package protocol

import (
	"crypto/ed25519"
	"fmt"
)

// TypeIdentityCreate: an address creates and funds an identity.
const TypeIdentityCreate TransitionType = 1

func init() {
	register(Kind{Type: TypeIdentityCreate, Name: "identity_create", New: func() Transition { return &IdentityCreate{} }})
}

// IdentityCreate creates an identity with the given keys, funded with Amount credits
// from the signing address, which also pays the fee. The identity's id is
// NewIdentityID(signing address, Nonce).
type IdentityCreate struct {
	PubKey ed25519.PublicKey // the funding address's key; signs
	Nonce  uint64
	Amount uint64
	Keys   []ed25519.PublicKey // the new identity's keys, key index = position
}

func (*IdentityCreate) Type() TransitionType { return TypeIdentityCreate }
func (t *IdentityCreate) GetNonce() uint64   { return t.Nonce }
func (t *IdentityCreate) SetNonce(n uint64)  { t.Nonce = n }
func (t *IdentityCreate) Signer() Signer     { return Signer{Kind: SignerAddress, PubKey: t.PubKey} }

func (t *IdentityCreate) encodeBody(e *encoder) {
	e.bytes(t.PubKey)
	e.u64(t.Nonce)
	e.u64(t.Amount)
	e.u8(uint8(len(t.Keys)))
	for _, k := range t.Keys {
		e.bytes(k)
	}
}

func (t *IdentityCreate) decodeBody(d *decoder) {
	t.PubKey = d.fixed(ed25519.PublicKeySize, "signer public key")
	t.Nonce = d.u64("nonce")
	t.Amount = d.u64("amount")
	n := int(d.u8("key count"))
	for i := 0; i < n && d.err == nil; i++ {
		t.Keys = append(t.Keys, d.fixed(ed25519.PublicKeySize, "identity public key"))
	}
}

func (t *IdentityCreate) validate(ctx Context) error {
	if err := positive(t.Amount); err != nil {
		return err
	}
	if len(t.Keys) == 0 || len(t.Keys) > ctx.Limits.MaxIdentityKeys {
		return ErrInvalidTransition{Field: "keys", Reason: fmt.Sprintf("an identity needs 1 to %d keys", ctx.Limits.MaxIdentityKeys)}
	}
	for i := range t.Keys {
		for j := 0; j < i; j++ {
			if t.Keys[i].Equal(t.Keys[j]) {
				return ErrInvalidTransition{Field: "keys", Reason: fmt.Sprintf("key %d repeats key %d", i, j)}
			}
		}
	}
	return nil
}
