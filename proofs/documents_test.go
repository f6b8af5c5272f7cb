package proofs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/cosmos/iavl"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/query"
)

// market is a saved state holding the market contract (docs/examples/market.json) and
// a few listings, with the reference data the answers are compared with.
type market struct {
	store    *drive.Store
	contract protocol.Contract
	listing  drive.DocumentType
	docs     map[string]protocol.Document // by name
	names    map[protocol.DocumentID]string
	root     []byte
}

type listing struct {
	name, sku, category string
	quantity            int64
	seller              byte
	active              *bool
	created             uint64
}

var yes = true

var listings = []listing{
	{"lamp", "LAMP-1", "home", 3, 7, nil, 1000},
	{"desk", "DESK-1", "home", 1, 7, &yes, 2000},
	{"bike", "BIKE-1", "sport", 2, 9, nil, 2000},
	{"sofa", "SOFA-1", "home", 5, 9, nil, 3000},
	{"ball", "BALL-1", "sport", 7, 7, nil, 4000},
	{"rake", "RAKE-1", "garden", 4, 9, nil, 5000},
	{"hose", "HOSE-1", "garden", 1, 7, nil, 6000},
	{"rug", "RUG-1", "homeware", 2, 9, nil, 7000},
}

func newMarket(t testing.TB) *market {
	t.Helper()
	raw, err := os.ReadFile("../docs/examples/market.json")
	if err != nil {
		t.Fatal(err)
	}
	types, err := protocol.ParseDocumentTypes(raw, protocol.V13)
	if err != nil {
		t.Fatal(err)
	}
	owner := protocol.IdentityID{1}
	c := protocol.Contract{ID: protocol.NewContractID(owner, 1), Owner: owner, Version: 1, DocumentTypes: types}
	lt, _ := c.DocumentType("listing")
	m := &market{contract: c, listing: drive.DocumentType{Contract: c.ID, DocumentType: lt}, docs: map[string]protocol.Document{}, names: map[protocol.DocumentID]string{}}
	m.store, err = drive.NewStore(dbm.NewMemDB(), drive.Options{CacheSize: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	kv := m.store.Working()
	if err := drive.SetProtocolVersion(kv, protocol.V13); err != nil {
		t.Fatal(err)
	}
	if _, err := drive.SetContract(kv, c); err != nil {
		t.Fatal(err)
	}
	for i, l := range listings {
		seller := bytes.Repeat([]byte{l.seller}, 32)
		vals := []protocol.Value{
			{Set: true, Bytes: []byte(l.sku)}, {Set: true, Bytes: []byte(l.category)},
			{Set: true, Int: l.quantity}, {Set: true, Bytes: seller}, {},
		}
		if l.active != nil {
			vals = append(vals, protocol.Value{Set: true, Bool: *l.active})
		}
		owner := protocol.IdentityID{byte(2 + i%2)}
		d := protocol.Document{
			ID: protocol.NewDocumentID(c.ID, owner, "listing", [32]byte{byte(i)}), Owner: owner, Revision: 1,
			CreatedAt: l.created, UpdatedAt: l.created, Values: vals,
		}
		if err := drive.InsertDocument(kv, &drive.Storage{Payer: owner, PerByte: 1}, m.listing, d); err != nil {
			t.Fatal(err)
		}
		m.docs[l.name], m.names[d.ID] = d, l.name
	}
	if _, m.root, err = m.store.Commit(); err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *market) view(t testing.TB, fn func(*iavl.ImmutableTree)) {
	t.Helper()
	if err := m.store.View(0, func(tr *iavl.ImmutableTree) error { fn(tr); return nil }); err != nil {
		t.Fatal(err)
	}
}

func (m *market) answer(t testing.TB, query string) (DocumentsAnswer, *cmtcrypto.ProofOps, []byte) {
	t.Helper()
	data := DocumentsData(m.contract.ID, "listing", []byte(query))
	var a DocumentsAnswer
	var ops *cmtcrypto.ProofOps
	m.view(t, func(tr *iavl.ImmutableTree) {
		var err error
		if a, ops, err = AnswerDocuments(tr, data); err != nil {
			t.Fatalf("AnswerDocuments(%s): %v", query, err)
		}
	})
	return a, ops, data
}

func (m *market) namesOf(docs []drive.StoredDocument) string {
	var out []string
	for _, d := range docs {
		out = append(out, m.names[d.ID])
	}
	return strings.Join(out, " ")
}

// reference answers q by brute force: every document that matches, sorted by the
// index's order (the answer's direction), from the start document on, up to the limit.
func (m *market) reference(q query.Query) string {
	var all []protocol.Document
	for _, l := range listings {
		if d := m.docs[l.name]; q.Matches(d) {
			all = append(all, d)
		}
	}
	key := func(d protocol.Document) []byte { return drive.EntryKey(m.contract.ID, q, d) }
	slices.SortFunc(all, func(a, b protocol.Document) int {
		c := bytes.Compare(key(a), key(b))
		if q.Reverse {
			return -c
		}
		return c
	})
	if q.Start != nil {
		sk := key(m.docs[m.names[*q.Start]])
		all = slices.DeleteFunc(all, func(d protocol.Document) bool {
			c := bytes.Compare(key(d), sk)
			if q.Reverse {
				c = -c
			}
			return c < 0 || (c == 0 && !q.StartIncluded)
		})
	}
	var out []string
	for i, d := range all {
		if i == q.Limit {
			break
		}
		out = append(out, m.names[d.ID])
	}
	return strings.Join(out, " ")
}

// Every query is answered with the documents the brute-force reference gives, in its
// order, and the answer verifies against the root.
func TestDocumentQueries(t *testing.T) {
	m := newMarket(t)
	id := func(name string) string { return m.docs[name].ID.String() }
	seven := strings.Repeat("07", 32)
	for _, c := range []struct{ query, want string }{
		{`{}`, "desk ball lamp hose rug bike sofa rake"},
		{`{"where":[["category","==","home"]]}`, "sofa desk lamp"},
		{`{"where":[["category","==","home"]],"orderBy":[["$createdAt","asc"]]}`, "lamp desk sofa"},
		{`{"where":[["category","==","home"]],"orderBy":[["$createdAt","desc"]],"limit":2}`, "sofa desk"},
		{`{"where":[["category","==","home"],["$createdAt",">",1000]]}`, "sofa desk"},
		{`{"where":[["category","==","home"],["$createdAt","<=",2000]]}`, "desk lamp"},
		{`{"where":[["category","==","home"],["$createdAt",">=",2000],["$createdAt","<",3000]]}`, "desk"},
		{`{"where":[["category","in",["sport","garden"]]]}`, "hose rake ball bike"},
		{`{"where":[["category","in",["sport","garden"]]],"orderBy":[["category","desc"]]}`, "bike ball rake hose"},
		{`{"where":[["category","in",["sport","garden"]]],"limit":3}`, "hose rake ball"},
		{`{"where":[["category","startsWith","hom"]]}`, "sofa desk lamp rug"},
		{`{"where":[["category","startsWith","home"]],"orderBy":[["category","desc"]]}`, "rug lamp desk sofa"},
		{`{"where":[["category",">","home"]]}`, "rug ball bike"},
		{`{"where":[["category","<","home"]],"orderBy":[["category","desc"]]}`, "rake hose"},
		{`{"where":[["category","==","home"]],"startAfter":"` + id("sofa") + `"}`, "desk lamp"},
		{`{"where":[["category","==","home"]],"startAt":"` + id("desk") + `"}`, "desk lamp"},
		{`{"where":[["category","==","home"]],"orderBy":[["$createdAt","asc"]],"startAfter":"` + id("lamp") + `","limit":1}`, "desk"},
		{`{"where":[["category","in",["sport","garden"]]],"startAfter":"` + id("rake") + `"}`, "ball bike"},
		{`{"where":[["category","in",["sport","garden"]]],"orderBy":[["category","desc"]],"startAt":"` + id("ball") + `"}`, "ball rake hose"},
		{`{"where":[["seller","==","` + seven + `"]]}`, ""},
		{`{"where":[["category","==","toys"]]}`, ""},
		{`{"where":[["category",">","z"]],"orderBy":[["category","desc"]]}`, ""},
	} {
		t.Run(c.query, func(t *testing.T) {
			a, ops, data := m.answer(t, c.query)
			res, err := VerifyDocuments(m.root, data, a, ops)
			if err != nil {
				t.Fatalf("VerifyDocuments: %v", err)
			}
			got := m.namesOf(res.Documents)
			if want := m.reference(res.Query); got != want {
				t.Fatalf("answer %q, reference %q", got, want)
			}
			if c.query != `{"where":[["seller","==","`+seven+`"]]}` && got != c.want {
				t.Fatalf("answer %q, want %q", got, c.want)
			}
		})
	}
}

// "the client re-derives each returned document's index values from its row ... (a
// node cannot swap a document)": each way of changing an honest answer fails.
func TestDocumentAnswerTampering(t *testing.T) {
	m := newMarket(t)
	// four documents in the range, the limit cuts it after three
	const query = `{"where":[["category","startsWith","h"]],"orderBy":[["category","asc"]],"limit":3}`
	honest := func() (DocumentsAnswer, *cmtcrypto.ProofOps, []byte) { return m.answer(t, query) }
	// the proof operations: version, contract, one range, three documents
	const firstDoc = 3
	otherRow := func() ([]byte, cmtcrypto.ProofOp) {
		var v []byte
		var op Op
		m.view(t, func(tr *iavl.ImmutableTree) {
			var err error
			if op, v, err = proveKey(tr, drive.DocumentKey(m.contract.ID, "listing", m.docs["bike"].ID)); err != nil {
				t.Fatal(err)
			}
		})
		return v, op.ProofOp()
	}
	rangeOf := func(a DocumentsAnswer) []KV {
		e, err := DecodeEntries(a.Ranges[0].Entries)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, c := range []struct {
		name   string
		tamper func(a *DocumentsAnswer, ops *cmtcrypto.ProofOps, data *[]byte)
		want   any
	}{
		{"drops the last document", func(a *DocumentsAnswer, ops *cmtcrypto.ProofOps, _ *[]byte) {
			a.Documents = a.Documents[:2]
			ops.Ops = ops.Ops[:len(ops.Ops)-1]
		}, ErrAnswerMismatch{}},
		{"drops a document and its entry", func(a *DocumentsAnswer, ops *cmtcrypto.ProofOps, _ *[]byte) {
			e := rangeOf(*a)
			a.Ranges[0].Entries = EncodeEntries(append(e[:1:1], e[2:]...))
			a.Documents = append(a.Documents[:1:1], a.Documents[2])
			ops.Ops = append(ops.Ops[:firstDoc+1:firstDoc+1], ops.Ops[firstDoc+2])
		}, ErrMalformedProof{}},
		{"drops the range", func(a *DocumentsAnswer, ops *cmtcrypto.ProofOps, _ *[]byte) {
			a.Ranges, a.Documents = nil, nil
			ops.Ops = ops.Ops[:2]
		}, ErrAnswerMismatch{}},
		{"adds a document", func(a *DocumentsAnswer, ops *cmtcrypto.ProofOps, _ *[]byte) {
			v, op := otherRow()
			a.Documents = append(a.Documents, v)
			ops.Ops = append(ops.Ops, op)
		}, ErrAnswerMismatch{}},
		{"reorders two documents", func(a *DocumentsAnswer, ops *cmtcrypto.ProofOps, _ *[]byte) {
			a.Documents[0], a.Documents[1] = a.Documents[1], a.Documents[0]
			ops.Ops[firstDoc], ops.Ops[firstDoc+1] = ops.Ops[firstDoc+1], ops.Ops[firstDoc]
		}, ErrKeyMismatch{}},
		{"swaps a document for another, proven", func(a *DocumentsAnswer, ops *cmtcrypto.ProofOps, _ *[]byte) {
			a.Documents[1], ops.Ops[firstDoc+1] = otherRow()
		}, ErrKeyMismatch{}},
		{"changes a document's row", func(a *DocumentsAnswer, ops *cmtcrypto.ProofOps, _ *[]byte) {
			a.Documents[1] = bytes.Clone(a.Documents[1])
			a.Documents[1][len(a.Documents[1])-1] ^= 1
		}, ErrValueMismatch{}},
		{"answers a smaller limit", func(a *DocumentsAnswer, ops *cmtcrypto.ProofOps, data *[]byte) {
			*data = DocumentsData(m.contract.ID, "listing", []byte(strings.Replace(query, `"limit":3`, `"limit":4`, 1)))
		}, ErrAnswerMismatch{}},
		{"answers another query", func(a *DocumentsAnswer, ops *cmtcrypto.ProofOps, data *[]byte) {
			*data = DocumentsData(m.contract.ID, "listing", []byte(`{"where":[["category","==","sport"]]}`))
		}, ErrKeyMismatch{}},
		{"claims the range ends", func(a *DocumentsAnswer, ops *cmtcrypto.ProofOps, _ *[]byte) {
			a.Ranges[0].More = false
		}, ErrMoreMismatch{}},
		{"another contract bytes", func(a *DocumentsAnswer, ops *cmtcrypto.ProofOps, _ *[]byte) {
			a.Contract = append(bytes.Clone(a.Contract), ' ')
		}, ErrValueMismatch{}},
		{"no proof", func(a *DocumentsAnswer, ops *cmtcrypto.ProofOps, _ *[]byte) {
			ops.Ops = nil
		}, ErrNotProven},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, ops, data := honest()
			if _, err := VerifyDocuments(m.root, data, a, ops); err != nil {
				t.Fatalf("the honest answer fails: %v", err)
			}
			c.tamper(&a, ops, &data)
			_, err := VerifyDocuments(m.root, data, a, ops)
			if !sameErrorType(err, c.want) {
				t.Fatalf("VerifyDocuments = %v (%T), want a %T", err, err, c.want)
			}
		})
	}
}

// A forward answer whose last range is cut by the limit, and a backward one: dropping
// the cut range's last entry (with its document) breaks the completeness check.
func TestDocumentAnswerCutRanges(t *testing.T) {
	m := newMarket(t)
	for _, query := range []string{
		`{"where":[["category","in",["sport","garden"]]],"limit":3}`,
		`{"where":[["category","in",["sport","garden"]]],"orderBy":[["category","desc"]],"limit":3}`,
	} {
		t.Run(query, func(t *testing.T) {
			a, ops, data := m.answer(t, query)
			if len(a.Ranges) != 2 || len(a.Documents) != 3 {
				t.Fatalf("want 2 ranges and 3 documents, got %d and %d", len(a.Ranges), len(a.Documents))
			}
			// the answer's last entry is the last entry of range 1 going forward,
			// its first going backward
			e, _ := DecodeEntries(a.Ranges[1].Entries)
			if strings.Contains(query, "desc") {
				e = e[1:]
			} else {
				e = e[:len(e)-1]
			}
			a.Ranges[1].Entries = EncodeEntries(e)
			a.Documents = a.Documents[:2]
			ops.Ops = ops.Ops[:len(ops.Ops)-1]
			if _, err := VerifyDocuments(m.root, data, a, ops); err == nil {
				t.Fatal("an answer short of its limit verifies")
			}
		})
	}
}

func sameErrorType(err error, want any) bool {
	if err == nil {
		return false
	}
	if w, ok := want.(error); ok && errors.Is(err, w) {
		return true
	}
	return fmt.Sprintf("%T", err) == fmt.Sprintf("%T", want)
}

// Count and sum answers: the record proven present, or absent (0); a changed record or
// a claimed absence fails.
func TestCountAnswers(t *testing.T) {
	m := newMarket(t)
	seven := `{"where":[["seller","==","` + strings.Repeat("07", 32) + `"]]}`
	for _, c := range []struct {
		path, index, query string
		count              uint64
		sum                int64
	}{
		{PathCount, "", `{"where":[["category","==","home"]]}`, 3, 0},
		{PathCount, "", `{"where":[["category","==","toys"]]}`, 0, 0},
		{PathCount, "byCategory", ``, 8, 0},
		{PathCount, "", `{"where":[["category","==","home"],["$createdAt","==",2000]]}`, 1, 0},
		{PathSum, "", seven, 4, 12},
		{PathSum, "stockBySeller", ``, 8, 25},
	} {
		t.Run(c.path+" "+c.index+" "+c.query, func(t *testing.T) {
			data := CountData(m.contract.ID, "listing", c.index, []byte(c.query))
			var a CountAnswer
			var ops *cmtcrypto.ProofOps
			m.view(t, func(tr *iavl.ImmutableTree) {
				var err error
				if a, ops, err = AnswerCount(tr, c.path, data); err != nil {
					t.Fatal(err)
				}
			})
			res, err := VerifyCount(m.root, c.path, data, a, ops)
			if err != nil {
				t.Fatal(err)
			}
			if res.Count != c.count || res.Sum != drive.Int64(c.sum) {
				t.Fatalf("count %d sum %s, want %d and %d", res.Count, res.Sum, c.count, c.sum)
			}
			tampered := a
			if len(a.Record) == 0 {
				tampered.Record = drive.EncodeIndexCount(drive.IndexCount{Count: 1})
			} else {
				tampered.Record = drive.EncodeIndexCount(drive.IndexCount{Count: c.count + 1, Sum: drive.Int64(c.sum)})
			}
			if _, err := VerifyCount(m.root, c.path, data, tampered, ops); err == nil {
				t.Fatal("a changed count verifies")
			}
			if len(a.Record) != 0 {
				tampered.Record = drive.EncodeIndexCount(drive.IndexCount{Count: c.count, Sum: drive.Int64(c.sum + 1)})
				if _, err := VerifyCount(m.root, c.path, data, tampered, ops); err == nil {
					t.Fatal("a changed sum verifies")
				}
				tampered.Record = nil
				if _, err := VerifyCount(m.root, c.path, data, tampered, ops); err == nil {
					t.Fatal("a claimed absence verifies")
				}
			}
		})
	}
}

// Query errors carry their stable codes.
func TestDocumentQueryErrors(t *testing.T) {
	m := newMarket(t)
	id := m.docs["lamp"].ID.String()
	for _, c := range []struct {
		query string
		code  uint32
	}{
		{`not json`, QueryCodeNotJSON},
		{`{"where":[["category","==","home"]],"bogus":1}`, QueryCodeUnknownField},
		{`{"where":[["colour","==","red"]]}`, QueryCodeUnknownField},
		{`{"where":[["quantity","==",3]]}`, QueryCodeFieldNotIndexed},
		{`{"orderBy":[["quantity","asc"]]}`, QueryCodeFieldNotIndexed},
		{`{"where":[["category","like","h%"]]}`, QueryCodeUnsupportedOperator},
		{`{"where":[["$createdAt","startsWith","1"]]}`, QueryCodeUnsupportedOperator},
		{`{"where":[["category","==",5]]}`, QueryCodeWrongValueType},
		{`{"where":[["$createdAt",">",-1]]}`, QueryCodeWrongValueType},
		{`{"limit":101}`, QueryCodeLimitTooLarge},
		{`{"startAt":"` + id + `","startAfter":"` + id + `"}`, QueryCodeBothStarts},
		{`{"startAt":"` + strings.Repeat("ab", 32) + `"}`, QueryCodeNotFound},
	} {
		m.view(t, func(tr *iavl.ImmutableTree) {
			_, _, err := AnswerDocuments(tr, DocumentsData(m.contract.ID, "listing", []byte(c.query)))
			if got := QueryCodeOf(err); err == nil || got != c.code {
				t.Errorf("%s: code %d (%v), want %d", c.query, got, err, c.code)
			}
		})
	}
	m.view(t, func(tr *iavl.ImmutableTree) {
		for _, data := range [][]byte{
			DocumentsData(m.contract.ID, "nope", []byte(`{}`)),
			DocumentsData(protocol.ContractID{9}, "listing", []byte(`{}`)),
		} {
			if _, _, err := AnswerDocuments(tr, data); QueryCodeOf(err) != QueryCodeNotFound {
				t.Errorf("%x: %v, want QueryCodeNotFound", data, err)
			}
		}
		if _, _, err := AnswerDocuments(tr, []byte{1, 2}); QueryCodeOf(err) != QueryCodeBadRequest {
			t.Errorf("short data: %v, want QueryCodeBadRequest", err)
		}
		if _, _, err := AnswerCount(tr, PathSum, CountData(m.contract.ID, "listing", "byCategory", nil)); QueryCodeOf(err) != QueryCodeFieldNotIndexed {
			t.Errorf("sum on a countable index: %v, want QueryCodeFieldNotIndexed", err)
		}
	})
}

// itemTypes has an index with a descending string part and one with a descending
// integer part, where the inverted bytes swap the bounds of ranges and startsWith.
const itemTypes = `{"documentSchemas":{"item":{"type":"object","properties":{
 "name":{"type":"string","maxLength":8,"position":0},
 "n":{"type":"integer","position":1},
 "flag":{"type":"boolean","position":2}},
 "additionalProperties":false,
 "indices":[{"name":"byName","properties":[{"name":"desc"},{"n":"asc"}]},
  {"name":"byN","properties":[{"n":"desc"},{"flag":"asc"}]}]}}}`

// TestDocumentQueriesAgainstReference: random queries on random documents (unset values
// among them) are answered as the brute-force reference answers them, and verify: the
// raft quick-test habit of a dumb implementation checked against the real one.
func TestDocumentQueriesAgainstReference(t *testing.T) {
	t.Parallel()
	types, err := protocol.ParseDocumentTypes([]byte(itemTypes), protocol.V13)
	if err != nil {
		t.Fatal(err)
	}
	owner := protocol.IdentityID{1}
	c := protocol.Contract{ID: protocol.NewContractID(owner, 1), Owner: owner, Version: 1, DocumentTypes: types}
	dt := drive.DocumentType{Contract: c.ID, DocumentType: types[0]}
	store, err := drive.NewStore(dbm.NewMemDB(), drive.Options{CacheSize: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	kv := store.Working()
	if err := drive.SetProtocolVersion(kv, protocol.V13); err != nil {
		t.Fatal(err)
	}
	if _, err := drive.SetContract(kv, c); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 4))
	names := []string{"", "a", "ab", "abc", "a\x00", "a\x00b", "b", "ba", "\xff"}
	var docs []protocol.Document
	for i := range 60 {
		vals := make([]protocol.Value, 3)
		if rng.IntN(8) > 0 {
			vals[0] = protocol.Value{Set: true, Bytes: []byte(names[rng.IntN(len(names))])}
		}
		if rng.IntN(8) > 0 {
			vals[1] = protocol.Value{Set: true, Int: int64(rng.IntN(9) - 4)}
		}
		if rng.IntN(3) > 0 {
			vals[2] = protocol.Value{Set: true, Bool: rng.IntN(2) == 0}
		}
		d := protocol.Document{ID: protocol.DocumentID{byte(i), 7}, Owner: owner, Revision: 1, CreatedAt: uint64(i), UpdatedAt: uint64(i), Values: vals}
		if err := drive.InsertDocument(kv, &drive.Storage{Payer: owner, PerByte: 1}, dt, d); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	_, root, err := store.Commit()
	if err != nil {
		t.Fatal(err)
	}

	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	value := func(field string) string {
		switch field {
		case "name":
			return quote(names[rng.IntN(len(names))])
		case "n":
			return fmt.Sprint(rng.IntN(11) - 5)
		}
		return fmt.Sprint(rng.IntN(2) == 0)
	}
	indexes := map[string][]string{"byName": {"name", "n"}, "byN": {"n", "flag"}}
	answered := 0
	for range 600 {
		props := indexes[[]string{"byName", "byN"}[rng.IntN(2)]]
		var where, order []string
		k := rng.IntN(2)
		for _, p := range props[:k] {
			where = append(where, `["`+p+`","==",`+value(p)+`]`)
		}
		next := props[k]
		switch op := []string{"", "in", "<", "<=", ">", ">=", "startsWith", "between"}[rng.IntN(8)]; {
		case op == "":
		case op == "in":
			where = append(where, `["`+next+`","in",[`+value(next)+`,`+value(next)+`,`+value(next)+`]]`)
		case op == "startsWith":
			if next == "name" {
				where = append(where, `["name","startsWith",`+quote([]string{"a", "a\x00", "b", "ab"}[rng.IntN(4)])+`]`)
			}
		case op == "between":
			if next != "flag" {
				where = append(where, `["`+next+`",">",`+value(next)+`]`, `["`+next+`","<=",`+value(next)+`]`)
			}
		case next != "flag":
			where = append(where, `["`+next+`","`+op+`",`+value(next)+`]`)
		}
		if rng.IntN(2) == 0 {
			reverse := rng.IntN(2) == 0
			for i, p := range props[k:] {
				dir := "asc"
				if (k+i == 0) != reverse { // the first property of each index is desc
					dir = "desc"
				}
				order = append(order, `["`+p+`","`+dir+`"]`)
			}
		}
		query := `{"where":[` + strings.Join(where, ",") + `],"orderBy":[` + strings.Join(order, ",") + `],"limit":` + fmt.Sprint(rng.IntN(8))
		if rng.IntN(3) == 0 {
			query += `,"` + []string{"startAt", "startAfter"}[rng.IntN(2)] + `":"` + docs[rng.IntN(len(docs))].ID.String() + `"`
		}
		query += "}"

		data := DocumentsData(c.ID, "item", []byte(query))
		var a DocumentsAnswer
		var ops *cmtcrypto.ProofOps
		err := store.View(0, func(tr *iavl.ImmutableTree) error {
			var err error
			a, ops, err = AnswerDocuments(tr, data)
			return err
		})
		if err != nil {
			t.Fatalf("%q: %v", query, err)
		}
		res, err := VerifyDocuments(root, data, a, ops)
		if err != nil {
			t.Fatalf("%q: %v", query, err)
		}
		q := res.Query
		var want []protocol.Document
		for _, d := range docs {
			if q.Matches(d) {
				want = append(want, d)
			}
		}
		key := func(d protocol.Document) []byte { return drive.EntryKey(c.ID, q, d) }
		slices.SortFunc(want, func(x, y protocol.Document) int {
			if q.Reverse {
				return bytes.Compare(key(y), key(x))
			}
			return bytes.Compare(key(x), key(y))
		})
		if q.Start != nil {
			sk := key(docs[q.Start[0]])
			want = slices.DeleteFunc(want, func(d protocol.Document) bool {
				cmp := bytes.Compare(key(d), sk)
				if q.Reverse {
					cmp = -cmp
				}
				return cmp < 0 || (cmp == 0 && !q.StartIncluded)
			})
		}
		if len(want) > q.Limit {
			want = want[:q.Limit]
		}
		if len(want) != len(res.Documents) {
			t.Fatalf("%q: %d documents, the reference %d", query, len(res.Documents), len(want))
		}
		for i := range want {
			if want[i].ID != res.Documents[i].ID {
				t.Fatalf("%q: document %d is %x, the reference's %x", query, i, res.Documents[i].ID[:1], want[i].ID[:1])
			}
		}
		if len(want) > 0 {
			answered++
		}
	}
	if answered < 200 {
		t.Fatalf("only %d of 600 queries found documents", answered)
	}
}

// The query codes are stable (docs/ERRORS.md, docs/PROOFS.md), and every kind of query
// refusal has its own.
func TestQueryCodesPinned(t *testing.T) {
	for code, want := range map[uint32]uint32{
		QueryCodeBadRequest: 1, QueryCodeVersionMissing: 2, QueryCodeInternal: 3,
		QueryCodeNotJSON: 4, QueryCodeUnknownField: 5, QueryCodeFieldNotIndexed: 6, QueryCodeUnsupportedOperator: 7,
		QueryCodeWrongValueType: 8, QueryCodeLimitTooLarge: 9, QueryCodeBothStarts: 10, QueryCodeNotFound: 11,
	} {
		if code != want {
			t.Errorf("query code %d, pinned at %d", code, want)
		}
	}
	seen := map[uint32]bool{}
	for k := query.NotJSON; k <= query.BothStarts; k++ {
		code := QueryCodeOf(query.ErrInvalid{Kind: k})
		if code < QueryCodeNotJSON || code > QueryCodeBothStarts || seen[code] {
			t.Errorf("query error kind %d has code %d", k, code)
		}
		seen[code] = true
	}
}
