package main

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/proofs"
)

// TestWindowQueryCommands: likes of docs/examples/likes.json against a real node, read
// with --prove: the trending posts of the newest window, the window's documents and
// counts, and a window past its horizon refused with query code 12.
func TestWindowQueryCommands(t *testing.T) {
	env := e2e.StartNode(t)
	c := cli{t: t, env: env}
	var created, tx txOutput
	if err := c.json(&created, "tx", "identity", "create", "--from", node.DevKeyName, "--amount", "100000000000", "--commit"); err != nil || created.Code != 0 {
		t.Fatalf("identity create: %+v %v", created, err)
	}
	if err := c.json(&tx, "tx", "contract", "create", "../../docs/examples/likes.json", "--identity", created.Identity, "--from", node.DevKeyName, "--commit"); err != nil || tx.Code != 0 {
		t.Fatalf("contract create: %+v %v", tx, err)
	}
	contract := tx.Contract
	for _, post := range []string{"hello", "world", "hello"} {
		if err := c.json(&tx, "tx", "document", "create", contract, "burst", `{"post":"`+post+`"}`, "--identity", created.Identity, "--from", node.DevKeyName, "--commit"); err != nil || tx.Code != 0 {
			t.Fatalf("like %s: %+v %v", post, tx, err)
		}
	}

	var trending struct {
		Answer   trendingJSON `json:"answer"`
		Verified string       `json:"verified"`
	}
	// The likes may straddle a minute: read the newest window, then the one before if
	// it holds them all.
	if err := c.json(&trending, "query", "trending", contract, "burst", "lastMinute", "--newest", "--prove"); err != nil {
		t.Fatal(err)
	}
	total := func(a trendingJSON) (n uint64) {
		for _, g := range a.Groups {
			n += g.Count
		}
		return n
	}
	if total(trending.Answer) != 3 {
		t.Skipf("the three likes straddle a minute (newest window holds %d): nothing to compare", total(trending.Answer))
	}
	g := trending.Answer.Groups
	if trending.Verified != "presence" || len(g) != 2 || g[0].Count != 2 || g[0].Values["post"] != "hello" || g[1].Count != 1 || g[1].Values["post"] != "world" {
		t.Fatalf("query trending --prove: %+v", trending)
	}
	var page struct {
		Answer trendingJSON `json:"answer"`
	}
	if err := c.json(&page, "query", "trending", contract, "burst", "lastMinute", "--start", u64s(trending.Answer.WindowStart), "--top", "1", "--after", g[0].Cursor, "--prove"); err != nil ||
		len(page.Answer.Groups) != 1 || page.Answer.Groups[0].Values["post"] != "world" || page.Answer.More {
		t.Fatalf("the page after hello: %+v %v", page, err)
	}

	var docs struct {
		Answer   windowDocumentsJSON `json:"answer"`
		Verified string              `json:"verified"`
	}
	if err := c.json(&docs, "query", "window", contract, "burst", "lastMinute", "--start", u64s(trending.Answer.WindowStart), "--where", "post == hello", "--prove"); err != nil ||
		docs.Verified != "presence" || len(docs.Answer.Documents) != 2 || docs.Answer.WindowStart != trending.Answer.WindowStart {
		t.Fatalf("query window --prove: %+v %v", docs, err)
	}
	var count struct {
		Answer windowCountJSON `json:"answer"`
	}
	// By its start, not --newest: a minute may have begun since the first read.
	if err := c.json(&count, "query", "window", contract, "burst", "lastMinute", "--start", u64s(trending.Answer.WindowStart), "--count", "--prove"); err != nil || count.Answer.Count != 3 {
		t.Fatalf("query window --count --prove: %+v %v", count, err)
	}

	// A window two minutes and more before the state's block time is past its ttl.
	_, err := c.run("query", "trending", contract, "burst", "lastMinute", "--start", "1767225600000", "--prove")
	var failed client.ErrQuery
	if !errors.As(err, &failed) || failed.Code != proofs.QueryCodeWindowExpired {
		t.Fatalf("an expired window: %v, want query code %d", err, proofs.QueryCodeWindowExpired)
	}
	if _, err := c.run("query", "window", contract, "burst", "lastMinute"); err == nil || !strings.Contains(err.Error(), "start") {
		t.Fatalf("no window selector: %v", err)
	}
}

func u64s(v uint64) string { return strconv.FormatUint(v, 10) }
