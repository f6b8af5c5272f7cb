package main

import (
	"errors"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// likesContract is the example contract the window commands are tried on.
const likesContract = "../../docs/examples/likes.json"

// TestWindowQueryCommands: likes of docs/examples/likes.json against a real node, read
// with --prove. Each like is written into the windows its proven $createdAt lies in, so
// the test reads those windows, wherever the minutes fell: each one's trending posts in
// full and page by page, its documents by post and its count; then the newest window
// at the last like's height, and a window past its horizon refused with query code 12.
func TestWindowQueryCommands(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	c := cli{t: t, env: env}
	var created, tx txOutput
	if err := c.json(&created, "tx", "identity", "create", "--from", node.DevKeyName, "--amount", "100000000000", "--commit"); err != nil || created.Code != 0 {
		t.Fatalf("identity create: %+v %v", created, err)
	}
	if err := c.json(&tx, "tx", "contract", "create", likesContract, "--identity", created.Identity, "--from", node.DevKeyName, "--commit"); err != nil || tx.Code != 0 {
		t.Fatalf("contract create: %+v %v", tx, err)
	}
	contract := tx.Contract
	grid := lastMinuteGrid(t)

	// windows: each window start, the likes it holds by post.
	windows := map[uint64]map[string]uint64{}
	var lastHeight int64
	var lastCreatedAt uint64
	for _, post := range []string{"hello", "world", "hello"} {
		if err := c.json(&tx, "tx", "document", "create", contract, "burst", `{"post":"`+post+`"}`, "--identity", created.Identity, "--from", node.DevKeyName, "--commit"); err != nil || tx.Code != 0 {
			t.Fatalf("like %s: %+v %v", post, tx, err)
		}
		var like struct {
			Answer   documentStateJSON `json:"answer"`
			Verified string            `json:"verified"`
		}
		if err := c.json(&like, "query", "document", contract, "burst", tx.Document, "--prove"); err != nil || like.Verified != "presence" || like.Answer.CreatedAt == 0 {
			t.Fatalf("like %s %s: %+v %v", post, tx.Document, like, err)
		}
		for _, start := range grid.Windows(like.Answer.CreatedAt) {
			if windows[start] == nil {
				windows[start] = map[string]uint64{}
			}
			windows[start][post]++
		}
		lastHeight, lastCreatedAt = tx.Height, like.Answer.CreatedAt
	}

	for _, start := range slices.Sorted(maps.Keys(windows)) {
		checkWindow(t, c, contract, start, windows[start])
	}

	// The newest window at the state after the last like's block is the one its
	// $createdAt (that block's time) lies in.
	containing := grid.Windows(lastCreatedAt)
	newest := containing[len(containing)-1]
	var trending struct {
		Answer   trendingJSON `json:"answer"`
		Verified string       `json:"verified"`
	}
	if err := c.json(&trending, "query", "trending", contract, "burst", "lastMinute", "--newest", "--height", strconv.FormatInt(lastHeight, 10), "--prove"); err != nil ||
		trending.Verified != "presence" || trending.Answer.WindowStart != newest || trending.Answer.Height != lastHeight {
		t.Fatalf("query trending --newest at height %d: %+v %v, want window %d", lastHeight, trending, err, newest)
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

// lastMinuteGrid is the grid of likes.json's burst.lastMinute index, as the node parses
// it.
func lastMinuteGrid(t *testing.T) protocol.Grid {
	t.Helper()
	raw, err := os.ReadFile(likesContract)
	if err != nil {
		t.Fatal(err)
	}
	types, err := protocol.ParseDocumentTypes(raw, protocol.Latest)
	if err != nil {
		t.Fatal(err)
	}
	for _, dt := range types {
		for _, ix := range dt.Indices {
			if dt.Name == "burst" && ix.Name == "lastMinute" && ix.TimeRange != nil {
				return ix.TimeRange.Grid()
			}
		}
	}
	t.Fatalf("%s has no time-range index burst.lastMinute", likesContract)
	return protocol.Grid{}
}

// rankedGroup is a window's group as trending answers it: a post and its likes.
type rankedGroup struct {
	post  string
	count uint64
}

// checkWindow reads the window of the lastMinute index starting at start, which holds
// the likes posts counts by post: trending in full and one group a page, following the
// cursors, the window's documents of each post and its count, all proven.
func checkWindow(t *testing.T, c cli, contract string, start uint64, posts map[string]uint64) {
	t.Helper()
	// Groups come most liked first, then in the order of their values (docs/STATE.md,
	// the ranked index's key: ^count, then the parts).
	var want []rankedGroup
	var total uint64
	for post, n := range posts {
		want = append(want, rankedGroup{post, n})
		total += n
	}
	slices.SortFunc(want, func(a, b rankedGroup) int {
		if a.count != b.count {
			return int(b.count) - int(a.count)
		}
		return strings.Compare(a.post, b.post)
	})
	groups := func(a trendingJSON) []rankedGroup {
		var out []rankedGroup
		for _, g := range a.Groups {
			post, _ := g.Values["post"].(string)
			out = append(out, rankedGroup{post, g.Count})
		}
		return out
	}
	startArg := strconv.FormatUint(start, 10)

	var trending struct {
		Answer   trendingJSON `json:"answer"`
		Verified string       `json:"verified"`
	}
	if err := c.json(&trending, "query", "trending", contract, "burst", "lastMinute", "--start", startArg, "--prove"); err != nil ||
		trending.Verified != "presence" || trending.Answer.WindowStart != start || trending.Answer.More || !slices.Equal(groups(trending.Answer), want) {
		t.Fatalf("query trending --start %d --prove: %+v %v, want %v", start, trending, err, want)
	}
	cursor := ""
	for i, g := range want {
		args := []string{"query", "trending", contract, "burst", "lastMinute", "--start", startArg, "--top", "1", "--prove"}
		if i > 0 {
			args = append(args, "--after", cursor)
		}
		var page struct {
			Answer trendingJSON `json:"answer"`
		}
		if err := c.json(&page, args...); err != nil || !slices.Equal(groups(page.Answer), []rankedGroup{g}) || page.Answer.More != (i < len(want)-1) {
			t.Fatalf("window %d, page %d of trending: %+v %v, want %v", start, i, page, err, g)
		}
		cursor = page.Answer.Groups[0].Cursor
	}

	for post, n := range posts {
		var docs struct {
			Answer   windowDocumentsJSON `json:"answer"`
			Verified string              `json:"verified"`
		}
		if err := c.json(&docs, "query", "window", contract, "burst", "lastMinute", "--start", startArg, "--where", "post == "+post, "--prove"); err != nil ||
			docs.Verified != "presence" || uint64(len(docs.Answer.Documents)) != n || docs.Answer.WindowStart != start {
			t.Fatalf("query window --start %d --where post == %s --prove: %+v %v, want %d documents", start, post, docs, err, n)
		}
	}
	var count struct {
		Answer windowCountJSON `json:"answer"`
	}
	if err := c.json(&count, "query", "window", contract, "burst", "lastMinute", "--start", startArg, "--count", "--prove"); err != nil || count.Answer.Count != total {
		t.Fatalf("query window --start %d --count --prove: %+v %v, want %d", start, count, err, total)
	}
}
