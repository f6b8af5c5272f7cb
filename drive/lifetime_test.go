package drive

import (
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// lifetimeSession is a session type with a unique index, a permanent time-range index
// on $renewedAt and a ttl'd one on $createdAt, renewed by every replace.
func lifetimeSession(t *testing.T) DocumentType {
	t.Helper()
	types, err := protocol.ParseDocumentTypes([]byte(`{"documentSchemas":{"session":{"type":"object","ttl":3600,"renewOnReplace":true,`+
		`"properties":{"user":{"type":"string","maxLength":20,"position":0},"page":{"type":"string","maxLength":40,"position":1}},`+
		`"required":["$createdAt","user"],"additionalProperties":false,"indices":[`+
		`{"name":"byUser","properties":[{"user":"asc"}],"unique":true},`+
		`{"name":"hourly","properties":[{"user":"asc"}],"countable":true,"timeRange":{"on":"$renewedAt","range":7200,"step":3600}},`+
		`{"name":"recent","properties":[{"page":"asc"}],"timeRange":{"on":"$createdAt","range":3600,"step":3600,"ttl":7200}}]}}}`), protocol.V15)
	if err != nil {
		t.Fatal(err)
	}
	return DocumentType{Contract: protocol.ContractID{3}, DocumentType: types[0]}
}

// LifetimeBytes, what a renewal prices (docs/STATE.md, "Renewal"), is what a write of
// the document counts as lifetime storage: for a session type with a unique index, a
// permanent time-range index on $renewedAt and a ttl'd one on $createdAt, a create's
// Storage.Lifetime bytes, unrenewed and renewed (format 2).
func TestLifetimeBytesIsWhatAWriteCounts(t *testing.T) {
	dt := lifetimeSession(t)
	const created = 1_767_225_600_000
	for _, renewedAt := range []uint64{0, created + 1_800_000} {
		d := protocol.Document{ID: protocol.DocumentID{4}, Owner: protocol.IdentityID{5}, Revision: 1, CreatedAt: created, UpdatedAt: created, RenewedAt: renewedAt,
			Values: []protocol.Value{{Set: true, Bytes: []byte("ada")}, {Set: true, Bytes: []byte("/cart")}}}
		at := d.RenewedAtMs()
		st := &Storage{Payer: d.Owner, AtMs: at}
		s, _ := newTestStore(t, 0)
		if err := InsertDocument(NewCache(s.Working()), st, dt, d); err != nil {
			t.Fatal(err)
		}
		if len(st.Lifetime) != 1 || st.Lifetime[0].Bytes != LifetimeBytes(dt, d, at) || st.Ephemeral == 0 {
			t.Fatalf("renewed at %d: the create counted %+v (ephemeral %d), LifetimeBytes says %d", renewedAt, st.Lifetime, st.Ephemeral, LifetimeBytes(dt, d, at))
		}
	}
}

// A renewing write prices as renewed only what the document keeps (docs/STATE.md,
// "Renewal"): a replace of a session (renewOnReplace) that changes its user, an hour and
// a half after its creation, moves its byUser entry and its hourly windows (on
// $renewedAt, now in other hours), so the renewal counts the row and the expirations
// entry it keeps and not the entries it removed, which the write adds anew at the new
// lifetime (Bytes); its row grew by 8 bytes (format 2), which count as added too.
func TestRenewalPricesWhatTheWriteKeeps(t *testing.T) {
	dt := lifetimeSession(t)
	const created = 1_767_225_600_000
	before := protocol.Document{ID: protocol.DocumentID{4}, Owner: protocol.IdentityID{5}, Revision: 1, CreatedAt: created, UpdatedAt: created,
		Values: []protocol.Value{{Set: true, Bytes: []byte("ada")}, {Set: true, Bytes: []byte("/cart")}}}
	s, _ := newTestStore(t, 0)
	kv := NewCache(s.Working())
	if err := InsertDocument(kv, &Storage{Payer: before.Owner, AtMs: created}, dt, before); err != nil {
		t.Fatal(err)
	}
	at := uint64(created + 5_400_000)
	after := before
	after.Revision, after.UpdatedAt, after.RenewedAt = 2, at, at
	after.Values = []protocol.Value{{Set: true, Bytes: []byte("bob")}, {Set: true, Bytes: []byte("/cart")}}
	st := &Storage{Payer: before.Owner, AtMs: at}
	if err := ReplaceDocument(kv, st, dt, StoredDocument{Document: before}, after); err != nil {
		t.Fatal(err)
	}
	expiration := uint64(len(ExpirationKey(created+3_600_000, before.ID)) + len(EncodeExpiration(dt.Contract, dt.Name)))
	row := uint64(len(DocumentKey(dt.Contract, dt.Name, before.ID)) + len(before.Encode(dt.DocumentType)))
	if len(st.Lifetime) != 1 || st.Lifetime[0].Renewed != row+expiration || st.Lifetime[0].RenewedFromMs != created+3_600_000 {
		t.Fatalf("renewed %+v, want the row's %d and the expirations entry's %d bytes from %d", st.Lifetime, row, expiration, created+3_600_000)
	}
	// Added: the row's growth, the new byUser entry and the two hourly windows' entries.
	grown := uint64(len(after.Encode(dt.DocumentType)) - len(before.Encode(dt.DocumentType)))
	added := LifetimeBytes(dt, after, at) - row - expiration - grown
	if grown != 8 || st.Lifetime[0].Bytes != added+grown {
		t.Fatalf("the write added %d lifetime bytes, want %d moved entries and the row's %d", st.Lifetime[0].Bytes, added, grown)
	}
}
