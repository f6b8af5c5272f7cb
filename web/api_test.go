package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	rpcclient "github.com/cometbft/cometbft/rpc/client"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/web"
	"github.com/ttld-dev/ttld/web/check"
)

// apiProof is a proof box as the API answers it.
type apiProof struct {
	Figures    check.Figures     `json:"figures"`
	BundleURLs []string          `json:"bundle_urls"`
	Bundles    []json.RawMessage `json:"bundles"`
}

// names are the keys whose values a page names when its JSON form does: the
// transactions, accounts, contracts and documents it lists.
var names = map[string]bool{"hash": true, "tx_hash": true, "id": true, "address": true, "subject": true}

// named collects the values of v's names keys, but those of the events and fields it
// holds (a list shows a transaction's hash alone), into out.
func named(v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch s, ok := e.(string); {
			case ok && names[k] && s != "":
				out[strings.ToLower(s)] = true
			case k != "events" && k != "fields":
				named(e, out)
			}
		}
	case []any:
		for _, e := range x {
			named(e, out)
		}
	}
}

// txLinkRE matches a link to a transaction's page.
var txLinkRE = regexp.MustCompile(`href="/tx/([0-9A-F]{64})`)

// TestAPIMirrorsThePages: every page kind's JSON form answers what its page shows, at
// the same state (the view reads a node whose latest height is held): the proof
// box's figures and bundle URLs, and, inline, the bundles, which verify against the
// genesis set and prove those figures; the transactions, accounts, contracts and
// documents it lists are the page's, and the transactions the page links are the
// answer's.
func TestAPIMirrorsThePages(t *testing.T) {
	t.Parallel()
	var held atomic.Int64
	e := startExplorer(t, startChainThrough(t, func(rpc rpcclient.Client) rpcclient.Client { return heldRPC{rpc, &held} }))
	latest, err := e.env.Client.LatestHeight(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	held.Store(latest)
	h := strconv.FormatInt(e.batch, 10)
	id, addr, plain := e.identity.String(), e.env.Dev.Address().String(), e.plain.String()
	doc := "/document/" + plain + "/memo/" + e.memos[0].String()
	validator := e.env.Trusted.Validators[0].Address.String()
	paths := []string{
		"/", "/stats", "/blocks", "/blocks?nonempty=1", "/block/" + h, "/txs", "/txs?kind=document_create&limit=2",
		"/tx/" + e.hash + "?height=" + h, "/identity/" + id, "/identity/" + id + "/history", "/address/" + addr,
		"/address/" + addr + "/history", "/contracts", "/contract/" + plain, "/documents/" + plain + "/memo",
		doc, doc + "/history", "/validators", "/validator/" + validator, "/epochs",
	}
	described := openAPI(t)
	for _, path := range paths {
		body := e.page(t, path)
		status, hdr, raw := e.get(t, web.APIPrefix+path)
		if status != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
			t.Fatalf("GET %s%s: %d %s\n%.300s", web.APIPrefix, path, status, hdr.Get("Content-Type"), raw)
		}
		var answer map[string]any
		if err := json.Unmarshal([]byte(raw), &answer); err != nil {
			t.Fatalf("GET /api%s: %v", path, err)
		}
		if err := described.validate(web.APIPrefix+path, http.StatusOK, raw); err != nil {
			t.Errorf("GET /api%s: not as docs/openapi.json describes it: %v", path, err)
		}
		if box, ok := answer["proof"]; ok {
			b, err := json.Marshal(box)
			if err != nil {
				t.Fatal(err)
			}
			var p apiProof
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatal(err)
			}
			e.apiProven(t, path, body, p)
			delete(answer, "proof")
		}
		listed := map[string]bool{}
		named(answer, listed)
		lower := strings.ToLower(body)
		for x := range listed {
			if !strings.Contains(lower, x) {
				t.Errorf("GET /api%s names %s, which its page does not", path, x)
			}
		}
		for _, m := range txLinkRE.FindAllStringSubmatch(body, -1) {
			if !listed[strings.ToLower(m[1])] {
				t.Errorf("GET %s links transaction %s, which its JSON form does not name", path, m[1])
			}
		}
	}
}

// heldRPC is a node whose latest height is held at *held (0: the node's): a view
// reading through it reads one state however far the chain goes meanwhile.
type heldRPC struct {
	rpcclient.Client
	held *atomic.Int64
}

func (r heldRPC) Status(ctx context.Context) (*coretypes.ResultStatus, error) {
	st, err := r.Client.Status(ctx)
	if err == nil && r.held.Load() > 0 {
		st.SyncInfo.LatestBlockHeight = r.held.Load()
	}
	return st, err
}

// apiProven checks an API answer's proof box against the page's: the same bundle
// URLs, and inline bundles that verify the page's drawing and prove the answer's
// figures, every one.
func (c chain) apiProven(t *testing.T, path, body string, p apiProof) {
	t.Helper()
	shown, err := drawingOf(body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	m := bundleRE.FindStringSubmatch(body)
	if m == nil || strings.Join(strings.Fields(html.UnescapeString(m[1])), " ") != strings.Join(p.BundleURLs, " ") {
		t.Errorf("GET /api%s: bundle URLs %v, the page's %v", path, p.BundleURLs, m)
	}
	if len(p.Bundles) != len(p.BundleURLs) {
		t.Fatalf("GET /api%s: %d bundles for %d URLs", path, len(p.Bundles), len(p.BundleURLs))
	}
	bundles := make([]check.Bundle, len(p.Bundles))
	for i, raw := range p.Bundles {
		var err error
		if bundles[i], err = check.DecodeBundle(raw); err != nil {
			t.Fatalf("GET /api%s: bundle %d: %v", path, i, err)
		}
	}
	page, _, _ := strings.Cut(path, "?")
	v, err := check.Verify(bundles, check.Pin{ChainID: e2e.ChainID, Validators: c.env.Trusted}, time.Now(), 0, page, shown)
	if err != nil {
		t.Errorf("GET /api%s: the bundles do not verify the page's figures: %v", path, err)
	}
	if len(v.Figures) != len(p.Figures) {
		t.Errorf("GET /api%s: %d figures, the proof has %d", path, len(p.Figures), len(v.Figures))
	}
	for name, text := range v.Figures {
		if p.Figures[name] != text {
			t.Errorf("GET /api%s: figure %s is %q, the proof says %q", path, name, p.Figures[name], text)
		}
	}
}

// TestAPIErrors: a request the API cannot answer gets a 4xx with the code of a query
// refused alike (docs/ERRORS.md, "Query codes"), in JSON, never a 500.
func TestAPIErrors(t *testing.T) {
	t.Parallel()
	c := startChain(t)
	contract := c.contract.String()
	described := openAPI(t)
	for path, want := range map[string]struct {
		status int
		code   uint32
	}{
		"/tx/zz": {http.StatusBadRequest, proofs.QueryCodeBadRequest},
		"/tx/" + strings.Repeat("0", 64) + "?height=2": {http.StatusNotFound, proofs.QueryCodeNotFound},
		"/contracts?limit=101":                         {http.StatusBadRequest, proofs.QueryCodeLimitTooLarge},
		"/contracts?cursor=1.2.3":                      {http.StatusBadRequest, proofs.QueryCodeBadRequest},
		"/txs?kind=nothing":                            {http.StatusBadRequest, proofs.QueryCodeBadRequest},
		"/block/99999999":                              {http.StatusNotFound, proofs.QueryCodeNotFound},
		"/nothing":                                     {http.StatusNotFound, proofs.QueryCodeBadRequest},
		"/documents/" + contract + "/note?q=" + url.QueryEscape(`{"where":[["nope","==",1]]}`): {http.StatusBadRequest, proofs.QueryCodeUnknownField},
		"/documents/" + contract + "/note?q=" + url.QueryEscape(`{"limit":100000}`):            {http.StatusBadRequest, proofs.QueryCodeLimitTooLarge},
		"/documents/" + strings.Repeat("ab", 32) + "/note":                                     {http.StatusNotFound, proofs.QueryCodeNotFound},
	} {
		status, hdr, raw := c.get(t, web.APIPrefix+path)
		var e struct {
			Status int    `json:"status"`
			Code   uint32 `json:"code"`
			Error  string `json:"error"`
		}
		if err := json.Unmarshal([]byte(raw), &e); err != nil || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
			t.Errorf("GET /api%s: %d, not JSON: %.200s", path, status, raw)
			continue
		}
		if status != want.status || e.Status != status || e.Code != want.code || e.Error == "" {
			t.Errorf("GET /api%s: %d %+v, want %d code %d", path, status, e, want.status, want.code)
		}
		if path != "/nothing" {
			if err := described.validate(web.APIPrefix+path, status, raw); err != nil {
				t.Errorf("GET /api%s: not as docs/openapi.json describes it: %v", path, err)
			}
		}
	}
	// Whatever a request carries, no 500.
	for _, junk := range []string{"/tx/%00", "/block/-1", "/identity/" + strings.Repeat("z", 64) + "/history", "/txs?cursor=" + strings.Repeat("9", 30),
		"/txs?limit=-1", "/documents/x/y", "/document/a/b/c/history", "/blocks?before=x", "/address/%ff", "/stats?x=1", "/epochs?page=2"} {
		if status, _, raw := c.get(t, web.APIPrefix+junk); status >= 500 || status == http.StatusOK && !json.Valid([]byte(raw)) {
			t.Errorf("GET /api%s: %d", junk, status)
		}
	}
}

// TestCORS: no origin may read the API unless app.toml allows it; an allowed origin's
// requests, and its preflight, get the headers, another's do not.
func TestCORS(t *testing.T) {
	t.Parallel()
	const dapp = "https://dapp.example"
	c := startChainWith(t, func(rpc rpcclient.Client) rpcclient.Client { return rpc }, web.Options{CORSOrigins: []string{dapp}})
	closed := httptest.NewServer(mustView(t, c).Handler())
	t.Cleanup(closed.Close)
	ask := func(srv, method, path, origin string) *http.Response {
		req, err := http.NewRequest(method, srv+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if got := ask(c.srv.URL, "GET", "/api/stats", dapp).Header.Get("Access-Control-Allow-Origin"); got != dapp {
		t.Errorf("the allowed origin: %q", got)
	}
	if res := ask(c.srv.URL, "OPTIONS", "/api/stats", dapp); res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Methods") != "GET, HEAD" {
		t.Errorf("the allowed origin's preflight: %d %v", res.StatusCode, res.Header)
	}
	for _, res := range []*http.Response{
		ask(c.srv.URL, "GET", "/api/stats", "https://other.example"), ask(c.srv.URL, "GET", "/stats", dapp),
		ask(closed.URL, "GET", "/api/stats", dapp),
	} {
		if got := res.Header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("%s %s: allows %q", res.Request.URL, res.Request.Header.Get("Origin"), got)
		}
	}
	if res := ask(closed.URL, "OPTIONS", "/api/stats", dapp); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("a preflight with CORS off: %d", res.StatusCode)
	}
}

// mustView is a view of c's node with the default options.
func mustView(t *testing.T, c chain) *web.Server {
	t.Helper()
	v, err := web.New(c.rpc, web.Options{Trusted: c.env.Trusted})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Close() })
	return v
}

// described is docs/openapi.json, its answers' schemas compiled.
type described struct {
	paths    []string // the paths' templates
	compiler *jsonschema.Compiler
}

// openAPI reads docs/openapi.json.
func openAPI(t *testing.T) described {
	t.Helper()
	f, err := os.Open("../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	d := described{compiler: jsonschema.NewCompiler()}
	if err := d.compiler.AddResource("openapi.json", doc); err != nil {
		t.Fatal(err)
	}
	paths, _ := doc.(map[string]any)["paths"].(map[string]any)
	for p := range paths {
		d.paths = append(d.paths, p)
	}
	return d
}

// template is the path template of docs/openapi.json that path (its query cut) is
// an instance of, "" when none is.
func (d described) template(path string) string {
	path, _, _ = strings.Cut(path, "?")
	got := strings.Split(path, "/")
	for _, p := range d.paths {
		want := strings.Split(p, "/")
		if len(want) != len(got) {
			continue
		}
		match := true
		for i := range want {
			if want[i] != got[i] && !strings.HasPrefix(want[i], "{") {
				match = false
			}
		}
		if match {
			return p
		}
	}
	return ""
}

// validate checks an answer of path with status against its schema.
func (d described) validate(path string, status int, raw string) error {
	p := d.template(path)
	if p == "" {
		return fmt.Errorf("no path of docs/openapi.json matches %s", path)
	}
	code := strconv.Itoa(status)
	if status >= 400 {
		code = code[:1] + "XX"
	}
	pointer := "openapi.json#/paths/" + strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1") +
		"/get/responses/" + code + "/content/application~1json/schema"
	sch, err := d.compiler.Compile(pointer)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(raw))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}
