//go:build web

package web

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/proofs/lightchain"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web/check"
)

// TestWebViewInChromium: the overview, blocks, a block, a transaction, an identity, an
// address, the contracts, a contract, its documents, a document, a validator and the
// epochs, each loaded in headless Chromium, show what the chain holds, every figure of
// their proof boxes verified and written from the proven bytes; the transaction shows
// its decoded transition and its fee by parts; the overview refreshes as blocks come;
// a crawl from the overview, following links, reaches a document in at most four
// clicks; a document value's bidirectional controls are shown escaped, and its renewal
// on its lifetime bar. Then, through a
// proxy that changes the pages on the way, each attack ends NOT VERIFIED: a balance or
// a document's text changed, its expiry changed, the page's chain id changed, a fake
// chain's pages and bundles after the real chain was pinned, a page that shows another
// address than its own, two labels swapped, the proven figure hidden by the page's
// style with a lie and a typed ✓ beside it, a ✓ its style writes, the lifetime bar
// renamed, a link pointed elsewhere, the document made transparent, and a genuine
// bundle of an old state; whatever the attack, the check's drawing of the proven
// answers is what the box shows afterwards. An overlay the page's style puts over
// everything, a popover the reader opens, and a view transition the page's style
// stretches, stay under the check's drawing or end; the drawing stays over its place as
// the page scrolls, in the window or in an element of its own.
func TestWebViewInChromium(t *testing.T) {
	env := e2e.StartNodeShortTTL(t, 60)
	ctx := context.Background()
	note := env.SeedNote(t, "hello from the web view")
	id, contract, doc, docHeight := note.Identity, note.Contract, note.Document, note.Height
	// Pages read the newest state proven now, the one before the latest block's: the
	// note's block must be followed by another for the pages to show it.
	if _, err := env.Client.WaitForHeight(ctx, docHeight+1); err != nil {
		t.Fatal(err)
	}
	st, err := env.Client.Identity(ctx, id, 0, false)
	if err != nil {
		t.Fatal(err)
	}

	allocCtx, cancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 1000))...)
	defer cancel()
	browser, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	browser, cancel = context.WithTimeout(browser, 4*time.Minute)
	defer cancel()
	if _, err := chromedp.Run(browser, onNewDocument(keepShadows)); err != nil {
		t.Fatal(err)
	}

	base := strings.TrimSuffix(env.Node.WebAddress(), "/")
	if base == "" {
		t.Fatal("the node serves no web view")
	}
	shots := os.Getenv("TTLD_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	page := func(name, path string, texts map[string]string) {
		t.Helper()
		load(t, browser, base+path)
		for sel, want := range texts {
			waitText(t, browser, path, sel, want)
		}
		allVerified(t, browser, path)                                   // the screenshot with the proof checks' verdicts
		png, err := chromedp.Run(browser, chromedp.FullScreenshot(100)) // 100: a PNG (less is a JPEG)
		if err != nil {
			t.Fatalf("%s: screenshot: %v", path, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, d := contract.String(), doc.String()
	docPath := "/document/" + c + "/note/" + d
	page("overview", "/", map[string]string{"h1": "Chain " + e2e.ChainID, "#protocol-version": strconv.Itoa(int(protocol.Latest)), "#backlog": "0 documents", "#credits": "(conserved", "#validators": "10", "#proof-status": "VERIFIED in this browser"})
	waitText(t, browser, "/", "[data-pin]", "chain "+e2e.ChainID+", validator set "+fmt.Sprintf("%X", env.Trusted.Hash()))
	frameOverPlace(t, browser, "/", "window")
	page("blocks", "/blocks", map[string]string{"#blocks": strconv.FormatInt(docHeight, 10), "main": "not proven"})
	// The overview refreshes as blocks are committed (live.js, under the policy).
	waitText(t, browser, "/", "#live", "Live: block ")
	timeStaysCurrent(t, browser, base+"/block/1")
	page("block", "/block/"+strconv.FormatInt(docHeight, 10), map[string]string{"h1": "Block " + strconv.FormatInt(docHeight, 10), "#tx-count": "1", "main": "document_create"})
	tx := txOf(t, env, docHeight)
	page("tx", tx, map[string]string{"#tx-kind": fmt.Sprintf("documents_batch (decoded under protocol version %d)", protocol.Latest), "#fields": "hello from the web view",
		"#fee-parts": "lifetime storage", "#tx-fee": "credits", "#tx-events": "document_create"})
	feeParts(t, browser, tx)
	page("contracts", "/contracts", map[string]string{"h1": "Contracts", "main": c[:8]})
	validator := env.Trusted.Validators[0].Address.String()
	page("validator", "/validator/"+validator, map[string]string{"#payout": protocol.PayoutIdentityID(env.Trusted.Validators[0].Address).String(), "#proof-status": "VERIFIED in this browser"})
	page("validators", "/validators", map[string]string{"#validators": "1, total power 10", "#set": validator, "#proof-status": "VERIFIED in this browser"})
	path := crawl(t, browser, base)
	if len(path) > 5 || !strings.HasPrefix(path[len(path)-1], "/document/") {
		t.Errorf("the crawl from the overview reached %v, want a document in at most four clicks", path)
	}
	t.Logf("the crawl's path: %s", strings.Join(path, " → "))
	clickThrough(t, browser, base, path)
	allVerified(t, browser, path[len(path)-1])
	page("identity", "/identity/"+id.String(), map[string]string{"#balance": check.Credits(st.Balance), "#proof-status": "VERIFIED in this browser"})
	moduleFromCache(t, browser, "/identity/"+id.String())
	page("contract", "/contract/"+c, map[string]string{"#type-note": "Type note", ".ttl": "2m0s", "#proof-status": "VERIFIED in this browser"})
	page("documents", "/documents/"+c+"/note", map[string]string{"#documents": d[:8], "#proof-status": "VERIFIED in this browser"})
	page("document", docPath, map[string]string{"#expiry": "expires at", "#fields": "hello from the web view", "#proof": "signed by the validator set", "#proof-status": "VERIFIED in this browser"})
	page("epochs", "/epochs", map[string]string{"#epochs": "0", "#proof-status": "VERIFIED in this browser"})
	for path, want := range map[string]string{
		"/address/" + env.Dev.Address().String():               "#balance",
		"/address/" + strings.Repeat("0", 39) + "2":            "#absent",
		"/document/" + c + "/note/" + strings.Repeat("ab", 32): "#absent",
		"/identity/" + strings.Repeat("cd", 32):                "#absent",
	} {
		if v := verdict(t, browser, base+path); !strings.HasPrefix(v, "VERIFIED in this browser") {
			t.Errorf("%s: %q", path, v)
		}
		allVerified(t, browser, path)
		waitText(t, browser, path, want, "")
	}

	// A value with bidirectional controls and a zero-width space: escaped in the DOM,
	// as the server wrote it and as the browser's check wrote it again.
	bidi := addNote(t, env, note, "price: \u202e0001\u202c credits\u200b", 8)
	bidiPath := "/document/" + c + "/note/" + bidi.String()
	if v := verdict(t, browser, base+bidiPath); !strings.HasPrefix(v, "VERIFIED in this browser") {
		t.Errorf("%s: %q", bidiPath, v)
	}
	fields, err := chromedp.Run(browser, chromedp.Evaluate[string](query("#fields")+`.textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fields, "price: ⟨U+202E⟩0001⟨U+202C⟩ credits⟨U+200B⟩") || strings.ContainsAny(fields, "\u202e\u202c\u200b") {
		t.Errorf("the document's value in the DOM: %q", fields)
	}
	allVerified(t, browser, bidiPath)
	// Renewed (protocol version 15), the note shows $renewedAt, and its lifetime bar,
	// from its creation to the renewed expiry, a mark where the renewal fell, placed
	// by the browser's check from the proven figure.
	renewed := env.Commit(t, &protocol.DocumentsBatch{Identity: id, Contract: contract, Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionRenew, Type: "note", ID: bidi, Revision: 2},
	}})
	if _, err := env.Client.WaitForHeight(ctx, renewed+1); err != nil {
		t.Fatal(err)
	}
	page("document-renewed", bidiPath, map[string]string{"#renewed-at": "", "#lifetime": "renewed at", "#proof-status": "VERIFIED in this browser"})
	mark, err := chromedp.Run(browser, chromedp.Evaluate[string](`(() => {
		const l = `+query(`line[data-bar="renewal"]`)+`, f = `+query(`[data-figure="renewal"]`)+`;
		return l && f ? [l.getAttribute("x1"), l.getAttribute("x2"), String(parseInt(f.textContent, 10) * 10)].join(" ") : "";
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if xs := strings.Fields(mark); len(xs) != 3 || xs[0] != xs[2] || xs[1] != xs[2] {
		t.Errorf("the renewal's mark on the lifetime bar (x1 x2, and the figure's place): %q", mark)
	}

	// The attacks, through a proxy of the view, whose origin pins its own set; the
	// document attacked is a new one, far from its expiry.
	docPath = "/document/" + c + "/note/" + addNote(t, env, note, "hello from the web view", 9).String()
	fake := e2e.StartNodeOnChain(t, "ttld-fake")
	absent := strings.Repeat("0", 39) + "2"
	proxy := newProxy(t, base, strings.TrimSuffix(fake.Node.WebAddress(), "/"), 2, env.Dev.Address().String(), absent)
	srv := httptest.NewServer(proxy)
	defer srv.Close()
	addr := "/address/" + env.Dev.Address().String()
	proxy.set(honest)
	if v := verdict(t, browser, srv.URL+"/"); !strings.HasPrefix(v, "VERIFIED in this browser") {
		t.Fatalf("the first verification through the proxy, which pins: %q", v)
	}
	for _, a := range []struct {
		mode       mode
		path, want string
		sel, shows string // what the figure's element shows once the check ran
	}{
		{balance, addr, `balance: the page showed "9,999,251,000", the proof says "`, "#balance", " credits"},
		{text, docPath, `field.0.value: the page showed "goodbye from the proxy", the proof says "hello from the web view"`, "#fields", "hello from the web view"},
		{expiry, docPath, `expiry: the page showed "expires at 2099-01-01T00:00:00Z, in 640000h0m0s", the proof says "expires at `, "#expiry", "at 20"},
		{chain, "/", `chain: the page showed "ttld-fake", the proof says "` + e2e.ChainID + `"`, "h1", "Chain " + e2e.ChainID},
		{fakeChain, "/", "this view pinned chain " + e2e.ChainID + ", set " + fmt.Sprintf("%X", env.Trusted.Hash()), "h1", "Chain ttld-fake"},
		{subject, addr, "this page is " + addr + ", its answers are about /address/" + absent, "#proof-status", "NOT VERIFIED"},
		{labels, addr, `has another text at dl[1]/dt[2]/#text[1], after figure address: "Last nonce", the check draws "Balance"`, "#balance", " credits"},
		{hideFigure, addr, "does not display \"<bdi> ", "#balance", " credits"},
		{styleMark, addr, `generates text with its style "::after \"✓ 9,999,251,000\"" at dl[1]/dd[2]/bdi[1], in figure balance`, "#balance", " credits"},
		{bar, docPath, `has another attribute data-bar at div[1]/svg[1]/rect[2], after figure protocol-version: "lifetime-old", the check draws "lifetime"`, "#lifetime", "%"},
		{elsewhere, docPath, `has another attribute href at dl[1]/dd[3]/a[1], after figure contract: "/identity/` + strings.Repeat("ab", 32) + `", the check draws "/identity/` + id.String() + `"`, "#expiry", "expires at"},
		{transparent, addr, "the page does not display the check's drawing of this box", "#proof-status", "NOT VERIFIED"},
	} {
		proxy.set(a.mode)
		v := verdict(t, browser, srv.URL+a.path)
		if !strings.HasPrefix(v, "NOT VERIFIED") || !strings.Contains(v, a.want) {
			t.Errorf("%s: %q, want NOT VERIFIED with %q", a.mode, v, a.want)
		}
		// None of the proxy's lies stays on the page; the expiry's is matched as a date,
		// since a hex address in a verdict may hold the digits 2099.
		shows, err := chromedp.Run(browser, chromedp.Evaluate[string](query(a.sel)+`.textContent`))
		if err != nil || !strings.Contains(shows, a.shows) || strings.Contains(shows, "9,999,251,000") || strings.Contains(shows, "goodbye") || strings.Contains(shows, "2099-01-01") {
			t.Errorf("%s: %s shows %q (%v), want the proven %q", a.mode, a.sel, shows, err, a.shows)
		}
		// Every box the check drew from proven answers shows its drawing alone: the
		// page's drawing is gone.
		if a.mode != fakeChain && a.mode != subject {
			if left, err := chromedp.Run(browser, chromedp.Evaluate[int](`document.querySelectorAll("[data-drawing]").length`)); err != nil || left != 0 {
				t.Errorf("%s: %d drawings of the page's left (%v)", a.mode, left, err)
			}
		}
	}
	// An overlay over the whole page, drawn by its style, and a popover of the page's
	// that the reader opens: the check's drawing stays above both, its verdict holds.
	for _, m := range []mode{overlay, lure, veil, scroller} {
		proxy.set(m)
		if v := verdict(t, browser, srv.URL+addr); !strings.HasPrefix(v, "VERIFIED in this browser") {
			t.Errorf("%s: %q", m, v)
		}
		switch m {
		case lure:
			if _, err := chromedp.Run(browser, chromedp.Click(chromedp.CSS("#lure"))); err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			waitTrue(t, browser, m, `document.querySelector("#lie").matches(":popover-open")`)
		case veil:
			if _, err := chromedp.RunResponse(browser, chromedp.Click(chromedp.CSS("#again"))); err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			settled(t, browser, addr)
			waitTrue(t, browser, m, `document.activeViewTransition === null`)
		case scroller:
			frameOverPlace(t, browser, addr, "document.body")
			continue
		}
		waitTrue(t, browser, m, `(() => {
			const b = `+query("#balance")+`.getBoundingClientRect(), x = b.left + 3, y = b.top + b.height / 2;
			const e = document.elementFromPoint(x, y);
			return e !== null && e.parentElement === document.documentElement && e.matches(":popover-open");
		})()`)
	}
	if n := proxy.validatorsAsked(fakeChain); n != 0 {
		t.Errorf("the fake chain's /validators.json was fetched %d times after the pin", n)
	}

	// A genuine bundle of state 2, served for the latest state: refused for its age.
	// NB: the test runs for less than the bound, so the tab's clock is set at the old
	// header's time plus the bound and a little: old for the header after state 2, not
	// for the latest one, as the honest page shows first.
	old, err := env.Client.RPC().Commit(ctx, ptr(int64(3)))
	if err != nil {
		t.Fatal(err)
	}
	shift := max(0, time.Until(old.Time.Add(proofs.DefaultMaxAge+5*time.Second)))
	tab, cancel := chromedp.NewContext(browser)
	defer cancel()
	if _, err := chromedp.Run(tab, clockShift(shift)); err != nil {
		t.Fatal(err)
	}
	proxy.set(honest)
	if v := verdict(t, tab, srv.URL+"/address/"+absent); !strings.HasPrefix(v, "VERIFIED in this browser") {
		t.Errorf("the latest state on a clock %s ahead: %q", shift, v)
	}
	proxy.set(stale)
	if v := verdict(t, tab, srv.URL+"/address/"+absent); !strings.HasPrefix(v, "NOT VERIFIED") || !strings.Contains(v, "the answers are of height 2") ||
		!strings.Contains(v, "over the 1m0s allowed") {
		t.Errorf("an old genuine bundle: %q", v)
	}

	// The chain's set changes by vote (docs/STATE.md, "Validators"): the pages verify,
	// following the set from the pinned genesis one through the headers their bundles
	// carry; the same pages whose headers a set the chain never moved to signed do not.
	changed := env.AddValidator(t, ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey), 3)
	if _, err := env.Client.WaitForHeight(ctx, changed+4); err != nil {
		t.Fatal(err)
	}
	proxy.set(honest)
	for _, path := range []string{addr, "/validators"} {
		if v := verdict(t, browser, srv.URL+path); !strings.HasPrefix(v, "VERIFIED in this browser") || !strings.Contains(v, "following the chain's validator set from it through") {
			t.Errorf("%s after the set changed: %q", path, v)
		}
	}
	waitText(t, browser, "/validators", "#validators", "2, total power 13") // NB: the tab is on /validators
	proxy.set(strangers)
	for _, path := range []string{"/validators", addr} {
		if v := verdict(t, browser, srv.URL+path); !strings.HasPrefix(v, "NOT VERIFIED") || !strings.Contains(v, "does not follow") {
			t.Errorf("%s signed by a set the chain never moved to: %q", path, v)
		}
	}
}

// timeStaysCurrent loads url and reads its first time element until static/time.js has
// written its "N seconds ago" again as the page stays open (within ten seconds).
func timeStaysCurrent(t *testing.T, tab context.Context, url string) {
	t.Helper()
	load(t, tab, url)
	read := func() string {
		text, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("time[data-ago]")))
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		return text
	}
	first := read()
	// Waited for within the page, on each frame it draws, for ten seconds at most.
	changed := fmt.Sprintf(`(() => { const t = document.querySelector("time[data-ago]").textContent; return t !== %q && t.includes(" ago)"); })()`, first)
	if _, err := chromedp.Run(tab, chromedp.Poll[bool](changed, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("%s: the block's time still reads %q: %v", url, read(), err)
	}
}

// txOf is the page of the first transaction of block h, as the block's page links it.
func txOf(t *testing.T, env *e2e.Env, h int64) string {
	t.Helper()
	rpc, err := rpchttp.New(env.RPC, "/websocket")
	if err != nil {
		t.Fatal(err)
	}
	b, err := rpc.Block(context.Background(), &h)
	if err != nil || len(b.Block.Txs) == 0 {
		t.Fatalf("block %d: %v", h, err)
	}
	return fmt.Sprintf("/tx/%X?height=%d", b.Block.Txs[0].Hash(), h)
}

// feeParts fails unless the transaction page loaded lists the fee's parts, every one
// the transition event reports, and they sum to the fee it shows.
func feeParts(t *testing.T, tab context.Context, path string) {
	t.Helper()
	got, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`[document.querySelector("#tx-fee").textContent].concat(
		Array.from(document.querySelectorAll("#fee-parts tr")).slice(1).map((r) => r.cells[0].textContent + "=" + r.cells[1].textContent))`))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	credits := func(s string) uint64 {
		n, err := strconv.ParseUint(strings.ReplaceAll(strings.Fields(s)[0], ",", ""), 10, 64)
		if err != nil {
			t.Fatalf("%s: credits %q: %v", path, s, err)
		}
		return n
	}
	fee, sum, names := credits(got[0]), uint64(0), []string{}
	for _, part := range got[1:] {
		name, n, _ := strings.Cut(part, "=")
		names = append(names, name)
		if !strings.HasPrefix(name, "refunds") {
			sum += credits(n)
		}
	}
	if want := []string{"processing", "perpetual storage", "lifetime storage", "deletion prepay", "refunds to the owners of removed storage"}; strings.Join(names, ",") != strings.Join(want, ",") || sum != fee {
		t.Errorf("%s: the fee %d by parts %v sums to %d, want the parts %v summing to the fee", path, fee, got[1:], sum, want)
	}
}

// crawl loads pages in the tab from the overview, breadth first, following the links
// each page shows once its proof check ran (the check's drawings' links among them; to
// the view's pages, not to its bundles, charts or files), until one
// is a document's; it returns the path of pages from the overview to it. It loads at
// most two pages of a kind (the first segment of their path) at each depth, and looks
// four clicks deep.
func crawl(t *testing.T, tab context.Context, base string) []string {
	t.Helper()
	from := map[string]string{"/": ""}
	level := []string{"/"}
	for depth := 0; depth < 4; depth++ {
		var next []string
		kinds := map[string]int{}
		for _, p := range level {
			kind := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 2)[0]
			if kinds[kind]++; kinds[kind] > 2 {
				continue
			}
			load(t, tab, base+p)
			settled(t, tab, p)
			hrefs, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("main a[href], header a[href]"), (a) => a.getAttribute("href")).concat(
				(window.ttldShadows || []).flatMap((root) => Array.from(root.querySelectorAll("a[href]"), (a) => a.getAttribute("href"))))`))
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			for _, h := range hrefs {
				if _, seen := from[h]; seen || !strings.HasPrefix(h, "/") || crawlSkips.MatchString(h) {
					continue
				}
				from[h] = p
				if strings.HasPrefix(h, "/document/") {
					path := []string{h}
					for at := p; at != ""; at = from[at] {
						path = append([]string{at}, path...)
					}
					return path
				}
				next = append(next, h)
			}
		}
		level = next
	}
	t.Fatalf("no document within four clicks of the overview (%d pages seen)", len(from))
	return nil
}

// crawlSkips are the links a crawl does not follow: the proof bundles, charts, static
// files, the validator set, the live stream, and the pages of older blocks.
var crawlSkips = regexp.MustCompile(`^/(proof|chart/|static/|validators\.json|live|blocks\?)`)

// clickThrough loads the first page of path in the tab and clicks, on each page once
// its proof check ran, the link to the next one, failing unless it lands there.
func clickThrough(t *testing.T, tab context.Context, base string, path []string) {
	t.Helper()
	load(t, tab, base+path[0])
	for i, next := range path[1:] {
		settled(t, tab, path[i])
		sel := fmt.Sprintf(`a[href=%q]`, next)
		if res, err := chromedp.RunResponse(tab, chromedp.Click(chromedp.JSPath(query(sel)))); err != nil || res == nil || res.Status != http.StatusOK {
			t.Fatalf("clicking %s: %v", next, err)
		}
		got, err := chromedp.Run(tab, chromedp.Evaluate[string](`location.pathname + location.search`))
		if err != nil || got != next {
			t.Fatalf("clicking %s landed on %s (%v)", next, got, err)
		}
	}
}

// addNote writes a note of text in n's contract, as n's identity, with entropy (a new
// one for each note), and returns its id.
func addNote(t *testing.T, env *e2e.Env, n e2e.Note, text string, entropy byte) protocol.DocumentID {
	t.Helper()
	data, err := json.Marshal(map[string]string{"text": text})
	if err != nil {
		t.Fatal(err)
	}
	b := &protocol.DocumentsBatch{Identity: n.Identity, Contract: n.Contract, Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionCreate, Type: "note", Entropy: [32]byte{entropy}, Data: data},
	}}
	b.Actions[0].ID = b.CreateID(b.Actions[0])
	// The pages read the state before the latest block's: wait for the block after.
	if _, err := env.Client.WaitForHeight(context.Background(), env.Commit(t, b)+1); err != nil {
		t.Fatal(err)
	}
	return b.Actions[0].ID
}

func ptr[T any](v T) *T { return &v }

// clockShift runs, in every document the tab loads, before its scripts, a Date.now
// that is ahead of the browser's clock by shift: the clock the page's check reads.
func clockShift(shift time.Duration) chromedp.Action[chromedp.Void] {
	return onNewDocument(fmt.Sprintf("Date.now = ((now) => () => now() + %d)(Date.now);", shift.Milliseconds()))
}

// mode is what the proxy changes on the way.
type mode string

const (
	honest    mode = "honest"      // nothing
	balance   mode = "balance"     // the balance a page displays
	text      mode = "text"        // a document's displayed text
	expiry    mode = "expiry"      // a document's displayed expiry
	chain     mode = "chain"       // the chain id a page displays
	fakeChain mode = "fake chain"  // everything: the pages and bundles of another chain
	subject   mode = "subject"     // one address for another, in a page's figures and bundles
	stale     mode = "old bundles" // the bundles asked: those of an old state instead
	// labels: a balance's label and a nonce's swapped.
	labels mode = "labels"
	// hideFigure: the balance hidden by the page's style, a lie with a ✓ beside it.
	hideFigure mode = "hidden figure"
	// styleMark: a ✓ and a lie written after the balance by the page's style.
	styleMark mode = "style's mark"
	// bar: the lifetime bar renamed, so that no check of bars by name would find it.
	bar mode = "bar"
	// elsewhere: a document's link to its owner pointed at another identity.
	elsewhere mode = "elsewhere"
	// transparent: the whole document made transparent by the page's style.
	transparent mode = "transparent"
	// overlay: a sheet with a lie over the whole page, from the page's style.
	overlay mode = "overlay"
	// lure: a popover of the page's with a lie, as large as the window, which the
	// reader opens with a button of the page.
	lure mode = "lure"
	// veil: a view transition from the page before, drawn above the top layer, made by
	// the page's style to last ten minutes, and a link to the same page to start it.
	veil mode = "veil"
	// scroller: the page scrolls in its body, not in the window.
	scroller mode = "scroller"
	// strangers: every bundle's header made again to name a set of keys that never
	// were validators, who sign it, and its trace made to end with it.
	strangers mode = "strangers"
)

// proxy forwards to a web view, changing what its mode says.
type proxy struct {
	rp *httputil.ReverseProxy
	// from and to: in subject mode, every from in a page becomes to.
	from, to   string
	mu         sync.Mutex
	mode       mode
	validators map[mode]int // /validators.json asked, by mode
}

// newProxy forwards to the view at base, or in fakeChain mode to the one at fakeBase;
// in stale mode it asks every bundle at height old; in subject mode it writes to for
// from in every page.
func newProxy(t *testing.T, base, fakeBase string, old int64, from, to string) *proxy {
	real, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	fake, err := url.Parse(fakeBase)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{from: from, to: to, validators: map[mode]int{}}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			m := p.get()
			if pr.In.URL.Path == "/validators.json" {
				p.mu.Lock()
				p.validators[m]++
				p.mu.Unlock()
			}
			if m == fakeChain {
				pr.SetURL(fake)
				return
			}
			pr.SetURL(real)
			if m == stale && pr.In.URL.Path == "/proof" {
				q := pr.Out.URL.Query()
				q.Set("height", strconv.FormatInt(old, 10))
				pr.Out.URL.RawQuery = q.Encode()
			}
		},
		ModifyResponse: func(res *http.Response) error {
			if p.get() == strangers && res.Request.URL.Path == "/proof" {
				return forgeBundle(res)
			}
			css := strings.HasPrefix(res.Header.Get("Content-Type"), "text/css")
			if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") && !css {
				return nil
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				return err
			}
			switch m := p.get(); {
			case css:
				body = append(body, styles[m]...)
			case m == labels:
				body = []byte(strings.NewReplacer("<dt>Balance</dt>", "<dt>Last nonce</dt>", "<dt>Last nonce</dt>", "<dt>Balance</dt>").Replace(string(body)))
			case m == hideFigure:
				body = regexp.MustCompile(`(data-figure="balance">[^<]*</bdi>)`).ReplaceAll(body, []byte(`$1<span>9,999,251,000 ✓</span>`))
			case m == bar:
				body = bytes.ReplaceAll(body, []byte(`data-bar="lifetime"`), []byte(`data-bar="lifetime-old"`))
			case m == elsewhere:
				body = regexp.MustCompile(`href="/identity/[0-9a-f]{64}"`).ReplaceAll(body, []byte(`href="/identity/`+strings.Repeat("ab", 32)+`"`))
			case m == lure:
				body = bytes.Replace(body, []byte("<main>"), []byte(`<main><button id="lure" popovertarget="lie">details</button><div id="lie" popover="manual">balance 9,999,251,000 credits ✓</div>`), 1)
			case m == veil:
				body = bytes.Replace(body, []byte("<main>"), []byte(`<main><a id="again" href="`+res.Request.URL.Path+`">again</a>`), 1)
			}
			switch p.get() {
			case balance:
				body = setFigure(body, "balance", "9,999,251,000")
			case text:
				body = setFigure(body, "field.0.value", "goodbye from the proxy")
			case expiry:
				body = setFigure(body, "expiry", "expires at 2099-01-01T00:00:00Z, in 640000h0m0s")
			case chain:
				body = setFigure(body, "chain", "ttld-fake")
			case subject:
				body = bytes.ReplaceAll(body, []byte(p.from), []byte(p.to))
			}
			res.Body = io.NopCloser(bytes.NewReader(body))
			res.ContentLength = int64(len(body))
			res.Header.Set("Content-Length", strconv.Itoa(len(body)))
			return nil
		},
	}
	return p
}

// styles are what the proxy appends to the view's style sheet, by mode.
var styles = map[mode]string{
	hideFigure: `[data-figure="balance"] { display: none; }`,
	styleMark:  `[data-figure="balance"]::after { content: "✓ 9,999,251,000"; }`,
	// Transparent once the check has drawn: the root holds a popover then.
	transparent: `html:has(> :popover-open) { opacity: 0; }`,
	overlay:     `main::after { content: "balance 9,999,251,000 credits ✓"; position: fixed; inset: 0; background: #fff; z-index: 2147483647; }`,
	lure:        `#lie { position: fixed; inset: 0; width: 100vw; height: 100vh; margin: 0; background: #fff; }`,
	veil: `@view-transition { navigation: auto; }
::view-transition-group(*), ::view-transition-old(*), ::view-transition-new(*) { animation-duration: 600s; }`,
	scroller: `html { overflow: hidden; height: 100%; } body { height: 100%; overflow: auto; } main { padding-bottom: 2000px; }`,
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.rp.ServeHTTP(w, r) }

// forgeBundle makes the bundle res carries name, in its header, a set of keys that
// never were validators, signed by them, with a trace that ends with that header.
func forgeBundle(res *http.Response) error {
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return err
	}
	b, err := check.DecodeBundle(raw)
	if err != nil {
		return err
	}
	last, err := lightchain.Forge(b.SignedHeader.Header, []lightchain.Member{{Key: 100, Power: 10}, {Key: 101, Power: 10}})
	if err != nil {
		return err
	}
	b.SignedHeader = last.SignedHeader
	if len(b.Trace) > 0 {
		b.Trace[len(b.Trace)-1] = last
	} else {
		b.Trace = []*cmttypes.LightBlock{last}
	}
	forged, err := b.Encode()
	if err != nil {
		return err
	}
	res.Body = io.NopCloser(bytes.NewReader(forged))
	res.ContentLength = int64(len(forged))
	res.Header.Set("Content-Length", strconv.Itoa(len(forged)))
	return nil
}

func (p *proxy) set(m mode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = m
}

func (p *proxy) get() mode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

func (p *proxy) validatorsAsked(m mode) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.validators[m]
}

// setFigure writes text as the displayed text of every element of figure name.
func setFigure(body []byte, name, text string) []byte {
	re := regexp.MustCompile(`(data-figure="` + regexp.QuoteMeta(name) + `">)[^<]*<`)
	return re.ReplaceAllFunc(body, func(m []byte) []byte {
		open := re.FindSubmatch(m)[1]
		return append(append(append([]byte(nil), open...), html.EscapeString(text)...), '<')
	})
}

// load opens url in the tab and waits for its main element.
func load(t *testing.T, tab context.Context, url string) {
	t.Helper()
	if _, err := chromedp.Run(tab, chromedp.Navigate(url)); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	if _, err := chromedp.Run(tab, chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

// keepShadows is run in every document before the page's scripts: it keeps each
// shadow root a script attaches, closed ones included, in window.ttldShadows, so that
// the test reads the proof check's drawings, which no script of the page can.
const keepShadows = `(() => {
  const attach = Element.prototype.attachShadow;
  window.ttldShadows = [];
  Element.prototype.attachShadow = function (init) {
    const root = attach.call(this, init);
    window.ttldShadows.push(root);
    return root;
  };
})();`

// onNewDocument runs src in every document the tab loads, before its scripts.
func onNewDocument(src string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src})
		return chromedp.Void{}, err
	}
}

// query is a JavaScript expression of the first element sel matches in the page, or
// else in the proof check's drawings (which take the place of the page's own), null
// when none does.
func query(sel string) string {
	return fmt.Sprintf(`((sel) => {
		for (const root of [document, ...(window.ttldShadows || [])]) {
			const e = root.querySelector(sel);
			if (e !== null) return e;
		}
		return null;
	})(%q)`, sel)
}

// waitTrue evaluates the JavaScript expression cond until it is true, for up to half
// a minute.
func waitTrue(t *testing.T, tab context.Context, what any, cond string) {
	t.Helper()
	if _, err := chromedp.Run(tab, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Errorf("%v: %s did not hold: %v", what, cond, err)
	}
}

// waitText reads sel, in the page or the check's drawings, until it holds want (the
// proof check draws its boxes once it has run), for up to half a minute.
func waitText(t *testing.T, tab context.Context, path, sel, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := chromedp.Run(tab, chromedp.Evaluate[string](`(() => { const e = `+query(sel)+`; return e === null ? "" : e.textContent; })()`))
		if err != nil {
			t.Fatalf("%s: %s: %v", path, sel, err)
		}
		if strings.Contains(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: %s holds %q, want %q", path, sel, got, want)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// frameOverPlace scrolls the page loaded (scroller, a JavaScript expression: window, or
// the element the page scrolls in), and fails unless the check's drawing of its first
// box, in the top layer, stays over the place the page keeps for it (the placeholder
// that took the place of the page's drawing), as large.
func frameOverPlace(t *testing.T, tab context.Context, path, scroller string) {
	t.Helper()
	waitTrue(t, tab, path, `(() => {
		const s = `+scroller+`;
		s.scrollTo(0, 400);
		const frame = Array.from(document.documentElement.children).find((e) => e.matches(":popover-open"));
		if (frame === undefined) return false;
		const f = frame.getBoundingClientRect(), p = document.querySelector("[data-bundle]").firstElementChild.getBoundingClientRect();
		return (s === window ? window.scrollY : s.scrollTop) > 0 && Math.abs(f.top - p.top) < 1 && Math.abs(f.left - p.left) < 1 &&
			Math.abs(f.width - p.width) < 1 && Math.abs(f.height - p.height) < 1;
	})()`)
}

// settled waits until every proof box of the page loaded has its verdict.
func settled(t *testing.T, tab context.Context, path string) {
	t.Helper()
	waitTrue(t, tab, path, `Array.from(document.querySelectorAll("[data-bundle]")).every((b) => b.dataset.verified !== undefined)`)
}

// verdict loads url in the tab and returns its proof box's verdict once the check has
// run.
func verdict(t *testing.T, tab context.Context, url string) string {
	t.Helper()
	load(t, tab, url)
	deadline := time.Now().Add(time.Minute)
	for {
		v, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("#proof-status")))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(v, "VERIFIED") || strings.HasPrefix(v, "NOT VERIFIED") || time.Now().After(deadline) {
			return v
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// allVerified waits until every proof box of the page loaded has its verdict, and
// fails unless each box and each figure of the check's drawings is verified, and the
// page's own drawings are gone.
func allVerified(t *testing.T, tab context.Context, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		verdicts, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`[document, ...(window.ttldShadows || [])].flatMap((root) =>
			Array.from(root.querySelectorAll("[data-bundle], [data-figure]"), (e) => e.dataset.verified || "")).concat(
			document.querySelector("[data-bundle]:not([data-verified])") === null && document.querySelector("[data-drawing]") !== null ? ["the page's drawing"] : [])`))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		done, ok := true, true
		for _, v := range verdicts {
			done = done && v != ""
			ok = ok && v == "true"
		}
		if done {
			if !ok {
				t.Errorf("%s: verdicts %v, want all verified", path, verdicts)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: verdicts %v after a minute", path, verdicts)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// moduleFromCache fails unless the page loaded took the proof check's module, under
// its hashed name, from the browser's cache: no byte of it crossed the network, not
// even a revalidation (the overview loaded before fetched it).
func moduleFromCache(t *testing.T, browser context.Context, path string) {
	t.Helper()
	sizes, err := chromedp.Run(browser, chromedp.Evaluate[[]float64](`performance.getEntriesByType("resource")
		.filter((e) => /^\/static\/verify\.[0-9a-f]{16}\.wasm$/.test(new URL(e.name).pathname)).map((e) => e.transferSize)`))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(sizes) != 1 || sizes[0] != 0 {
		t.Errorf("%s: the module's fetches moved %v bytes, want one fetch answered by the cache", path, sizes)
	}
}

// chromium is the browser's path: TTLD_CHROMIUM, or Debian's chromium.
func chromium(t testing.TB) string {
	for _, p := range []string{os.Getenv("TTLD_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	t.Fatal("no chromium: run make e2e-web, which installs Debian's chromium when it is missing")
	return ""
}
