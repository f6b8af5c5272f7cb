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

// TransitionType is the byte that names a transition's kind on the wire. Each kind's
// file declares its number; numbers are never renumbered or reused.
type TransitionType uint8

// Transition is the body of a state transition: everything but the signature.
type Transition interface {
	Type() TransitionType
	// GetNonce is the signer's nonce this transition consumes.
	GetNonce() uint64
	// SetNonce sets it (a client fills it in before signing).
	SetNonce(n uint64)
	// Signer names the account whose key signs the transition and pays for it.
	Signer() Signer
	encodeBody(e *encoder)
	decodeBody(d *decoder)
	// validate checks the structure rules: what needs no state.
	validate(ctx Context) error
}

// SignerKind says which kind of account signs a transition.
type SignerKind uint8

const (
	// SignerAddress: a platform address; the transition carries the public key, so its
	// signature can be checked without state.
	SignerAddress SignerKind = 1
	// SignerIdentity: an identity's key at an index; checking the signature needs the
	// identity's keys from state.
	SignerIdentity SignerKind = 2
)

// Signer names the signing account of a transition.
type Signer struct {
	Kind SignerKind
	// PubKey is the address's key (SignerAddress only).
	PubKey ed25519.PublicKey
	// Identity and KeyIndex name the identity key (SignerIdentity only).
	Identity IdentityID
	KeyIndex uint8
}

// Address is the signing address (SignerAddress only).
func (s Signer) Address() Address { return AddressOf(s.PubKey) }

// Context is what structure validation judges a transition against: the rules of the
// protocol version in force and the time of the block it is judged for (the block's
// own time in a block; in CheckTx the earliest time the next block can have, one
// millisecond after the last block's).
type Context struct {
	Version     Version
	Limits      Limits
	BlockTimeMs uint64
	// MarginMs is 0 in a block. CheckTx sets it to how much later than BlockTimeMs the
	// block that includes the transaction may come: a deadline (a document's expiry, a
	// moderator's deletion or restore window) that passes before Horizon counts as
	// passed, so that the mempool does not take what that block would refuse and
	// charge (docs/TX.md, "What accepted means").
	MarginMs uint64
}

// Horizon is the latest time the context judges deadlines at: BlockTimeMs plus
// MarginMs, at most MaxBlockTimeMs past which no block time lies.
func (c Context) Horizon() uint64 {
	if c.MarginMs > MaxBlockTimeMs-min(c.BlockTimeMs, MaxBlockTimeMs) {
		return MaxBlockTimeMs
	}
	return c.BlockTimeMs + c.MarginMs
}

// ContextFor returns the context of version v at a block time.
func ContextFor(v Version, blockTimeMs uint64) (Context, error) {
	l, err := LimitsFor(v)
	if err != nil {
		return Context{}, err
	}
	return Context{Version: v, Limits: l, BlockTimeMs: blockTimeMs}, nil
}

func positive(amount uint64) error {
	if amount == 0 {
		return ErrInvalidTransition{Field: "amount", Reason: "must be positive"}
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

// Decode parses transaction bytes under the rules of ctx. It checks the encoding and the
// structure rules, not the signature (which needs state for identity signers: see
// VerifySignature and VerifyStateless).
func Decode(tx []byte, ctx Context) (*Signed, error) {
	if len(tx) > ctx.Limits.MaxTxBytes {
		return nil, ErrTxTooLarge{Size: len(tx), Max: ctx.Limits.MaxTxBytes}
	}
	if IsVersionSignal(tx) {
		return nil, ErrInvalidVersionSignal{Position: -1, InForce: ctx.Version, Reason: "only a proposer adds a signal, as its block's first transaction"}
	}
	if len(tx) < 2+SignatureLen {
		return nil, ErrTxDecode{Offset: len(tx), Reason: "shorter than a header and a signature"}
	}
	if tx[0] != TxFormat1 {
		return nil, ErrUnsupportedTxFormat{Format: tx[0]}
	}
	kind, ok := KindOf(TransitionType(tx[1]))
	if !ok {
		return nil, ErrUnknownTransitionType{Type: tx[1]}
	}
	t := kind.New()
	body := tx[:len(tx)-SignatureLen]
	d := &decoder{buf: body, off: 2, limits: ctx.Limits}
	t.decodeBody(d)
	if d.err != nil {
		return nil, d.err
	}
	if d.off != len(body) {
		return nil, ErrTxDecode{Offset: d.off, Reason: fmt.Sprintf("%d bytes follow the last field: a transition of %s is %d bytes plus its %d-byte signature", len(body)-d.off, t.Type(), d.off, SignatureLen)}
	}
	if err := t.validate(ctx); err != nil {
		return nil, err
	}
	return &Signed{Transition: t, Signature: tx[len(body):], unsigned: body}, nil
}

// Verifier checks an ed25519 signature of message under pub. Its answer must be
// ed25519.Verify's: the answer is a function of the three inputs alone, so a Verifier
// that remembers the signatures it has already seen pass (the node's, which lets a block
// skip what CheckTx verified) cannot change what a block does.
type Verifier interface {
	Verify(pub ed25519.PublicKey, message, sig []byte) bool
}

// VerifyEd25519 is the Verifier that checks every signature it is given.
var VerifyEd25519 Verifier = ed25519Verifier{}

type ed25519Verifier struct{}

func (ed25519Verifier) Verify(pub ed25519.PublicKey, message, sig []byte) bool {
	return ed25519.Verify(pub, message, sig)
}

// VerifyStateless checks what can be checked of the signature without state: the
// signature of a transition that carries its signer's key. It reports whether it
// checked anything (an identity's signature needs the identity's keys from state).
func (s *Signed) VerifyStateless(chainID string, v Verifier) (bool, error) {
	sg := s.Signer()
	if sg.Kind != SignerAddress {
		return false, nil
	}
	return true, s.VerifySignature(chainID, sg.PubKey, v)
}

// VerifySignature checks the signature with the signer's public key, through v.
func (s *Signed) VerifySignature(chainID string, pub ed25519.PublicKey, v Verifier) error {
	if c := s.SignatureCheck(chainID, pub); len(pub) != ed25519.PublicKeySize || !v.Verify(c.PubKey, c.Message, c.Signature) {
		return ErrInvalidSignature{Type: s.Type()}
	}
	return nil
}

// SignatureCheck is one ed25519 check, as VerifySignature hands it to a Verifier.
type SignatureCheck struct {
	PubKey    ed25519.PublicKey
	Message   []byte // the sign bytes
	Signature []byte
}

// SignatureCheck returns the check VerifySignature makes with pub.
func (s *Signed) SignatureCheck(chainID string, pub ed25519.PublicKey) SignatureCheck {
	return SignatureCheck{PubKey: pub, Message: SignBytes(chainID, s.Type(), s.unsigned), Signature: s.Signature}
}

type encoder struct{ buf []byte }

func (e *encoder) u8(v uint8)     { e.buf = append(e.buf, v) }
func (e *encoder) u32(v uint32)   { e.buf = binary.BigEndian.AppendUint32(e.buf, v) }
func (e *encoder) u64(v uint64)   { e.buf = binary.BigEndian.AppendUint64(e.buf, v) }
func (e *encoder) bytes(b []byte) { e.buf = append(e.buf, b...) }

// sized writes b after its length as a big-endian u16; b is at most 65,535 bytes (the
// structure rules of its kind bound it below that).
func (e *encoder) sized(b []byte) {
	e.buf = binary.BigEndian.AppendUint16(e.buf, uint16(len(b)))
	e.buf = append(e.buf, b...)
}

// decoder reads fixed-width fields; the first failure sticks and later reads return zeros.
// limits are those of the version the bytes are decoded under: what they decide of the
// encoding itself (the document action kinds a version knows).
type decoder struct {
	buf    []byte
	off    int
	err    error
	limits Limits
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
func (d *decoder) u32(what string) uint32 { return binary.BigEndian.Uint32(d.take(4, what)) }
func (d *decoder) u64(what string) uint64 { return binary.BigEndian.Uint64(d.take(8, what)) }

// sized reads a field written by encoder.sized: a big-endian u16 length, then that
// many bytes.
func (d *decoder) sized(what string) []byte {
	n := int(binary.BigEndian.Uint16(d.take(2, what+" length")))
	return d.fixed(n, what)
}

func (d *decoder) fixed(n int, what string) []byte {
	out := make([]byte, n)
	copy(out, d.take(n, what))
	return out
}
