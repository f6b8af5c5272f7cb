//go:build web

package web

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/ttld-dev/ttld/e2e"
)

// verdictClock is run in every document before the page's own scripts: once every
// proof box of the page has its verdict, it writes on the root element when that was
// (performance.now(): milliseconds since the navigation started), the verdicts, and
// the fetch of the proof check's module: when its answer ended and the bytes that
// crossed the network for it (0: the browser's cache answered).
const verdictClock = `new MutationObserver((_, obs) => {
  const boxes = Array.from(document.querySelectorAll("[data-bundle]"));
  if (boxes.length === 0 || !boxes.every((e) => e.dataset.verified)) return;
  const root = document.documentElement.dataset;
  root.verdictAt = performance.now();
  root.verdicts = boxes.map((e) => e.dataset.verified).join(",");
  const module = performance.getEntriesByType("resource").find((e) => /\/static\/verify\.(\w+\.)?wasm$/.test(new URL(e.name).pathname));
  root.moduleAt = module ? module.responseEnd : -1;
  root.moduleBytes = module ? module.transferSize : -1;
  obs.disconnect();
}).observe(document, {subtree: true, attributes: true, attributeFilter: ["data-verified"]});`

// timedVerdict is what verdictClock wrote.
type timedVerdict struct {
	At, ModuleAt, ModuleBytes float64
	Verdicts                  string
}

// BenchmarkPageToVerdict: the time from navigating to a page to the last of its proof
// checks' verdicts in headless Chromium, as the page itself clocks it. "cold" clears
// the browser's cache before each load (the module is fetched and compiled again, as
// on a reader's first checked page); "warm" keeps it. Every verdict must be verified.
// Each load starts at a random moment of the block interval (about a second), as a
// reader's does: loads one after the other would otherwise all start just after a
// block.
// Run it with make e2e-web's requirements: go test -tags web -run '^$' -bench
// PageToVerdict ./e2e/web/.
func BenchmarkPageToVerdict(b *testing.B) {
	env := e2e.StartNodeShortTTL(b, 60)
	note := env.SeedNote(b, "hello from the benchmark")
	ctx := context.Background()
	if _, err := env.Client.WaitForHeight(ctx, note.Height+1); err != nil {
		b.Fatal(err)
	}
	allocCtx, cancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(b)), chromedp.NoSandbox, chromedp.DisableGPU)...)
	defer cancel()
	browser, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	err := chromedp.Do(browser, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: verdictClock})
		return err
	}))
	if err != nil {
		b.Fatal(err)
	}
	clearCache := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.ClearBrowserCache, cdp.Empty{})
		return err
	})
	base := strings.TrimSuffix(env.Node.WebAddress(), "/")
	load := func(b *testing.B, path string) timedVerdict {
		b.Helper()
		if err := chromedp.Do(browser, chromedp.Navigate(base+path)); err != nil {
			b.Fatal(err)
		}
		v, err := chromedp.Run(browser, chromedp.Poll[timedVerdict](`document.documentElement.dataset.verdictAt && {
			At: +document.documentElement.dataset.verdictAt, Verdicts: document.documentElement.dataset.verdicts,
			ModuleAt: +document.documentElement.dataset.moduleAt, ModuleBytes: +document.documentElement.dataset.moduleBytes}`,
			chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(time.Minute)))
		if err != nil {
			b.Fatalf("%s: %v", path, err)
		}
		if slices.Contains(strings.Split(v.Verdicts, ","), "false") {
			b.Fatalf("%s: verdicts %s, want all verified", path, v.Verdicts)
		}
		return v
	}
	docPath := "/document/" + note.Contract.String() + "/note/" + note.Document.String()
	load(b, docPath) // pins the validator set, as a reader's first visit does
	for _, bc := range []struct {
		name, path string
		cold       bool
	}{
		{"document/cold", docPath, true},
		{"document/warm", docPath, false},
		{"overview/warm", "/", false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var ms []float64
			var moduleMs, moduleBytes float64
			for b.Loop() {
				time.Sleep(rand.N(time.Second))
				if bc.cold {
					if err := chromedp.Do(browser, clearCache); err != nil {
						b.Fatal(err)
					}
				}
				v := load(b, bc.path)
				ms = append(ms, v.At)
				moduleMs += v.ModuleAt
				moduleBytes += v.ModuleBytes
			}
			slices.Sort(ms)
			var sum float64
			for _, m := range ms {
				sum += m
			}
			n := float64(len(ms))
			b.ReportMetric(sum/n, "ms/verdict")
			b.ReportMetric(ms[0], "min-ms")
			b.ReportMetric(ms[len(ms)-1], "max-ms")
			b.ReportMetric(moduleMs/n, "module-ms")
			b.ReportMetric(moduleBytes/n, "module-bytes")
		})
	}
}
