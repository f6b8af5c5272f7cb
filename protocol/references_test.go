package protocol

import (
	"bytes"
	"fmt"
	"testing"
)

const identifierJSON = `"type":"array","byteArray":true,"contentMediaType":"application/x.dash.dpp.identifier","minItems":32,"maxItems":32`

// refContract is a contract JSON whose type "src" has one referring property (propJSON)
// beside targets of every kind of deletability.
func refContract(propJSON string) string {
	target := func(name, extra string) string {
		return fmt.Sprintf(`"%s":{"type":"object","properties":{"name":{"type":"string","maxLength":20,"position":0},"n":{"type":"integer","position":1}},"additionalProperties":false,"indices":[{"name":"byName","properties":[{"name":"asc"}],"unique":true},{"name":"byN","properties":[{"n":"asc"}]}]%s}`, name, extra)
	}
	return `{"config":{"moderation":{"moderators":["` + modID.String() + `"]}},"documentSchemas":{` +
		target("permanent", `,"canBeDeleted":false`) + `,` +
		target("fixed", `,"canBeDeleted":false,"documentsMutable":false`) + `,` +
		target("hidden", `,"canBeDeleted":false,"indexOnly":true`) + `,` +
		target("deletable", "") + `,` +
		target("expiring", `,"canBeDeleted":false,"ttl":3600,"required":["$createdAt"]`) + `,` +
		target("moderated", `,"canBeDeleted":false,"moderatorAbilities":{"delete":true}`) + `,` +
		`"src":{"type":"object","properties":{` + propJSON + `},"additionalProperties":false}}}`
}

func refByID(kind, target string) string {
	return `"r":{` + identifierJSON + `,"position":0,"refersTo":{"type":"` + target + `","kind":"` + kind + `"}}`
}

func refByLookup(kind, target, index string) string {
	return `"r":{"type":"string","maxLength":20,"position":0,"refersTo":{"type":"` + target + `","kind":"` + kind + `","lookup":"` + index + `"}}`
}

func refList(target string) string {
	return `"r":{"type":"array","maxItems":4,"position":0,"items":{` + identifierJSON + `,"refersTo":{"type":"` + target + `","kind":"listElement"}}}`
}

// TestReferenceRules: the ttl keyword reference: "For references, a type with a ttl is deletable. A
// permanentDocument reference and a listElement reference may not point at it, a
// lookup included (ReferencedDocumentTypeDeletableError, 40122); a deletableDocument
// reference may." The same holds for canBeDeleted and moderatorAbilities.delete
// (Document Time To Live: "like one with canBeDeleted or moderatorAbilities.delete"). What the referring
// type alone decides is 10231 at the parse; what needs the target is
// CheckReferences'.
func TestReferenceRules(t *testing.T) {
	none := func(ContractID) (Contract, bool, error) { return Contract{}, false, nil }
	for _, c := range []struct {
		name, prop string
		parse      Code // 0: parses
		check      Code // 0: accepted
	}{
		{"permanent by id", refByID("permanentDocument", "permanent"), 0, 0},
		{"permanent by lookup", refByLookup("permanentDocument", "fixed", "byName"), 0, 0},
		{"permanent lookup of a value a replace changes", refByLookup("permanentDocument", "permanent", "byName"), 0, CodeInvalidReference},
		{"deletable lookup of a value a replace changes", refByLookup("deletableDocument", "permanent", "byName"), 0, 0},
		{"an indexOnly target", refByID("deletableDocument", "hidden"), 0, CodeInvalidReference},
		{"list of permanent", refList("permanent"), 0, 0},
		{"deletable by id", refByID("deletableDocument", "deletable"), 0, 0},
		{"deletable to a ttl type", refByID("deletableDocument", "expiring"), 0, 0},
		{"deletable lookup to a ttl type", refByLookup("deletableDocument", "expiring", "byName"), 0, 0},
		{"permanent to a ttl type", refByID("permanentDocument", "expiring"), 0, CodeReferencedDocumentTypeDeletable},
		{"permanent lookup to a ttl type", refByLookup("permanentDocument", "expiring", "byName"), 0, CodeReferencedDocumentTypeDeletable},
		{"list to a ttl type", refList("expiring"), 0, CodeReferencedDocumentTypeDeletable},
		{"permanent to canBeDeleted", refByID("permanentDocument", "deletable"), 0, CodeReferencedDocumentTypeDeletable},
		{"list to canBeDeleted", refList("deletable"), 0, CodeReferencedDocumentTypeDeletable},
		{"permanent to moderated", refByID("permanentDocument", "moderated"), 0, CodeReferencedDocumentTypeDeletable},
		{"no such type", refByID("deletableDocument", "nothing"), 0, CodeInvalidReference},
		{"lookup index not unique", refByLookup("permanentDocument", "permanent", "byN"), 0, CodeInvalidReference},
		{"no such lookup index", refByLookup("permanentDocument", "permanent", "byX"), 0, CodeInvalidReference},
		{"lookup of another type", `"r":{"type":"integer","position":0,"refersTo":{"type":"permanent","kind":"permanentDocument","lookup":"byName"}}`, 0, CodeInvalidReference},
		{"another contract", `"r":{` + identifierJSON + `,"position":0,"refersTo":{"contract":"` + (ContractID{5}).String() + `","type":"x","kind":"deletableDocument"}}`, 0, CodeInvalidReference},
		{"listElement off a list", refByID("listElement", "permanent"), CodeInvalidContractStructure, 0},
		{"a list item by another kind", `"r":{"type":"array","maxItems":4,"position":0,"items":{` + identifierJSON + `,"refersTo":{"type":"permanent","kind":"permanentDocument"}}}`, CodeInvalidContractStructure, 0},
		{"a string by id", `"r":{"type":"string","maxLength":20,"position":0,"refersTo":{"type":"permanent","kind":"permanentDocument"}}`, CodeInvalidContractStructure, 0},
		{"a boolean", `"r":{"type":"boolean","position":0,"refersTo":{"type":"permanent","kind":"permanentDocument","lookup":"byName"}}`, CodeJSONSchema, 0},
		{"an unknown kind", `"r":{` + identifierJSON + `,"position":0,"refersTo":{"type":"permanent","kind":"weak"}}`, CodeJSONSchema, 0},
	} {
		d, err := ParseDefinition([]byte(refContract(c.prop)), V14)
		if c.parse != 0 {
			wantCode(t, c.name, err, c.parse)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		err = CheckReferences(Contract{ID: ContractID{1}, Moderation: d.Moderation, DocumentTypes: d.DocumentTypes}, none)
		if c.check != 0 {
			wantCode(t, c.name, err, c.check)
		} else if err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestCrossContractReference: a reference names another contract's type, found
// through the resolver, and the rule of deletability holds there too.
func TestCrossContractReference(t *testing.T) {
	targetDef, err := ParseDefinition([]byte(refContract(refByID("deletableDocument", "permanent"))), V14)
	if err != nil {
		t.Fatal(err)
	}
	target := Contract{ID: ContractID{7}, Moderation: targetDef.Moderation, DocumentTypes: targetDef.DocumentTypes}
	resolve := func(id ContractID) (Contract, bool, error) { return target, id == target.ID, nil }
	for kind, want := range map[string]Code{"permanent": 0, "expiring": CodeReferencedDocumentTypeDeletable} {
		raw := one(typ(`"r":{`+identifierJSON+`,"position":0,"refersTo":{"contract":"`+target.ID.String()+`","type":"`+kind+`","kind":"permanentDocument"}}`, ""))
		types, err := ParseDocumentTypes([]byte(raw), V14)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckReferences(Contract{ID: ContractID{1}, DocumentTypes: types}, resolve)
		if want == 0 && err != nil {
			t.Errorf("%s: %v", kind, err)
		} else if want != 0 {
			wantCode(t, kind, err, want)
		}
	}
}

// TestIdentifierListData: an identifier list's value is its identifiers one after the
// other, written back as the array of identifiers it was read from; items that are no
// identifiers are refused.
func TestIdentifierListData(t *testing.T) {
	types, err := ParseDocumentTypes([]byte(one(typ(`"l":{"type":"array","minItems":1,"maxItems":2,"position":0,"items":{`+identifierJSON+`}}`, ""))), V14)
	if err != nil {
		t.Fatal(err)
	}
	ty := types[0]
	if ty.Properties[0].Type != PropertyIdentifierList {
		t.Fatalf("type %v", ty.Properties[0].Type)
	}
	id := func(b byte) string { return string(bytes.Repeat([]byte(fmt.Sprintf("%d,", b)), 31)) + fmt.Sprint(b) }
	raw := `{"l":[[` + id(1) + `],[` + id(2) + `]]}`
	values, err := ParseDocumentData(ty, []byte(raw), testContext(t).Limits)
	if err != nil {
		t.Fatal(err)
	}
	if v := values[0]; len(v.Bytes) != 64 || v.Bytes[0] != 1 || v.Bytes[32] != 2 {
		t.Fatalf("value %v", v.Bytes)
	}
	if got := DocumentData(ty, Document{Values: values}); string(got) != raw {
		t.Errorf("written back as %s", got)
	}
	for name, bad := range map[string]string{
		"three items":   `{"l":[[` + id(1) + `],[` + id(2) + `],[` + id(3) + `]]}`,
		"none":          `{"l":[]}`,
		"a short item":  `{"l":[[1,2]]}`,
		"a byte of 256": `{"l":[[` + id(1)[:len(id(1))-1] + `256]]}`,
	} {
		_, err := ParseDocumentData(ty, []byte(bad), testContext(t).Limits)
		wantCode(t, name, err, CodeInvalidDocument)
	}
	_, err = ParseDocumentTypes([]byte(one(typ(`"l":{"type":"array","maxItems":65,"position":0,"items":{`+identifierJSON+`}}`, ""))), V14)
	wantCode(t, "65 identifiers", err, CodeInvalidContractStructure)
	_, err = ParseDocumentTypes([]byte(one(typ(`"l":{"type":"array","maxItems":2,"position":0,"items":{`+identifierJSON+`}}`, `"indices":[{"name":"byL","properties":[{"l":"asc"}]}]`))), V14)
	wantCode(t, "an indexed list", err, CodeInvalidContractStructure)
}

// TestValueCanChange: which looked-up values a document's own writes can move, so that
// a permanent reference by lookup to them is refused.
func TestValueCanChange(t *testing.T) {
	fixed := DocumentType{}
	mutable := DocumentType{DocumentsMutable: true}
	sold := DocumentType{TradeMode: TradeModeDirectPurchase}
	given := DocumentType{Transferable: TransferableAlways}
	for _, c := range []struct {
		t     DocumentType
		field string
		want  bool
	}{
		{fixed, "name", false}, {mutable, "name", true},
		{mutable, "$id", false}, {sold, "$createdAt", false},
		{fixed, "$ownerId", false}, {sold, "$ownerId", true}, {given, "$ownerId", true}, {mutable, "$ownerId", false},
		{fixed, "$updatedAt", false}, {mutable, "$updatedAt", true}, {given, "$updatedAt", true},
		{fixed, "$transferredAt", false}, {sold, "$transferredAt", true},
	} {
		if got := valueCanChange(c.t, c.field); got != c.want {
			t.Errorf("%+v %s: %v", c.t, c.field, got)
		}
	}
}
