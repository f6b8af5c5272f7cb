package client

import (
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// send signs and commits t with key and fails the test on a refusal.
func send(t *testing.T, c *Client, tr protocol.Transition, key ed25519.PrivateKey) {
	t.Helper()
	ctx := context.Background()
	tx, err := c.Sign(ctx, tr, key)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.Broadcast(ctx, tx, true); err != nil || res.Refused() {
		t.Fatalf("%T: %+v %v", tr, res, err)
	}
}

// ownContract creates an identity of key, funded with 500,000,000,000 credits, and
// registers contract definition def owned by it.
func ownContract(t *testing.T, c *Client, key ed25519.PrivateKey, def []byte) (protocol.IdentityID, protocol.ContractID) {
	t.Helper()
	create := &protocol.IdentityCreate{PubKey: pubOf(key), Amount: 500_000_000_000, Keys: []ed25519.PublicKey{pubOf(key)}}
	send(t, c, create, key)
	owner := protocol.NewIdentityID(protocol.AddressOf(pubOf(key)), create.Nonce)
	cc := &protocol.DataContractCreate{Identity: owner, Definition: def}
	send(t, c, cc, key)
	return owner, protocol.NewContractID(owner, cc.Nonce)
}

// The document reads on a chain holding the market contract and three listings:
// one document by id, a query in the index's order and reversed, count and sum.
func TestDocumentReads(t *testing.T) {
	c, _ := newTestClient(t)
	ctx := context.Background()
	alice := seedKey("alice")
	def, err := os.ReadFile("../docs/examples/market.json")
	if err != nil {
		t.Fatal(err)
	}
	owner, contract := ownContract(t, c, alice, def)
	seller := "[" + strings.TrimSuffix(strings.Repeat("7,", 32), ",") + "]"
	batch := &protocol.DocumentsBatch{Identity: owner, Contract: contract}
	ids := map[string]protocol.DocumentID{}
	for i, l := range []struct{ name, category, quantity string }{{"lamp", "home", "3"}, {"desk", "home", "1"}, {"bike", "sport", "2"}} {
		a := protocol.DocumentAction{Kind: protocol.ActionCreate, Type: "listing", Entropy: [32]byte{byte(i + 1)},
			Data: []byte(`{"sku":"` + strings.ToUpper(l.name) + `","category":"` + l.category + `","quantity":` + l.quantity + `,"seller":` + seller + `}`)}
		ids[l.name] = batch.CreateID(a)
		batch.Actions = append(batch.Actions, a)
	}
	send(t, c, batch, alice)

	doc, err := c.Document(ctx, contract, "listing", ids["desk"], 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Present || doc.Owner != owner || string(protocol.DocumentData(doc.Type, doc.Document)) != `{"category":"home","quantity":1,"seller":`+seller+`,"sku":"DESK"}` {
		t.Fatalf("document: %+v", doc)
	}
	if absent, err := c.Document(ctx, contract, "listing", protocol.DocumentID{1}, 0, false); err != nil || absent.Present {
		t.Fatalf("absent document: %+v %v", absent, err)
	}

	for _, q := range []struct{ query, want string }{
		{`{"where":[["category","==","home"]]}`, "desk lamp"},
		{`{"where":[["category","==","home"]],"orderBy":[["$createdAt","asc"]],"limit":1}`, "lamp"},
		{`{"where":[["category","in",["home","sport"]]],"startAfter":"` + ids["lamp"].String() + `"}`, "bike"},
	} {
		ans, err := c.Documents(ctx, contract, "listing", []byte(q.query), 0, false)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range ans.Documents {
			for n, id := range ids {
				if id == d.ID {
					got = append(got, n)
				}
			}
		}
		// desk and lamp share $createdAt: the index orders them by id
		want := q.want
		if q.want == "desk lamp" && ids["lamp"].String() < ids["desk"].String() {
			want = "lamp desk"
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: %v, want %s", q.query, got, want)
		}
	}

	count, err := c.Count(ctx, contract, "listing", "", []byte(`{"where":[["category","==","home"]]}`), 0, false)
	if err != nil || count.Count != 2 || count.Index != "byCategory" {
		t.Fatalf("count: %+v %v", count, err)
	}
	sum, err := c.Sum(ctx, contract, "listing", "stockBySeller", nil, 0, false)
	if err != nil || sum.Count != 3 || sum.Sum != drive.Int64(6) {
		t.Fatalf("sum: %+v %v", sum, err)
	}

	_, err = c.Documents(ctx, contract, "listing", []byte(`{"where":[["quantity","==",1]]}`), 0, false)
	var q ErrQuery
	if !errors.As(err, &q) || q.Code != proofs.QueryCodeFieldNotIndexed {
		t.Fatalf("a query no index serves: %v", err)
	}
}

// "documentsKeepHistory keeps every revision queryable": each revision of a document of
// such a type reads back by DocumentRevision (a single key, proven like any other);
// one never written reads absent.
func TestDocumentRevisions(t *testing.T) {
	c, _ := newTestClient(t)
	ctx := context.Background()
	alice := seedKey("alice")
	owner, contract := ownContract(t, c, alice, []byte(`{"documentSchemas":{"page":{"type":"object","documentsKeepHistory":true,`+
		`"properties":{"body":{"type":"string","maxLength":100,"position":0}},"required":["body"],"additionalProperties":false}}}`))
	b := &protocol.DocumentsBatch{Identity: owner, Contract: contract, Actions: []protocol.DocumentAction{{Kind: protocol.ActionCreate, Type: "page", Data: []byte(`{"body":"first"}`)}}}
	id := b.CreateID(b.Actions[0])
	send(t, c, b, alice)
	send(t, c, &protocol.DocumentsBatch{Identity: owner, Contract: contract, Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionReplace, Type: "page", ID: id, Revision: 2, Data: []byte(`{"body":"second"}`)}}}, alice)
	for rev, want := range map[uint64]string{0: `{"body":"second"}`, 1: `{"body":"first"}`, 2: `{"body":"second"}`} {
		st, err := c.DocumentRevision(ctx, contract, "page", id, rev, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Present || string(protocol.DocumentData(st.Type, st.Document)) != want || (rev != 0 && st.Revision != rev) {
			t.Fatalf("revision %d: %+v", rev, st)
		}
	}
	if st, err := c.DocumentRevision(ctx, contract, "page", id, 3, 0, false); err != nil || st.Present {
		t.Fatalf("revision 3: %+v %v", st, err)
	}
}
