package protocol

import "crypto/ed25519"

// TypeAddressFundsTransfer: an address moves credits to another address.
const TypeAddressFundsTransfer TransitionType = 5

func init() {
	register(Kind{Type: TypeAddressFundsTransfer, Name: "address_funds_transfer", New: func() Transition { return &AddressFundsTransfer{} }})
}

// AddressFundsTransfer moves Amount credits between addresses.
type AddressFundsTransfer struct {
	PubKey    ed25519.PublicKey
	Nonce     uint64
	Recipient Address
	Amount    uint64
}

func (*AddressFundsTransfer) Type() TransitionType { return TypeAddressFundsTransfer }
func (t *AddressFundsTransfer) GetNonce() uint64   { return t.Nonce }
func (t *AddressFundsTransfer) SetNonce(n uint64)  { t.Nonce = n }
func (t *AddressFundsTransfer) Signer() Signer {
	return Signer{Kind: SignerAddress, PubKey: t.PubKey}
}

func (t *AddressFundsTransfer) encodeBody(e *encoder) {
	e.bytes(t.PubKey)
	e.u64(t.Nonce)
	e.bytes(t.Recipient[:])
	e.u64(t.Amount)
}

func (t *AddressFundsTransfer) decodeBody(d *decoder) {
	t.PubKey = d.fixed(ed25519.PublicKeySize, "signer public key")
	t.Nonce = d.u64("nonce")
	copy(t.Recipient[:], d.fixed(AddressLen, "recipient address"))
	t.Amount = d.u64("amount")
}

func (t *AddressFundsTransfer) validate(Context) error {
	if AddressOf(t.PubKey) == t.Recipient {
		return ErrInvalidTransition{Field: "recipient", Reason: "an address cannot transfer to itself"}
	}
	return positive(t.Amount)
}
