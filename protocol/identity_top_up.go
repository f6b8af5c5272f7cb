package protocol

import "crypto/ed25519"

// TypeIdentityTopUp: an address moves credits to an identity.
const TypeIdentityTopUp TransitionType = 2

func init() {
	register(Kind{Type: TypeIdentityTopUp, Name: "identity_top_up", New: func() Transition { return &IdentityTopUp{} }})
}

// IdentityTopUp moves Amount credits from the signing address to an identity.
type IdentityTopUp struct {
	PubKey   ed25519.PublicKey
	Nonce    uint64
	Identity IdentityID
	Amount   uint64
}

func (*IdentityTopUp) Type() TransitionType { return TypeIdentityTopUp }
func (t *IdentityTopUp) GetNonce() uint64   { return t.Nonce }
func (t *IdentityTopUp) SetNonce(n uint64)  { t.Nonce = n }
func (t *IdentityTopUp) Signer() Signer     { return Signer{Kind: SignerAddress, PubKey: t.PubKey} }

func (t *IdentityTopUp) encodeBody(e *encoder) {
	e.bytes(t.PubKey)
	e.u64(t.Nonce)
	e.bytes(t.Identity[:])
	e.u64(t.Amount)
}

func (t *IdentityTopUp) decodeBody(d *decoder) {
	t.PubKey = d.fixed(ed25519.PublicKeySize, "signer public key")
	t.Nonce = d.u64("nonce")
	copy(t.Identity[:], d.fixed(IdentityIDLen, "identity id"))
	t.Amount = d.u64("amount")
}

func (t *IdentityTopUp) validate(Context) error { return positive(t.Amount) }
