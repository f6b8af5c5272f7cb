package protocol

import (
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
)

// TxFormat1 is the first wire format of a transition (docs/TX.md).
const TxFormat1 uint8 = 1

// SignatureLen is the length of the ed25519 signature that ends every transition.
const SignatureLen = ed25519.SignatureSize

// signDomain starts the sign bytes of every transition.
const signDomain = "ttld-transition-v1"

// TransitionType is the byte that names a transition's kind on the wire.
type TransitionType uint8

// The transition types. Never renumbered or reused.
const (
	TypeIdentityCreate                  TransitionType = 1
	TypeIdentityTopUp                   TransitionType = 2
	TypeIdentityCreditTransfer          TransitionType = 3
	TypeIdentityCreditTransferToAddress TransitionType = 4
	TypeAddressFundsTransfer            TransitionType = 5
)

var typeNames = map[TransitionType]string{
	TypeIdentityCreate:                  "identity_create",
	TypeIdentityTopUp:                   "identity_top_up",
	TypeIdentityCreditTransfer:          "identity_credit_transfer",
	TypeIdentityCreditTransferToAddress: "identity_credit_transfer_to_address",
	TypeAddressFundsTransfer:            "address_funds_transfer",
}

func (t TransitionType) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("TransitionType(%d)", uint8(t))
}

// Transition is the body of a state transition: everything but the signature.
type Transition interface {
	Type() TransitionType
	// GetNonce is the signer's nonce this transition consumes.
	GetNonce() uint64
	encodeBody(e *encoder)
	decodeBody(d *decoder)
	validate(l Limits) error
}

// AddressSigned is implemented by the transitions an address key signs.
type AddressSigned interface {
	Transition
	SignerKey() ed25519.PublicKey
}

// IdentitySigned is implemented by the transitions an identity key signs.
type IdentitySigned interface {
	Transition
	SignerIdentity() (IdentityID, uint8)
}

// IdentityCreate creates an identity with the given keys, funded with Amount credits
// from the signing address, which also pays the fee.
type IdentityCreate struct {
	PubKey ed25519.PublicKey // the funding address's key; signs
	Nonce  uint64
	Amount uint64
	Keys   []ed25519.PublicKey // the new identity's keys, key index = position
}

// IdentityTopUp moves Amount credits from the signing address to an identity.
type IdentityTopUp struct {
	PubKey   ed25519.PublicKey
	Nonce    uint64
	Identity IdentityID
	Amount   uint64
}

// IdentityCreditTransfer moves Amount credits between identities.
type IdentityCreditTransfer struct {
	Identity  IdentityID
	KeyIndex  uint8
	Nonce     uint64
	Recipient IdentityID
	Amount    uint64
}

// IdentityCreditTransferToAddress moves Amount credits from an identity to an address.
type IdentityCreditTransferToAddress struct {
	Identity  IdentityID
	KeyIndex  uint8
	Nonce     uint64
	Recipient Address
	Amount    uint64
}

// AddressFundsTransfer moves Amount credits between addresses.
type AddressFundsTransfer struct {
	PubKey    ed25519.PublicKey
	Nonce     uint64
	Recipient Address
	Amount    uint64
}

func (*IdentityCreate) Type() TransitionType         { return TypeIdentityCreate }
func (*IdentityTopUp) Type() TransitionType          { return TypeIdentityTopUp }
func (*IdentityCreditTransfer) Type() TransitionType { return TypeIdentityCreditTransfer }
func (*IdentityCreditTransferToAddress) Type() TransitionType {
	return TypeIdentityCreditTransferToAddress
}
func (*AddressFundsTransfer) Type() TransitionType { return TypeAddressFundsTransfer }

func (t *IdentityCreate) GetNonce() uint64                  { return t.Nonce }
func (t *IdentityTopUp) GetNonce() uint64                   { return t.Nonce }
func (t *IdentityCreditTransfer) GetNonce() uint64          { return t.Nonce }
func (t *IdentityCreditTransferToAddress) GetNonce() uint64 { return t.Nonce }
func (t *AddressFundsTransfer) GetNonce() uint64            { return t.Nonce }

func (t *IdentityCreate) SignerKey() ed25519.PublicKey       { return t.PubKey }
func (t *IdentityTopUp) SignerKey() ed25519.PublicKey        { return t.PubKey }
func (t *AddressFundsTransfer) SignerKey() ed25519.PublicKey { return t.PubKey }

func (t *IdentityCreditTransfer) SignerIdentity() (IdentityID, uint8) {
	return t.Identity, t.KeyIndex
}
func (t *IdentityCreditTransferToAddress) SignerIdentity() (IdentityID, uint8) {
	return t.Identity, t.KeyIndex
}

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

func (t *IdentityCreate) validate(l Limits) error {
	if t.Amount == 0 {
		return ErrInvalidTransition{Field: "amount", Reason: "must be positive"}
	}
	if len(t.Keys) == 0 || len(t.Keys) > l.MaxIdentityKeys {
		return ErrInvalidTransition{Field: "keys", Reason: fmt.Sprintf("an identity needs 1 to %d keys", l.MaxIdentityKeys)}
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

func (t *IdentityTopUp) validate(Limits) error { return positive(t.Amount) }

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

func (t *IdentityCreditTransfer) validate(Limits) error {
	if t.Recipient == t.Identity {
		return ErrInvalidTransition{Field: "recipient", Reason: "an identity cannot transfer to itself"}
	}
	return positive(t.Amount)
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

func (t *IdentityCreditTransferToAddress) validate(Limits) error { return positive(t.Amount) }

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

func (t *AddressFundsTransfer) validate(Limits) error {
	if AddressOf(t.PubKey) == t.Recipient {
		return ErrInvalidTransition{Field: "recipient", Reason: "an address cannot transfer to itself"}
	}
	return positive(t.Amount)
}

func positive(amount uint64) error {
	if amount == 0 {
		return ErrInvalidTransition{Field: "amount", Reason: "must be positive"}
	}
	return nil
}

func newTransition(t TransitionType) Transition {
	switch t {
	case TypeIdentityCreate:
		return &IdentityCreate{}
	case TypeIdentityTopUp:
		return &IdentityTopUp{}
	case TypeIdentityCreditTransfer:
		return &IdentityCreditTransfer{}
	case TypeIdentityCreditTransferToAddress:
		return &IdentityCreditTransferToAddress{}
	case TypeAddressFundsTransfer:
		return &AddressFundsTransfer{}
	}
	return nil
}

// Signed is a decoded transition with its signature and the bytes it was decoded from.
type Signed struct {
	Transition
	Signature []byte
	// unsigned is the encoding without the signature: what the sign bytes cover.
	unsigned []byte
}

// EncodeUnsigned returns the wire bytes of t without its signature.
func EncodeUnsigned(t Transition) []byte {
	e := &encoder{}
	e.u8(TxFormat1)
	e.u8(uint8(t.Type()))
	t.encodeBody(e)
	return e.buf
}

// SignBytes returns the bytes a signer signs: the domain, the chain id and the
// transition type, then the unsigned encoding (which repeats the type).
func SignBytes(chainID string, typ TransitionType, unsigned []byte) []byte {
	out := make([]byte, 0, len(signDomain)+3+len(chainID)+len(unsigned))
	out = append(out, signDomain...)
	out = append(out, 0, uint8(len(chainID)))
	out = append(out, chainID...)
	out = append(out, uint8(typ))
	return append(out, unsigned...)
}

// Sign encodes t and signs it for chainID, returning the transaction bytes.
func Sign(chainID string, t Transition, key ed25519.PrivateKey) []byte {
	unsigned := EncodeUnsigned(t)
	sig := ed25519.Sign(key, SignBytes(chainID, t.Type(), unsigned))
	return append(unsigned, sig...)
}

// Decode parses transaction bytes under the limits of a protocol version. It checks the
// encoding and the structure rules, not the signature (which needs state for identity
// signers: see VerifySignature).
func Decode(tx []byte, l Limits) (*Signed, error) {
	if len(tx) > l.MaxTxBytes {
		return nil, ErrTxTooLarge{Size: len(tx), Max: l.MaxTxBytes}
	}
	if len(tx) < 2+SignatureLen {
		return nil, ErrTxDecode{Offset: len(tx), Reason: "shorter than a header and a signature"}
	}
	if tx[0] != TxFormat1 {
		return nil, ErrUnsupportedTxFormat{Format: tx[0]}
	}
	typ := TransitionType(tx[1])
	t := newTransition(typ)
	if t == nil {
		return nil, ErrUnknownTransitionType{Type: tx[1]}
	}
	body := tx[:len(tx)-SignatureLen]
	d := &decoder{buf: body, off: 2}
	t.decodeBody(d)
	if d.err != nil {
		return nil, d.err
	}
	if d.off != len(body) {
		return nil, ErrTxDecode{Offset: d.off, Reason: fmt.Sprintf("%d unexpected bytes before the signature", len(body)-d.off)}
	}
	if err := t.validate(l); err != nil {
		return nil, err
	}
	return &Signed{Transition: t, Signature: tx[len(body):], unsigned: body}, nil
}

// VerifySignature checks the signature with the signer's public key.
func (s *Signed) VerifySignature(chainID string, pub ed25519.PublicKey) error {
	if len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, SignBytes(chainID, s.Type(), s.unsigned), s.Signature) {
		return ErrInvalidSignature{Type: s.Type()}
	}
	return nil
}

type encoder struct{ buf []byte }

func (e *encoder) u8(v uint8)     { e.buf = append(e.buf, v) }
func (e *encoder) u64(v uint64)   { e.buf = binary.BigEndian.AppendUint64(e.buf, v) }
func (e *encoder) bytes(b []byte) { e.buf = append(e.buf, b...) }

// decoder reads fixed-width fields; the first failure sticks and later reads return zeros.
type decoder struct {
	buf []byte
	off int
	err error
}

func (d *decoder) take(n int, what string) []byte {
	if d.err != nil {
		return make([]byte, n)
	}
	if len(d.buf)-d.off < n {
		d.err = ErrTxDecode{Offset: d.off, Reason: fmt.Sprintf("%s needs %d bytes, %d left", what, n, len(d.buf)-d.off)}
		return make([]byte, n)
	}
	b := d.buf[d.off : d.off+n]
	d.off += n
	return b
}

func (d *decoder) u8(what string) uint8   { return d.take(1, what)[0] }
func (d *decoder) u64(what string) uint64 { return binary.BigEndian.Uint64(d.take(8, what)) }

func (d *decoder) fixed(n int, what string) []byte {
	out := make([]byte, n)
	copy(out, d.take(n, what))
	return out
}
