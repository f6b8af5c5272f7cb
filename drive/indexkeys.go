package drive

import (
	"encoding/binary"
	"fmt"

	"github.com/ttld-dev/ttld/protocol"
)

// Index keys: the values of an index's properties written so that byte order is the
// index's order (docs/STATE.md). Each part is self-delimiting, so the parts of one key
// are a prefix-free concatenation: the entries with given leading values are one range.
//
// A part is 0x00 for an unset value, or 0x01 followed by the value: a signed integer as
// 8 bytes big-endian with its sign bit flipped, a timestamp ($createdAt, ...) as 8 bytes
// big-endian, a boolean as one byte, an identifier ($id, $ownerId, identifier
// properties) as its 32 bytes, a string or byte array with each 0x00 written 0x00 0xFF
// and the end marked 0x00 0x01. A descending part has every byte inverted.

// FieldKind is how an index part is encoded.
type FieldKind uint8

const (
	FieldString     FieldKind = iota + 1 // escaped bytes
	FieldInteger                         // signed 64-bit
	FieldBoolean                         // one byte
	FieldBytes                           // escaped bytes
	FieldIdentifier                      // 32 bytes
	FieldTimestamp                       // unsigned 64-bit milliseconds
)

// IndexField is one part of an index key: what it reads from a document and how it is
// encoded.
type IndexField struct {
	Name       string
	Kind       FieldKind
	Position   uint32 // the property's position (user properties only)
	System     bool   // $id, $ownerId, $createdAt, $updatedAt, $transferredAt
	Descending bool
}

// IndexFields returns the key parts of index ix of type t. The parser checked that each
// names a property of t or an indexable system field.
func IndexFields(t protocol.DocumentType, ix protocol.Index) []IndexField {
	out := make([]IndexField, len(ix.Properties))
	for i, ip := range ix.Properties {
		f, ok := Field(t, ip.Name)
		if !ok {
			panic(fmt.Sprintf("drive: index %q of type %q names %q, which the parser let through", ix.Name, t.Name, ip.Name))
		}
		f.Descending = ip.Descending
		out[i] = f
	}
	return out
}

// Field returns how the property or system field called name of type t is indexed.
func Field(t protocol.DocumentType, name string) (IndexField, bool) {
	switch name {
	case "$id", "$ownerId":
		return IndexField{Name: name, Kind: FieldIdentifier, System: true}, true
	case "$createdAt", "$updatedAt", "$transferredAt", "$renewedAt":
		return IndexField{Name: name, Kind: FieldTimestamp, System: true}, true
	}
	p, ok := t.Property(name)
	if !ok {
		return IndexField{}, false
	}
	f := IndexField{Name: name, Position: p.Position}
	switch p.Type {
	case protocol.PropertyString:
		f.Kind = FieldString
	case protocol.PropertyInteger:
		f.Kind = FieldInteger
	case protocol.PropertyBoolean:
		f.Kind = FieldBoolean
	case protocol.PropertyByteArray:
		f.Kind = FieldBytes
	case protocol.PropertyIdentifier:
		f.Kind = FieldIdentifier
	}
	return f, true
}

// FieldValue reads field f of document d as a value of its kind (system fields are
// always set).
func FieldValue(f IndexField, d protocol.Document) protocol.Value {
	if f.System {
		v, _ := d.SystemFieldValue(f.Name)
		return v
	}
	return d.Value(f.Position)
}

// AppendIndexPart appends the encoding of v as part f of an index key.
func AppendIndexPart(out []byte, f IndexField, v protocol.Value) []byte {
	start := len(out)
	out = AppendIndexPartBody(out, f, v, true)
	if f.Descending {
		invert(out[start:])
	}
	return out
}

// AppendIndexPartBody appends the ascending encoding of v as part f; with end false, a
// string or byte array is written without its end marker, so the result is the prefix
// of every value that starts with v (a startsWith range). Descending parts are the
// caller's to invert.
func AppendIndexPartBody(out []byte, f IndexField, v protocol.Value, end bool) []byte {
	if !v.Set {
		return append(out, 0)
	}
	out = append(out, 1)
	switch f.Kind {
	case FieldInteger:
		return binary.BigEndian.AppendUint64(out, uint64(v.Int)^(1<<63))
	case FieldTimestamp:
		return binary.BigEndian.AppendUint64(out, uint64(v.Int))
	case FieldBoolean:
		if v.Bool {
			return append(out, 1)
		}
		return append(out, 0)
	case FieldIdentifier:
		return append(out, v.Bytes...)
	}
	for _, b := range v.Bytes {
		if b == 0 {
			out = append(out, 0, 0xFF)
		} else {
			out = append(out, b)
		}
	}
	if end {
		out = append(out, 0, 1)
	}
	return out
}

func invert(b []byte) {
	for i := range b {
		b[i] = ^b[i]
	}
}

// IndexValues returns the encoded values of every part of fields for document d, and
// whether each part is set.
func IndexValues(fields []IndexField, d protocol.Document) (enc []byte, allSet bool) {
	allSet = true
	for _, f := range fields {
		v := FieldValue(f, d)
		allSet = allSet && v.Set
		enc = AppendIndexPart(enc, f, v)
	}
	return enc, allSet
}

// IndexPrefixes returns the encodings of the first 0, 1, ..., len(fields) parts for
// document d: the keys of the count records of a countable or summable index.
func IndexPrefixes(fields []IndexField, d protocol.Document) [][]byte {
	out := make([][]byte, 0, len(fields)+1)
	var enc []byte
	out = append(out, []byte{})
	for _, f := range fields {
		enc = AppendIndexPart(enc, f, FieldValue(f, d))
		out = append(out, append([]byte(nil), enc...))
	}
	return out
}

// DecodeIndexParts reads back the values AppendIndexPart wrote for fields, one part
// each, from the start of b; it returns them and the bytes after the last part, or
// false when b does not hold such parts.
func DecodeIndexParts(fields []IndexField, b []byte) ([]protocol.Value, []byte, bool) {
	out := make([]protocol.Value, 0, len(fields))
	for _, f := range fields {
		at := func(i int) (byte, bool) {
			if i >= len(b) {
				return 0, false
			}
			if f.Descending {
				return ^b[i], true
			}
			return b[i], true
		}
		marker, ok := at(0)
		if !ok || marker > 1 {
			return nil, nil, false
		}
		if marker == 0 {
			out, b = append(out, protocol.Value{}), b[1:]
			continue
		}
		fixed := map[FieldKind]int{FieldInteger: 8, FieldTimestamp: 8, FieldBoolean: 1, FieldIdentifier: protocol.DocumentIDLen}[f.Kind]
		if fixed > 0 {
			if len(b) < 1+fixed {
				return nil, nil, false
			}
			body := make([]byte, fixed)
			for i := range body {
				body[i], _ = at(1 + i)
			}
			v := protocol.Value{Set: true}
			switch f.Kind {
			case FieldInteger:
				v.Int = int64(binary.BigEndian.Uint64(body) ^ (1 << 63))
			case FieldTimestamp:
				v.Int = int64(binary.BigEndian.Uint64(body))
			case FieldBoolean:
				if body[0] > 1 {
					return nil, nil, false
				}
				v.Bool = body[0] == 1
			default:
				v.Bytes = body
			}
			out, b = append(out, v), b[1+fixed:]
			continue
		}
		v := protocol.Value{Set: true, Bytes: []byte{}}
		i := 1
		for {
			c, ok := at(i)
			if !ok {
				return nil, nil, false
			}
			if c != 0 {
				v.Bytes, i = append(v.Bytes, c), i+1
				continue
			}
			next, ok := at(i + 1)
			switch {
			case !ok:
				return nil, nil, false
			case next == 0xFF:
				v.Bytes, i = append(v.Bytes, 0), i+2
				continue
			case next != 1:
				return nil, nil, false
			}
			i += 2
			break
		}
		out, b = append(out, v), b[i:]
	}
	return out, b, true
}
