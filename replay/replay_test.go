package replay

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// runChain starts a node on a fresh home, commits a few transfers, waits for height
// and stops it.
func runChain(t *testing.T, height int64) string {
	t.Helper()
	env := e2e.StartNode(t)
	ctx := context.Background()
	for nonce := uint64(1); nonce <= 3; nonce++ {
		tx, err := env.Client.Sign(ctx, &protocol.AddressFundsTransfer{
			PubKey: env.Dev.Pub, Nonce: nonce, Recipient: protocol.Address{byte(nonce)}, Amount: 1000 * nonce,
		}, env.Dev.Priv)
		if err != nil {
			t.Fatal(err)
		}
		r, err := env.Client.Broadcast(ctx, tx, true)
		if err != nil || r.Code != 0 {
			t.Fatalf("transfer %d: %v %+v", nonce, err, r)
		}
	}
	// The locked store of a running node is refused, and nothing is written.
	if _, err := Run(ctx, Options{Home: env.Home}); !errors.As(err, new(ErrStoreUnavailable)) {
		t.Fatalf("replay of a running node: %v, want ErrStoreUnavailable", err)
	}
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := env.Client.WaitForHeight(wait, height); err != nil {
		t.Fatalf("no height %d in time: %v", height, err)
	}
	if err := env.Node.Stop(); err != nil {
		t.Fatal(err)
	}
	return env.Home
}

// TestReplayNoBlocks: a home that never ran has nothing to replay.
func TestReplayNoBlocks(t *testing.T) {
	home := t.TempDir()
	if _, err := node.Init(node.InitOptions{Home: home, ChainID: "replay-test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), Options{Home: home}); !errors.As(err, new(ErrNoBlocks)) {
		t.Fatalf("replay of a home without blocks: %v, want ErrNoBlocks", err)
	}
}

// TestReplay replays a node's blocks and matches every app hash and results hash; then
// an application that applies one height differently is pinpointed at that height,
// with the key it changed in the block's changes and in the diff against the node.
func TestReplay(t *testing.T) {
	t.Parallel()
	home := runChain(t, 8)
	before := snapshot(t, home)
	t.Cleanup(func() {
		if changed := changedFiles(before, snapshot(t, home)); len(changed) > 0 {
			t.Errorf("replay wrote into the node's home: %v", changed)
		}
	})
	sum, err := Run(context.Background(), Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	// Every block is checked: the last against CometBFT's saved state. How many
	// signatures the verifiers reach ahead depends on their pace against the execution
	// (before the replica saves its first block there are no keys to read), so it is not
	// asserted here; abci's TestVerifyAheadOfBlocks checks what verifying ahead does.
	if sum.Verdict != "match" || sum.Blocks < 8 || sum.Checked != sum.Blocks || sum.Unchecked != 0 || !sum.LastFromState {
		t.Fatalf("replay summary %+v", sum)
	}
	last := sum.To

	// The last block, which no header follows, is checked all the same.
	tampered := []byte("tampered")
	sum, err = Run(context.Background(), Options{Home: home, Tamper: func(h int64, kv drive.KV, _ *abcitypes.ResponseFinalizeBlock) error {
		if h == last {
			return kv.Set(tampered, []byte{1})
		}
		return nil
	}})
	if err != nil || sum.Mismatch == nil || sum.Mismatch.Height != last || sum.Mismatch.What != "app_hash" {
		t.Fatalf("the last block tampered: %+v %v", sum, err)
	}
	noPipeline(t)

	// A range that selects no block is an error, not a match.
	for _, r := range []struct{ from, to int64 }{{5, 3}, {last + 1, 0}, {last + 5, last + 9}, {-1, 0}, {0, -2}} {
		_, err := Run(context.Background(), Options{Home: home, From: r.from, To: r.to})
		var empty ErrEmptyRange
		if !errors.As(err, &empty) || empty.Last != last {
			t.Errorf("--from %d --to %d: %v, want ErrEmptyRange", r.from, r.to, err)
		}
	}
	sum, err = Run(context.Background(), Options{Home: home, From: last})
	if err != nil || sum.Checked != 1 || !sum.LastFromState {
		t.Fatalf("--from the last block: %+v %v", sum, err)
	}

	const bad = 4
	sum, err = Run(context.Background(), Options{Home: home, Tamper: func(h int64, kv drive.KV, _ *abcitypes.ResponseFinalizeBlock) error {
		if h == bad {
			return kv.Set(tampered, []byte{1})
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	m := sum.Mismatch
	if sum.Verdict != "mismatch" || m == nil || m.Height != bad || m.What != "app_hash" {
		t.Fatalf("tampered replay: %+v", sum)
	}
	// The replay stopped at the mismatch, blocks read ahead of it and all.
	noPipeline(t)
	if !hasKey(m.Changes, tampered, "added") {
		t.Fatalf("the block's changes do not show the tampered key: %+v", m.Changes)
	}
	if !hasKey(m.NodeDiff, tampered, "added") {
		t.Fatalf("the diff against the node does not show the tampered key: %+v (%s)", m.NodeDiff, m.NodeDiffNote)
	}
	if len(m.NodeDiff) != 1 {
		t.Fatalf("the diff against the node shows more than the tampered key: %+v", m.NodeDiff)
	}

	// --from skips the comparison before it, but the state is rebuilt all the same.
	sum, err = Run(context.Background(), Options{Home: home, From: bad + 1, Tamper: func(h int64, kv drive.KV, _ *abcitypes.ResponseFinalizeBlock) error {
		if h == bad {
			return kv.Set(tampered, []byte{1})
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Mismatch == nil || sum.Mismatch.Height != bad+1 {
		t.Fatalf("a divergence before --from must surface at the first compared height: %+v", sum)
	}
}

// TestReplayResultsMismatch: an application whose state agrees but whose results of
// one block differ (a transaction's code) is caught by the next header's
// LastResultsHash.
func TestReplayResultsMismatch(t *testing.T) {
	t.Parallel()
	home := runChain(t, 4)
	var at int64
	sum, err := Run(context.Background(), Options{Home: home, Tamper: func(h int64, _ drive.KV, res *abcitypes.ResponseFinalizeBlock) error {
		if at == 0 && len(res.TxResults) > 0 {
			at = h
			res.TxResults[0].Code = 1
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if at == 0 {
		t.Fatal("no block with transactions")
	}
	if m := sum.Mismatch; m == nil || m.Height != at || m.What != "results_hash" {
		t.Fatalf("results changed at %d: %+v", at, sum)
	}
}

// TestReplayCancel: a replay whose context ends stops between two blocks with the
// context's error, and leaves no goroutine of its reading ahead behind; so does one
// that stops at a block the store cannot give.
func TestReplayCancel(t *testing.T) {
	t.Parallel()
	// More blocks than are read ahead: when the replay stops, the reading is waiting
	// for room.
	home := runChain(t, aheadBlocks+4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const stopAt = 3
	done := int64(0)
	sum, err := runWithin(t, ctx, Options{Home: home, Progress: func(n, _ int64) {
		done = n
		if n == stopAt {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || done != stopAt || sum.Blocks != stopAt {
		t.Fatalf("cancelled after block %d: %v, %d blocks replayed (%+v)", stopAt, err, done, sum)
	}
	noPipeline(t)

	if _, err := Run(ctx, Options{Home: home}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a replay started cancelled: %v", err)
	}
	noPipeline(t)

	home = e2e.CopyHome(t, home)
	e2e.PutRecord(t, home, "blockstore", "P:6:0", []byte("\xff\xfenot a record"))
	sum, err = Run(context.Background(), Options{Home: home})
	var corrupt node.ErrCorruptStore
	if !errors.As(err, &corrupt) || corrupt.Height != 6 || sum.Blocks != 5 {
		t.Fatalf("block 6 damaged: %v after %d blocks, want ErrCorruptStore at 6 after 5", err, sum.Blocks)
	}
	noPipeline(t)
}

// runWithin runs a replay that must stop within a minute: one whose reading ahead
// waits on a goroutine that never ends would never return.
func runWithin(t *testing.T, ctx context.Context, opts Options) (Summary, error) {
	t.Helper()
	type outcome struct {
		sum Summary
		err error
	}
	out := make(chan outcome, 1)
	go func() {
		sum, err := Run(ctx, opts)
		out <- outcome{sum, err}
	}()
	select {
	case o := <-out:
		return o.sum, o.err
	case <-time.After(time.Minute):
		t.Fatal("the replay did not return within a minute")
		return Summary{}, nil
	}
}

// noPipeline fails t when a goroutine of a replay's reading ahead is still running.
// Run waits for them before it returns, so none may be found.
func noPipeline(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "replay.(*pipeline)") {
			t.Fatalf("a goroutine of the reading ahead outlived its replay:\n%s", g)
		}
	}
}

// snapshot fingerprints every file of a home: its path, size and contents.
//
// NB: CometBFT's address book is saved by a goroutine of its own when the node stops,
// which Node.Stop cannot wait for (v0.38 exposes no handle on the book), so
// config/addrbook.json may still change after the node is down. The replay never
// opens it; it is left out.
func snapshot(t *testing.T, home string) map[string]string {
	out := map[string]string{}
	err := filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "addrbook.json" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out[path] = fmt.Sprintf("%d %x", len(b), sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// changedFiles lists the files that differ between two snapshots.
func changedFiles(before, after map[string]string) []string {
	var out []string
	for p, v := range before {
		if after[p] != v {
			out = append(out, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, p+" (new)")
		}
	}
	sort.Strings(out)
	return out
}

func hasKey(cs []Change, key []byte, kind string) bool {
	for _, c := range cs {
		if string(c.Key) == string(key) && c.Kind == kind {
			return true
		}
	}
	return false
}
