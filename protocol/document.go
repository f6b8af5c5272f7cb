package protocol

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// DocumentIDLen is the byte length of a document id.
const DocumentIDLen = 32

// DocumentID names a document within its contract and type.
type DocumentID [DocumentIDLen]byte

func (id DocumentID) String() string { return hex.EncodeToString(id[:]) }

// ParseDocumentID reads a document id written as 64 hex digits.
func ParseDocumentID(s string) (DocumentID, error) {
	var id DocumentID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != DocumentIDLen {
		return id, fmt.Errorf("document id must be %d hex digits", 2*DocumentIDLen)
	}
	copy(id[:], b)
	return id, nil
}

// NewDocumentID derives the id of a document created in contract c, type typeName, by
// owner with entropy: sha256 of the domain "ttld/document", the contract, the owner, the
// type name (length-prefixed) and the entropy. The writer chooses the entropy, so it
// knows the id before the create lands; another writer cannot take that id.
func NewDocumentID(c ContractID, owner IdentityID, typeName string, entropy [32]byte) DocumentID {
	h := sha256.New()
	h.Write([]byte("ttld/document"))
	h.Write(c[:])
	h.Write(owner[:])
	h.Write([]byte{uint8(len(typeName))})
	h.Write([]byte(typeName))
	h.Write(entropy[:])
	var id DocumentID
	copy(id[:], h.Sum(nil))
	return id
}

// Document is one document: its system fields and its values. The platform sets every
// system field; the writer sends the values only.
type Document struct {
	ID    DocumentID
	Owner IdentityID
	// Revision is 1 when created and grows by one with each replace, transfer, purchase
	// and price update.
	Revision uint64
	// CreatedAt, UpdatedAt and TransferredAt are block times in milliseconds.
	// TransferredAt is 0 until the first transfer or purchase.
	CreatedAt, UpdatedAt, TransferredAt uint64
	// RenewedAt is the block time of the document's last renewal (protocol version 15);
	// 0 until it is first renewed, when $renewedAt reads its $createdAt (RenewedAtMs).
	RenewedAt uint64
	// Price is what a buyer pays under TradeModeDirectPurchase; 0: not for sale.
	Price uint64
	// Values are the user properties by position. A document written before its type
	// gained a property has fewer values than the type has properties: the missing ones
	// are unset.
	Values []Value
}

// Value is one property value. Which field holds it follows the property's type.
type Value struct {
	Set   bool   // false: the optional property is absent
	Int   int64  // PropertyInteger
	Bool  bool   // PropertyBoolean
	Bytes []byte // PropertyString (UTF-8), PropertyByteArray, PropertyIdentifier
}

// Value returns the value of the property at position pos (unset past the stored ones).
func (d Document) Value(pos uint32) Value {
	if int(pos) < len(d.Values) {
		return d.Values[pos]
	}
	return Value{}
}

// SystemFieldValue returns the value of the system field called name ($id, $ownerId,
// $createdAt, $updatedAt, $transferredAt, $renewedAt: always set); ok is false for any
// other name.
func (d Document) SystemFieldValue(name string) (Value, bool) {
	switch name {
	case "$id":
		return Value{Set: true, Bytes: d.ID[:]}, true
	case "$ownerId":
		return Value{Set: true, Bytes: d.Owner[:]}, true
	case "$createdAt":
		return Value{Set: true, Int: int64(d.CreatedAt)}, true
	case "$updatedAt":
		return Value{Set: true, Int: int64(d.UpdatedAt)}, true
	case "$transferredAt":
		return Value{Set: true, Int: int64(d.TransferredAt)}, true
	case "$renewedAt":
		return Value{Set: true, Int: int64(d.RenewedAtMs())}, true
	}
	return Value{}, false
}

// RenewedAtMs is the document's $renewedAt: the block time of its last renewal, its
// $createdAt until it is renewed.
func (d Document) RenewedAtMs() uint64 {
	if d.RenewedAt == 0 {
		return d.CreatedAt
	}
	return d.RenewedAt
}

// The formats of an encoded document, its leading byte: a renewed document
// (RenewedAt set) is written in documentFormatRenewed, every other one in
// documentEncodingFormat, so a document no renewal touched keeps the bytes protocol
// version 14 wrote.
const (
	documentEncodingFormat = 1
	documentFormatRenewed  = 2
)

// documentHeaderLen: format, id, owner, revision, three times, price, value count;
// a renewed document's adds its $renewedAt.
const documentHeaderLen = 1 + DocumentIDLen + IdentityIDLen + 5*8 + 2

// Encode returns the document's one deterministic encoding under its type t
// (docs/STATE.md): the format byte (1, or 2 once renewed), the id, the owner, the
// revision, $createdAt, $updatedAt, $transferredAt and the price (u64 big-endian
// each), a renewed document's $renewedAt (u64), the number of values (u16), then each
// value: 0 for unset, or 1 and the value (an integer as 8 bytes
// big-endian two's complement, a boolean as one byte 0 or 1, a string or byte array as
// its length u32 and its bytes). Trailing unset values are not written.
func (d Document) Encode(t DocumentType) []byte {
	n := len(d.Values)
	for n > 0 && !d.Values[n-1].Set {
		n--
	}
	out := make([]byte, 0, documentHeaderLen+8+16*n)
	format := byte(documentEncodingFormat)
	if d.RenewedAt != 0 {
		format = documentFormatRenewed
	}
	out = append(out, format)
	out = append(out, d.ID[:]...)
	out = append(out, d.Owner[:]...)
	for _, u := range []uint64{d.Revision, d.CreatedAt, d.UpdatedAt, d.TransferredAt, d.Price} {
		out = binary.BigEndian.AppendUint64(out, u)
	}
	if d.RenewedAt != 0 {
		out = binary.BigEndian.AppendUint64(out, d.RenewedAt)
	}
	out = binary.BigEndian.AppendUint16(out, uint16(n))
	for i, v := range d.Values[:n] {
		if !v.Set {
			out = append(out, 0)
			continue
		}
		out = append(out, 1)
		switch t.Properties[i].Type {
		case PropertyInteger:
			out = binary.BigEndian.AppendUint64(out, uint64(v.Int))
		case PropertyBoolean:
			b := byte(0)
			if v.Bool {
				b = 1
			}
			out = append(out, b)
		default:
			out = binary.BigEndian.AppendUint32(out, uint32(len(v.Bytes)))
			out = append(out, v.Bytes...)
		}
	}
	return out
}

// DecodeDocument reads a document encoded under type t. It returns one value per
// property of t. Bytes that are no such encoding give ErrDocumentDecode.
func DecodeDocument(b []byte, t DocumentType) (Document, error) {
	fail := func(off int, reason string) (Document, error) {
		return Document{}, ErrDocumentDecode{Offset: off, Reason: reason}
	}
	if len(b) < documentHeaderLen {
		return fail(len(b), fmt.Sprintf("shorter than the %d-byte header", documentHeaderLen))
	}
	if b[0] != documentEncodingFormat && b[0] != documentFormatRenewed {
		return fail(0, fmt.Sprintf("unknown format %d", b[0]))
	}
	var d Document
	off := 1
	off += copy(d.ID[:], b[off:])
	off += copy(d.Owner[:], b[off:])
	for _, p := range []*uint64{&d.Revision, &d.CreatedAt, &d.UpdatedAt, &d.TransferredAt, &d.Price} {
		*p = binary.BigEndian.Uint64(b[off:])
		off += 8
	}
	if b[0] == documentFormatRenewed {
		if len(b)-off < 8+2 {
			return fail(len(b), fmt.Sprintf("shorter than the %d-byte header of a renewed document", documentHeaderLen+8))
		}
		d.RenewedAt = binary.BigEndian.Uint64(b[off:])
		if d.RenewedAt == 0 || d.RenewedAt < d.CreatedAt {
			return fail(off, fmt.Sprintf("renewed at %d, before its creation at %d", d.RenewedAt, d.CreatedAt))
		}
		off += 8
	}
	n := int(binary.BigEndian.Uint16(b[off:]))
	off += 2
	if n > len(t.Properties) {
		return fail(off-2, fmt.Sprintf("%d values, the type has %d properties", n, len(t.Properties)))
	}
	d.Values = make([]Value, len(t.Properties))
	for i := 0; i < n; i++ {
		if off >= len(b) {
			return fail(off, "truncated value")
		}
		tag := b[off]
		off++
		if tag == 0 {
			continue
		}
		if tag != 1 {
			return fail(off-1, fmt.Sprintf("value tag %d", tag))
		}
		v := Value{Set: true}
		switch t.Properties[i].Type {
		case PropertyInteger:
			if len(b)-off < 8 {
				return fail(off, "truncated integer")
			}
			v.Int = int64(binary.BigEndian.Uint64(b[off:]))
			off += 8
		case PropertyBoolean:
			if off >= len(b) || b[off] > 1 {
				return fail(off, "truncated or invalid boolean")
			}
			v.Bool = b[off] == 1
			off++
		default:
			if len(b)-off < 4 {
				return fail(off, "truncated length")
			}
			l := int(binary.BigEndian.Uint32(b[off:]))
			off += 4
			if l > len(b)-off {
				return fail(off, fmt.Sprintf("%d bytes announced, %d left", l, len(b)-off))
			}
			switch p := t.Properties[i]; {
			case p.Type == PropertyIdentifier && l != IdentityIDLen:
				return fail(off, fmt.Sprintf("an identifier of %d bytes", l))
			case p.Type == PropertyIdentifierList && (l%IdentityIDLen != 0 || l > int(*p.MaxItems)*IdentityIDLen):
				return fail(off, fmt.Sprintf("an identifier list of %d bytes: a multiple of %d, at most %d identifiers", l, IdentityIDLen, *p.MaxItems))
			}
			v.Bytes = append([]byte{}, b[off:off+l]...)
			off += l
		}
		d.Values[i] = v
	}
	if off != len(b) {
		return fail(off, fmt.Sprintf("%d bytes follow the last value", len(b)-off))
	}
	if n > 0 && !d.Values[n-1].Set {
		return fail(off, "a trailing unset value is written")
	}
	return d, nil
}
