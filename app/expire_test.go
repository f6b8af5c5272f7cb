package app

import (
	"testing"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// Document Time To Live, "Cleanup": "An entry without a document to delete is logged and only
// removed. None is expected, and failing the block over one would halt the chain." And
// "Each expired document is read and checked against state (its contract, document
// type, ttl and stored document, and that the document expires when its entry says)":
// an entry whose time is not its document's is an orphan too, and the document stays.
func TestExpireDocumentsOrphans(t *testing.T) {
	kv := genesisState(t, nil)
	c, note, doc := ttlNote(t, kv)
	expires := uint64(1_000 + 3_600_000)
	orphans := [][2][]byte{
		// no such document
		{drive.ExpirationKey(expires-2, protocol.DocumentID{8}), drive.EncodeExpiration(c.ID, "note")},
		// no such contract
		{drive.ExpirationKey(expires-1, protocol.DocumentID{9}), drive.EncodeExpiration(protocol.ContractID{2}, "note")},
		// the stored document, at another time than its expiry
		{drive.ExpirationKey(expires-3, doc.ID), drive.EncodeExpiration(c.ID, "note")},
		// a value that is no contract and type
		{drive.ExpirationKey(expires-4, protocol.DocumentID{10}), {1, 2}},
	}
	for _, o := range orphans {
		if err := kv.Set(o[0], o[1]); err != nil {
			t.Fatal(err)
		}
	}
	r, err := loadRules(kv, expires-1, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Before the document's expiry: the four orphans go (weight 1 each), the document stays.
	events, cleanup, err := expireDocumentsStep(kv, r, Block{Height: 2, TimeMs: expires - 1})
	if err != nil {
		t.Fatal(err)
	}
	if cleanup.Stats.Removed != 4 || cleanup.Orphans != 4 || cleanup.Stats.WeightUsed != 4 || len(events) != 5 {
		t.Fatalf("cleanup %+v, %d events", cleanup, len(events))
	}
	if _, found, err := drive.GetDocument(kv, note, doc.ID); err != nil || !found {
		t.Fatalf("the document went with an orphan entry: %v", err)
	}
	// At its expiry: the document, weight 1 + 1 index level, and its entry.
	r.ctx.BlockTimeMs = expires
	events, cleanup, err = expireDocumentsStep(kv, r, Block{Height: 3, TimeMs: expires})
	if err != nil {
		t.Fatal(err)
	}
	if cleanup.Stats.Removed != 1 || cleanup.Orphans != 0 || cleanup.Stats.WeightUsed != 2 || events[0].Type != protocol.EventDocumentExpired {
		t.Fatalf("cleanup %+v, events %+v", cleanup, events)
	}
	// Nothing of the type is left: no row, no index entry.
	stored := 0
	prefix := drive.DocumentTypePrefix(c.ID, "note")
	if err := kv.Iterate(prefix, drive.PrefixEnd(prefix), func(_, _ []byte) (bool, error) { stored++; return false, nil }); err != nil || stored != 0 {
		t.Fatalf("%d keys of the type left (%v)", stored, err)
	}
	if left := expirations(t, kv); len(left) != 0 {
		t.Fatalf("expirations entries left: %x", left)
	}
}

// ttlNote registers, on version 14, a contract whose type note has a ttl of an hour
// and one index, and stores a note created at 1,000 ms.
func ttlNote(t *testing.T, kv drive.KV) (protocol.Contract, drive.DocumentType, protocol.Document) {
	t.Helper()
	if err := drive.SetProtocolVersion(kv, protocol.V14); err != nil {
		t.Fatal(err)
	}
	types, err := protocol.ParseDocumentTypes([]byte(`{"documentSchemas":{"note":{"type":"object","ttl":3600,"properties":{"text":{"type":"string","maxLength":20,"position":0}},"required":["$createdAt"],"additionalProperties":false,"indices":[{"name":"byText","properties":[{"text":"asc"}]}]}}}`), protocol.V14)
	if err != nil {
		t.Fatal(err)
	}
	c := protocol.Contract{ID: protocol.ContractID{1}, Version: 1, DocumentTypes: types}
	if _, err := drive.SetContract(kv, c); err != nil {
		t.Fatal(err)
	}
	note := drive.DocumentType{Contract: c.ID, DocumentType: types[0]}
	doc := protocol.Document{ID: protocol.DocumentID{7}, Revision: 1, CreatedAt: 1_000, UpdatedAt: 1_000, Values: []protocol.Value{{Set: true, Bytes: []byte("hi")}}}
	if err := drive.InsertDocument(kv, &drive.Storage{}, note, doc); err != nil {
		t.Fatal(err)
	}
	return c, note, doc
}

// expirations lists the keys of the expirations tree.
func expirations(t *testing.T, kv drive.KV) [][]byte {
	t.Helper()
	var keys [][]byte
	err := kv.Iterate(drive.ExpirationsPrefix(), drive.PrefixEnd(drive.ExpirationsPrefix()), func(k, _ []byte) (bool, error) {
		keys = append(keys, append([]byte(nil), k...))
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// A renewed document expires at its $renewedAt plus the ttl: its write moves its one
// expirations entry there, so nothing of the old expiry time is left, the cleanup at
// the old expiry leaves it alone, and the one at the new expiry deletes it with its
// entry (docs/STATE.md, "Time to live").
func TestRenewedDocumentExpiresAtItsRenewal(t *testing.T) {
	kv := genesisState(t, nil)
	_, note, doc := ttlNote(t, kv)
	renewed := doc
	renewed.Revision, renewed.UpdatedAt, renewed.RenewedAt = 2, 1_800_000, 1_800_000
	if err := drive.ReplaceDocument(kv, &drive.Storage{}, note, drive.StoredDocument{Document: doc}, renewed); err != nil {
		t.Fatal(err)
	}
	was, expires := uint64(1_000+3_600_000), uint64(1_800_000+3_600_000)
	if got := expirations(t, kv); len(got) != 1 || string(got[0]) != string(drive.ExpirationKey(expires, doc.ID)) {
		t.Fatalf("expirations entries %x, want the one at %d", got, expires)
	}
	for _, at := range []uint64{was, expires} {
		r, err := loadRules(kv, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, cleanup, err := expireDocumentsStep(kv, r, Block{Height: 2, TimeMs: at})
		if err != nil {
			t.Fatal(err)
		}
		_, found, err := drive.GetDocument(kv, note, doc.ID)
		if err != nil || found != (at == was) || cleanup.Orphans != 0 {
			t.Fatalf("at %d: stored %t (%v), cleanup %+v", at, found, err, cleanup)
		}
	}
	if left := expirations(t, kv); len(left) != 0 {
		t.Fatalf("expirations entries left: %x", left)
	}
}
