package thirdparty

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// TestDecodeRowIdentifierList decodes, from docs/STATE.md's description alone, rows
// that protocol.Document.Encode wrote for a type whose identifier list comes before
// another value: a list of two, an empty list and an unset one, each followed by the
// string, and refuses a list whose length is no multiple of 32 or passes maxItems.
func TestDecodeRowIdentifierList(t *testing.T) {
	const def = `{"documentSchemas":{"post":{"type":"object","properties":{` +
		`"mentions":{"type":"array","maxItems":2,"position":0,"items":{"type":"array","byteArray":true,` +
		`"contentMediaType":"application/x.dash.dpp.identifier","minItems":32,"maxItems":32}},` +
		`"text":{"type":"string","maxLength":63,"position":1}},"additionalProperties":false}}}`
	types, err := protocol.ParseDocumentTypes([]byte(def), protocol.Latest)
	if err != nil {
		t.Fatal(err)
	}
	owner := protocol.IdentityID(bytes.Repeat([]byte{0x11}, 32))
	stored := protocol.Contract{ID: protocol.NewContractID(owner, 1), Owner: owner, Version: 1, DocumentTypes: types}.Encode()
	c, err := DecodeContract(stored)
	if err != nil {
		t.Fatal(err)
	}
	typ := c.Types["post"]
	if k, _ := typ.Kind("mentions"); k != KindIdentifierList || typ.Properties[0].MaxItems != 2 {
		t.Fatalf("mentions decodes as %+v, want an identifier list of at most 2", typ.Properties[0])
	}
	lim, err := protocol.LimitsFor(protocol.Latest)
	if err != nil {
		t.Fatal(err)
	}
	id := func(b int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(strconv.Itoa(b)+",", 32), ",") + "]"
	}
	// encode is a row of the document with data: no storage flags (a ttl document's
	// empty list), then the encoding.
	encode := func(data string) []byte {
		values, err := protocol.ParseDocumentData(types[0], []byte(data), lim)
		if err != nil {
			t.Fatal(err)
		}
		d := protocol.Document{ID: [32]byte{9}, Owner: owner, Revision: 1, CreatedAt: 1, UpdatedAt: 1, Values: values}
		return append([]byte{0, 0}, d.Encode(types[0])...)
	}
	text := partOf(KindString, []byte("hi"))
	for _, tc := range []struct {
		data string
		list [][32]byte // nil: unset
	}{
		{`{"mentions":[` + id(1) + `,` + id(2) + `],"text":"hi"}`, [][32]byte{[32]byte(bytes.Repeat([]byte{1}, 32)), [32]byte(bytes.Repeat([]byte{2}, 32))}},
		{`{"mentions":[],"text":"hi"}`, [][32]byte{}},
		{`{"text":"hi"}`, nil},
	} {
		d, err := DecodeRow(typ, encode(tc.data))
		if err != nil {
			t.Fatalf("%s: %v", tc.data, err)
		}
		got, set := d.Lists["mentions"]
		if set != (tc.list != nil) || len(got) != len(tc.list) || !bytes.Equal(d.Fields["text"], text) {
			t.Fatalf("%s decodes to mentions %x (set %t), text %x; want %x, text %x", tc.data, got, set, d.Fields["text"], tc.list, text)
		}
		for i := range got {
			if got[i] != tc.list[i] {
				t.Fatalf("%s: mention %d is %x, want %x", tc.data, i, got[i], tc.list[i])
			}
		}
	}

	// The list's length u32 sits right after the header (107 bytes), the flags and its
	// presence byte: a list of 65 bytes, or of three identifiers, with the bytes
	// inserted so that the rest of the row still reads, does not decode.
	row := encode(`{"mentions":[` + id(1) + `,` + id(2) + `],"text":"hi"}`)
	const at = 2 + 107 + 1
	for _, extra := range []int{1, 32} {
		bad := binary.BigEndian.AppendUint32(bytes.Clone(row[:at]), uint32(64+extra))
		bad = append(append(bad, row[at+4:at+4+64]...), make([]byte, extra)...)
		bad = append(bad, row[at+4+64:]...)
		if _, err := DecodeRow(typ, bad); err == nil {
			t.Fatalf("a list of %d bytes decodes", 64+extra)
		}
	}
}

// TestDecodeRowRenewed decodes, from docs/STATE.md's description alone, a row of a
// renewed document (format 2: $renewedAt after the price) and an unrenewed one
// ($renewedAt reads $createdAt), and refuses a renewal before the creation.
func TestDecodeRowRenewed(t *testing.T) {
	const def = `{"documentSchemas":{"session":{"type":"object","ttl":3600,"required":["$createdAt"],"properties":{` +
		`"user":{"type":"string","maxLength":63,"position":0}},"additionalProperties":false}}}`
	types, err := protocol.ParseDocumentTypes([]byte(def), protocol.Latest)
	if err != nil {
		t.Fatal(err)
	}
	owner := protocol.IdentityID(bytes.Repeat([]byte{0x11}, 32))
	c, err := DecodeContract(protocol.Contract{ID: protocol.NewContractID(owner, 1), Owner: owner, Version: 1, DocumentTypes: types}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	typ := c.Types["session"]
	user := []protocol.Value{{Set: true, Bytes: []byte("ada")}}
	ts := func(ms uint64) []byte { return binary.BigEndian.AppendUint64([]byte{1}, ms) }
	for _, tc := range []struct {
		renewedAt, want uint64
	}{{0, 1_000}, {7_000, 7_000}} {
		d := protocol.Document{ID: [32]byte{9}, Owner: owner, Revision: 2, CreatedAt: 1_000, UpdatedAt: 7_000, RenewedAt: tc.renewedAt, Values: user}
		row := append([]byte{0, 0}, d.Encode(types[0])...)
		got, err := DecodeRow(typ, row)
		if err != nil || !bytes.Equal(got.Fields["$renewedAt"], ts(tc.want)) || !bytes.Equal(got.Fields["$createdAt"], ts(1_000)) ||
			!bytes.Equal(got.Fields["user"], partOf(KindString, []byte("ada"))) {
			t.Fatalf("renewed at %d: %+v, %v", tc.renewedAt, got.Fields, err)
		}
		if tc.renewedAt != 0 {
			binary.BigEndian.PutUint64(row[2+105:], 999)
			if _, err := DecodeRow(typ, row); err == nil {
				t.Fatal("a row renewed before its creation decodes")
			}
		}
	}
}
