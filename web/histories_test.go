package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestHistories: the transaction list and its filters, an account's and a document's
// history, the blocks that hold transactions and the statistics, each from the
// node's indexes, each page linking the next, an empty result saying so.
func TestHistories(t *testing.T) {
	t.Parallel()
	e := startExplorer(t, startChain(t))
	id, addr := e.identity.String(), e.env.Dev.Address().String()
	txHref := "/tx/" + e.hash + "?height=" + strconv.FormatInt(e.batch, 10)
	docPath := "/document/" + e.plain.String() + "/memo/" + e.memos[0].String()

	// Every transaction, newest first, and a page at a time.
	body := e.page(t, "/txs")
	links(t, "/txs", body, txHref, "/identity/"+id)
	first := e.page(t, "/txs?limit=1")
	second := e.page(t, pagerLink(t, first, "next"))
	if !strings.Contains(first, txHref) || strings.Contains(second, txHref) {
		t.Error("/txs?limit=1: the newest first, then the one before")
	}
	// Paged two at a time to the end, every transaction of every block, newest
	// first, each once.
	var paged []string
	for path := "/api/txs?limit=2"; path != ""; {
		status, _, raw := e.get(t, path)
		var page struct {
			Txs  []struct{ Hash string } `json:"transactions"`
			Next string
		}
		if err := json.Unmarshal([]byte(raw), &page); status != http.StatusOK || err != nil {
			t.Fatalf("GET %s: %d %v", path, status, err)
		}
		for _, tx := range page.Txs {
			paged = append(paged, tx.Hash)
		}
		path = ""
		if page.Next != "" {
			path = "/api/txs?limit=2&cursor=" + page.Next
		}
	}
	var want []string
	for h := e.batch + 1; h >= 1; h-- {
		blk, err := e.rpc.Block(context.Background(), &h)
		if err != nil {
			t.Fatal(err)
		}
		for i := len(blk.Block.Txs) - 1; i >= 0; i-- {
			want = append(want, fmt.Sprintf("%X", blk.Block.Txs[i].Hash()))
		}
	}
	if strings.Join(paged, " ") != strings.Join(want, " ") {
		t.Errorf("/txs two at a time: %v, want %v", paged, want)
	}
	// Filters: by kind (a group, a type, a document action) and by code.
	for path, has := range map[string]bool{
		"/txs?kind=documents_batch": true, "/txs?kind=document_create": true, "/txs?kind=documents": true,
		"/txs?code=0": true, "/txs?kind=document_create&code=0": true,
		"/txs?kind=transfers": false, "/txs?kind=document_renew": false, "/txs?code=40001": false,
	} {
		body := e.page(t, path)
		if strings.Contains(body, txHref) != has {
			t.Errorf("GET %s: lists the batch %v, want %v", path, !has, has)
		}
		if !has && !strings.Contains(body, "No transaction matches these filters") {
			t.Errorf("GET %s: an empty list that does not say so", path)
		}
	}

	// The identity's history: what it signed, and its creation funded by the address;
	// the address's: the identity it funded.
	body = e.page(t, "/identity/"+id+"/history")
	links(t, "/identity/"+id+"/history", body, txHref, "/identity/"+id)
	if !strings.Contains(body, "signed documents_batch") || !strings.Contains(body, "created, funded by") {
		t.Error("the identity's history: not what it signed and its creation")
	}
	body = e.page(t, "/address/"+addr+"/history")
	if !strings.Contains(body, "signed identity_create") {
		t.Error("the address's history: no identity_create")
	}
	links(t, "/identity/"+id, e.page(t, "/identity/"+id), "/identity/"+id+"/history")
	links(t, "/address/"+addr, e.page(t, "/address/"+addr), "/address/"+addr+"/history")
	if body := e.page(t, "/address/"+strings.Repeat("ab", 20)+"/history"); !strings.Contains(body, "Nothing has touched it") {
		t.Error("the history of an address nothing touched does not say so")
	}

	// The document's history, linked both ways with its page.
	body = e.page(t, docPath+"/history")
	links(t, docPath+"/history", body, txHref, docPath, "/identity/"+id)
	if !strings.Contains(body, ">create<") {
		t.Error("the document's history: no create")
	}
	links(t, docPath, e.page(t, docPath), docPath+"/history")
	// The batch's page names the document in its event and links, from the event's
	// type, the document's history.
	links(t, txHref, e.page(t, txHref), docPath, docPath+"/history")

	// The blocks with transactions, the batch's among them, none empty.
	body = e.page(t, "/blocks?nonempty=1")
	links(t, "/blocks?nonempty=1", body, "/block/"+strconv.FormatInt(e.batch, 10))
	if strings.Contains(body, `<td class="num">0</td>`) {
		t.Error("/blocks?nonempty=1 lists an empty block")
	}
	links(t, "/blocks", e.page(t, "/blocks"), "/blocks?nonempty=1")

	// The validators' blocks over the last ones: the one validator proposed and
	// signed them all.
	status, _, raw := e.get(t, "/api/validators")
	var vals struct {
		Activity []struct {
			Address                  string
			Proposed, Signed, Missed int
		}
	}
	if err := json.Unmarshal([]byte(raw), &vals); status != http.StatusOK || err != nil || len(vals.Activity) != 1 {
		t.Fatalf("GET /api/validators: %d %v %+v", status, err, vals)
	}
	if a := vals.Activity[0]; a.Address != e.env.Trusted.Validators[0].Address.String() || a.Proposed < 5 || a.Signed != a.Proposed || a.Missed != 0 {
		t.Errorf("the validator's blocks: %+v", a)
	}
	links(t, "/validators", e.page(t, "/validators"), "/validator/"+e.env.Trusted.Validators[0].Address.String())

	// The statistics: the four documents (the note and the three memos), the note
	// expiring within the hour.
	status, _, raw = e.get(t, "/api/stats")
	var st struct {
		Blocks int64 `json:"blocks"`
		Txs    int64 `json:"transactions"`
		State  struct {
			Contracts, Documents, Expiring int64
			Types                          int64 `json:"document_types"`
		} `json:"state"`
	}
	if err := json.Unmarshal([]byte(raw), &st); status != http.StatusOK || err != nil {
		t.Fatalf("GET /api/stats: %d %v", status, err)
	}
	if st.State.Contracts != 2 || st.State.Types != 2 || st.State.Documents != 4 || st.State.Expiring != 1 || st.Txs < 4 || st.Blocks < 5 {
		t.Errorf("the statistics: %+v", st)
	}
	if body := e.page(t, "/stats"); !strings.Contains(body, `id="live-documents">4,`) {
		t.Error("/stats does not show the four documents")
	}
}

// TestCursorPastTheTop: a cursor past the chain's latest height reads from the top.
func TestCursorPastTheTop(t *testing.T) {
	t.Parallel()
	c := startChain(t)
	top, past := c.page(t, "/txs"), c.page(t, "/txs?cursor=999999999.0")
	if hashOf := regexp.MustCompile(`/tx/[0-9A-F]{64}`); hashOf.FindString(top) == "" || hashOf.FindString(top) != hashOf.FindString(past) {
		t.Error("a cursor past the top does not list the newest transaction first")
	}
}
