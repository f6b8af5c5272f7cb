package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	rpcclient "github.com/cometbft/cometbft/rpc/client"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web"
	"github.com/ttld-dev/ttld/web/check"
)

// memoDefinition is a contract of one type, "memo": NoteDefinition's note without a
// ttl.
const memoDefinition = `{"documentSchemas":{"memo":{"type":"object",` +
	`"properties":{"text":{"type":"string","maxLength":63,"position":0}},"required":["$createdAt","text"],"additionalProperties":false,` +
	`"indices":[{"name":"byText","properties":[{"text":"asc"}],"countable":true}]}}}`

// explorer is a chain with, besides startChain's, a contract whose type has no ttl and
// three memos of it written in one batch.
type explorer struct {
	chain
	plain protocol.ContractID
	memos []protocol.DocumentID
	// batch is the height of the batch's block, hash its transaction's hash.
	batch int64
	hash  string
}

func startExplorer(t testing.TB, c chain) explorer {
	t.Helper()
	plain := &protocol.DataContractCreate{Identity: c.identity, Definition: []byte(memoDefinition)}
	c.env.Commit(t, plain)
	b := &protocol.DocumentsBatch{Identity: c.identity, Contract: plain.ContractID()}
	e := explorer{chain: c, plain: plain.ContractID()}
	for i := range 3 {
		data, err := json.Marshal(map[string]string{"text": fmt.Sprintf("plain %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		a := protocol.DocumentAction{Kind: protocol.ActionCreate, Type: "memo", Entropy: [32]byte{byte(20 + i)}, Data: data}
		a.ID = b.CreateID(a)
		b.Actions = append(b.Actions, a)
		e.memos = append(e.memos, a.ID)
	}
	e.batch = c.env.Commit(t, b)
	// Pages read the state before the latest block's: wait for the block after.
	if _, err := c.env.Client.WaitForHeight(context.Background(), e.batch+1); err != nil {
		t.Fatal(err)
	}
	blk, err := c.rpc.Block(context.Background(), &e.batch)
	if err != nil {
		t.Fatal(err)
	}
	e.hash = fmt.Sprintf("%X", blk.Block.Txs[0].Hash())
	return e
}

// page gets path, fails unless it answers 200, and checks its proof box as the
// browser does.
func (c chain) page(t *testing.T, path string) string {
	t.Helper()
	status, _, body := c.get(t, path)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d\n%.400s", path, status, body)
	}
	c.verify(t, path, body)
	return body
}

// links fails unless body links to every href.
func links(t *testing.T, path, body string, hrefs ...string) {
	t.Helper()
	for _, h := range hrefs {
		if !strings.Contains(body, `href="`+html.EscapeString(h)+`"`) {
			t.Errorf("GET %s: no link to %s", path, h)
		}
	}
}

// landing is where a search for q lands: the path and query it is sent to, and the
// status there.
func (c chain) landing(t *testing.T, q string) (string, int) {
	t.Helper()
	res, err := http.Get(c.srv.URL + "/search?q=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.Request.URL.RequestURI(), res.StatusCode
}

// TestExplorer: a transaction's page, reached from its block, shows its decoded
// transition, its fee by parts and its events, every id linked; the overview lists
// the latest blocks and transactions; the contracts, an owner's contracts and an
// account's transactions are listed from the transaction index, a page at a time; a
// validator's page proves its payout identity; a documents list pages forwards and
// back with its count proven; a document of a type without a ttl reads its block
// time; and a search lands on the page of what it names.
func TestExplorer(t *testing.T) {
	t.Parallel()
	e := startExplorer(t, startChain(t))
	ctx := context.Background()
	h := strconv.FormatInt(e.batch, 10)
	id, plain, note := e.identity.String(), e.plain.String(), e.contract.String()
	txHref := "/tx/" + e.hash + "?height=" + h
	docPath := "/document/" + plain + "/memo/" + e.memos[0].String()
	validator := e.env.Trusted.Validators[0].Address.String()

	// The block links its transaction, the documents, the contract, the signer and the
	// proposer.
	body := e.page(t, "/block/"+h)
	links(t, "/block/"+h, body, txHref, docPath, "/contract/"+plain, "/identity/"+id, "/validator/"+validator)

	// The transaction: decoded, its fee by the parts its event reports, its events.
	res, err := e.rpc.BlockResults(ctx, &e.batch)
	if err != nil {
		t.Fatal(err)
	}
	parts := transitionAttrs(res.TxsResults[0].Events)
	for _, path := range []string{txHref, "/tx/" + e.hash, "/tx/" + strings.ToLower(e.hash)} {
		body := e.page(t, path)
		links(t, path, body, "/block/"+h, "/identity/"+id, "/contract/"+plain, docPath)
		for _, want := range []string{fmt.Sprintf(`id="tx-kind">documents_batch (decoded under protocol version %d)`, protocol.Latest), "code 0 OK", `id="fee-parts"`, "action 2", "plain 1", "document_create"} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s: no %q", path, want)
			}
		}
		for _, key := range []string{protocol.AttrFee, protocol.AttrFeeProcessing, protocol.AttrFeePerpetualStorage, protocol.AttrFeeLifetimeStorage, protocol.AttrFeeDeletionPrepay, protocol.AttrRefunds} {
			n, err := strconv.ParseUint(parts[key], 10, 64)
			if err != nil {
				t.Fatalf("the transition event's %s: %q", key, parts[key])
			}
			if !strings.Contains(body, check.Credits(n)) {
				t.Errorf("GET %s: no %s of %s credits", path, key, check.Credits(n))
			}
		}
	}
	for path, want := range map[string]int{
		"/tx/zz": http.StatusBadRequest, "/tx/" + strings.Repeat("0", 64): http.StatusNotFound,
		"/tx/" + e.hash + "?height=1": http.StatusNotFound, "/tx/" + e.hash + "?height=x": http.StatusBadRequest,
	} {
		if status, _, _ := e.get(t, path); status != want {
			t.Errorf("GET %s: %d, want %d", path, status, want)
		}
	}

	// The overview's latest blocks and transactions.
	links(t, "/", e.page(t, "/"), "/block/"+h, txHref, "/contracts")

	// The contracts, newest first, all and an owner's; an owner of none; pages.
	for _, path := range []string{"/contracts", "/contracts?owner=" + id} {
		body := e.page(t, path)
		links(t, path, body, "/contract/"+plain, "/contract/"+note, "/identity/"+id)
		if strings.Index(body, "/contract/"+plain) > strings.Index(body, "/contract/"+note) {
			t.Errorf("GET %s: not the two contracts, newest first", path)
		}
	}
	if body := e.page(t, "/contracts?owner="+strings.Repeat("ab", 32)); !strings.Contains(body, "No contract of this identity yet") {
		t.Error("an identity that owns nothing lists contracts")
	}
	one := e.page(t, "/contracts?limit=1")
	next := pagerLink(t, one, "next")
	if !strings.Contains(one, "/contract/"+plain) || strings.Contains(one, "/contract/"+note) || !strings.Contains(e.page(t, next), "/contract/"+note) {
		t.Errorf("the contracts one at a time: %s", next)
	}
	for path, want := range map[string]int{
		"/contracts?cursor=1.2.3": http.StatusBadRequest, "/contracts?limit=0": http.StatusBadRequest, "/contracts?limit=101": http.StatusBadRequest,
		"/contracts?owner=zz": http.StatusBadRequest, "/txs?signer=zz": http.StatusBadRequest, "/txs?kind=nothing": http.StatusBadRequest,
		"/txs?code=x": http.StatusBadRequest, "/blocks?nonempty=2": http.StatusBadRequest,
	} {
		if status, _, _ := e.get(t, path); status != want {
			t.Errorf("GET %s: %d, want %d", path, status, want)
		}
	}

	// The identity's contracts and transactions; an account's transactions.
	body = e.page(t, "/identity/"+id)
	links(t, "/identity/"+id, body, "/contract/"+plain, "/contract/"+note, txHref)
	links(t, "/txs", e.page(t, "/txs?signer="+id), txHref)
	addr := e.env.Dev.Address().String()
	if body := e.page(t, "/txs?signer="+addr); !strings.Contains(body, "identity_create") {
		t.Errorf("the dev address's transactions do not list its identity_create")
	}
	links(t, "/address/"+addr, e.page(t, "/address/"+addr), "/txs?signer="+addr)

	// The validator: its payout identity, proven.
	body = e.page(t, "/validator/"+validator)
	links(t, "/validator/"+validator, body, "/identity/"+protocol.PayoutIdentityID(e.env.Trusted.Validators[0].Address).String())
	if status, _, _ := e.get(t, "/validator/zz"); status != http.StatusBadRequest {
		t.Errorf("GET /validator/zz: %d", status)
	}

	// Documents a page at a time, forwards and back, their count proven.
	docs := "/documents/" + plain + "/memo?q=" + url.QueryEscape(`{"limit":1}`)
	first := e.page(t, docs)
	if !strings.Contains(first, `data-figure="count">3<`) || strings.Contains(first, `id="prev-page"`) {
		t.Errorf("the first page: no count of 3, or a previous page")
	}
	second := e.page(t, pagerLink(t, first, "next-page"))
	back := e.page(t, pagerLink(t, second, "prev-page"))
	if firstDoc(first) == "" || firstDoc(second) == firstDoc(first) || firstDoc(back) != firstDoc(first) {
		t.Errorf("paging: %q, then %q, then back to %q", firstDoc(first), firstDoc(second), firstDoc(back))
	}
	if strings.Contains(e.page(t, "/documents/"+note+"/note?q="+url.QueryEscape(`{"where":[["text","startsWith","<"]]}`)), `data-figure="count"`) {
		t.Error("a count of where clauses no countable index serves")
	}

	// A document of a type without a ttl reads its block time.
	body = e.page(t, docPath)
	if strings.Contains(body, "1970") || !strings.Contains(body, `data-figure="block-time">20`) || strings.Contains(body, `data-figure="expiry"`) {
		t.Errorf("a document without a ttl: %s", regexp.MustCompile(`block time[^)]*`).FindString(body))
	}

	// Searches land on the page of what they name.
	for q, want := range map[string]string{
		e.hash:                               txHref,
		strings.ToUpper(e.memos[1].String()): "/document/" + plain + "/memo/" + e.memos[1].String(),
		plain:                                "/contract/" + plain,
		strings.ToUpper(id):                  "/identity/" + id,
		addr:                                 "/address/" + addr,
		strings.ToLower(validator):           "/validator/" + validator,
		h:                                    "/block/" + h,
	} {
		if got, status := e.landing(t, q); got != want || status != http.StatusOK {
			t.Errorf("search %s: %s (%d), want %s", q, got, status, want)
		}
	}
	if _, status := e.landing(t, strings.Repeat("12", 32)); status != http.StatusNotFound {
		t.Errorf("search for an id nothing has: %d", status)
	}
}

// transitionAttrs are the attributes of the transition event among events.
func transitionAttrs(events []abcitypes.Event) map[string]string {
	out := map[string]string{}
	for _, e := range events {
		if e.Type == protocol.EventTransition {
			for _, a := range e.Attributes {
				out[a.Key] = a.Value
			}
		}
	}
	return out
}

// pagerLink is the href of a documents page's pager link of id.
func pagerLink(t *testing.T, body, id string) string {
	t.Helper()
	m := regexp.MustCompile(`id="` + id + `"[^>]*href="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no %s link", id)
	}
	return html.UnescapeString(m[1])
}

// firstDoc is the first document a documents page lists.
func firstDoc(body string) string {
	m := regexp.MustCompile(`data-figure="doc\.0\.id">([^<]*)<`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

// noIndexRPC is a node that keeps no transaction index, as one with config.toml's
// [tx_index] indexer = "null" reports itself.
type noIndexRPC struct{ rpcclient.Client }

func (n noIndexRPC) Status(ctx context.Context) (*coretypes.ResultStatus, error) {
	st, err := n.Client.Status(ctx)
	if err == nil {
		st.NodeInfo.Other.TxIndex = "off"
	}
	return st, err
}

func (n noIndexRPC) TxSearch(context.Context, string, bool, *int, *int, string) (*coretypes.ResultTxSearch, error) {
	return nil, fmt.Errorf("transaction indexing is disabled")
}

// TestNoIndex: a node without a transaction index serves every page; the lists that
// need the index say they are unavailable, a transaction is found from its block, and
// a search finds what the state holds.
func TestNoIndex(t *testing.T) {
	t.Parallel()
	c := startChainThrough(t, func(rpc rpcclient.Client) rpcclient.Client { return noIndexRPC{rpc} })
	ctx := context.Background()
	h, err := c.env.Client.LatestHeight(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var txHref string
	for b := int64(1); b <= h && txHref == ""; b++ {
		blk, err := c.rpc.Block(ctx, &b)
		if err != nil {
			t.Fatal(err)
		}
		if len(blk.Block.Txs) > 0 {
			txHref = fmt.Sprintf("/tx/%X?height=%d", blk.Block.Txs[0].Hash(), b)
		}
	}
	doc := "/document/" + c.contract.String() + "/note/" + c.document.String()
	for _, path := range []string{"/identity/" + c.identity.String(), "/contracts", "/txs?signer=" + c.identity.String(), "/txs?kind=documents",
		"/identity/" + c.identity.String() + "/history", "/address/" + c.env.Dev.Address().String() + "/history", doc + "/history",
		"/blocks?nonempty=1"} {
		if body := c.page(t, path); !strings.Contains(body, `id="unavailable"`) || !strings.Contains(body, "keeps no transaction index") {
			t.Errorf("GET %s: does not say the lists are unavailable", path)
		}
	}
	links(t, "/", c.page(t, "/"), txHref)
	c.page(t, txHref)
	// Every transaction, from the blocks themselves.
	links(t, "/txs", c.page(t, "/txs?limit=100"), txHref)
	// The proven pages and the statistics need no index.
	for _, path := range []string{doc, "/stats", "/address/" + c.env.Dev.Address().String(), "/validators", "/epochs"} {
		c.page(t, path)
	}
	hash, _, _ := strings.Cut(strings.TrimPrefix(txHref, "/tx/"), "?")
	if status, _, body := c.get(t, "/tx/"+hash); status != http.StatusNotFound || !strings.Contains(body, "found from its block") {
		t.Errorf("GET /tx/%s with no index: %d", hash, status)
	}
	if got, status := c.landing(t, c.identity.String()); got != "/identity/"+c.identity.String() || status != http.StatusOK {
		t.Errorf("search for the identity with no index: %s (%d)", got, status)
	}
	if _, status := c.landing(t, hash); status != http.StatusNotFound {
		t.Errorf("search for a transaction with no index: %d", status)
	}
}

// TestLiveStream: /live streams each new block as an event, its transactions listed as
// the tables show them; the streams are bounded; closing the view ends the open ones
// and opens no more.
func TestLiveStream(t *testing.T) {
	t.Parallel()
	c := startChainWith(t, func(rpc rpcclient.Client) rpcclient.Client { return rpc }, web.Options{MaxStreams: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.srv.URL+"/live", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" ||
		res.Header.Get("Content-Security-Policy") != web.ContentSecurityPolicy {
		t.Fatalf("GET /live: %d %v", res.StatusCode, res.Header)
	}
	// A second stream is refused while the first is open.
	if status, _, _ := c.get(t, "/live"); status != http.StatusServiceUnavailable {
		t.Errorf("a stream past the bound: %d", status)
	}

	// A transfer, sent now, comes in the event of its block.
	tx, err := c.env.Client.Sign(ctx, &protocol.AddressFundsTransfer{PubKey: c.env.Dev.Pub, Recipient: protocol.Address{7}, Amount: 1000}, c.env.Dev.Priv)
	if err != nil {
		t.Fatal(err)
	}
	hash := fmt.Sprintf("%X", cmttypes.Tx(tx).Hash())
	if _, err := c.env.Client.Broadcast(ctx, tx, false); err != nil {
		t.Fatal(err)
	}
	events := bufio.NewReader(res.Body)
	for found := false; !found; {
		line, err := events.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before the transfer's block: %v", err)
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var b struct {
			Height       int64
			Href         string
			Transactions []struct{ Hash, Href, Kind, Result string }
		}
		if err := json.Unmarshal([]byte(data), &b); err != nil || b.Transactions == nil {
			t.Fatalf("an event's data %q: %v, want its transactions a list", data, err)
		}
		for _, tr := range b.Transactions {
			if found = tr.Hash == hash; found {
				want := fmt.Sprintf("/tx/%s?height=%d", hash, b.Height)
				if tr.Href != want || tr.Kind != "address_funds_transfer" || tr.Result != "0 OK" || b.Href != "/block/"+strconv.FormatInt(b.Height, 10) {
					t.Errorf("the transfer's event: block %+v, transaction %+v", b, tr)
				}
			}
		}
	}

	// Closing the view ends the stream, and no stream opens after.
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, events)
		ended <- err
	}()
	if err := c.view.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		if err != nil {
			t.Errorf("the stream ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream is still open after the view closed")
	}
	if status, _, _ := c.get(t, "/live"); status != http.StatusServiceUnavailable {
		t.Errorf("a stream of a closed view: %d", status)
	}
}
