package web_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	rpcclient "github.com/cometbft/cometbft/rpc/client"
	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	xhtml "golang.org/x/net/html"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web"
	"github.com/ttld-dev/ttld/web/check"
)

// chain is a node with an identity, a contract of a ttl'd type and one document of it
// whose text holds markup: what the pages show.
type chain struct {
	env  *e2e.Env
	srv  *httptest.Server
	view *web.Server
	// rpc is the node's RPC, which the test reads blocks and results from.
	rpc      rpcclient.Client
	identity protocol.IdentityID
	contract protocol.ContractID
	document protocol.DocumentID
}

// markup is a document value the pages must show escaped, its markup as text and its
// right-to-left override as a visible escape.
const markup = `<script>alert("x")</script>` + "\u202e1"

func startChain(t testing.TB) chain {
	t.Helper()
	return startChainThrough(t, func(rpc rpcclient.Client) rpcclient.Client { return rpc })
}

// startChainThrough is startChain with the view reading the node through wrap(rpc).
func startChainThrough(t testing.TB, wrap func(rpcclient.Client) rpcclient.Client) chain {
	t.Helper()
	return startChainWith(t, wrap, web.Options{})
}

// startChainWith is startChainThrough with the view's options opts (its trusted set
// the chain's genesis set).
func startChainWith(t testing.TB, wrap func(rpcclient.Client) rpcclient.Client, opts web.Options) chain {
	t.Helper()
	env := e2e.StartNodeShortTTL(t, 60)
	n := env.SeedNote(t, markup)
	// Pages read the newest state proven now, the one before the latest block's: the
	// note's block must be followed by another for the pages to show it.
	if _, err := env.Client.WaitForHeight(context.Background(), n.Height+1); err != nil {
		t.Fatal(err)
	}
	c := chain{env: env, identity: n.Identity, contract: n.Contract, document: n.Document}
	rpc, err := rpchttp.New(env.RPC, "/websocket")
	if err != nil {
		t.Fatal(err)
	}
	// The live stream subscribes to new blocks over the client's websocket.
	if err := rpc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rpc.Stop() })
	c.rpc = rpc
	opts.Trusted = env.Trusted
	if c.view, err = web.New(wrap(rpc), opts); err != nil {
		t.Fatal(err)
	}
	c.srv = httptest.NewServer(c.view.Handler())
	// Cleanups run last first: the view ends its streams, then the server closes.
	t.Cleanup(c.srv.Close)
	t.Cleanup(func() { _ = c.view.Close() })
	return c
}

func (c chain) get(t testing.TB, path string) (int, http.Header, string) {
	t.Helper()
	res, err := http.Get(c.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, string(b)
}

// bundleRE matches a proof box's list of bundles.
var bundleRE = regexp.MustCompile(`data-bundle="([^"]*)"`)

// drawingOf returns the nodes of the drawing of the first proof box in page, as a
// browser's DOM holds them once parsed: the children of its element that carries
// data-drawing, every attribute kept, comments left out.
func drawingOf(page string) ([]check.Node, error) {
	doc, err := xhtml.Parse(strings.NewReader(page))
	if err != nil {
		return nil, err
	}
	var find func(*xhtml.Node) *xhtml.Node
	find = func(n *xhtml.Node) *xhtml.Node {
		for _, a := range n.Attr {
			if a.Key == "data-drawing" {
				return n
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if f := find(c); f != nil {
				return f
			}
		}
		return nil
	}
	var nodes func(*xhtml.Node) []check.Node
	nodes = func(parent *xhtml.Node) []check.Node {
		var out []check.Node
		for c := parent.FirstChild; c != nil; c = c.NextSibling {
			switch c.Type {
			case xhtml.TextNode:
				out = append(out, check.Node{Text: c.Data})
			case xhtml.ElementNode:
				n := check.Node{Tag: c.Data, Kids: nodes(c)}
				for _, a := range c.Attr {
					if n.Attrs == nil {
						n.Attrs = map[string]string{}
					}
					n.Attrs[a.Key] = a.Val
				}
				out = append(out, n)
			}
		}
		return out
	}
	box := find(doc)
	if box == nil {
		return nil, errors.New("the page has no drawing of a proof box")
	}
	return nodes(box), nil
}

// verify checks the page body of path as the browser's check does: the bundles of its
// proof box, fetched from the view, verify against the genesis set, and the box's
// drawing is the one the check draws from the proven answers.
func (c chain) verify(t *testing.T, path, body string) {
	t.Helper()
	m := bundleRE.FindStringSubmatch(body)
	if m == nil {
		return // a page without proven figures
	}
	var bundles []check.Bundle
	for _, u := range strings.Fields(html.UnescapeString(m[1])) {
		status, _, raw := c.get(t, u)
		if status != http.StatusOK {
			t.Fatalf("GET %s: bundle %s: %d %s", path, u, status, raw)
		}
		b, err := check.DecodeBundle([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		bundles = append(bundles, b)
	}
	shown, err := drawingOf(body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	page, _, _ := strings.Cut(path, "?")
	if _, err := check.Verify(bundles, check.Pin{ChainID: e2e.ChainID, Validators: c.env.Trusted}, time.Now(), 0, page, shown); err != nil {
		t.Errorf("GET %s: the page's figures do not verify: %v", path, err)
	}
}

// TestPages: every page answers 200 with the figures the chain holds, under the
// security headers, and its figures verify against its proof box's bundles; the
// document's markup is escaped wherever it is shown, its override made visible.
func TestPages(t *testing.T) {
	t.Parallel()
	c := startChain(t)
	ctx := context.Background()
	h, err := c.env.Client.LatestHeight(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, contract, doc := c.identity.String(), c.contract.String(), c.document.String()
	addr := c.env.Dev.Address().String()
	for _, p := range []struct {
		path string
		want []string
	}{
		{"/", []string{`data-figure="chain">` + e2e.ChainID + "<", fmt.Sprintf(`data-figure="protocol-version">%d<`, protocol.Latest), "Genesis validator set", "/chart/backlog.svg", `data-figure="conserved">conserved<`}},
		// The blocks up to 20, whatever height the chain has reached since: the page
		// without a cursor shows the newest 20.
		{"/blocks?before=21", []string{`href="/block/1"`, "Transitions"}},
		{"/block/2", []string{"Block 2"}},
		{"/identity/" + id, []string{id, "credits"}},
		{"/address/" + addr, []string{addr, "Balance changes"}},
		{"/contract/" + contract, []string{`data-figure="type.0.name">note<`, `data-figure="type.0.ttl">2m0s<`, "byText", "text asc"}},
		{"/documents/" + contract + "/note", []string{doc[:8], "expires at", "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;⟨U+202E⟩1"}},
		{"/documents/" + contract + "/note?q=" + url.QueryEscape(`{"where":[["text","startsWith","<scr"]],"limit":5}`), []string{doc[:8]}},
		{"/documents/" + contract + "/note?q=" + url.QueryEscape(`{"limit":1}`), []string{doc[:8], `id="next-page"`, "startAfter"}},
		{"/document/" + contract + "/note/" + doc, []string{doc, "$createdAt", "Expires at", "lifetime used", `data-figure="field.0.value">&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;⟨U+202E⟩1<`}},
		{"/epochs", []string{`data-figure="epoch">0, from height`, "/chart/storage.svg"}},
		{"/validators", []string{`data-figure="validators">1, total power 10<`, `data-figure="proposals">0<`, `data-figure="evidence">0<`, "no change since genesis"}},
		{"/address/" + strings.Repeat("0", 39) + "2", []string{`data-figure="state">holds nothing<`}},
		{"/identity/" + strings.Repeat("cd", 32), []string{`data-figure="state">no such identity<`}},
		{"/document/" + contract + "/note/" + strings.Repeat("ab", 32), []string{`data-figure="state">no such document<`}},
	} {
		status, hdr, body := c.get(t, p.path)
		if status != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", p.path, status, body)
			continue
		}
		if hdr.Get("Content-Security-Policy") != web.ContentSecurityPolicy || hdr.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: headers %v", p.path, hdr)
		}
		for _, w := range p.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: no %q in the page", p.path, w)
			}
		}
		if strings.Contains(body, markup) || strings.Contains(body, "\u202e") {
			t.Errorf("GET %s: the document's markup or its override is not escaped", p.path)
		}
		c.verify(t, p.path, body)
	}
	renewedPage(t, c)
	// The block that created the document lists it with its code and fee.
	found := false
	for b := int64(1); b <= h && !found; b++ {
		_, _, body := c.get(t, "/block/"+strconv.FormatInt(b, 10))
		found = strings.Contains(body, "documents_batch") && strings.Contains(body, "code 0 OK") && strings.Contains(body, "document_create")
	}
	if !found {
		t.Error("no block page lists the documents batch")
	}
	// The document's proof bundle checks against the genesis set, and not with one byte
	// of the document changed.
	status, _, raw := c.get(t, "/proof?path=/document&data="+hex.EncodeToString(proofs.DocumentData(c.contract, "note", c.document)))
	if status != http.StatusOK {
		t.Fatalf("proof bundle: %d %s", status, raw)
	}
	b, err := check.DecodeBundle([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := check.Check(b, c.env.Trusted); err != nil || !r.Present {
		t.Fatalf("the bundle does not check: %+v %v", r, err)
	}
	b.Response.Value[len(b.Response.Value)-2] ^= 1
	if _, err := check.Check(b, c.env.Trusted); err == nil {
		t.Error("a bundle with a byte of the document changed checks")
	}
	// The validator set a browser pins is the genesis set.
	status, _, vals := c.get(t, "/validators.json")
	if status != http.StatusOK {
		t.Fatalf("/validators.json: %d", status)
	}
	if set, err := check.DecodeValidators([]byte(vals)); err != nil || !bytes.Equal(set.Hash(), c.env.Trusted.Hash()) {
		t.Errorf("/validators.json is not the genesis set: %v", err)
	}
	for _, chart := range []string{"/chart/backlog.svg", "/chart/blocks.svg", "/chart/rate.svg", "/chart/storage.svg"} {
		status, hdr, body := c.get(t, chart)
		if status != http.StatusOK || hdr.Get("Content-Type") != "image/svg+xml" || !strings.Contains(body, "<svg") {
			t.Errorf("GET %s: %d %s %.80s", chart, status, hdr.Get("Content-Type"), body)
		}
		// Opened on its own, a chart is held to the policy, which allows no inline style.
		if regexp.MustCompile(`\sstyle="`).MatchString(body) || !strings.Contains(body, `stroke="`) {
			t.Errorf("GET %s: its styles are not presentation attributes", chart)
		}
	}
}

// renewedPage renews the chain's note (protocol version 15) and reads its page: it
// shows $renewedAt and where on the lifetime, now from the creation to the renewed
// expiry, the renewal fell, as a figure and as a mark on the bar drawn at it; the
// figures verify. An unrenewed document's page has neither.
func renewedPage(t *testing.T, c chain) {
	t.Helper()
	path := "/document/" + c.contract.String() + "/note/" + c.document.String()
	if _, _, body := c.get(t, path); strings.Contains(body, `data-figure="renewed"`) || strings.Contains(body, `data-bar="renewal"`) {
		t.Fatalf("GET %s: an unrenewed document shows a renewal", path)
	}
	h := c.env.Commit(t, &protocol.DocumentsBatch{Identity: c.identity, Contract: c.contract, Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionRenew, Type: "note", ID: c.document, Revision: 2},
	}})
	if _, err := c.env.Client.WaitForHeight(context.Background(), h+1); err != nil {
		t.Fatal(err)
	}
	st, err := c.env.Client.Document(context.Background(), c.contract, "note", c.document, h, true)
	if err != nil || st.RenewedAt == 0 {
		t.Fatalf("the renewed note: %+v %v", st, err)
	}
	_, _, body := c.get(t, path)
	renewal := check.Lived(st.CreatedAt, st.ExpiresAtMs, st.RenewedAt, 100)
	for _, w := range []string{`id="renewed-at"`, `data-figure="renewed">`, fmt.Sprintf(`data-figure="renewal">%d%%<`, renewal),
		fmt.Sprintf(`<line data-bar="renewal" stroke="#2a8a3e" stroke-width="4" x1="%d"`, renewal*10)} {
		if !strings.Contains(body, w) {
			t.Errorf("GET %s after the renewal: no %q in the page", path, w)
		}
	}
	c.verify(t, path, body)
}

// TestBadInput: every malformed input is a 400 naming it, what does not exist a 404,
// and anything but GET and HEAD a 405: the view changes nothing.
func TestBadInput(t *testing.T) {
	t.Parallel()
	c := startChain(t)
	contract := c.contract.String()
	for path, want := range map[string]int{
		"/block/0":                              http.StatusBadRequest,
		"/block/x":                              http.StatusBadRequest,
		"/block/99999999":                       http.StatusNotFound,
		"/blocks?before=-3":                     http.StatusBadRequest,
		"/identity/zz":                          http.StatusBadRequest,
		"/address/" + contract:                  http.StatusBadRequest,
		"/contract/" + strings.Repeat("ab", 32): http.StatusNotFound,
		"/documents/" + contract + "/no$type":   http.StatusBadRequest,
		"/documents/" + contract + "/nothing":   http.StatusNotFound,
		"/documents/" + contract + "/note?q=" + url.QueryEscape(`{"where":[["nope","==",1]]}`):  http.StatusBadRequest,
		"/documents/" + contract + "/note?q=" + url.QueryEscape(strings.Repeat(" ", 5000)+"{}"): http.StatusBadRequest,
		"/documents/" + contract + "/note?q=%7Bnot":                                             http.StatusBadRequest,
		"/document/" + contract + "/note/12":                                                    http.StatusBadRequest,
		"/search?q=hello":                                                                       http.StatusBadRequest,
		"/proof?path=/nowhere&data=00":                                                          http.StatusBadRequest,
		"/proof?path=/address&data=zz":                                                          http.StatusBadRequest,
		"/proof?path=/address&data=0102":                                                        http.StatusBadRequest,
		"/proof?path=/pools&height=-1":                                                          http.StatusBadRequest,
		"/nowhere":                                                                              http.StatusNotFound,
		"/static/":                                                                              http.StatusNotFound,
		"/static":                                                                               http.StatusNotFound,
	} {
		status, hdr, body := c.get(t, path)
		if status != want {
			t.Errorf("GET %s: %d, want %d\n%.300s", path, status, want, body)
		}
		if hdr.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: no Content-Security-Policy", path)
		}
	}
	// The icon, at the page's link and where a browser asks for one by default.
	for _, path := range []string{"/static/favicon.svg", "/favicon.ico"} {
		if status, hdr, body := c.get(t, path); status != http.StatusOK || hdr.Get("Content-Type") != "image/svg+xml" || !strings.Contains(body, "<svg") {
			t.Errorf("GET %s: %d %s", path, status, hdr.Get("Content-Type"))
		}
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		req, _ := http.NewRequest(m, c.srv.URL+"/", strings.NewReader("x"))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s /: %d", m, res.StatusCode)
		}
	}
	// An error page leaves its kind of page as it was: a good page, a bad one, the
	// good one again answer 200, 4xx, 200, for every page kind that reads input; and
	// a search for a transaction's hash (which lands on a contract page that does not
	// exist) leaves the contract pages working.
	addr := c.env.Dev.Address().String()
	for _, seq := range [][2]string{
		{"/blocks", "/blocks?before=-3"},
		{"/block/2", "/block/0"},
		{"/identity/" + c.identity.String(), "/identity/zz"},
		{"/address/" + addr, "/address/" + contract},
		{"/contract/" + contract, "/contract/" + strings.Repeat("ab", 32)},
		{"/contract/" + contract, "/search?q=" + strings.Repeat("cd", 32)},
		{"/documents/" + contract + "/note", "/documents/" + contract + "/nothing"},
		{"/document/" + contract + "/note/" + c.document.String(), "/document/" + contract + "/note/12"},
	} {
		for i, path := range []string{seq[0], seq[1], seq[0]} {
			status, _, body := c.get(t, path)
			if good := i != 1; good != (status == http.StatusOK) {
				t.Errorf("GET %s after %s: %d\n%.300s", path, seq[1], status, body)
			}
		}
	}
	// A search by height or id lands on its page.
	res, err := http.Get(c.srv.URL + "/search?q=" + c.identity.String())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Request.URL.Path != "/identity/"+c.identity.String() {
		t.Errorf("search for the identity went to %s", res.Request.URL.Path)
	}
}
