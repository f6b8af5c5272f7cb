//go:build web

package web

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/protocol"
)

// pageKinds are the kinds of page the view serves, by their paths: every one must be
// within three clicks of the overview.
var pageKinds = map[string]*regexp.Regexp{
	"blocks":           regexp.MustCompile(`^/blocks$`),
	"nonempty blocks":  regexp.MustCompile(`^/blocks\?nonempty=1$`),
	"block":            regexp.MustCompile(`^/block/\d+$`),
	"transactions":     regexp.MustCompile(`^/txs$`),
	"transaction":      regexp.MustCompile(`^/tx/[0-9A-F]{64}\?height=\d+$`),
	"identity":         regexp.MustCompile(`^/identity/[0-9a-f]{64}$`),
	"identity history": regexp.MustCompile(`^/identity/[0-9a-f]{64}/history$`),
	"address":          regexp.MustCompile(`^/address/[0-9a-f]{40}$`),
	"address history":  regexp.MustCompile(`^/address/[0-9a-f]{40}/history$`),
	"contracts":        regexp.MustCompile(`^/contracts$`),
	"contract":         regexp.MustCompile(`^/contract/[0-9a-f]{64}$`),
	"documents":        regexp.MustCompile(`^/documents/[0-9a-f]{64}/[^/?]+$`),
	"document":         regexp.MustCompile(`^/document/[0-9a-f]{64}/[^/]+/[0-9a-f]{64}$`),
	"document history": regexp.MustCompile(`^/document/[0-9a-f]{64}/[^/]+/[0-9a-f]{64}/history$`),
	"validators":       regexp.MustCompile(`^/validators$`),
	"validator":        regexp.MustCompile(`^/validator/[0-9A-F]{40}$`),
	"epochs":           regexp.MustCompile(`^/epochs$`),
	"statistics":       regexp.MustCompile(`^/stats$`),
}

// hrefRE matches a link's target.
var hrefRE = regexp.MustCompile(`<a [^>]*href="([^"]*)"`)

// TestExplorerInChromium: the explorer's lists in Chromium (the transactions and their
// filter, the histories, the blocks that hold transactions, the statistics), every
// kind of page within three clicks of the overview (an address's among them), and a
// node without a transaction index, whose lists say so while its proven pages verify.
func TestExplorerInChromium(t *testing.T) {
	env := e2e.StartNodeShortTTL(t, 60)
	ctx := context.Background()
	note := env.SeedNote(t, "hello from the explorer")
	// A transfer to an address that never signs: it appears as a recipient only.
	var to protocol.Address
	to[0] = 0x5a
	sent := env.Commit(t, &protocol.AddressFundsTransfer{PubKey: env.Dev.Pub, Recipient: to, Amount: 1_000})
	if _, err := env.Client.WaitForHeight(ctx, sent+1); err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(env.Node.WebAddress(), "/")
	browser := newBrowser(t)
	id, c, d := note.Identity.String(), note.Contract.String(), note.Document.String()
	docPath := "/document/" + c + "/note/" + d

	// The transactions, and the filter's form.
	load(t, browser, base+"/txs")
	waitText(t, browser, "/txs", "main table", "address_funds_transfer")
	screenshot(t, browser, "txs")
	if _, err := chromedp.Run(browser, chromedp.SetValue(`select[name="kind"]`, "document_create")); err != nil {
		t.Fatal(err)
	}
	navigate(t, browser, chromedp.Submit(`#filter`), "/txs?kind=document_create&code=")
	waitText(t, browser, "/txs?kind=document_create", "main table", "documents_batch")
	load(t, browser, base+"/txs?kind=validators")
	waitText(t, browser, "/txs?kind=validators", "#empty", "No transaction matches these filters")

	// The histories: the recipient's, the identity's, the document's.
	load(t, browser, base+"/address/"+to.String()+"/history")
	waitText(t, browser, "address history", "#history", "received from")
	waitText(t, browser, "address history", "#history", "1,000")
	load(t, browser, base+"/identity/"+id+"/history")
	waitText(t, browser, "identity history", "#history", "created, funded by")
	screenshot(t, browser, "history")
	load(t, browser, base+docPath+"/history")
	waitText(t, browser, "document history", "#history", "create")

	// The blocks that hold transactions: reached from the blocks by their link.
	load(t, browser, base+"/blocks")
	for _, a := range []chromedp.Action[chromedp.Void]{chromedp.Click(`#hide-empty`), chromedp.WaitReady(`#show-empty`)} {
		if _, err := chromedp.Run(browser, a); err != nil {
			t.Fatal(err)
		}
	}
	waitText(t, browser, "/blocks?nonempty=1", "#blocks", strconv.FormatInt(sent, 10))

	// The statistics: the note, and its expiry within the hour.
	load(t, browser, base+"/stats")
	waitText(t, browser, "/stats", "#live-documents", "1, of 1 document type in 1 contract")
	waitText(t, browser, "/stats", "#expiring", "1 document with a ttl")
	screenshot(t, browser, "stats")

	// Every kind of page within three clicks of the overview, then the way to an
	// address clicked through in the browser, its page verified.
	paths := crawlKinds(t, base)
	for kind, path := range paths {
		t.Logf("%s: %s", kind, strings.Join(path, " → "))
	}
	for kind := range pageKinds {
		if _, ok := paths[kind]; !ok {
			t.Errorf("no %s page within three clicks of the overview", kind)
		}
	}
	if path, ok := paths["address"]; ok {
		follow(t, browser, base, path)
		allVerified(t, browser, path[len(path)-1])
	}

	// A node that keeps no transaction index: its lists say so, its proven pages
	// verify, a transaction opens from its block.
	bare := e2e.StartNodeWithoutIndex(t, 60)
	bareNote := bare.SeedNote(t, "no index here")
	if _, err := bare.Client.WaitForHeight(ctx, bareNote.Height+1); err != nil {
		t.Fatal(err)
	}
	bareBase := strings.TrimSuffix(bare.Node.WebAddress(), "/")
	for _, path := range []string{"/txs?kind=transfers", "/identity/" + bareNote.Identity.String() + "/history", "/blocks?nonempty=1", "/contracts"} {
		load(t, browser, bareBase+path)
		waitText(t, browser, path, "#unavailable", "keeps no transaction index")
	}
	barePath := "/document/" + bareNote.Contract.String() + "/note/" + bareNote.Document.String()
	if v := verdict(t, browser, bareBase+barePath); !strings.HasPrefix(v, "VERIFIED in this browser") {
		t.Errorf("%s without an index: %q", barePath, v)
	}
	load(t, browser, bareBase+"/txs")
	waitText(t, browser, "/txs without an index", "main table", "documents_batch")
	load(t, browser, bareBase+"/stats")
	waitText(t, browser, "/stats without an index", "#live-documents", "1, of 1 document type")
}

// screenshot saves the tab's page as name.png into TTLD_SCREENSHOTS, when it is set
// (make web-screenshots).
func screenshot(t *testing.T, tab context.Context, name string) {
	t.Helper()
	dir := os.Getenv("TTLD_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("%s: screenshot: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// follow loads the first page of path in the tab and follows, on each page, its link
// to the next one (the element's own click, whatever the page draws over it), failing
// unless it lands there.
func follow(t *testing.T, tab context.Context, base string, path []string) {
	t.Helper()
	load(t, tab, base+path[0])
	for _, next := range path[1:] {
		link := fmt.Sprintf(`Array.from(document.querySelectorAll("a[href]")).find((a) => a.getAttribute("href") === %q)`, next)
		if found, err := chromedp.Run(tab, chromedp.Evaluate[bool]("!!"+link)); err != nil || !found {
			t.Fatalf("%s: no link to %s (%v)", path[0], next, err)
		}
		navigate(t, tab, chromedp.Evaluate[chromedp.Void](link+".click()"), next)
	}
}

// newBrowser starts headless Chromium for the test.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	allocCtx, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 1000))...)
	t.Cleanup(cancel)
	browser, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	browser, cancel = context.WithTimeout(browser, 3*time.Minute)
	t.Cleanup(cancel)
	return browser
}

// navigate runs action, which navigates the tab, waits for the page it loads (the
// navigation's own events) and fails unless that page answered 200 at want, its path
// and query.
func navigate(t *testing.T, tab context.Context, action chromedp.Action[chromedp.Void], want string) {
	t.Helper()
	res, err := chromedp.RunResponse(tab, action)
	if err != nil || res == nil || res.Status != http.StatusOK {
		t.Fatalf("navigating to %s: %v", want, err)
	}
	if got, err := chromedp.Run(tab, chromedp.Evaluate[string](`location.pathname + location.search`)); err != nil || got != want {
		t.Fatalf("the tab is at %q (%v), want %q", got, err, want)
	}
}

// crawlKinds follows the links of the view's pages from the overview, three clicks
// deep (the header's links and the page's, a few pages of each kind a level), and
// returns for each kind of page reached the links that lead there first.
func crawlKinds(t *testing.T, base string) map[string][]string {
	t.Helper()
	from := map[string]string{"/": ""}
	found := map[string][]string{}
	level := []string{"/"}
	for depth := 1; depth <= 3; depth++ {
		var next []string
		expanded := map[string]int{}
		for _, p := range level {
			kind := kindOf(p)
			if expanded[kind]++; expanded[kind] > 3 {
				continue
			}
			for _, h := range links(t, base+p) {
				if _, seen := from[h]; seen || !strings.HasPrefix(h, "/") || crawlSkips.MatchString(h) && !pageKinds["nonempty blocks"].MatchString(h) {
					continue
				}
				from[h] = p
				k := kindOf(h)
				if _, ok := found[k]; !ok && k != "" {
					path := []string{h}
					for at := p; at != ""; at = from[at] {
						path = append([]string{at}, path...)
					}
					found[k] = path
				}
				next = append(next, h)
			}
		}
		level = next
	}
	return found
}

// kindOf is the kind of page path is, "" when none.
func kindOf(path string) string {
	for k, re := range pageKinds {
		if re.MatchString(path) {
			return k
		}
	}
	return ""
}

// links are the targets of the links of the page at url.
func links(t *testing.T, url string) []string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, res.StatusCode)
	}
	var out []string
	for _, m := range hrefRE.FindAllStringSubmatch(string(body), -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}
