//go:build web

package web

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ttld-dev/ttld/e2e"
)

// TestWebViewInChromium: the overview, blocks, a block, an identity, a contract, its
// documents, a document and the epochs, each loaded in headless Chromium, show what the
// chain holds.
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
	browser, cancel = context.WithTimeout(browser, 2*time.Minute)
	defer cancel()

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
		if _, err := chromedp.Run(browser, chromedp.Navigate(base+path)); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if _, err := chromedp.Run(browser, chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		// Each selector is read until it holds what it should (the proof check
		// rewrites #proof-status once it has run), for up to half a minute.
		for sel, want := range texts {
			deadline := time.Now().Add(30 * time.Second)
			for {
				got, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS(sel)))
				if err != nil {
					t.Fatalf("%s: %s: %v", path, sel, err)
				}
				if strings.Contains(got, want) {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("%s: %s holds %q, want %q", path, sel, got, want)
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
		allVerified(t, browser, path, 0)                                // the screenshot with the proof checks' verdicts
		png, err := chromedp.Run(browser, chromedp.FullScreenshot(100)) // 100: a PNG (less is a JPEG)
		if err != nil {
			t.Fatalf("%s: screenshot: %v", path, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, d := contract.String(), doc.String()
	page("overview", "/", map[string]string{"h1": "Chain " + e2e.ChainID, "#protocol-version": "14", "#backlog": "0 documents", "#credits": "(conserved)", "#validators": "10"})
	allVerified(t, browser, "/", 7)
	page("blocks", "/blocks", map[string]string{"#blocks": strconv.FormatInt(docHeight, 10)})
	page("block", "/block/"+strconv.FormatInt(docHeight, 10), map[string]string{"h1": "Block " + strconv.FormatInt(docHeight, 10), "#tx-count": "1", "main": "document_create"})
	page("identity", "/identity/"+id.String(), map[string]string{"#balance": strconv.FormatUint(st.Balance%1000, 10), "#proof-status": "VERIFIED in this browser"})
	moduleFromCache(t, browser, "/identity/"+id.String())
	page("contract", "/contract/"+c, map[string]string{"#type-note": "Type note", ".ttl": "2m0s", "#proof-status": "VERIFIED in this browser"})
	page("documents", "/documents/"+c+"/note", map[string]string{"#documents": d[:8], "#proof-status": "VERIFIED in this browser: presence"})
	page("document", "/document/"+c+"/note/"+d, map[string]string{"#expiry": "expires at", "#fields": "hello from the web view", "#proof": "signed by the validator set", "#proof-status": "VERIFIED in this browser"})
	page("epochs", "/epochs", map[string]string{"#epochs": "0"})
	allVerified(t, browser, "/epochs", 1)

	// The document's proof, checked in the browser by the WebAssembly build of
	// web/check against the pinned genesis set: verified; and through a proxy that
	// flips a byte of the proof bundle on the way: not verified.
	waitVerdict := func(base, path string) string {
		t.Helper()
		if _, err := chromedp.Run(browser, chromedp.Navigate(base+path)); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			verdict, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS("#proof-status")))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(verdict, "VERIFIED") || time.Now().After(deadline) {
				return verdict
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	docPath := "/document/" + c + "/note/" + d
	for path, want := range map[string]string{
		"/address/" + env.Dev.Address().String():               "VERIFIED in this browser: presence",
		"/address/" + strings.Repeat("0", 39) + "2":            "VERIFIED in this browser: absence",
		"/document/" + c + "/note/" + strings.Repeat("ab", 32): "VERIFIED in this browser: absence",
		docPath:                                 "VERIFIED in this browser: presence",
		"/identity/" + id.String():              "VERIFIED in this browser: presence",
		"/identity/" + strings.Repeat("cd", 32): "VERIFIED in this browser: absence",
		"/contract/" + c:                        "VERIFIED in this browser: presence",
	} {
		if v := waitVerdict(base, path); !strings.HasPrefix(v, want) {
			t.Errorf("%s: the proof in the browser: %q, want %q", path, v, want)
		}
	}
	waitVerdict(base, docPath) // the screenshot of the document with its verdict
	png, err := chromedp.Run(browser, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shots, "document.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	tamper := httptest.NewServer(tamperingProxy(t, base))
	defer tamper.Close()
	if v := waitVerdict(tamper.URL, docPath); !strings.HasPrefix(v, "NOT VERIFIED") {
		t.Fatalf("a tampered proof in the browser: %q", v)
	}
}

// tamperingProxy forwards to the web view at base, changing one character of the
// answer's value in every proof bundle it passes on.
func tamperingProxy(t *testing.T, base string) http.Handler {
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	p := httputil.NewSingleHostReverseProxy(target)
	p.ModifyResponse = func(res *http.Response) error {
		if res.Request.URL.Path != "/proof" {
			return nil
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return err
		}
		i := bytes.Index(body, []byte(`"value":"`)) + len(`"value":"`) + 20
		if body[i] == 'A' {
			body[i] = 'B'
		} else {
			body[i] = 'A'
		}
		res.Body = io.NopCloser(bytes.NewReader(body))
		res.ContentLength = int64(len(body))
		res.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	return p
}

// allVerified waits until every proof box of the page loaded (at least want of them)
// has its verdict, and fails unless all are verified.
func allVerified(t *testing.T, browser context.Context, path string, want int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		verdicts, err := chromedp.Run(browser, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll("[data-bundle]")).map(e => e.dataset.verified || "")`))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		done, ok := len(verdicts) >= want, len(verdicts) >= want
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
