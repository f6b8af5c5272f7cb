package protocol

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// byteArrayContract has one byte array and one identifier: what byteItem reads.
const byteArrayContract = `{"documentSchemas":{"blob":{"type":"object","properties":{` +
	`"data":{"type":"array","byteArray":true,"maxItems":4,"position":0},` +
	`"who":{"type":"array","byteArray":true,"minItems":2,"maxItems":2,"position":1}},` +
	`"additionalProperties":false}}}`

// byteItemInputs are item lists as writers may send them.
var byteItemInputs = []string{
	`[]`, `[0]`, `[255]`, `[256]`, `[-1]`, `[-0]`, `[1,2,3,4]`, `[1,2,3,4,5]`, `["1"]`, `[true]`,
	`[null]`, `[[1]]`, `[{"a":1}]`, `[1.0]`, `[1e2]`, `[01]`, `[18446744073709551616]`, `[-256]`,
	`[255,256]`, `[300,"x"]`,
}

// TestByteItemsAcceptWhatJSONSchemaAccepts: reading a byte array's items as
// ParseDocumentData does accepts exactly the data the JSON Schema library accepts with
// the items written as a schema ({"type":"integer","minimum":0,"maximum":255}), and
// reads each accepted item as its value.
func TestByteItemsAcceptWhatJSONSchemaAccepts(t *testing.T) {
	for _, items := range byteItemInputs {
		for _, raw := range []string{`{"data":` + items + `}`, `{"who":` + items + `}`, `{"data":` + items + `,"who":` + items + `}`} {
			checkByteItems(t, []byte(raw))
		}
	}
}

// FuzzByteItems: the same agreement on any data.
func FuzzByteItems(f *testing.F) {
	for _, items := range byteItemInputs {
		f.Add([]byte(`{"data":` + items + `}`))
	}
	f.Fuzz(checkByteItems)
}

func checkByteItems(t *testing.T, raw []byte) {
	types, err := ParseDocumentTypes([]byte(byteArrayContract), Latest)
	if err != nil {
		t.Fatal(err)
	}
	typ := types[0]
	values, err := ParseDocumentData(typ, raw, testContext(t).Limits)
	want := referenceVerdict(t, typ, raw)
	if (err == nil) != want {
		t.Fatalf("%s: ParseDocumentData says %v, the library with an items schema accepts: %v", raw, err, want)
	}
	if err != nil {
		var e ErrInvalidDocument
		if !errors.As(err, &e) {
			t.Fatalf("%s: a refusal that is no ErrInvalidDocument: %v", raw, err)
		}
		return
	}
	var obj map[string][]int
	if json.Unmarshal(raw, &obj) != nil {
		return // "-0" and the like: the library's reading, not encoding/json's
	}
	for i, p := range typ.Properties {
		got := values[i].Bytes
		for j, n := range obj[p.Name] {
			if int(got[j]) != n {
				t.Fatalf("%s: %s[%d] read as %d", raw, p.Name, j, got[j])
			}
		}
	}
}

// referenceVerdict validates raw against t's validation schema with the byte arrays'
// items written in, as the library alone would, after the plain-integer rule.
func referenceVerdict(t *testing.T, typ DocumentType, raw []byte) bool {
	var schema map[string]any
	if err := json.Unmarshal(documentSchemaJSON(typ), &schema); err != nil {
		t.Fatal(err)
	}
	for _, s := range schema["properties"].(map[string]any) {
		if s := s.(map[string]any); s["type"] == "array" {
			s["items"] = map[string]any{"type": "integer", "minimum": 0, "maximum": 255}
		}
	}
	src, _ := json.Marshal(schema)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("ttld:reference", doc); err != nil {
		t.Fatal(err)
	}
	compiled, err := c.Compile("ttld:reference")
	if err != nil {
		t.Fatal(err)
	}
	data, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil || plainIntegersOnly(data, nil) != nil {
		return false
	}
	return compiled.Validate(data) == nil
}

// TestSchemaKeyNamesOneSchema: types that differ in any field the validation schema is
// written from have different cache keys, so the compiled schema found for a type is
// always its own. The variants change one field each; a field added to Property fails
// the test until it is considered here.
func TestSchemaKeyNamesOneSchema(t *testing.T) {
	u := func(v uint32) *uint32 { return &v }
	i := func(v int64) *int64 { return &v }
	base := func() DocumentType {
		return DocumentType{Name: "t", Properties: []Property{
			{Name: "a", Position: 0, Type: PropertyString, MinLength: u(1), MaxLength: u(9), Pattern: "^x"},
			{Name: "b", Position: 1, Type: PropertyInteger, Minimum: i(-3), Maximum: i(3)},
			{Name: "c", Position: 2, Type: PropertyByteArray, MinItems: u(1), MaxItems: u(4)},
		}, Required: []string{"a"}}
	}
	mutations := map[string]func(t *DocumentType){
		"Name":      func(t *DocumentType) { t.Properties[0].Name = "z" },
		"Position":  func(t *DocumentType) { t.Properties[0].Position = 7 }, // not in the schema
		"Type":      func(t *DocumentType) { t.Properties[2].Type = PropertyIdentifier },
		"MinLength": func(t *DocumentType) { t.Properties[0].MinLength = nil },
		"MaxLength": func(t *DocumentType) { t.Properties[0].MaxLength = u(10) },
		"Pattern":   func(t *DocumentType) { t.Properties[0].Pattern = "" },
		"Minimum":   func(t *DocumentType) { t.Properties[1].Minimum = i(-4) },
		"Maximum":   func(t *DocumentType) { t.Properties[1].Maximum = nil },
		"MinItems":  func(t *DocumentType) { t.Properties[2].MinItems = u(0) },
		"MaxItems":  func(t *DocumentType) { t.Properties[2].MaxItems = u(1) },
		// A reference is checked against state, not by the schema.
		"RefersTo": func(t *DocumentType) {
			t.Properties[2].RefersTo = &Reference{Type: "x", Kind: ReferenceDeletableDocument}
		},
	}
	if n := reflect.TypeFor[Property]().NumField(); n != len(mutations) {
		t.Fatalf("Property has %d fields, the test changes %d", n, len(mutations))
	}
	variants := []DocumentType{base()}
	for _, name := range slices.Sorted(maps.Keys(mutations)) {
		v := base()
		mutations[name](&v)
		variants = append(variants, v)
	}
	required := base()
	required.Required = []string{"a", "b"}
	dropped := base()
	dropped.Properties = dropped.Properties[:2]
	variants = append(variants, required, dropped)
	for x, a := range variants {
		for _, b := range variants[x+1:] {
			if schemaKey(a) == schemaKey(b) && !bytes.Equal(documentSchemaJSON(a), documentSchemaJSON(b)) {
				t.Fatalf("one key for two schemas:\n%s\n%s", documentSchemaJSON(a), documentSchemaJSON(b))
			}
		}
	}
}

// BenchmarkParseDocumentData reads a listing of docs/examples/market.json: two strings,
// an integer and a 32-byte identifier; "read" parses it each time, "memo" finds it read.
func BenchmarkParseDocumentData(b *testing.B) {
	types, err := ParseDocumentTypes(exampleFiles(b)["market.json"], Latest)
	if err != nil {
		b.Fatal(err)
	}
	raw := []byte(fuzzDocumentSeeds[0])
	lim := testContext(b).Limits
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		key := schemaKey(types[0])
		for b.Loop() {
			if _, err := parseDocumentData(types[0], key, raw, lim); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("memo", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ParseDocumentData(types[0], raw, lim); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestParsedDataKept checks the memo of ParseDocumentData: a document read again gets
// the values of its first reading, in a slice of its own; a refusal is refused again; a
// type of other bounds or a version of other limits reads the data anew; and the memo
// keeps at most two generations of maxParsedBytes.
func TestParsedDataKept(t *testing.T) {
	types, err := ParseDocumentTypes(exampleFiles(t)["market.json"], Latest)
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(fuzzDocumentSeeds[0])
	lim := testContext(t).Limits
	first, err := ParseDocumentData(types[0], raw, lim)
	if err != nil {
		t.Fatal(err)
	}
	want, err := parseDocumentData(types[0], schemaKey(types[0]), raw, lim)
	if err != nil {
		t.Fatal(err)
	}
	first[0] = Value{}
	again, err := ParseDocumentData(types[0], raw, lim)
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("read again: %v %+v, want %+v", err, again, want)
	}

	bad := []byte(`{"unknown":1}`)
	for range 2 {
		var e ErrInvalidDocument
		if _, err := ParseDocumentData(types[0], bad, lim); !errors.As(err, &e) {
			t.Fatalf("a refused document read again: %v", err)
		}
	}

	short := lim
	short.MaxStringLength = 1
	if _, err := ParseDocumentData(types[0], raw, short); err == nil {
		t.Fatal("a version whose strings are one byte long found the document read under another's")
	}

	m := &dataMemo{newer: map[string][]Value{}}
	huge := []Value{{Set: true, Bytes: make([]byte, 1<<20)}}
	n := 2*maxParsedBytes>>20 + 1
	for i := range n {
		m.put([]byte(strconv.Itoa(i)), huge)
	}
	if kept := len(m.newer) + len(m.older); kept >= 2*maxParsedBytes>>20 {
		t.Fatalf("the memo keeps %d documents of 1 MiB, bounded at %d MiB a generation", kept, maxParsedBytes>>20)
	}
	if _, ok := m.get([]byte(strconv.Itoa(n - 1))); !ok {
		t.Fatal("the newest document is not kept")
	}
	if _, ok := m.get([]byte("0")); ok {
		t.Fatal("the oldest document outlived two generations")
	}
}

// TestStringAtTheTransactionLimit pins the bound docs/CONTRACTS.md ("What fits in a
// transaction") states: a string property may declare maxLength up to
// MaxStringLength (16,384), but a document's data travels in a documents batch of at
// most MaxTxBytes, which leaves a create's data JSON 16,208 bytes less the type name's,
// a replace's 16,200: with type "t" and property "p", the longest string a create
// carries is 16,199 ASCII bytes, and one byte more is TxTooLarge (10002).
func TestStringAtTheTransactionLimit(t *testing.T) {
	ctx, err := ContextFor(Latest, 0)
	if err != nil {
		t.Fatal(err)
	}
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	size := func(kind DocumentActionKind, n int) []byte {
		data := []byte(`{"p":"` + strings.Repeat("a", n) + `"}`)
		return Sign("c", &DocumentsBatch{Nonce: 1, Actions: []DocumentAction{{Kind: kind, Type: "t", Revision: 2, Data: data}}}, key)
	}
	if empty := Sign("c", &DocumentsBatch{Nonce: 1, Actions: []DocumentAction{{Kind: ActionCreate}}}, key); len(empty) != documentsBatchCreateOverhead {
		t.Fatalf("an empty create is %d bytes, documentsBatchCreateOverhead says %d", len(empty), documentsBatchCreateOverhead)
	}
	for _, tc := range []struct {
		kind    DocumentActionKind
		longest int
	}{{ActionCreate, 16_199}, {ActionReplace, 16_191}} {
		if tx := size(tc.kind, tc.longest); len(tx) != ctx.Limits.MaxTxBytes {
			t.Fatalf("%s of a %d-byte string: %d bytes, want %d", tc.kind, tc.longest, len(tx), ctx.Limits.MaxTxBytes)
		} else if _, err := Decode(tx, ctx); err != nil {
			t.Fatalf("%s at the limit: %v", tc.kind, err)
		}
		var tl ErrTxTooLarge
		if _, err := Decode(size(tc.kind, tc.longest+1), ctx); !errors.As(err, &tl) {
			t.Fatalf("%s one byte over: %v, want ErrTxTooLarge", tc.kind, err)
		}
	}
	if ctx.Limits.MaxStringLength <= 16_199 {
		t.Fatalf("MaxStringLength %d: the bound above no longer needs stating", ctx.Limits.MaxStringLength)
	}
}
