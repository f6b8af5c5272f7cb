package protocol

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The published examples (Document Time To Live's note, the ttl keyword reference's
// story), as written there.
const (
	seedNote = `{"documentSchemas":{"note": {
  "type": "object",
  "ttl": 1209600,
  "properties": { "text": { "type": "string", "maxLength": 280, "position": 0 } },
  "required": ["$createdAt", "text"],
  "additionalProperties": false
}}}`
	seedStory = `{"documentSchemas":{"story": {
  "type": "object",
  "ttl": 86400,
  "canBeDeleted": true,
  "properties": {
    "caption": { "type": "string", "maxLength": 200, "position": 0 },
    "mediaUrl": { "type": "string", "maxLength": 500, "position": 1 }
  },
  "required": ["$createdAt", "mediaUrl"],
  "additionalProperties": false
}}}`
)

// ttlType is a type with ttl seconds and $createdAt required, plus extra keywords.
func ttlType(ttl uint64, extra string) string {
	kw := `"ttl":` + strconv.FormatUint(ttl, 10) + `,"required":["$createdAt"]`
	if extra != "" {
		kw += "," + extra
	}
	return one(typ(`"s":{"type":"string","maxLength":63,"position":0}`, kw))
}

// wantCode fails unless err carries code.
func wantCode(t *testing.T, what string, err error, code Code) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted, want code %d", what, code)
		return
	}
	if got, _ := CodeOf(err); got != code {
		t.Errorf("%s: %v (code %d), want code %d", what, err, got, code)
	}
}

// storedContract is the encoding of a contract whose definition is raw, as it would be
// stored, without parsing raw: what DecodeContract reads back.
func storedContract(raw string) []byte {
	c := Contract{ID: ContractID{7}, Owner: IdentityID{8}, Version: 1}
	return append(c.Encode()[:contractHeaderLen], raw...)
}

// TestTTLSeedExamples: Document Time To Live's note and the ttl keyword reference's story parse at version 14 with
// their ttl ("Documents of note above are deleted two weeks (1,209,600 seconds) after
// their creation."; "Each story is deleted one day (86,400 seconds) after its
// creation."), and docs/examples/story-ttl.json is that story.
func TestTTLSeedExamples(t *testing.T) {
	for _, c := range []struct {
		name, raw string
		ttl       uint32
	}{{"note", seedNote, 1_209_600}, {"story", seedStory, 86_400}} {
		types, err := ParseSubmittedDocumentTypes([]byte(c.raw), V14)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(types) != 1 || types[0].Name != c.name || types[0].TTLSeconds != c.ttl {
			t.Errorf("%s parsed to %+v", c.name, types)
		}
		at, ok := types[0].ExpiresAtMs(Document{CreatedAt: 1_000})
		if !ok || at != 1_000+uint64(c.ttl)*1000 {
			t.Errorf("%s: expires at %d, %v", c.name, at, ok)
		}
	}
	file, err := os.ReadFile("../docs/examples/story-ttl.json")
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := ParseSubmittedDocumentTypes(file, V14)
	if err != nil {
		t.Fatal(err)
	}
	fromSeed, _ := ParseDocumentTypes([]byte(seedStory), V14)
	if !reflect.DeepEqual(fromFile, fromSeed) {
		t.Errorf("story-ttl.json is not the ttl keyword reference's story:\n%+v\n%+v", fromFile, fromSeed)
	}
}

// TestTTLVersion13: Document Time To Live: "Available from protocol version 14." A
// version-13 chain refuses it like any unknown keyword: version 13's meta-schema
// refuses ttl exactly as it refuses a keyword nobody defines.
func TestTTLVersion13(t *testing.T) {
	for _, raw := range []string{seedNote, seedStory} {
		_, err := ParseDocumentTypes([]byte(raw), V13)
		wantCode(t, "ttl at version 13", err, CodeJSONSchema)
		var ttl, unknown ErrJSONSchema
		errors.As(err, &ttl)
		_, err = ParseDocumentTypes([]byte(strings.Replace(raw, `"ttl"`, `"lifetime"`, 1)), V13)
		errors.As(err, &unknown)
		if ttl.Keyword != unknown.Keyword || ttl.Path != unknown.Path {
			t.Errorf("ttl refused as %+v, an unknown keyword as %+v", ttl, unknown)
		}
		_, err = DecodeContract(storedContract(raw), V13)
		wantCode(t, "stored ttl read back at version 13", err, CodeJSONSchema)
	}
	if _, err := ParseSubmittedDocumentTypes([]byte(ttlType(3600, "")), V13); err == nil {
		t.Error("a version-13 registration accepted a ttl")
	}
}

// TestTTLMetaSchemaBounds: the ttl keyword reference: "The meta-schema itself admits 1 to 4294967295,
// so a ttl of 0 is a JsonSchemaError (10101) and one outside the narrower bounds is
// 10231." The meta-schema's bounds hold on every parse.
func TestTTLMetaSchemaBounds(t *testing.T) {
	for _, raw := range []string{
		ttlType(0, ""),
		ttlType(4_294_967_296, ""),
		strings.Replace(ttlType(1, ""), `"ttl":1`, `"ttl":-1`, 1),
		strings.Replace(ttlType(1, ""), `"ttl":1`, `"ttl":"7d"`, 1),
		strings.Replace(ttlType(1, ""), `"ttl":1`, `"ttl":3600.5`, 1),
	} {
		_, err := ParseDocumentTypes([]byte(raw), V14)
		wantCode(t, raw, err, CodeJSONSchema)
		_, err = ParseSubmittedDocumentTypes([]byte(raw), V14)
		wantCode(t, raw, err, CodeJSONSchema)
		_, err = DecodeContract(storedContract(raw), V14)
		wantCode(t, raw, err, CodeJSONSchema)
	}
	// 1 and 4294967295 pass the meta-schema: read back, they parse.
	for _, ttl := range []uint64{1, 4_294_967_295} {
		types, err := ParseDocumentTypes([]byte(ttlType(ttl, "")), V14)
		if err != nil || types[0].TTLSeconds != uint32(ttl) {
			t.Errorf("ttl %d: %v", ttl, err)
		}
	}
}

// TestTTLBoundsOnRegistration: Document Time To Live: "When a contract is registered or updated, a
// ttl below min_document_ttl_seconds (one hour at protocol version 14) or above
// max_document_ttl_seconds (one year) is refused too." The ttl keyword reference: "They hold on every
// parse of the contract, except the bounds, which are checked when a contract is
// registered or updated." A stored contract read back is not held to them.
func TestTTLBoundsOnRegistration(t *testing.T) {
	l, _ := LimitsFor(V14)
	if l.MinDocumentTTLSeconds != 3600 || l.MaxDocumentTTLSeconds != 31_536_000 {
		t.Fatalf("version 14 bounds %d..%d", l.MinDocumentTTLSeconds, l.MaxDocumentTTLSeconds)
	}
	ctx, _ := ContextFor(V14, 0)
	for _, c := range []struct {
		ttl uint64
		ok  bool
	}{{1, false}, {3599, false}, {3600, true}, {31_536_000, true}, {31_536_001, false}, {4_294_967_295, false}} {
		raw := ttlType(c.ttl, "")
		create := &DataContractCreate{Definition: []byte(raw)}
		update := &DataContractUpdate{Version: 2, Definition: []byte(raw)}
		for what, err := range map[string]error{
			"submitted": func() error { _, err := ParseSubmittedDocumentTypes([]byte(raw), V14); return err }(),
			"create":    create.validate(ctx),
			"update":    update.validate(ctx),
		} {
			if c.ok && err != nil {
				t.Errorf("ttl %d, %s: %v", c.ttl, what, err)
			}
			if !c.ok {
				wantCode(t, "ttl "+strconv.FormatUint(c.ttl, 10)+", "+what, err, CodeInvalidContractStructure)
				var e ErrInvalidContractStructure
				if errors.As(err, &e) && (e.Type != "t" || e.Path != "/documentSchemas/t/ttl") {
					t.Errorf("ttl %d, %s: %+v", c.ttl, what, e)
				}
			}
		}
		// Read back, every ttl the meta-schema admits parses.
		got, err := DecodeContract(storedContract(raw), V14)
		if err != nil || got.DocumentTypes[0].TTLSeconds != uint32(c.ttl) {
			t.Errorf("ttl %d read back: %v", c.ttl, err)
		}
		if types, err := ParseDocumentTypes([]byte(raw), V14); err != nil || types[0].TTLSeconds != uint32(c.ttl) {
			t.Errorf("ttl %d, ParseDocumentTypes: %v", c.ttl, err)
		}
	}
	// The transitions' accessors parse as submitted too, whatever validate saw.
	create := &DataContractCreate{Definition: []byte(ttlType(60, ""))}
	ctx14, err := ContextFor(V14, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = create.Contract(ctx14)
	wantCode(t, "DataContractCreate.Contract", err, CodeInvalidContractStructure)
	update := &DataContractUpdate{Version: 2, Definition: []byte(ttlType(60, ""))}
	_, err = update.Updated(ctx14)
	wantCode(t, "DataContractUpdate.Updated", err, CodeInvalidContractStructure)
}

// TestTTLRefusedCombinations: Document Time To Live: "The keyword is refused, on every parse of the
// contract (registration, update and a stored contract read back), when:"; the ttl keyword reference:
// "$createdAt must be in required." and "Refused together with documentsKeepHistory:
// true (Drive never deletes a document whose type keeps history), with indexOnly: true
// (there is no stored row to delete by id), and on a type with a contested index (a
// contested document waits in its vote poll, and could expire before it is stored)."
func TestTTLRefusedCombinations(t *testing.T) {
	prop := `"s":{"type":"string","maxLength":63,"position":0}`
	refused := map[string]string{
		"no required":             one(typ(prop, `"ttl":3600,"documentsMutable":true`)),
		"$createdAt not required": one(typ(prop, `"ttl":3600,"required":["s","$updatedAt"]`)),
		"documentsKeepHistory":    ttlType(3600, `"documentsKeepHistory":true`),
		"indexOnly":               ttlType(3600, `"indexOnly":true`),
		"contested index": ttlType(3600, `"indices":[{"name":"plain","properties":[{"$createdAt":"asc"}]},`+
			`{"name":"x","properties":[{"s":"asc"}],"unique":true,"contested":{"resolution":0}}]`),
	}
	ctx, _ := ContextFor(V14, 0)
	for name, raw := range refused {
		_, err := ParseDocumentTypes([]byte(raw), V14)
		wantCode(t, name+", any parse", err, CodeInvalidContractStructure)
		var e ErrInvalidContractStructure
		if errors.As(err, &e) && e.Path != "/documentSchemas/t/ttl" {
			t.Errorf("%s: refused at %q", name, e.Path)
		}
		wantCode(t, name+", registration", (&DataContractCreate{Definition: []byte(raw)}).validate(ctx), CodeInvalidContractStructure)
		wantCode(t, name+", update", (&DataContractUpdate{Version: 2, Definition: []byte(raw)}).validate(ctx), CodeInvalidContractStructure)
		_, err = DecodeContract(storedContract(raw), V14)
		wantCode(t, name+", read back", err, CodeInvalidContractStructure)
		// Without the ttl, the same type is fine: the refusal is the ttl's.
		if _, err := ParseDocumentTypes([]byte(strings.Replace(raw, `"ttl":3600,`, "", 1)), V14); err != nil {
			t.Errorf("%s without ttl: %v", name, err)
		}
	}
	// The ttl keyword reference: "Everything else combines with a ttl: mutable types, transferable,
	// tradeMode, ... creationRestrictionMode, count, sum and ranked indexes".
	allowed := ttlType(3600, `"documentsKeepHistory":false,"indexOnly":false,"canBeDeleted":false,"documentsMutable":true,`+
		`"transferable":1,"tradeMode":1,"creationRestrictionMode":1,"indices":[{"name":"i","properties":[{"s":"asc"}],"unique":true,"countable":true}]`)
	types, err := ParseSubmittedDocumentTypes([]byte(allowed), V14)
	if err != nil {
		t.Fatal(err)
	}
	// The ttl keyword reference: "For references, a type with a ttl is deletable."
	if dt := types[0]; dt.CanBeDeleted || !dt.DocumentsCanDisappear() {
		t.Errorf("a ttl type with canBeDeleted false: DocumentsCanDisappear %v", dt.DocumentsCanDisappear())
	}
}

// TestTTLCanonicalJSON: the ttl is written in the canonical form (between
// transferable and type, keys in byte order), so it is stored and read back; the
// stored contract round-trips through DecodeContract.
func TestTTLCanonicalJSON(t *testing.T) {
	types, err := ParseSubmittedDocumentTypes([]byte(seedStory), V14)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"documentSchemas":{"story":{"additionalProperties":false,"properties":{"caption":{"maxLength":200,"position":0,"type":"string"},"mediaUrl":{"maxLength":500,"position":1,"type":"string"}},"required":["$createdAt","mediaUrl"],"ttl":86400,"type":"object"}}}`
	if got := string(CanonicalJSON(types)); got != want {
		t.Errorf("canonical story:\n got %s\nwant %s", got, want)
	}
	withEnums, _ := ParseDocumentTypes([]byte(ttlType(3600, `"transferable":1`)), V14)
	if !bytes.Contains(CanonicalJSON(withEnums), []byte(`"transferable":1,"ttl":3600,"type":"object"`)) {
		t.Errorf("key order: %s", CanonicalJSON(withEnums))
	}
	c := Contract{ID: ContractID{1}, Owner: IdentityID{2}, Version: 1, DocumentTypes: types}
	got, err := DecodeContract(c.Encode(), V14)
	if err != nil || !reflect.DeepEqual(got, c) || got.DocumentTypes[0].TTLSeconds != 86_400 {
		t.Fatalf("decode: %+v, %v", got, err)
	}
	if !bytes.Equal(got.Encode(), c.Encode()) {
		t.Error("re-encoding differs")
	}
	// A type without a ttl writes none.
	plain, _ := ParseDocumentTypes(exampleFiles(t)["story.json"], V14)
	if bytes.Contains(CanonicalJSON(plain), []byte(`"ttl"`)) {
		t.Errorf("a type without ttl: %s", CanonicalJSON(plain))
	}
}

// typesContract is a contract of the document types raw submits under version v.
func typesContract(t *testing.T, raw string, v Version) Contract {
	t.Helper()
	types, err := ParseSubmittedDocumentTypes([]byte(raw), v)
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return Contract{DocumentTypes: types}
}

// TestTTLUpdate: Document Time To Live: "A contract update may not add, remove or change the ttl of
// an existing document type: every stored document carries the expiry it was written
// and paid with. A document type added by an update declares it freely." The ttl keyword reference: "On
// update: Fixed (DocumentTypeUpdateError, 40212)".
func TestTTLUpdate(t *testing.T) {
	parse := func(raw string) Contract { return typesContract(t, raw, V14) }
	withTTL, without := parse(ttlType(3600, "")), parse(one(typ(`"s":{"type":"string","maxLength":63,"position":0}`, `"required":["$createdAt"]`)))
	for name, c := range map[string]struct {
		prev, next Contract
		change     string
	}{
		"add":    {without, withTTL, "ttl 3600 added"},
		"remove": {withTTL, without, "ttl 3600 removed"},
		"change": {withTTL, parse(ttlType(7200, "")), "ttl changed from 3600 to 7200"},
	} {
		err := CheckContractUpdate(c.prev, c.next)
		wantCode(t, name, err, CodeDocumentTypeUpdate)
		var e ErrDocumentTypeUpdate
		if errors.As(err, &e) && (e.Type != "t" || e.Change != c.change) {
			t.Errorf("%s: %+v, want change %q", name, e, c.change)
		}
	}
	if err := CheckContractUpdate(withTTL, parse(ttlType(3600, ""))); err != nil {
		t.Errorf("unchanged ttl: %v", err)
	}
	// A type added by the update, with a ttl, next to the unchanged ones.
	added := parse(`{"documentSchemas":{"t":` + typ(`"s":{"type":"string","maxLength":63,"position":0}`, `"required":["$createdAt"]`) +
		`,"u":` + typ(`"s":{"type":"string","position":0}`, `"ttl":86400,"required":["$createdAt"]`) + `}}`)
	if err := CheckContractUpdate(without, added); err != nil {
		t.Errorf("a new type with a ttl: %v", err)
	}
	if u, _ := added.DocumentType("u"); u.TTLSeconds != 86_400 {
		t.Errorf("added type %+v", u)
	}
}
