package protocol

// TypeIdentityCreditTransferToAddress: an identity moves credits to an address.
const TypeIdentityCreditTransferToAddress TransitionType = 4

func init() {
	register(Kind{Type: TypeIdentityCreditTransferToAddress, Name: "identity_credit_transfer_to_address", New: func() Transition { return &IdentityCreditTransferToAddress{} }})
}

// IdentityCreditTransferToAddress moves Amount credits from an identity to an address.
type IdentityCreditTransferToAddress struct {
	Identity  IdentityID
	KeyIndex  uint8
	Nonce     uint64
	Recipient Address
	Amount    uint64
}

func (*IdentityCreditTransferToAddress) Type() TransitionType {
	return TypeIdentityCreditTransferToAddress
}
func (t *IdentityCreditTransferToAddress) GetNonce() uint64  { return t.Nonce }
func (t *IdentityCreditTransferToAddress) SetNonce(n uint64) { t.Nonce = n }
func (t *IdentityCreditTransferToAddress) Signer() Signer {
	return Signer{Kind: SignerIdentity, Identity: t.Identity, KeyIndex: t.KeyIndex}
}

func (t *IdentityCreditTransferToAddress) encodeBody(e *encoder) {
	e.bytes(t.Identity[:])
	e.u8(t.KeyIndex)
	e.u64(t.Nonce)
	e.bytes(t.Recipient[:])
	e.u64(t.Amount)
}

func (t *IdentityCreditTransferToAddress) decodeBody(d *decoder) {
	copy(t.Identity[:], d.fixed(IdentityIDLen, "identity id"))
	t.KeyIndex = d.u8("key index")
	t.Nonce = d.u64("nonce")
	copy(t.Recipient[:], d.fixed(AddressLen, "recipient address"))
	t.Amount = d.u64("amount")
}

func (t *IdentityCreditTransferToAddress) validate(Context) error { return positive(t.Amount) }
