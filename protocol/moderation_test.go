package protocol

import (
	"strings"
	"testing"
)

// modID is a moderator's id in a contract's JSON.
var modID = IdentityID{0x6d}

// moderated builds a contract JSON with the moderation block naming ids and one type t.
func moderated(typeJSON string, ids ...IdentityID) string {
	var hexes []string
	for _, id := range ids {
		hexes = append(hexes, `"`+id.String()+`"`)
	}
	return `{"config":{"moderation":{"moderators":[` + strings.Join(hexes, ",") + `]}},"documentSchemas":{"t":` + typeJSON + `}}`
}

// TestModerationParse: the moderation block and moderatorAbilities are read with their
// defaults (deleteKeepsRecord true, deleteRefundsOwner false), and the registration
// rules hold on every parse: moderatorAbilities needs a moderation block and is refused
// on types that keep history or are indexOnly (docs/CONTRACTS.md, "Moderation").
func TestModerationParse(t *testing.T) {
	abilities := `"moderatorAbilities":{"delete":true,"deleteWithin":60}`
	d, err := ParseDefinition([]byte(moderated(typ(propA, abilities), modID, IdentityID{0x01})), V14)
	if err != nil {
		t.Fatal(err)
	}
	if m := d.Moderation; m == nil || len(m.Moderators) != 2 || m.Moderators[0] != (IdentityID{0x01}) {
		t.Fatalf("moderators %+v, want two, sorted", d.Moderation)
	}
	got := *d.DocumentTypes[0].ModeratorAbilities
	if want := (ModeratorAbilities{Delete: true, DeleteWithinSeconds: 60, DeleteKeepsRecord: true}); got != want {
		t.Errorf("abilities %+v, want %+v", got, want)
	}
	c := Contract{Owner: IdentityID{0x0f}, Moderation: d.Moderation}
	for id, want := range map[IdentityID]bool{modID: true, {0x01}: true, {0x0f}: true, {0x02}: false} {
		if c.Moderator(id) != want {
			t.Errorf("Moderator(%x) = %v", id[:1], !want)
		}
	}
	if (Contract{Owner: IdentityID{0x0f}}).Moderator(modID) {
		t.Error("a contract without a moderation block has no moderator but its owner")
	}

	many := make([]IdentityID, 17)
	for i := range many {
		many[i][0] = byte(i + 1)
	}
	for name, c := range map[string]struct {
		json string
		code Code
	}{
		"no moderation block":  {one(typ(propA, abilities)), CodeInvalidContractStructure},
		"documentsKeepHistory": {moderated(typ(propA, abilities+`,"documentsKeepHistory":true`), modID), CodeInvalidContractStructure},
		"indexOnly":            {moderated(typ(propA, abilities+`,"indexOnly":true`), modID), CodeInvalidContractStructure},
		"17 moderators":        {moderated(typ(propA, abilities), many...), CodeInvalidContractStructure},
		"no moderators":        {moderated(typ(propA, abilities)), CodeJSONSchema},
		"a moderator twice":    {moderated(typ(propA, abilities), modID, modID), CodeJSONSchema},
		"deleteWithin 0":       {moderated(typ(propA, `"moderatorAbilities":{"delete":true,"deleteWithin":0}`), modID), CodeJSONSchema},
		"no delete keyword":    {moderated(typ(propA, `"moderatorAbilities":{"deleteWithin":5}`), modID), CodeJSONSchema},
		"upper-case hex":       {strings.Replace(moderated(typ(propA, ""), modID), "6d", "6D", 1), CodeJSONSchema},
	} {
		_, err := ParseDefinition([]byte(c.json), V14)
		wantCode(t, name, err, c.code)
	}
}

// TestDocumentsCanDisappear: Document Time To Live: "References treat a type with a ttl as
// deletable, like one with canBeDeleted or moderatorAbilities.delete."
func TestDocumentsCanDisappear(t *testing.T) {
	for _, c := range []struct {
		t    DocumentType
		want bool
	}{
		{DocumentType{}, false},
		{DocumentType{CanBeDeleted: true}, true},
		{DocumentType{TTLSeconds: 3600}, true},
		{DocumentType{ModeratorAbilities: &ModeratorAbilities{Delete: true}}, true},
		{DocumentType{ModeratorAbilities: &ModeratorAbilities{}}, false},
	} {
		if got := c.t.DocumentsCanDisappear(); got != c.want {
			t.Errorf("%+v: DocumentsCanDisappear = %v", c.t, got)
		}
	}
}

// TestModerationIsFixed: "moderation cannot be added by a later update" (nor changed or
// removed: 40243), and a type's moderatorAbilities is a type change (40212).
func TestModerationIsFixed(t *testing.T) {
	parse := func(raw string) Contract {
		d, err := ParseDefinition([]byte(raw), V14)
		if err != nil {
			t.Fatal(err)
		}
		return Contract{Moderation: d.Moderation, DocumentTypes: d.DocumentTypes}
	}
	plain := parse(one(typ(propA, "")))
	with := parse(moderated(typ(propA, ""), modID))
	other := parse(moderated(typ(propA, ""), IdentityID{0x01}))
	abilities := parse(moderated(typ(propA, `"moderatorAbilities":{"delete":true}`), modID))
	wantCode(t, "added", CheckContractUpdate(plain, with), CodeContractConfigUpdate)
	wantCode(t, "removed", CheckContractUpdate(with, plain), CodeContractConfigUpdate)
	wantCode(t, "changed", CheckContractUpdate(with, other), CodeContractConfigUpdate)
	wantCode(t, "abilities added", CheckContractUpdate(with, abilities), CodeDocumentTypeUpdate)
	if err := CheckContractUpdate(abilities, abilities); err != nil {
		t.Errorf("unchanged: %v", err)
	}
}

// TestPlanModeration: the rules of a moderator's delete and restore, in their order,
// at their boundaries.
func TestPlanModeration(t *testing.T) {
	d, err := ParseDefinition([]byte(moderated(typ(`"text":{"type":"string","position":0}`,
		`"ttl":3600,"required":["$createdAt"],"moderatorAbilities":{"delete":true,"deleteWithin":60}`), modID)), V14)
	if err != nil {
		t.Fatal(err)
	}
	owner, writer, outsider := IdentityID{0x0f}, IdentityID{0x0a}, IdentityID{0x0b}
	c := Contract{ID: ContractID{1}, Owner: owner, Moderation: d.Moderation, DocumentTypes: d.DocumentTypes}
	ty := d.DocumentTypes[0]
	const t0 = 1_767_225_600_000
	doc := Document{ID: DocumentID{9}, Owner: writer, Revision: 1, CreatedAt: t0, UpdatedAt: t0,
		Values: []Value{{Set: true, Bytes: []byte("hi")}}}
	plan := func(at uint64, signer IdentityID, a DocumentAction, stored *Document, r *RemovalRecord) (ActionPlan, error) {
		ctx := testContext(t)
		ctx.BlockTimeMs = at
		b := &DocumentsBatch{Identity: signer, Contract: c.ID, Actions: []DocumentAction{a}}
		plans, err := PlanDocumentActions(ctx, c, b, []*Document{stored}, []*RemovalRecord{r})
		if err != nil {
			return ActionPlan{}, err
		}
		return plans[0], nil
	}
	del := DocumentAction{Kind: ActionModerateDelete, Type: "t", ID: doc.ID, Reason: "spam"}

	p, err := plan(t0+60_000, modID, del, &doc, nil)
	if err != nil || p.Removal == nil {
		t.Fatalf("a delete 60 s after the last change: %v, record %v", err, p.Removal)
	}
	if r := *p.Removal; r.Owner != writer || r.Moderator != modID || r.Reason != "spam" || r.AtMs != t0+60_000 || r.DocumentHash != DocumentHash(doc.Encode(ty)) {
		t.Errorf("record %+v", r)
	}
	if _, err := plan(t0, owner, del, &doc, nil); err != nil {
		t.Errorf("the contract's owner moderates: %v", err)
	}
	_, err = plan(t0+60_001, modID, del, &doc, nil)
	wantCode(t, "past deleteWithin", err, CodeModerationWindowPassed)
	_, err = plan(t0, outsider, del, &doc, nil)
	wantCode(t, "not a moderator", err, CodeNotAModerator)
	_, err = plan(t0, writer, del, &doc, nil)
	wantCode(t, "the document's owner is no moderator", err, CodeNotAModerator)
	_, err = plan(t0, modID, del, nil, nil)
	wantCode(t, "nothing stored", err, CodeDocumentNotFound)

	record := &RemovalRecord{Type: "t", ID: doc.ID, Owner: writer, Moderator: modID, AtMs: t0 + 1000, DocumentHash: DocumentHash(doc.Encode(ty))}
	restore := DocumentAction{Kind: ActionRestore, Type: "t", ID: doc.ID, Document: doc.Encode(ty)}
	p, err = plan(t0+3_599_999, modID, restore, nil, record)
	if err != nil || p.After == nil || p.After.CreatedAt != t0 || p.After.Owner != writer || p.After.Revision != 1 {
		t.Fatalf("a restore before the expiry: %v, %+v", err, p.After)
	}
	// Document Time To Live: the restore "is refused once that document has expired", judged on the
	// $createdAt of the document the record's hash pins, at the cleanup's boundary.
	_, err = plan(t0+3_600_000, modID, restore, nil, record)
	wantCode(t, "a restore at the expiry", err, CodeDocumentExpired)
	other := doc
	other.Revision = 2
	_, err = plan(t0+1000, modID, DocumentAction{Kind: ActionRestore, Type: "t", ID: doc.ID, Document: other.Encode(ty)}, nil, record)
	wantCode(t, "another document", err, CodeRestoredDocumentMismatch)
	_, err = plan(t0+1000, modID, DocumentAction{Kind: ActionRestore, Type: "t", ID: doc.ID, Document: []byte{1}}, nil, record)
	wantCode(t, "no document", err, CodeRestoredDocumentMismatch)
	_, err = plan(t0+1000, modID, restore, &doc, record)
	wantCode(t, "stored again", err, CodeDocumentAlreadyPresent)
	_, err = plan(t0+1000, modID, restore, nil, nil)
	wantCode(t, "no record", err, CodeRemovalRecordNotFound)

	// A week after the deletion (a type without a ttl, so the window decides).
	d, err = ParseDefinition([]byte(moderated(typ(`"text":{"type":"string","position":0}`, `"moderatorAbilities":{"delete":true}`), modID)), V14)
	if err != nil {
		t.Fatal(err)
	}
	c.DocumentTypes = d.DocumentTypes
	record.DocumentHash = DocumentHash(doc.Encode(d.DocumentTypes[0]))
	restore.Document = doc.Encode(d.DocumentTypes[0])
	week := testContext(t).Limits.RestoreWindowMs
	if _, err := plan(record.AtMs+week-1, modID, restore, nil, record); err != nil {
		t.Errorf("a restore just inside the week: %v", err)
	}
	_, err = plan(record.AtMs+week, modID, restore, nil, record)
	wantCode(t, "a restore a week on", err, CodeRestoreWindowPassed)
}
