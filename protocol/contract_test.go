package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// exampleFiles returns the contracts of docs/examples.
func exampleFiles(t testing.TB) map[string][]byte {
	paths, err := filepath.Glob("../docs/examples/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no examples in docs/examples: %v", err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = raw
	}
	return out
}

func mustParse(t *testing.T, raw string) []DocumentType {
	t.Helper()
	types, err := ParseDocumentTypes([]byte(raw), V13)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return types
}

func u32(v uint32) *uint32 { return &v }
func i64(v int64) *int64   { return &v }

// TestExamplesParse parses every contract of docs/examples under the latest version (the
// ttl variants need 14, session.json 15) and checks what each is there to show.
func TestExamplesParse(t *testing.T) {
	files := exampleFiles(t)
	parsed := map[string][]DocumentType{}
	for name, raw := range files {
		types, err := ParseSubmittedDocumentTypes(raw, Latest)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		parsed[name] = types
		d, err := ParseDefinition(raw, Latest)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseDefinition(CanonicalDefinitionJSON(d), Latest)
		if err != nil || !reflect.DeepEqual(again, d) {
			t.Errorf("%s: canonical form does not re-parse to the same definition: %v", name, err)
		}
	}

	want := []DocumentType{{
		Name:             "note",
		Properties:       []Property{{Name: "text", Position: 0, Type: PropertyString, MaxLength: u32(280)}},
		Required:         []string{"$createdAt", "text"},
		DocumentsMutable: true, CanBeDeleted: true,
	}}
	if !reflect.DeepEqual(parsed["note.json"], want) {
		t.Errorf("note.json parsed to %+v", parsed["note.json"])
	}
	story := parsed["story.json"]
	if len(story) != 1 || story[0].Name != "story" || len(story[0].Properties) != 2 ||
		story[0].Properties[0].Name != "caption" || story[0].Properties[1].Name != "mediaUrl" {
		t.Errorf("story.json parsed to %+v", story)
	}

	market := Contract{DocumentTypes: parsed["market.json"]}
	listing, ok := market.DocumentType("listing")
	if !ok {
		t.Fatal("market.json has no listing type")
	}
	if listing.Transferable != TransferableAlways || listing.TradeMode != TradeModeDirectPurchase {
		t.Errorf("listing flags: %+v", listing)
	}
	names := []string{}
	for _, p := range listing.Properties {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, ","); got != "sku,category,quantity,seller,photo,active" {
		t.Errorf("listing properties in position order: %s", got)
	}
	if p, _ := listing.Property("seller"); p.Type != PropertyIdentifier || *p.MinItems != 32 || *p.MaxItems != 32 {
		t.Errorf("seller: %+v", p)
	}
	if p, _ := listing.Property("photo"); p.Type != PropertyByteArray || p.MinItems != nil || *p.MaxItems != 4096 {
		t.Errorf("photo: %+v", p)
	}
	if p, _ := listing.Property("quantity"); p.Type != PropertyInteger || *p.Minimum != 0 || *p.Maximum != 1000000 {
		t.Errorf("quantity: %+v", p)
	}
	wantIdx := []Index{
		{Name: "byCategory", Properties: []IndexProperty{{"category", false}, {"$createdAt", true}}, Countable: true},
		{Name: "ownerSku", Properties: []IndexProperty{{"$ownerId", false}, {"sku", false}}, Unique: true},
		{Name: "stockBySeller", Properties: []IndexProperty{{"seller", false}}, Countable: true, Summable: "quantity"},
	}
	if !reflect.DeepEqual(listing.Indices, wantIdx) {
		t.Errorf("listing indices %+v", listing.Indices)
	}
	review, _ := market.DocumentType("review")
	if review.DocumentsMutable || review.CanBeDeleted {
		t.Errorf("review flags: %+v", review)
	}
}

// TestDefaults: the flags a type leaves out take the platform's defaults.
func TestDefaults(t *testing.T) {
	dt := mustParse(t, `{"documentSchemas":{"a":{"type":"object","properties":{"x":{"type":"boolean","position":0}},"additionalProperties":false}}}`)[0]
	want := DocumentType{Name: "a", Properties: []Property{{Name: "x", Type: PropertyBoolean}}, DocumentsMutable: true, CanBeDeleted: true}
	if !reflect.DeepEqual(dt, want) {
		t.Errorf("got %+v", dt)
	}
}

// one wraps a document type's JSON as a contract with the one type "t".
func one(typeJSON string) string { return `{"documentSchemas":{"t":` + typeJSON + `}}` }

// typ builds a type's JSON from its properties and extra keywords.
func typ(props string, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return `{"type":"object","properties":{` + props + `},"additionalProperties":false` + extra + `}`
}

const (
	propA   = `"a":{"type":"integer","position":0}`
	propAB  = `"a":{"type":"integer","position":0},"b":{"type":"string","maxLength":10,"position":1}`
	propStr = `"s":{"type":"string","position":0}`
)

// repeatJSON joins n items made by f with commas.
func repeatJSON(n int, f func(i int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = f(i)
	}
	return strings.Join(parts, ",")
}

type refusal struct {
	name string
	json string
	code Code
	// check, when set, asserts the typed error's fields.
	check func(t *testing.T, err error)
}

// refusals is every refusal of ParseDocumentTypes, with its code; the fuzz target seeds
// its corpus from them.
func refusals() []refusal {
	return []refusal{
		// JsonSchemaError 10101: what the meta-schema refuses.
		{"not JSON", `{"documentSchemas":`, CodeJSONSchema, nil},
		{"trailing data", one(typ(propA, "")) + `{}`, CodeJSONSchema, nil},
		{"not an object", `[]`, CodeJSONSchema, nil},
		{"no documentSchemas", `{}`, CodeJSONSchema, nil},
		{"unknown top-level keyword", `{"documentSchemas":{"t":` + typ(propA, "") + `},"owner":1}`, CodeJSONSchema, nil},
		{"no types", `{"documentSchemas":{}}`, CodeJSONSchema, nil},
		{"ttl before version 14", one(typ(propA, `"ttl":86400,"required":["$createdAt"]`)), CodeJSONSchema,
			func(t *testing.T, err error) {
				var e ErrJSONSchema
				if !errors.As(err, &e) || e.Path != "/documentSchemas/t" {
					t.Errorf("ttl refusal: %#v", err)
				}
			}},
		{"unknown type keyword", one(typ(propA, `"description":"x"`)), CodeJSONSchema, nil},
		{"type not object", one(`{"type":"array","properties":{` + propA + `},"additionalProperties":false}`), CodeJSONSchema, nil},
		{"additionalProperties missing", one(`{"type":"object","properties":{` + propA + `}}`), CodeJSONSchema, nil},
		{"additionalProperties true", one(`{"type":"object","properties":{` + propA + `},"additionalProperties":true}`), CodeJSONSchema, nil},
		{"no properties", one(typ(``, "")), CodeJSONSchema, nil},
		{"number type", one(typ(`"f":{"type":"number","position":0}`, "")), CodeJSONSchema,
			func(t *testing.T, err error) {
				var e ErrJSONSchema
				if !errors.As(err, &e) || e.Path != "/documentSchemas/t/properties/f/type" {
					t.Errorf("number refusal: %#v", err)
				}
			}},
		{"object property", one(typ(`"o":{"type":"object","position":0}`, "")), CodeJSONSchema, nil},
		{"array not byteArray", one(typ(`"l":{"type":"array","position":0}`, "")), CodeJSONSchema, nil},
		{"byteArray false", one(typ(`"l":{"type":"array","byteArray":false,"position":0}`, "")), CodeJSONSchema, nil},
		{"no position", one(typ(`"a":{"type":"integer"}`, "")), CodeJSONSchema, nil},
		{"negative position", one(typ(`"a":{"type":"integer","position":-1}`, "")), CodeJSONSchema, nil},
		{"keyword of another type", one(typ(`"a":{"type":"integer","maxLength":3,"position":0}`, "")), CodeJSONSchema, nil},
		{"fractional bound", one(typ(`"a":{"type":"integer","minimum":1.5,"position":0}`, "")), CodeJSONSchema, nil},
		{"integer with fraction", one(typ(`"a":{"type":"integer","minimum":1.0,"position":0}`, "")), CodeJSONSchema,
			func(t *testing.T, err error) {
				var e ErrJSONSchema
				if !errors.As(err, &e) || e.Path != "/documentSchemas/t/properties/a/minimum" {
					t.Errorf("1.0 refusal: %#v", err)
				}
			}},
		{"integer with exponent", one(typ(`"a":{"type":"integer","position":1e0}`, "")), CodeJSONSchema, nil},
		{"enum written 1.0", one(typ(propA, `"transferable":1.0`)), CodeJSONSchema,
			func(t *testing.T, err error) {
				var e ErrJSONSchema
				if !errors.As(err, &e) || e.Path != "/documentSchemas/t/transferable" {
					t.Errorf("%#v", err)
				}
			}},
		{"huge exponent", one(typ(`"a":{"type":"integer","position":0,"maximum":1e999999999}`, "")), CodeJSONSchema, nil},
		{"float where a string goes", one(typ(propA, `"indices":[{"name":0.5,"properties":[{"a":"asc"}]}]`)), CodeJSONSchema, nil},
		{"bound past int64", one(typ(`"a":{"type":"integer","maximum":9223372036854775808,"position":0}`, "")), CodeJSONSchema, nil},
		{"maxLength past uint32", one(typ(`"s":{"type":"string","maxLength":4294967296,"position":0}`, "")), CodeJSONSchema, nil},
		{"wrong media type", one(typ(`"i":{"type":"array","byteArray":true,"minItems":32,"maxItems":32,"contentMediaType":"image/png","position":0}`, "")), CodeJSONSchema, nil},
		{"transferable 2", one(typ(propA, `"transferable":2`)), CodeJSONSchema, nil},
		{"tradeMode 2", one(typ(propA, `"tradeMode":2`)), CodeJSONSchema, nil},
		{"creationRestrictionMode 3", one(typ(propA, `"creationRestrictionMode":3`)), CodeJSONSchema, nil},
		{"flag not boolean", one(typ(propA, `"documentsMutable":1`)), CodeJSONSchema, nil},
		{"required repeated", one(typ(propA, `"required":["a","a"]`)), CodeJSONSchema, nil},
		{"index without name", one(typ(propA, `"indices":[{"properties":[{"a":"asc"}]}]`)), CodeJSONSchema, nil},
		{"index direction", one(typ(propA, `"indices":[{"name":"i","properties":[{"a":"up"}]}]`)), CodeJSONSchema, nil},
		{"index property two keys", one(typ(propAB, `"indices":[{"name":"i","properties":[{"a":"asc","b":"asc"}]}]`)), CodeJSONSchema, nil},
		{"index no properties", one(typ(propA, `"indices":[{"name":"i","properties":[]}]`)), CodeJSONSchema, nil},
		{"countable not boolean", one(typ(propA, `"indices":[{"name":"i","properties":[{"a":"asc"}],"countable":"yes"}]`)), CodeJSONSchema, nil},
		{"contested resolution 1", one(typ(propA, `"indices":[{"name":"i","properties":[{"a":"asc"}],"contested":{"resolution":1}}]`)), CodeJSONSchema, nil},

		// InvalidContractStructure 10231.
		{"required unknown", one(typ(propA, `"required":["b"]`)), CodeInvalidContractStructure,
			func(t *testing.T, err error) {
				var e ErrInvalidContractStructure
				if !errors.As(err, &e) || e.Type != "t" || e.Path != "/documentSchemas/t/required" {
					t.Errorf("%#v", err)
				}
			}},
		{"required system field not requirable", one(typ(propA, `"required":["$ownerId"]`)), CodeInvalidContractStructure, nil},
		{"minLength above maxLength", one(typ(`"s":{"type":"string","minLength":5,"maxLength":4,"position":0}`, "")), CodeInvalidContractStructure, nil},
		{"maxLength past limit", one(typ(`"s":{"type":"string","maxLength":16385,"position":0}`, "")), CodeInvalidContractStructure, nil},
		{"minLength past limit", one(typ(`"s":{"type":"string","minLength":16385,"position":0}`, "")), CodeInvalidContractStructure, nil},
		{"bad pattern", one(typ(`"s":{"type":"string","pattern":"(a","position":0}`, "")), CodeInvalidContractStructure, nil},
		{"non-RE2 pattern", one(typ(`"s":{"type":"string","pattern":"(?=a)","position":0}`, "")), CodeInvalidContractStructure, nil},
		{"minimum above maximum", one(typ(`"a":{"type":"integer","minimum":2,"maximum":1,"position":0}`, "")), CodeInvalidContractStructure, nil},
		{"identifier of 20 bytes", one(typ(`"i":{"type":"array","byteArray":true,"minItems":20,"maxItems":20,"contentMediaType":"application/x.dash.dpp.identifier","position":0}`, "")), CodeInvalidContractStructure, nil},
		{"identifier without bounds", one(typ(`"i":{"type":"array","byteArray":true,"contentMediaType":"application/x.dash.dpp.identifier","position":0}`, "")), CodeInvalidContractStructure, nil},
		{"maxItems past limit", one(typ(`"b":{"type":"array","byteArray":true,"maxItems":8193,"position":0}`, "")), CodeInvalidContractStructure, nil},
		{"minItems above maxItems", one(typ(`"b":{"type":"array","byteArray":true,"minItems":3,"maxItems":2,"position":0}`, "")), CodeInvalidContractStructure, nil},
		{"index property twice", one(typ(propA, `"indices":[{"name":"i","properties":[{"a":"asc"},{"a":"desc"}]}]`)), CodeInvalidContractStructure, nil},
		{"indexed string unbounded", one(typ(propStr, `"indices":[{"name":"i","properties":[{"s":"asc"}]}]`)), CodeInvalidContractStructure, nil},
		{"indexed string too long", one(typ(`"s":{"type":"string","maxLength":64,"position":0}`, `"indices":[{"name":"i","properties":[{"s":"asc"}]}]`)), CodeInvalidContractStructure, nil},
		{"indexed byte array too long", one(typ(`"b":{"type":"array","byteArray":true,"maxItems":256,"position":0}`, `"indices":[{"name":"i","properties":[{"b":"asc"}]}]`)), CodeInvalidContractStructure, nil},
		{"contested field not in index", one(typ(propAB, `"indices":[{"name":"i","properties":[{"a":"asc"}],"contested":{"resolution":0,"fieldMatches":[{"field":"b","regexPattern":"^x"}]}}]`)), CodeInvalidContractStructure, nil},
		{"contested bad regex", one(typ(propAB, `"indices":[{"name":"i","properties":[{"b":"asc"}],"contested":{"resolution":0,"fieldMatches":[{"field":"b","regexPattern":"(("}]}}]`)), CodeInvalidContractStructure, nil},

		// DuplicateIndex 10201 and ours.
		{"duplicate index", one(typ(propAB, `"indices":[{"name":"i","properties":[{"a":"asc"},{"b":"asc"}]},{"name":"j","properties":[{"a":"asc"},{"b":"asc"}],"unique":true}]`)), CodeDuplicateIndex,
			func(t *testing.T, err error) {
				var e ErrDuplicateIndex
				if !errors.As(err, &e) || e != (ErrDuplicateIndex{Type: "t", Index: "j", Other: "i"}) {
					t.Errorf("%#v", err)
				}
			}},
		{"duplicate index name", one(typ(propAB, `"indices":[{"name":"i","properties":[{"a":"asc"}]},{"name":"i","properties":[{"b":"asc"}]}]`)), CodeDuplicateIndexName,
			func(t *testing.T, err error) {
				var e ErrDuplicateIndexName
				if !errors.As(err, &e) || e != (ErrDuplicateIndexName{Type: "t", Index: "i"}) {
					t.Errorf("%#v", err)
				}
			}},
		{"index on unknown property", one(typ(propA, `"indices":[{"name":"i","properties":[{"zz":"asc"}]}]`)), CodeUndefinedIndexProperty,
			func(t *testing.T, err error) {
				var e ErrUndefinedIndexProperty
				if !errors.As(err, &e) || e != (ErrUndefinedIndexProperty{Type: "t", Index: "i", Property: "zz"}) {
					t.Errorf("%#v", err)
				}
			}},
		{"index on unknown system field", one(typ(propA, `"indices":[{"name":"i","properties":[{"$revision":"asc"}]}]`)), CodeUndefinedIndexProperty, nil},
		{"summable on a string", one(typ(propAB, `"indices":[{"name":"i","properties":[{"a":"asc"}],"summable":"b"}]`)), CodeInvalidSummableProperty,
			func(t *testing.T, err error) {
				var e ErrInvalidSummableProperty
				if !errors.As(err, &e) || e.Type != "t" || e.Index != "i" || e.Property != "b" {
					t.Errorf("%#v", err)
				}
			}},
		{"summable on nothing", one(typ(propAB, `"indices":[{"name":"i","properties":[{"a":"asc"}],"summable":"c"}]`)), CodeInvalidSummableProperty, nil},
		{"summable on a system field", one(typ(propAB, `"indices":[{"name":"i","properties":[{"a":"asc"}],"summable":"$createdAt"}]`)), CodeInvalidSummableProperty, nil},
		{"too many types", `{"documentSchemas":{` + repeatJSON(101, func(i int) string { return fmt.Sprintf(`"t%d":%s`, i, typ(propA, "")) }) + `}}`, CodeTooManyDocumentTypes,
			func(t *testing.T, err error) {
				var e ErrTooManyDocumentTypes
				if !errors.As(err, &e) || e != (ErrTooManyDocumentTypes{Count: 101, Max: 100}) {
					t.Errorf("%#v", err)
				}
			}},
		{"too many properties", one(typ(repeatJSON(101, func(i int) string { return fmt.Sprintf(`"p%d":{"type":"boolean","position":%d}`, i, i) }), "")), CodeTooManyProperties,
			func(t *testing.T, err error) {
				var e ErrTooManyProperties
				if !errors.As(err, &e) || e != (ErrTooManyProperties{Type: "t", Count: 101, Max: 100}) {
					t.Errorf("%#v", err)
				}
			}},
		{"too many indices", one(typ(repeatJSON(11, func(i int) string { return fmt.Sprintf(`"p%d":{"type":"boolean","position":%d}`, i, i) }),
			`"indices":[`+repeatJSON(11, func(i int) string { return fmt.Sprintf(`{"name":"i%d","properties":[{"p%d":"asc"}]}`, i, i) })+`]`)), CodeTooManyIndexes,
			func(t *testing.T, err error) {
				var e ErrTooManyIndexes
				if !errors.As(err, &e) || e != (ErrTooManyIndexes{Type: "t", Count: 11, Max: 10}) {
					t.Errorf("%#v", err)
				}
			}},
		{"too many index properties", one(typ(repeatJSON(11, func(i int) string { return fmt.Sprintf(`"p%d":{"type":"boolean","position":%d}`, i, i) }),
			`"indices":[{"name":"i","properties":[`+repeatJSON(11, func(i int) string { return fmt.Sprintf(`{"p%d":"asc"}`, i) })+`]}]`)), CodeTooManyIndexProperties,
			func(t *testing.T, err error) {
				var e ErrTooManyIndexProperties
				if !errors.As(err, &e) || e != (ErrTooManyIndexProperties{Type: "t", Index: "i", Count: 11, Max: 10}) {
					t.Errorf("%#v", err)
				}
			}},
		{"contract too large", one(typ(propA, "")) + strings.Repeat(" ", 16*1024), CodeContractTooLarge,
			func(t *testing.T, err error) {
				var e ErrContractTooLarge
				if !errors.As(err, &e) || e.Max != 16*1024 || e.Size <= e.Max {
					t.Errorf("%#v", err)
				}
			}},
		// A raw U+2028 (3 bytes) is written \u2028 (6 bytes) in the canonical form: the
		// input fits the limit, the form that would be stored does not.
		{"canonical form too large", `{"documentSchemas":{` + repeatJSON(30, func(i int) string {
			return fmt.Sprintf(`"t%02d":{"type":"object","properties":{"s":{"type":"string","pattern":"%s","position":0}},"additionalProperties":false}`, i, strings.Repeat("\u2028", 100))
		}) + `}}`, CodeContractTooLarge,
			func(t *testing.T, err error) {
				var e ErrContractTooLarge
				if !errors.As(err, &e) || e.Size <= e.Max || e.Max != 16*1024 {
					t.Errorf("%#v", err)
				}
			}},
		{"type name with a dot", `{"documentSchemas":{"a.b":` + typ(propA, "") + `}}`, CodeInvalidName,
			func(t *testing.T, err error) {
				var e ErrInvalidName
				if !errors.As(err, &e) || e.Kind != "document type" || e.Name != "a.b" {
					t.Errorf("%#v", err)
				}
			}},
		{"type name with a digit first", `{"documentSchemas":{"1a":` + typ(propA, "") + `}}`, CodeInvalidName, nil},
		{"property name with a dollar", one(typ(`"$createdAt":{"type":"integer","position":0}`, "")), CodeInvalidName,
			func(t *testing.T, err error) {
				var e ErrInvalidName
				if !errors.As(err, &e) || e.Kind != "property" || e.Type != "t" || e.Name != "$createdAt" {
					t.Errorf("%#v", err)
				}
			}},
		{"property name too long", one(typ(`"`+strings.Repeat("a", 65)+`":{"type":"integer","position":0}`, "")), CodeInvalidName, nil},
		{"empty property name", one(typ(`"":{"type":"integer","position":0}`, "")), CodeInvalidName, nil},
		{"index name with a space", one(typ(propA, `"indices":[{"name":"my index","properties":[{"a":"asc"}]}]`)), CodeInvalidName, nil},
		{"position repeated", one(typ(`"a":{"type":"integer","position":0},"b":{"type":"integer","position":0}`, "")), CodeInvalidPropertyPosition,
			func(t *testing.T, err error) {
				var e ErrInvalidPropertyPosition
				if !errors.As(err, &e) || e.Type != "t" || e.Property != "b" || e.Position != 0 {
					t.Errorf("%#v", err)
				}
			}},
		{"position gap", one(typ(`"a":{"type":"integer","position":0},"b":{"type":"integer","position":2}`, "")), CodeInvalidPropertyPosition,
			func(t *testing.T, err error) {
				var e ErrInvalidPropertyPosition
				if !errors.As(err, &e) || e.Property != "b" || e.Position != 2 {
					t.Errorf("%#v", err)
				}
			}},
		{"position not from 0", one(typ(`"a":{"type":"integer","position":1}`, "")), CodeInvalidPropertyPosition, nil},
	}
}

// TestParseRefusals: every refusal gives its code, through CodeOf, and the typed error
// carries its fields.
func TestParseRefusals(t *testing.T) {
	for _, r := range refusals() {
		t.Run(r.name, func(t *testing.T) {
			types, err := ParseDocumentTypes([]byte(r.json), V13)
			if err == nil {
				t.Fatalf("accepted: %+v", types)
			}
			if code, ok := CodeOf(err); !ok || code != r.code {
				t.Fatalf("code %v (%v), want %v: %v", code, ok, r.code, err)
			}
			if r.check != nil {
				r.check(t, err)
			}
		})
	}
}

// TestParseDocumentTypeShapes: the shapes the meta-schema guarantees, handed to
// parseDocumentType without it, are ErrJSONSchema refusals at their pointer, not panics.
func TestParseDocumentTypeShapes(t *testing.T) {
	lim, err := LimitsFor(V13)
	if err != nil {
		t.Fatal(err)
	}
	prop := map[string]any{"type": "integer", "position": json.Number("0")}
	for _, c := range []struct {
		name string
		m    map[string]any
		path string
	}{
		{"properties not an object", map[string]any{"properties": []any{}}, "/documentSchemas/n/properties"},
		{"a property not an object", map[string]any{"properties": map[string]any{"a": "x"}}, "/documentSchemas/n/properties/a"},
		{"a required name not a string", map[string]any{"properties": map[string]any{"a": prop}, "required": []any{json.Number("1")}}, "/documentSchemas/n/required/0"},
		{"an index not an object", map[string]any{"properties": map[string]any{"a": prop}, "indices": []any{"i"}}, "/documentSchemas/n/indices/0"},
	} {
		_, err := parseDocumentType("n", c.m, lim, false, false)
		var e ErrJSONSchema
		if !errors.As(err, &e) || e.Path != c.path || e.Keyword != "type" {
			t.Errorf("%s: %v, want an ErrJSONSchema at %s", c.name, err, c.path)
		}
	}
}

// TestParseAccepts: edges of the rules that must pass.
func TestParseAccepts(t *testing.T) {
	for name, js := range map[string]string{
		"bounds at the limits": one(typ(`"s":{"type":"string","minLength":16384,"maxLength":16384,"position":0},"b":{"type":"array","byteArray":true,"minItems":8192,"maxItems":8192,"position":1}`, "")),
		"int64 extremes":       one(typ(`"a":{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807,"position":0}`, "")),
		"indexed at the limits": one(typ(`"s":{"type":"string","maxLength":63,"position":0},"b":{"type":"array","byteArray":true,"maxItems":255,"position":1}`,
			`"indices":[{"name":"i","properties":[{"s":"asc"},{"b":"desc"}]}]`)),
		"system fields":                     one(typ(propA, `"required":["$createdAt","$updatedAt","$transferredAt","a"],"indices":[{"name":"i","properties":[{"$ownerId":"asc"},{"$createdAt":"desc"},{"$updatedAt":"asc"},{"$transferredAt":"asc"},{"$id":"asc"}]}]`)),
		"same properties, other directions": one(typ(propAB, `"indices":[{"name":"i","properties":[{"a":"asc"}]},{"name":"j","properties":[{"a":"desc"}]}]`)),
		"contested":                         one(typ(`"s":{"type":"string","maxLength":63,"position":0}`, `"indices":[{"name":"i","properties":[{"s":"asc"}],"unique":true,"contested":{"resolution":0,"fieldMatches":[{"field":"s","regexPattern":"^[a-z]{3,19}$"}]}}]`)),
		"all flags":                         one(typ(propA, `"documentsMutable":false,"canBeDeleted":false,"transferable":1,"tradeMode":1,"documentsKeepHistory":true,"creationRestrictionMode":2,"indexOnly":true`)),
		"ten of each": one(typ(repeatJSON(10, func(i int) string { return fmt.Sprintf(`"p%d":{"type":"boolean","position":%d}`, i, i) }),
			`"indices":[`+repeatJSON(10, func(i int) string {
				return fmt.Sprintf(`{"name":"i%d","properties":[{"p%d":"asc"},{"$id":"asc"}]}`, i, i)
			})+`]`)),
	} {
		t.Run(name, func(t *testing.T) {
			types := mustParse(t, js)
			again, err := ParseDocumentTypes(CanonicalJSON(types), V13)
			if err != nil || !reflect.DeepEqual(types, again) {
				t.Errorf("canonical round trip: %v", err)
			}
		})
	}
}

// TestCanonicalJSON: the canonical form of the note, byte for byte, and key order
// and whitespace of the input do not change it.
func TestCanonicalJSON(t *testing.T) {
	types := mustParse(t, string(exampleFiles(t)["note.json"]))
	want := `{"documentSchemas":{"note":{"additionalProperties":false,"properties":{"text":{"maxLength":280,"position":0,"type":"string"}},"required":["$createdAt","text"],"type":"object"}}}`
	if got := string(CanonicalJSON(types)); got != want {
		t.Errorf("canonical note:\n got %s\nwant %s", got, want)
	}
	reordered := `{ "documentSchemas" : { "note" : { "required" : ["text", "$createdAt"], "additionalProperties" : false,
		"documentsMutable": true, "type" : "object", "properties" : { "text" : { "position" : 0, "maxLength" : 280, "type" : "string" } } } } }`
	if got := string(CanonicalJSON(mustParse(t, reordered))); got != want {
		t.Errorf("reordered note gives %s", got)
	}
	// A pattern with '<' stays as written (no HTML escaping).
	pat := mustParse(t, one(typ(`"s":{"type":"string","pattern":"^<a&b>$","position":0}`, "")))
	if !bytes.Contains(CanonicalJSON(pat), []byte(`"pattern":"^<a&b>$"`)) {
		t.Errorf("pattern escaped: %s", CanonicalJSON(pat))
	}
}

// TestContractEncoding: a contract round-trips through Encode and DecodeContract, and
// decoding validates the definition again.
func TestContractEncoding(t *testing.T) {
	owner := NewIdentityID(Address{1}, 1)
	for name, raw := range exampleFiles(t) {
		d, err := ParseDefinition(raw, Latest)
		if err != nil {
			t.Fatal(err)
		}
		c := Contract{ID: NewContractID(owner, 7), Owner: owner, Version: 3, Moderation: d.Moderation, DocumentTypes: d.DocumentTypes}
		enc := c.Encode()
		got, err := DecodeContract(enc, Latest)
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Errorf("%s: decode: %v", name, err)
		}
		if !bytes.Equal(got.Encode(), enc) {
			t.Errorf("%s: re-encoding differs", name)
		}
	}

	c := Contract{ID: ContractID{9}, Owner: owner, Version: 1, DocumentTypes: mustParse(t, one(typ(propA, "")))}
	enc := c.Encode()
	if enc[0] != 1 || !bytes.Equal(enc[1:33], c.ID[:]) || !bytes.Equal(enc[33:65], owner[:]) ||
		!bytes.Equal(enc[65:69], []byte{0, 0, 0, 1}) || string(enc[69:]) != string(CanonicalJSON(c.DocumentTypes)) {
		t.Errorf("layout: %x", enc)
	}
	for name, tc := range map[string]struct {
		b    []byte
		code Code
	}{
		"short":          {enc[:68], CodeContractDecode},
		"format":         {append([]byte{2}, enc[1:]...), CodeContractDecode},
		"no definition":  {enc[:69], CodeJSONSchema},
		"bad definition": {append(enc[:69:69], one(typ(`"a":{"type":"integer","position":3}`, ""))...), CodeInvalidPropertyPosition},
	} {
		if _, err := DecodeContract(tc.b, V13); err == nil {
			t.Errorf("%s: decoded", name)
		} else if code, _ := CodeOf(err); code != tc.code {
			t.Errorf("%s: code %v, want %v", name, code, tc.code)
		}
	}
}

// TestContractID: the id depends on owner and nonce.
func TestContractID(t *testing.T) {
	a, b := NewIdentityID(Address{1}, 1), NewIdentityID(Address{2}, 1)
	if NewContractID(a, 1) == NewContractID(a, 2) || NewContractID(a, 1) == NewContractID(b, 1) || NewContractID(a, 1) != NewContractID(a, 1) {
		t.Error("contract ids collide or are not deterministic")
	}
}

// TestVersionSelection: version 13 has its meta-schema; a version before the first
// file has none, and an unknown version is refused without a code (a caller's bug).
func TestVersionSelection(t *testing.T) {
	if _, ok := metaSchemaFor(V13); !ok {
		t.Error("no meta-schema for version 13")
	}
	if _, ok := metaSchemaFor(12); ok {
		t.Error("a meta-schema for version 12")
	}
	if _, err := ParseDocumentTypes([]byte(one(typ(propA, ""))), 12); err == nil {
		t.Error("parsed under unknown version 12")
	} else if _, ok := CodeOf(err); ok {
		t.Error("an unknown version is a caller's bug, not a refusal with a code")
	}
	for _, v := range Supported() {
		if _, ok := metaSchemaFor(v); !ok {
			t.Errorf("supported version %d has no contract meta-schema", v)
		}
		l, _ := LimitsFor(v)
		if l.MaxContractBytes > l.MaxTxBytes || l.MaxIndexedStringLength > l.MaxStringLength ||
			l.MaxIndexedByteArrayLength > l.MaxByteArrayLength || l.MaxByteArrayLength < IdentityIDLen {
			t.Errorf("version %d: contract limits break their invariants: %+v", v, l)
		}
	}
}

func contractOf(t *testing.T, js string) Contract {
	return Contract{DocumentTypes: mustParse(t, js)}
}

// TestCheckContractUpdate: the update rules, each refusal naming the type and change.
func TestCheckContractUpdate(t *testing.T) {
	base := `"a":{"type":"integer","position":0},"b":{"type":"string","maxLength":10,"position":1}`
	baseExtra := `"required":["a"],"indices":[{"name":"i","properties":[{"a":"asc"}],"unique":true}]`
	prev := contractOf(t, one(typ(base, baseExtra)))
	two := func(t1, t2 string) string { return `{"documentSchemas":{"t":` + t1 + `,"u":` + t2 + `}}` }

	allowed := map[string]string{
		"unchanged":            one(typ(base, baseExtra)),
		"optional property":    one(typ(base+`,"c":{"type":"boolean","position":2}`, baseExtra)),
		"new type":             two(typ(base, baseExtra), typ(propA, `"required":["a"]`)),
		"same, other spelling": one(typ(`"b":{"maxLength":10,"type":"string","position":1},"a":{"position":0,"type":"integer"}`, `"indices":[{"unique":true,"name":"i","properties":[{"a":"asc"}]}],"required":["a"],"canBeDeleted":true`)),
	}
	for name, js := range allowed {
		if err := CheckContractUpdate(prev, contractOf(t, js)); err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
	}

	refused := map[string]struct {
		js     string
		typ    string
		change string
	}{
		"type removed":          {one(strings.Replace(typ(base, baseExtra), "", "", 1)), "", ""},
		"required property":     {one(typ(base+`,"c":{"type":"boolean","position":2}`, `"required":["a","c"],"indices":[{"name":"i","properties":[{"a":"asc"}],"unique":true}]`)), "t", `added property "c" is required`},
		"property removed":      {one(typ(`"a":{"type":"integer","position":0}`, baseExtra)), "t", `property "b" removed`},
		"property redefined":    {one(typ(`"a":{"type":"integer","position":0},"b":{"type":"string","maxLength":11,"position":1}`, baseExtra)), "t", `property "b" redefined`},
		"property moved":        {one(typ(`"a":{"type":"integer","position":1},"b":{"type":"string","maxLength":10,"position":0}`, baseExtra)), "t", `property "a" moved from position 0 to 1`},
		"property renamed":      {one(typ(`"a":{"type":"integer","position":0},"bb":{"type":"string","maxLength":10,"position":1}`, baseExtra)), "t", `property "b" removed`},
		"required dropped":      {one(typ(base, `"indices":[{"name":"i","properties":[{"a":"asc"}],"unique":true}]`)), "t", "required changed"},
		"index dropped":         {one(typ(base, `"required":["a"]`)), "t", "indices changed"},
		"index made not unique": {one(typ(base, `"required":["a"],"indices":[{"name":"i","properties":[{"a":"asc"}]}]`)), "t", "indices changed"},
		"index added":           {one(typ(base, baseExtra[:len(baseExtra)-1]+`,{"name":"j","properties":[{"b":"asc"}]}]`)), "t", "indices changed"},
		"flag changed":          {one(typ(base, baseExtra+`,"canBeDeleted":false`)), "t", "canBeDeleted changed from true to false"},
		"enum flag changed":     {one(typ(base, baseExtra+`,"tradeMode":1`)), "t", "tradeMode changed from 0 to 1"},
	}
	// "type removed": the next contract has only another type.
	refused["type removed"] = struct{ js, typ, change string }{`{"documentSchemas":{"u":` + typ(propA, "") + `}}`, "t", "document type removed"}
	for name, r := range refused {
		err := CheckContractUpdate(prev, contractOf(t, r.js))
		var e ErrDocumentTypeUpdate
		if !errors.As(err, &e) {
			t.Errorf("%s: got %v, want DocumentTypeUpdateError", name, err)
			continue
		}
		if code, _ := CodeOf(err); code != CodeDocumentTypeUpdate || !code.Paid() {
			t.Errorf("%s: code %v", name, code)
		}
		if e.Type != r.typ || e.Change != r.change {
			t.Errorf("%s: %+v, want type %q change %q", name, e, r.typ, r.change)
		}
	}
}

// FuzzParseContract: no input panics the parser, and whatever parses re-encodes and
// re-parses to the same types (and the same canonical bytes). It parses under the latest
// version, whose meta-schema has every keyword.
func FuzzParseContract(f *testing.F) {
	for _, raw := range exampleFiles(f) {
		f.Add(raw)
	}
	for _, r := range refusals() {
		f.Add([]byte(r.json))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := ParseDefinition(raw, Latest)
		if err != nil {
			if _, ok := CodeOf(err); !ok {
				t.Fatalf("refusal without a code: %v", err)
			}
			return
		}
		canon := CanonicalDefinitionJSON(d)
		again, err := ParseDefinition(canon, Latest)
		if err != nil {
			t.Fatalf("canonical form refused: %v\n%s", err, canon)
		}
		if !reflect.DeepEqual(d, again) {
			t.Fatalf("canonical form parses to another definition:\n%+v\n%+v", d, again)
		}
		if !bytes.Equal(CanonicalDefinitionJSON(again), canon) {
			t.Fatalf("canonical form not a fixed point")
		}
	})
}

// TestCanonicalSizeLimit: the limit applies to the canonical form too, so what is
// stored always re-parses; the refusal case's input itself fits the limit.
func TestCanonicalSizeLimit(t *testing.T) {
	for _, r := range refusals() {
		if r.name != "canonical form too large" {
			continue
		}
		if len(r.json) > 16*1024 {
			t.Fatalf("input of %d bytes does not fit the limit: the case tests the raw check", len(r.json))
		}
		return
	}
	t.Fatal("no canonical size case")
}

// TestParseConcurrent: CheckTx and block execution may parse at once; the compiled
// meta-schema is shared read-only (run with -race).
func TestParseConcurrent(t *testing.T) {
	files := exampleFiles(t)
	done := make(chan []byte)
	for range 4 {
		go func() {
			var last []byte
			for range 20 {
				types, err := ParseDocumentTypes(files["market.json"], V13)
				if err != nil {
					t.Error(err)
					break
				}
				last = CanonicalJSON(types)
			}
			done <- last
		}()
	}
	first := <-done
	for range 3 {
		if got := <-done; !bytes.Equal(got, first) {
			t.Error("concurrent parses differ")
		}
	}
}

// TestSchemaVerdictDeterministic: with failures in many places, the one reported (path
// and keyword) is the same on every parse, whatever order the library visits maps in.
func TestSchemaVerdictDeterministic(t *testing.T) {
	bad := `{"documentSchemas":{` + repeatJSON(20, func(i int) string {
		return fmt.Sprintf(`"t%d":{"type":"object","properties":{"x%d":{"type":"number","position":0},"y":{"type":"array","position":1}},"additionalProperties":false,"extra%d":true}`, i, i, i)
	}) + `}}`
	var first ErrJSONSchema
	for i := range 50 {
		_, err := ParseDocumentTypes([]byte(bad), V13)
		var e ErrJSONSchema
		if !errors.As(err, &e) {
			t.Fatalf("got %v", err)
		}
		if i == 0 {
			first = e
			if e.Path != "/documentSchemas/t0" || e.Keyword != "additionalProperties" {
				t.Errorf("first failure reported: %+v", e)
			}
		} else if e.Path != first.Path || e.Keyword != first.Keyword {
			t.Fatalf("parse %d reports %s %s, the first %s %s", i, e.Path, e.Keyword, first.Path, first.Keyword)
		}
	}
}
