package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// TestQueryDocumentFlagsRefused: a malformed clause or id is refused, naming it,
// before the command talks to a node (--node is closed).
func TestQueryDocumentFlagsRefused(t *testing.T) {
	home := t.TempDir()
	closed := "http://" + freeAddr(t)
	c := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		args        []string
		bad, badArg string
	}{
		{args: []string{"query", "documents", c, "listing", "--where", "category =="}, bad: "where"},
		{args: []string{"query", "documents", c, "listing", "--order-by", "category up"}, bad: "order-by"},
		{args: []string{"query", "count", c, "listing", "--where", "category"}, bad: "where"},
		{args: []string{"query", "documents", "xyz", "listing"}, badArg: "ID"},
		{args: []string{"query", "document", c, "listing", "xyz"}, badArg: "ID"},
	} {
		_, err := runCLI(t, append(tc.args, "--home", home, "--node", closed)...)
		var bad errUsage
		var badArg errBadArg
		switch {
		case tc.bad != "" && errors.As(err, &bad) && bad.Flag == tc.bad:
		case tc.badArg != "" && errors.As(err, &badArg) && badArg.Name == tc.badArg:
		default:
			t.Errorf("ttld %s: err = %v (%T), want %q%q refused", strings.Join(tc.args, " "), err, err, tc.bad, tc.badArg)
		}
	}
}

// Document queries against a real node, verified: the market contract with three
// listings, read by id, by a query in both orders with pagination, counted and summed.
func TestDocumentQueryCommands(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	c := cli{t: t, env: env}
	var created txOutput
	if err := c.json(&created, "tx", "identity", "create", "--from", node.DevKeyName, "--amount", "10000000000", "--commit"); err != nil || created.Code != 0 {
		t.Fatalf("identity create: %+v %v", created, err)
	}
	var tx txOutput
	if err := c.json(&tx, "tx", "contract", "create", "../../docs/examples/market.json", "--identity", created.Identity, "--from", node.DevKeyName, "--commit"); err != nil || tx.Code != 0 {
		t.Fatalf("contract create: %+v %v", tx, err)
	}
	owner, err := protocol.ParseIdentityID(created.Identity)
	if err != nil {
		t.Fatal(err)
	}
	contract := protocol.NewContractID(owner, tx.Nonce)

	seller := "[" + strings.TrimSuffix(strings.Repeat("7,", 32), ",") + "]"
	batch := &protocol.DocumentsBatch{Identity: owner, Contract: contract}
	ids := map[string]string{}
	for i, l := range []struct{ sku, category, quantity string }{{"LAMP", "home", "3"}, {"DESK", "home", "1"}, {"BIKE", "sport", "2"}} {
		a := protocol.DocumentAction{Kind: protocol.ActionCreate, Type: "listing", Entropy: [32]byte{byte(i + 1)},
			Data: []byte(`{"sku":"` + l.sku + `","category":"` + l.category + `","quantity":` + l.quantity + `,"seller":` + seller + `}`)}
		ids[l.sku] = batch.CreateID(a).String()
		batch.Actions = append(batch.Actions, a)
	}
	ctx := context.Background()
	signed, err := env.Client.Sign(ctx, batch, env.Dev.Priv)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := env.Client.Broadcast(ctx, signed, true); err != nil || res.Refused() {
		t.Fatalf("documents batch: %+v %v", res, err)
	}

	type verifiedDocument struct {
		Answer   documentStateJSON `json:"answer"`
		Verified string            `json:"verified"`
	}
	var one verifiedDocument
	if err := c.json(&one, "query", "document", contract.String(), "listing", ids["DESK"], "--prove"); err != nil {
		t.Fatal(err)
	}
	var data bytes.Buffer
	if err := json.Compact(&data, one.Answer.Data); err != nil {
		t.Fatal(err)
	}
	if d := one.Answer; one.Verified != "presence" || d.Owner != created.Identity || d.Revision != 1 || d.CreatedAt == 0 ||
		data.String() != `{"category":"home","quantity":1,"seller":"`+strings.Repeat("07", 32)+`","sku":"DESK"}` {
		t.Fatalf("query document --prove: %+v", one)
	}
	if err := c.json(&one, "query", "document", contract.String(), "listing", strings.Repeat("00", 32), "--prove"); err != nil || one.Verified != "absence" {
		t.Fatalf("an absent document: %+v %v", one, err)
	}

	type verifiedDocuments struct {
		Answer   documentsJSON `json:"answer"`
		Verified string        `json:"verified"`
	}
	skus := func(v verifiedDocuments) string {
		var out []string
		for _, d := range v.Answer.Documents {
			for sku, id := range ids {
				if id == d.ID {
					out = append(out, sku)
				}
			}
		}
		return strings.Join(out, " ")
	}
	var all, first, rest verifiedDocuments
	args := []string{"query", "documents", contract.String(), "listing", "--where", "category in [\"home\",\"sport\"]", "--prove"}
	if err := c.json(&all, args...); err != nil || all.Verified != "presence" || all.Answer.Index != "byCategory" || len(all.Answer.Documents) != 3 ||
		!strings.HasSuffix(skus(all), " BIKE") {
		t.Fatalf("query documents --prove: %+v %v", all, err)
	}
	if err := c.json(&first, append(args, "--limit", "2")...); err != nil || len(first.Answer.Documents) != 2 {
		t.Fatalf("first page: %+v %v", first, err)
	}
	if err := c.json(&rest, append(args, "--limit", "2", "--start-after", first.Answer.Documents[1].ID)...); err != nil || skus(rest) != "BIKE" {
		t.Fatalf("second page: %+v %v", rest, err)
	}
	// every direction of the index reversed: the same documents, last first
	var reversed verifiedDocuments
	err = c.json(&reversed, append(args, "--order-by", "category desc", "--order-by", "$createdAt asc")...)
	back := strings.Fields(skus(all))
	slices.Reverse(back)
	if err != nil || skus(reversed) != strings.Join(back, " ") {
		t.Fatalf("reversed: %q, in index order %q (%v)", skus(reversed), skus(all), err)
	}
	out, err := c.run("query", "documents", contract.String(), "listing", "--where", "category == home", "--where", "$createdAt > 5", "--prove")
	if err != nil || !strings.Contains(out, "documents: 2\n") || !strings.Contains(out, "VERIFIED presence at height ") {
		t.Fatalf("query documents (text): %q %v", out, err)
	}
	_, err = c.run("query", "documents", contract.String(), "listing", "--where", "quantity > 1")
	var q client.ErrQuery
	if !errors.As(err, &q) || q.Code != proofs.QueryCodeFieldNotIndexed {
		t.Fatalf("a field no index serves: %v", err)
	}

	var count struct {
		Answer   countJSON `json:"answer"`
		Verified string    `json:"verified"`
	}
	if err := c.json(&count, "query", "count", contract.String(), "listing", "--where", "category == home", "--prove"); err != nil ||
		count.Verified != "presence" || count.Answer.Count != 2 || count.Answer.Index != "byCategory" {
		t.Fatalf("query count --prove: %+v %v", count, err)
	}
	if err := c.json(&count, "query", "count", contract.String(), "listing", "--where", "category == toys", "--prove"); err != nil ||
		count.Verified != "absence" || count.Answer.Count != 0 {
		t.Fatalf("query count of nothing --prove: %+v %v", count, err)
	}
	if err := c.json(&count, "query", "sum", contract.String(), "listing", "--index", "stockBySeller", "--prove"); err != nil ||
		count.Answer.Count != 3 || count.Answer.Sum != "6" {
		t.Fatalf("query sum --prove: %+v %v", count, err)
	}
}

// TestExcludeExpiredSaysWhatWasProven: with --exclude-expired, a document the answer
// proved present but expired at the proven block time is left out of the documents
// and named as left out; the verdict stays presence (what the proof showed), never
// absence, even when nothing else is shown.
func TestExcludeExpiredSaysWhatWasProven(t *testing.T) {
	types, err := protocol.ParseDocumentTypes([]byte(`{"documentSchemas":{"flash":{"type":"object","ttl":3600,"properties":{"text":{"type":"string","maxLength":63,"position":0}},"required":["$createdAt"],"additionalProperties":false}}}`), protocol.V14)
	if err != nil {
		t.Fatal(err)
	}
	gone := protocol.Document{ID: protocol.DocumentID{1}, CreatedAt: 1_000, UpdatedAt: 1_000, Revision: 1}
	live := protocol.Document{ID: protocol.DocumentID{2}, CreatedAt: 1_000_000, UpdatedAt: 1_000_000, Revision: 1}
	a := client.DocumentsAnswer{Type: types[0], Documents: []protocol.Document{gone, live}, Height: 9, Verified: true}
	at := gone.CreatedAt + 3_600_000 // the first millisecond past its expiry
	kept, expired := a.SplitExpired(at)
	if len(kept) != 1 || kept[0].ID != live.ID || len(expired) != 1 || expired[0].ID != gone.ID {
		t.Fatalf("split at %d: kept %v, expired %v", at, kept, expired)
	}
	a.Documents = expired[:0] // the range's only document expired
	out := documentsOutput(protocol.ContractID{7}, a, expired, at)
	if present, height := out.verdict(); !present || height != 9 {
		t.Fatalf("verdict %v at %d, want presence at 9", present, height)
	}
	if len(out.ExpiredLeftOut) != 1 || out.ExpiredLeftOut[0].ID != gone.ID.String() || out.ExpiredLeftOut[0].ExpiresAt != at || out.BlockTime != at || len(out.Documents) != 0 {
		t.Fatalf("output %+v", out)
	}
	var text bytes.Buffer
	out.text(&text)
	if !strings.Contains(text.String(), gone.ID.String()+" expired at") {
		t.Fatalf("the text does not name the document left out:\n%s", text.String())
	}
	// Without the option nothing is left out and an empty range proves absence.
	if present, _ := documentsOutput(protocol.ContractID{7}, client.DocumentsAnswer{Type: types[0], Height: 9}, nil, 0).verdict(); present {
		t.Fatal("an empty answer proves presence")
	}
}
