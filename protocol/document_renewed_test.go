package protocol

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"testing"
)

// renewedType is a ttl type of one optional string: what the renewal tests write.
func renewedType() DocumentType {
	return DocumentType{Name: "session", TTLSeconds: 3_600, Properties: []Property{{Name: "user", Type: PropertyString}}}
}

// A document no renewal touched keeps the bytes version 14 wrote (format 1); once
// renewed it is written in format 2, $renewedAt after the price, and reads back the
// same. Its expiry follows $renewedAt (docs/STATE.md, "The document encoding", "Time
// to live").
func TestRenewedDocumentEncoding(t *testing.T) {
	typ := renewedType()
	d := Document{ID: DocumentID{1}, Owner: IdentityID{2}, Revision: 1, CreatedAt: 1_000, UpdatedAt: 1_000,
		Values: []Value{{Set: true, Bytes: []byte("ada")}}}
	plain := d.Encode(typ)
	if plain[0] != 1 || len(plain) != documentHeaderLen+1+4+3 {
		t.Fatalf("an unrenewed document: format %d, %d bytes", plain[0], len(plain))
	}
	if at, _ := typ.ExpiresAtMs(d); at != 1_000+3_600_000 || d.RenewedAtMs() != 1_000 {
		t.Fatalf("unrenewed: expires at %d, $renewedAt %d", at, d.RenewedAtMs())
	}

	r := d
	r.Revision, r.UpdatedAt, r.RenewedAt = 2, 5_000, 5_000
	enc := r.Encode(typ)
	if enc[0] != 2 || len(enc) != len(plain)+8 || binary.BigEndian.Uint64(enc[105:]) != 5_000 {
		t.Fatalf("a renewed document: format %d, %d bytes, %x", enc[0], len(enc), enc)
	}
	got, err := DecodeDocument(enc, typ)
	if err != nil || got.RenewedAt != 5_000 || got.RenewedAtMs() != 5_000 || !bytes.Equal(got.Encode(typ), enc) {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	if at, _ := typ.ExpiresAtMs(got); at != 5_000+3_600_000 {
		t.Fatalf("renewed: expires at %d, want $renewedAt plus the ttl", at)
	}
	if got, err := DecodeDocument(plain, typ); err != nil || got.RenewedAt != 0 {
		t.Fatalf("format 1 decoded %+v, %v", got, err)
	}

	// A renewal never precedes the creation; a format-2 header is whole.
	at := func(ms uint64) []byte {
		b := binary.BigEndian.AppendUint64(append([]byte{}, enc[:105]...), ms)
		return append(b, enc[113:]...)
	}
	for name, b := range map[string][]byte{
		"renewed at 0":          at(0),
		"renewed before":        at(999),
		"truncated $renewedAt":  enc[:110],
		"no value count":        enc[:113],
		"format 3":              append([]byte{3}, enc[1:]...),
		"format 1 with 8 more":  append([]byte{1}, enc[1:]...),
		"format 2 without them": append([]byte{2}, plain[1:]...),
	} {
		var e ErrDocumentDecode
		if _, err := DecodeDocument(b, typ); !errors.As(err, &e) {
			t.Errorf("%s: %v, want ErrDocumentDecode", name, err)
		}
	}
}

// A renewal is an action kind of version 15: under version 14's rules a batch that
// carries one does not decode (TxDecode, as any kind the version does not know), under
// 15's it does, and like every change of a stored document it carries the next
// revision, at least 2.
func TestRenewDecodesFromVersion15(t *testing.T) {
	alice := testKey("alice")
	signer := NewIdentityID(AddressOf(alice.Public().(ed25519.PublicKey)), 1)
	batch := func(revision uint64) []byte {
		return Sign("c", &DocumentsBatch{Identity: signer, Nonce: 1, Contract: ContractID{1}, Actions: []DocumentAction{
			{Kind: ActionRenew, Type: "session", ID: DocumentID{2}, Revision: revision},
		}}, alice)
	}
	for _, c := range []struct {
		v        Version
		revision uint64
		code     Code
	}{{V14, 2, CodeTxDecode}, {V15, 2, CodeOK}, {V15, 1, CodeInvalidTransition}} {
		ctx, err := ContextFor(c.v, 1_767_225_600_000)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Decode(batch(c.revision), ctx)
		if got, _ := CodeOf(err); got != c.code {
			t.Errorf("version %d, revision %d: code %d (%v), want %d", c.v, c.revision, got, err, c.code)
		}
		if err == nil {
			if a := s.Transition.(*DocumentsBatch).Actions[0]; a.Kind != ActionRenew || a.ID != (DocumentID{2}) || a.Revision != 2 {
				t.Errorf("decoded %+v", a)
			}
		}
	}
}

// renewOnReplace and $renewedAt in indexes are protocol version 15's: version 14's
// meta-schema refuses the keyword and a time-range index on $renewedAt (10101), and an
// index of it as no indexable field (10240). On 15, renewOnReplace needs a ttl (10231)
// and is fixed once registered, like the ttl (DocumentTypeUpdate, 40212); an index and
// a time-range index on $renewedAt register.
func TestRenewalKeywords(t *testing.T) {
	renewing := ttlType(3600, `"renewOnReplace":true`)
	byRenewal := ttlType(3600, `"indices":[{"name":"byRenewal","properties":[{"$renewedAt":"asc"}]}]`)
	windows := ttlType(3600, `"indices":[{"name":"activity","properties":[{"s":"asc"}],"countable":true,"timeRange":{"on":"$renewedAt","range":3600,"step":3600}}]`)
	for _, c := range []struct {
		name string
		v    Version
		json string
		code Code
	}{
		{"renewOnReplace on 14", V14, renewing, CodeJSONSchema},
		{"index on $renewedAt on 14", V14, byRenewal, CodeUndefinedIndexProperty},
		{"windows on $renewedAt on 14", V14, windows, CodeJSONSchema},
		{"renewOnReplace without a ttl", V15, one(typ(`"s":{"type":"string","maxLength":63,"position":0}`, `"renewOnReplace":true`)), CodeInvalidContractStructure},
		{"renewOnReplace", V15, renewing, CodeOK},
		{"index on $renewedAt", V15, byRenewal, CodeOK},
		{"windows on $renewedAt", V15, windows, CodeOK},
	} {
		types, err := ParseSubmittedDocumentTypes([]byte(c.json), c.v)
		if got, _ := CodeOf(err); got != c.code {
			t.Errorf("%s: code %d (%v), want %d", c.name, got, err, c.code)
		}
		if err == nil && c.name == "renewOnReplace" && !types[0].RenewOnReplace {
			t.Errorf("%s: parsed %+v", c.name, types[0])
		}
	}
	parse := func(raw string) Contract { return typesContract(t, raw, V15) }
	plain, renews := parse(ttlType(3600, "")), parse(renewing)
	for name, c := range map[string][2]Contract{"set": {plain, renews}, "unset": {renews, plain}} {
		var e ErrDocumentTypeUpdate
		if err := CheckContractUpdate(c[0], c[1]); !errors.As(err, &e) || e.Type != "t" {
			t.Errorf("renewOnReplace %s by an update: %v", name, err)
		}
	}
	if err := CheckContractUpdate(renews, parse(renewing)); err != nil {
		t.Errorf("an update keeping renewOnReplace: %v", err)
	}
}
