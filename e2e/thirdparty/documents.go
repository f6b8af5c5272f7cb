package thirdparty

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// Kind is how a field's values are encoded (docs/STATE.md, "The document encoding"
// and "Index key parts").
type Kind int

// The kinds of fields: the property types of docs/CONTRACTS.md and the system fields.
const (
	KindString Kind = iota
	KindInteger
	KindBoolean
	KindBytes
	KindIdentifier // identifier properties, $id, $ownerId
	KindTimestamp  // $createdAt, $updatedAt, $transferredAt
	// KindIdentifierList is an identifier list: {"type": "array", "items": <an
	// identifier>, "maxItems": n}. It is never indexed, so it has no index key part.
	KindIdentifierList
)

// systemFields are the fields of a document that are not properties.
var systemFields = map[string]Kind{"$id": KindIdentifier, "$ownerId": KindIdentifier, "$createdAt": KindTimestamp, "$updatedAt": KindTimestamp, "$transferredAt": KindTimestamp, "$renewedAt": KindTimestamp}

// Property is one user-defined property of a document type.
type Property struct {
	Name     string
	Kind     Kind
	Position int
	// MaxItems bounds an identifier list (KindIdentifierList): at most that many
	// identifiers.
	MaxItems int
}

// IndexProperty is one property of an index and its direction.
type IndexProperty struct {
	Field string
	Desc  bool
}

// Index is one index of a document type.
type Index struct {
	Name       string
	Properties []IndexProperty
	Countable  bool
	Summable   string
	// TimeRange is the grid and ttl of a time-range index (docs/CONTRACTS.md); nil for
	// an ordinary index. Ranked: its windows rank their groups by count.
	TimeRange *TimeRange
	Ranked    bool
}

// TimeRange is a time-range index's "timeRange": windows start every Step seconds,
// Phase seconds past a multiple of it, each spans Range seconds of the field On; their
// entries are queryable until TTL seconds past their start (0: always).
type TimeRange struct {
	On    string `json:"on"`
	Range uint64 `json:"range"`
	Step  uint64 `json:"step"`
	Phase uint64 `json:"phase"`
	TTL   uint64 `json:"ttl"`
}

// DocType is what the verifier needs of a document type: its properties by position
// and its indexes by name.
type DocType struct {
	Name       string
	Properties []Property // in position order
	Indexes    []Index    // by name, as the canonical JSON lists them
}

// Kind returns the kind of field (a property or a system field).
func (t DocType) Kind(field string) (Kind, bool) {
	if k, ok := systemFields[field]; ok {
		return k, true
	}
	for _, p := range t.Properties {
		if p.Name == field {
			return p.Kind, true
		}
	}
	return 0, false
}

// Contract is a stored contract as docs/STATE.md gives it.
type Contract struct {
	ID, Owner [32]byte
	Version   uint32
	Types     map[string]DocType
}

// ContractKey is the key of contract id: 64 || id || 'c'.
func ContractKey(id [32]byte) []byte {
	return append(append([]byte{64}, id[:]...), 'c')
}

// DecodeContract reads a stored contract: format u8 (1) || id (32) || owner (32) ||
// version u32 || the canonical JSON of its document types (docs/CONTRACTS.md).
func DecodeContract(b []byte) (Contract, error) {
	if len(b) < 69 || b[0] != 1 {
		return Contract{}, errors.New("not a stored contract of format 1")
	}
	var c Contract
	copy(c.ID[:], b[1:33])
	copy(c.Owner[:], b[33:65])
	c.Version = binary.BigEndian.Uint32(b[65:69])
	type schema struct {
		Type             string  `json:"type"`
		Position         int     `json:"position"`
		ByteArray        bool    `json:"byteArray"`
		ContentMediaType string  `json:"contentMediaType"`
		MaxItems         int     `json:"maxItems"`
		Items            *schema `json:"items"`
	}
	identifier := func(s schema) bool {
		return s.Type == "array" && s.ByteArray && s.ContentMediaType == "application/x.dash.dpp.identifier"
	}
	var doc struct {
		DocumentSchemas map[string]struct {
			Properties map[string]schema `json:"properties"`
			Indices    []struct {
				Name       string              `json:"name"`
				Properties []map[string]string `json:"properties"`
				Countable  bool                `json:"countable"`
				Summable   string              `json:"summable"`
				Ranked     bool                `json:"ranked"`
				TimeRange  *TimeRange          `json:"timeRange"`
			} `json:"indices"`
		} `json:"documentSchemas"`
	}
	if err := json.Unmarshal(b[69:], &doc); err != nil {
		return Contract{}, err
	}
	c.Types = map[string]DocType{}
	for name, s := range doc.DocumentSchemas {
		t := DocType{Name: name}
		for pname, p := range s.Properties {
			var k Kind
			switch {
			case p.Type == "string":
				k = KindString
			case p.Type == "integer":
				k = KindInteger
			case p.Type == "boolean":
				k = KindBoolean
			case p.Type == "array" && p.Items != nil && identifier(*p.Items) && p.MaxItems > 0:
				k = KindIdentifierList
			case identifier(p):
				k = KindIdentifier
			case p.Type == "array" && p.ByteArray:
				k = KindBytes
			default:
				return Contract{}, fmt.Errorf("%s.%s: unknown property type %q", name, pname, p.Type)
			}
			t.Properties = append(t.Properties, Property{Name: pname, Kind: k, Position: p.Position, MaxItems: p.MaxItems})
		}
		sort.Slice(t.Properties, func(i, j int) bool { return t.Properties[i].Position < t.Properties[j].Position })
		for i, p := range t.Properties {
			if p.Position != i {
				return Contract{}, fmt.Errorf("%s: positions are not 0, 1, 2, ...", name)
			}
		}
		for _, ix := range s.Indices {
			out := Index{Name: ix.Name, Countable: ix.Countable, Summable: ix.Summable, Ranked: ix.Ranked, TimeRange: ix.TimeRange}
			if r := ix.TimeRange; r != nil && (gridField[r.On] == 0 || r.Step == 0) {
				return Contract{}, fmt.Errorf("%s.%s: a time range on %q every %d s", name, ix.Name, r.On, r.Step)
			}
			for _, p := range ix.Properties {
				if len(p) != 1 {
					return Contract{}, fmt.Errorf("%s.%s: an index property names one field", name, ix.Name)
				}
				for field, dir := range p {
					if _, ok := t.Kind(field); !ok || (dir != "asc" && dir != "desc") {
						return Contract{}, fmt.Errorf("%s.%s: bad property %q %q", name, ix.Name, field, dir)
					}
					out.Properties = append(out.Properties, IndexProperty{Field: field, Desc: dir == "desc"})
				}
			}
			t.Indexes = append(t.Indexes, out)
		}
		c.Types[name] = t
	}
	return c, nil
}

// TypePrefix is DocumentTypePrefix of docs/STATE.md: 64 || contract || 'd' ||
// name_len:u8 || name.
func TypePrefix(contract [32]byte, typeName string) []byte {
	p := append(append([]byte{64}, contract[:]...), 'd', byte(len(typeName)))
	return append(p, typeName...)
}

// RowKey is the key of a document's row: TypePrefix || 'p' || id.
func RowKey(contract [32]byte, typeName string, id [32]byte) []byte {
	return append(append(TypePrefix(contract, typeName), 'p'), id[:]...)
}

// IndexPrefix is TypePrefix || 'i' || index_len:u8 || index.
func IndexPrefix(contract [32]byte, typeName, index string) []byte {
	return append(append(TypePrefix(contract, typeName), 'i', byte(len(index))), index...)
}

// CountPrefix is TypePrefix || 'n' || index_len:u8 || index.
func CountPrefix(contract [32]byte, typeName, index string) []byte {
	return append(append(TypePrefix(contract, typeName), 'n', byte(len(index))), index...)
}

// Document is a decoded document row. Fields holds each field's value as its
// ascending index key part (docs/STATE.md), which orders values as the index does:
// the where clauses compare those. An identifier list has no index key part: Lists
// holds each set list's identifiers, in order.
type Document struct {
	ID, Owner [32]byte
	Revision  uint64
	Fields    map[string][]byte
	Lists     map[string][][32]byte
}

// DecodeRow reads a document row: storage flags, then the document encoding of
// docs/STATE.md under type t.
func DecodeRow(t DocType, row []byte) (Document, error) {
	if len(row) < 2 {
		return Document{}, errors.New("row without storage flags")
	}
	// n may be 0: the items of a document with a ttl carry no storage flags, an empty
	// list (docs/STATE.md, "Time to live").
	n := int(binary.BigEndian.Uint16(row))
	if len(row) < 2+40*n {
		return Document{}, errors.New("bad storage flags")
	}
	b := row[2+40*n:]
	// Format 1, or 2 for a renewed document: its $renewedAt follows the price
	// (docs/STATE.md, "The document encoding").
	header := 1 + 32 + 32 + 5*8 + 2
	if len(b) > 0 && b[0] == 2 {
		header += 8
	}
	if len(b) < header || (b[0] != 1 && b[0] != 2) {
		return Document{}, errors.New("not a document of format 1 or 2")
	}
	var d Document
	copy(d.ID[:], b[1:33])
	copy(d.Owner[:], b[33:65])
	d.Revision = binary.BigEndian.Uint64(b[65:73])
	d.Lists = map[string][][32]byte{}
	d.Fields = map[string][]byte{
		"$id":            append([]byte{1}, d.ID[:]...),
		"$ownerId":       append([]byte{1}, d.Owner[:]...),
		"$createdAt":     append([]byte{1}, b[73:81]...),
		"$updatedAt":     append([]byte{1}, b[81:89]...),
		"$transferredAt": append([]byte{1}, b[89:97]...),
		"$renewedAt":     append([]byte{1}, b[73:81]...),
	}
	if b[0] == 2 {
		if renewed := binary.BigEndian.Uint64(b[105:113]); renewed == 0 || renewed < binary.BigEndian.Uint64(b[73:81]) {
			return Document{}, errors.New("renewed before its creation")
		}
		d.Fields["$renewedAt"] = append([]byte{1}, b[105:113]...)
	}
	count := int(binary.BigEndian.Uint16(b[header-2 : header]))
	if count > len(t.Properties) {
		return Document{}, errors.New("more values than properties")
	}
	b = b[header:]
	for _, p := range t.Properties {
		if p.Kind != KindIdentifierList {
			d.Fields[p.Name] = []byte{0}
		}
	}
	for i := 0; i < count; i++ {
		p := t.Properties[i]
		if len(b) < 1 || b[0] > 1 {
			return Document{}, fmt.Errorf("%s: bad presence byte", p.Name)
		}
		set := b[0] == 1
		b = b[1:]
		if !set {
			if i == count-1 {
				return Document{}, errors.New("a trailing unset value is written")
			}
			continue
		}
		var raw []byte
		switch p.Kind {
		case KindInteger:
			if len(b) < 8 {
				return Document{}, fmt.Errorf("%s: short integer", p.Name)
			}
			raw, b = b[:8], b[8:]
		case KindBoolean:
			if len(b) < 1 || b[0] > 1 {
				return Document{}, fmt.Errorf("%s: bad boolean", p.Name)
			}
			raw, b = b[:1], b[1:]
		default:
			if len(b) < 4 || uint64(len(b)-4) < uint64(binary.BigEndian.Uint32(b)) {
				return Document{}, fmt.Errorf("%s: bad length", p.Name)
			}
			l := int(binary.BigEndian.Uint32(b))
			raw, b = b[4:4+l], b[4+l:]
			switch {
			case p.Kind == KindIdentifier && l != 32:
				return Document{}, fmt.Errorf("%s: an identifier of %d bytes", p.Name, l)
			case p.Kind == KindIdentifierList && (l%32 != 0 || l > 32*p.MaxItems):
				return Document{}, fmt.Errorf("%s: an identifier list of %d bytes, not a multiple of 32 up to %d identifiers", p.Name, l, p.MaxItems)
			}
		}
		if p.Kind == KindIdentifierList {
			// the length counts bytes: 32 per identifier, one after the other
			list := make([][32]byte, 0, len(raw)/32)
			for ; len(raw) > 0; raw = raw[32:] {
				list = append(list, [32]byte(raw[:32]))
			}
			d.Lists[p.Name] = list
			continue
		}
		d.Fields[p.Name] = partOf(p.Kind, raw)
	}
	if len(b) != 0 {
		return Document{}, errors.New("bytes after the last value")
	}
	return d, nil
}

// partOf is the ascending index key part of a set value whose document encoding (its
// length prefix removed) is raw.
func partOf(k Kind, raw []byte) []byte {
	out := []byte{1}
	switch k {
	case KindInteger:
		out = append(out, raw...)
		out[1] ^= 0x80
	case KindString, KindBytes:
		for _, c := range raw {
			out = append(out, c)
			if c == 0 {
				out = append(out, 0xff)
			}
		}
		out = append(out, 0, 1)
	default:
		out = append(out, raw...)
	}
	return out
}

// directed is an ascending part as a part of direction desc: every byte inverted.
func directed(part []byte, desc bool) []byte {
	out := bytes.Clone(part)
	if desc {
		for i := range out {
			out[i] = ^out[i]
		}
	}
	return out
}

// EntryKey rebuilds the index entry of document d: the index prefix, each index
// property's part in its direction, the id.
func EntryKey(prefix []byte, ix Index, d Document) []byte {
	k := bytes.Clone(prefix)
	for _, p := range ix.Properties {
		k = append(k, directed(d.Fields[p.Field], p.Desc)...)
	}
	return append(k, d.ID[:]...)
}
