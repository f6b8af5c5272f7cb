package drive

import (
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// LifetimeBytes, what a renewal prices (docs/STATE.md, "Renewal"), is what a write of
// the document counts as lifetime storage: for a session type with a unique index, a
// permanent time-range index on $renewedAt and a ttl'd one on $createdAt, a create's
// Storage.Lifetime bytes, unrenewed and renewed (format 2).
func TestLifetimeBytesIsWhatAWriteCounts(t *testing.T) {
	types, err := protocol.ParseDocumentTypes([]byte(`{"documentSchemas":{"session":{"type":"object","ttl":3600,"renewOnReplace":true,`+
		`"properties":{"user":{"type":"string","maxLength":20,"position":0},"page":{"type":"string","maxLength":40,"position":1}},`+
		`"required":["$createdAt","user"],"additionalProperties":false,"indices":[`+
		`{"name":"byUser","properties":[{"user":"asc"}],"unique":true},`+
		`{"name":"hourly","properties":[{"user":"asc"}],"countable":true,"timeRange":{"on":"$renewedAt","range":7200,"step":3600}},`+
		`{"name":"recent","properties":[{"page":"asc"}],"timeRange":{"on":"$createdAt","range":3600,"step":3600,"ttl":7200}}]}}}`), protocol.V15)
	if err != nil {
		t.Fatal(err)
	}
	dt := DocumentType{Contract: protocol.ContractID{3}, DocumentType: types[0]}
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
