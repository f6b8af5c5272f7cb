package protocol

import (
	"bytes"
	"errors"
	"sort"
	"testing"
)

// fuzzTypes are the document types of docs/examples (parsed under the latest version,
// which the ttl and renewal variants need), in file then name order: what the
// decoder and data fuzz targets read their input under (the input's first byte picks).
func fuzzTypes(t testing.TB) []DocumentType {
	files := exampleFiles(t)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []DocumentType
	for _, n := range names {
		types, err := ParseDocumentTypes(files[n], Latest)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out = append(out, types...)
	}
	return out
}

// fuzzDocumentSeeds are documents of the example types as writers send them: each
// property kind set and unset, empty strings and byte arrays, integer bounds, and some
// data each type refuses.
var fuzzDocumentSeeds = []string{
	`{"sku":"A-1","category":"books","quantity":5,"seller":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}`,
	`{"sku":"Z","category":"","quantity":1000000,"seller":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,255],"photo":[],"active":false}`,
	`{"listing":[9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9],"stars":5,"text":"caf\u00e9 \u0000 ok"}`,
	`{"text":"hello"}`,
	`{"thread":[7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7],"text":"hi","mentions":[[7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7],[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,255]]}`,
	`{"thread":[7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7],"text":"hi","mentions":[[1,2]]}`,
	`{}`,
	`{"caption":"a","url":"https://example.org/x"}`,
	`{"sku":"A-1","category":"books","quantity":5.0,"seller":[1]}`,
	`{"text":1e3}`,
	`{"text":"x","extra":true}`,
	`{"stars":-9223372036854775809}`,
	`[1,2]`,
	`{"text":`,
	``,
}

// FuzzDecodeDocument: no bytes panic the document decoder under any example type, a
// refusal is ErrDocumentDecode, and whatever decodes re-encodes to the same bytes.
func FuzzDecodeDocument(f *testing.F) {
	types := fuzzTypes(f)
	lim := testContext(f).Limits
	for i, typ := range types {
		for _, js := range fuzzDocumentSeeds {
			values, err := ParseDocumentData(typ, []byte(js), lim)
			if err != nil {
				continue
			}
			d := Document{ID: DocumentID{byte(i), 1}, Owner: IdentityID{2}, Revision: 3, CreatedAt: 4, UpdatedAt: 5, Price: 6, Values: values}
			renewed := d
			renewed.RenewedAt = 7
			for _, enc := range [][]byte{d.Encode(typ), renewed.Encode(typ)} {
				f.Add(byte(i), enc)
				f.Add(byte(i), enc[:len(enc)-1])
				f.Add(byte(i+1), enc)
			}
		}
	}
	f.Add(byte(0), []byte{})
	f.Add(byte(0), []byte{documentEncodingFormat})
	f.Fuzz(func(t *testing.T, which byte, b []byte) {
		typ := types[int(which)%len(types)]
		d, err := DecodeDocument(b, typ)
		if err != nil {
			var e ErrDocumentDecode
			if !errors.As(err, &e) {
				t.Fatalf("a refusal that is no ErrDocumentDecode: %v", err)
			}
			return
		}
		if len(d.Values) != len(typ.Properties) {
			t.Fatalf("%d values for %d properties", len(d.Values), len(typ.Properties))
		}
		if re := d.Encode(typ); !bytes.Equal(re, b) {
			t.Fatalf("re-encoding differs:\n%x\n%x", re, b)
		}
	})
}

// FuzzParseDocumentData: no JSON panics the data parser under any example type, every
// refusal is ErrInvalidDocument ("documents with wrong types, missing required fields,
// extra properties, oversized strings: each a specific code"), and what parses is
// written back by DocumentData as data that parses to the same values, and stored in
// an encoding that decodes to them.
func FuzzParseDocumentData(f *testing.F) {
	types := fuzzTypes(f)
	lim := testContext(f).Limits
	for i := range types {
		for _, js := range fuzzDocumentSeeds {
			f.Add(byte(i), []byte(js))
		}
	}
	f.Fuzz(func(t *testing.T, which byte, raw []byte) {
		typ := types[int(which)%len(types)]
		values, err := ParseDocumentData(typ, raw, lim)
		if err != nil {
			var e ErrInvalidDocument
			if !errors.As(err, &e) {
				t.Fatalf("a refusal that is no ErrInvalidDocument: %v", err)
			}
			if code, _ := CodeOf(err); code != CodeInvalidDocument {
				t.Fatalf("code %v", code)
			}
			return
		}
		d := Document{Values: values, Revision: 1}
		js := DocumentData(typ, d)
		again, err := ParseDocumentData(typ, js, lim)
		if err != nil {
			t.Fatalf("DocumentData wrote data its type refuses: %v\n%s", err, js)
		}
		if !sameValues(values, again) {
			t.Fatalf("data parses to other values after DocumentData:\n%+v\n%+v\n%s", values, again, js)
		}
		dec, err := DecodeDocument(d.Encode(typ), typ)
		if err != nil {
			t.Fatalf("the encoding of parsed values does not decode: %v", err)
		}
		if !sameValues(values, dec.Values) {
			t.Fatalf("values decode to others:\n%+v\n%+v", values, dec.Values)
		}
	})
}

// sameValues compares values as the encoding sees them (an empty byte string is one
// however it is held).
func sameValues(a, b []Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Set != y.Set || x.Int != y.Int || x.Bool != y.Bool || !bytes.Equal(x.Bytes, y.Bytes) {
			return false
		}
	}
	return true
}
