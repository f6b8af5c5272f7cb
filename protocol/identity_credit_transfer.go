package protocol

// TypeIdentityCreditTransfer: an identity moves credits to another identity.
const TypeIdentityCreditTransfer TransitionType = 3

func init() {
	register(Kind{Type: TypeIdentityCreditTransfer, Name: "identity_credit_transfer", New: func() Transition { return &IdentityCreditTransfer{} }})
}

// IdentityCreditTransfer moves Amount credits between identities.
type IdentityCreditTransfer struct {
	Identity  IdentityID
	KeyIndex  uint8
	Nonce     uint64
	Recipient IdentityID
	Amount    uint64
}

func (*IdentityCreditTransfer) Type() TransitionType { return TypeIdentityCreditTransfer }
func (t *IdentityCreditTransfer) GetNonce() uint64   { return t.Nonce }
func (t *IdentityCreditTransfer) SetNonce(n uint64)  { t.Nonce = n }
func (t *IdentityCreditTransfer) Signer() Signer {
	return Signer{Kind: SignerIdentity, Identity: t.Identity, KeyIndex: t.KeyIndex}
}

func (t *IdentityCreditTransfer) encodeBody(e *encoder) {
	e.bytes(t.Identity[:])
	e.u8(t.KeyIndex)
	e.u64(t.Nonce)
	e.bytes(t.Recipient[:])
	e.u64(t.Amount)
}

func (t *IdentityCreditTransfer) decodeBody(d *decoder) {
	copy(t.Identity[:], d.fixed(IdentityIDLen, "identity id"))
	t.KeyIndex = d.u8("key index")
	t.Nonce = d.u64("nonce")
	copy(t.Recipient[:], d.fixed(IdentityIDLen, "recipient identity id"))
	t.Amount = d.u64("amount")
}

func (t *IdentityCreditTransfer) validate(Context) error {
	if t.Recipient == t.Identity {
		return ErrInvalidTransition{Field: "recipient", Reason: "an identity cannot transfer to itself"}
	}
	return positive(t.Amount)
}
