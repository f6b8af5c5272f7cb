//go:build devnet

package devnet

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// The state sync test's figures.
const (
	syncDeadline = 15 * time.Minute
	// syncBlocks is the history the joining nodes skip or execute: the chain is at
	// least this high before they start, and full0 restores the snapshot of this height.
	syncBlocks = 2000
	// syncSnapshotInterval is every node's snapshot_interval: the validators take their
	// first snapshot at the end of the history, and the next one a history later, long
	// after full0 chose the first.
	syncSnapshotInterval = syncBlocks
	// syncBatches batches of syncBatchSize notes are written first (a batch carries 10
	// actions at most), sent one after the other without waiting: several to a block.
	syncBatches   = 300
	syncBatchSize = 10
	// syncFlashLead is how many blocks before the snapshot's height the documents with a
	// ttl are written: their batch commits in a few blocks, and the snapshot holds them.
	syncFlashLead = 100
	// syncTTLS is the ttl of the documents the joining node receives in its snapshot and
	// must delete at their expiry, and the network's lowered minimum (ttld testnet
	// --local-min-ttl): they expire well after the snapshot's block (syncFlashLead
	// blocks after their own), about when the full nodes have joined.
	syncTTLS = 20
	// syncDiscovery is full0's [statesync] discovery_time, how long it gathers the
	// snapshots offered before it chooses one: CometBFT's least (its default is 15 s).
	syncDiscovery = "5s"
	// joinWithin bounds each join.
	joinWithin = 8 * time.Minute
)

// A network with a history of thousands of blocks and documents; full0 joins it by
// state sync (ttld testnet --state-sync, ttld statesync-config) and full1, started at
// the same time, by executing every block from genesis. full0 restores a snapshot a
// validator took, starts its block store after it, agrees with every validator on
// every block and app hash from there on, proves the same documents, deletes the ttl
// documents it received in the snapshot at the same height the validators do, and its
// replay starts from the snapshot's height.
//
// Most of the test's time is the history's: syncBlocks blocks at the pace four
// validators sharing the machine commit them (tens a second on two cores); the joins
// and the checks after them take a few tens of seconds.
func TestDevnetStateSync(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), syncDeadline)
	defer cancel()
	n := newNetwork(t)
	n.files = append(n.files, "docker-compose.fullnodes.yml", filepath.Join("e2e", "devnet", "full1.yml"))
	n.generate(ctx, 2, "--state-sync", "--snapshot-interval", strconv.Itoa(syncSnapshotInterval), "--local-min-ttl", strconv.Itoa(syncTTLS))
	full0, full1 := n.full[0], n.full[1]
	editConfig(t, full0.home, regexp.MustCompile(`(?m)^discovery_time = .*$`), `discovery_time = "`+syncDiscovery+`"`)
	// full1 joins without state sync.
	editConfig(t, full1.home, regexp.MustCompile(`(?s)(\[statesync\]\s*\n(?:#[^\n]*\n|\s*\n)*enable = )true`), "${1}false")
	if os.Getuid() == 0 {
		for _, m := range n.full {
			chownAll(t, m.home, n.uid, n.gid)
		}
	}
	n.up(ctx, "node0", "node1", "node2", "node3")
	n.waitAll(ctx, 3, startTimeout)

	// The history: notes, then blocks until the chain nears the snapshot's height.
	w := n.newWriter(ctx)
	notes := w.contract(ctx, `{"documentSchemas":{"note":{"type":"object","properties":{"text":{"type":"string","maxLength":40,"position":0}},"additionalProperties":false,`+
		`"indices":[{"name":"byText","properties":[{"text":"asc"}]}]}}}`)
	start := time.Now()
	written := w.batches(ctx, notes, "note", syncBatches, syncBatchSize, func(i, k int) string { return fmt.Sprintf(`{"text":"note %d of batch %d"}`, k, i) })
	t.Logf("%d notes written in %s, the chain at %d", len(written), time.Since(start).Round(time.Millisecond), n.height(ctx))
	if _, err := n.nodes[0].client.WaitForHeight(ctx, syncBlocks-syncFlashLead); err != nil {
		t.Fatal(err)
	}
	// Documents with a ttl, then the snapshot that holds them.
	flashes := w.contract(ctx, fmt.Sprintf(`{"documentSchemas":{"flash":{"type":"object","ttl":%d,"properties":{"text":{"type":"string","maxLength":40,"position":0}},"required":["$createdAt"],"additionalProperties":false}}}`, syncTTLS))
	ttlDocs, created := w.batch(ctx, flashes, "flash", syncBatchSize, func(k int) string { return fmt.Sprintf(`{"text":"flash %d"}`, k) })
	snap := n.snapshotAfter(ctx, created)
	history := n.height(ctx)
	if history < syncBlocks {
		t.Fatalf("the chain is at %d, short of the %d blocks of history", history, syncBlocks)
	}
	t.Logf("history: %d blocks in %s, %d documents; the ttl documents created at %d, node0's snapshot at %d", history, time.Since(start).Round(time.Second), len(written)+len(ttlDocs), created, snap)

	// full0 trusts a header read from node0, then both full nodes start.
	bin := filepath.Join(n.root, "bin", "ttld")
	out, err := n.run(ctx, exec.Command(bin, "statesync-config", "--home", full0.home, "--node", n.nodes[0].rpc, "-o", "json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("statesync-config: %s", strings.TrimSpace(out))
	if os.Getuid() == 0 {
		chownAll(t, full0.home, n.uid, n.gid)
	}
	joined := make(chan joinTime, 2)
	begin := time.Now()
	n.start(ctx, "full0", "full1")
	for _, m := range []*member{full0, full1} {
		go func() { joined <- n.join(ctx, m, history, begin) }()
	}
	for range 2 {
		j := <-joined
		if j.err != nil {
			t.Fatal(j.err)
		}
		t.Logf("%s joined: at height %d (the validators' at its start: %d) in %s", j.name, j.height, history, j.took.Round(100*time.Millisecond))
	}
	st, err := full0.raw.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.SyncInfo.EarliestBlockHeight != snap+1 {
		t.Fatalf("full0's first block is %d: it did not join from the snapshot at %d", st.SyncInfo.EarliestBlockHeight, snap)
	}
	if got := restoredHeight(t, ctx, full0); got != snap {
		t.Fatalf("full0's ttld_app_restored_height is %d, want %d", got, snap)
	}

	// The ttl documents go at the same height on full0 as on the validators; every
	// node agrees on every block and app hash full0 holds, and full1 with the
	// validators on those before.
	validators := n.nodes
	n.nodes = append(slices.Clip(validators), full0)
	n.expireAlike(ctx, flashes, ttlDocs, created)
	n.nodes = append(slices.Clip(validators), full0, full1)
	final := n.waitAll(ctx, n.height(ctx), catchUp)
	n.agreeFrom(ctx, snap+1, final)
	n.nodes = append(slices.Clip(validators), full1)
	n.agree(ctx, snap)
	for i, id := range written {
		if i%37 != 0 {
			continue
		}
		want, err := n.nodes[0].client.Document(ctx, notes, "note", id, final-1, true)
		if err != nil || !want.Present || !want.Verified {
			t.Fatalf("node0: note %s: %+v %v", id, want, err)
		}
		got, err := full0.client.Document(ctx, notes, "note", id, final-1, true)
		if err != nil || !got.Verified || !reflect.DeepEqual(got.Document, want.Document) {
			t.Fatalf("full0: note %s: %+v %v, node0 %+v", id, got, err, want)
		}
	}
	t.Logf("notes proven alike on full0 and node0 at %d", final-1)

	// Replays: full0 from its snapshot, full1 from genesis.
	if _, err := n.run(ctx, n.composeCmd("stop", "-t", "30")); err != nil {
		t.Fatal(err)
	}
	for i, sum := range n.replays(ctx, full0, full1) {
		m, want := full1, int64(0)
		if i == 0 {
			m, want = full0, snap
		}
		if sum.Verdict != "match" || sum.Restored != want || sum.To < final || sum.Checked < sum.To-max(want, 1) {
			t.Fatalf("replay %s: %+v", m.name, sum)
		}
		t.Logf("replay %s: from %d, %d blocks (%d..%d), verdict %s, %.1fs", m.name, sum.Restored, sum.Blocks, sum.From, sum.To, sum.Verdict, sum.Seconds)
	}
}

// newBatch is the writer's next batch: count creates of typeName, the k-th with
// data(k), and their ids.
func (w *writer) newBatch(contract protocol.ContractID, typeName string, count int, data func(k int) string) (*protocol.DocumentsBatch, []protocol.DocumentID) {
	w.nonce++
	b := &protocol.DocumentsBatch{Identity: w.identity, Nonce: w.nonce, Contract: contract}
	var ids []protocol.DocumentID
	for k := range count {
		w.docs++
		a := protocol.DocumentAction{Kind: protocol.ActionCreate, Type: typeName, Data: []byte(data(k)),
			Entropy: sha256.Sum256([]byte(fmt.Sprintf("ttld-e2e-statesync/%d", w.docs)))}
		b.Actions = append(b.Actions, a)
		ids = append(ids, b.CreateID(a))
	}
	return b, ids
}

// batch creates count documents of typeName in one transaction, the k-th with
// data(k), and returns their ids and the height it was seen committed by.
func (w *writer) batch(ctx context.Context, contract protocol.ContractID, typeName string, count int, data func(k int) string) ([]protocol.DocumentID, int64) {
	b, ids := w.newBatch(contract, typeName, count, data)
	last := ids[len(ids)-1]
	h := w.n.commit(ctx, protocol.Sign(chainID, b, w.n.dev.Priv), func(ctx context.Context, c *client.Client) (bool, error) {
		st, err := c.Document(ctx, contract, typeName, last, 0, false)
		return st.Present, err
	})
	return ids, h
}

// batches creates count batches of size documents of typeName, the k-th of batch i
// with data(i, k), and returns their ids. The batches go to node0 one after the other,
// the identity's nonces in order, without waiting for a block: each block takes those
// that reached the mempool before it. Every batch must then be committed, with code 0,
// within commitTimeout.
func (w *writer) batches(ctx context.Context, contract protocol.ContractID, typeName string, count, size int, data func(i, k int) string) []protocol.DocumentID {
	t, m := w.n.t, w.n.nodes[0]
	var ids []protocol.DocumentID
	hashes := make([][]byte, count)
	from := m.latest(ctx)
	for i := range count {
		b, bids := w.newBatch(contract, typeName, size, func(k int) string { return data(i, k) })
		ids = append(ids, bids...)
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		res, err := m.client.Broadcast(cctx, protocol.Sign(chainID, b, w.n.dev.Priv), false)
		cancel()
		if err != nil || res.Refused() {
			t.Fatalf("batch %d of %d to %s: %+v %v", i+1, count, m.name, res, err)
		}
		hashes[i] = res.Hash
	}
	actx, cancel := context.WithTimeout(ctx, commitTimeout)
	defer cancel()
	outs, err := m.client.Await(actx, from, hashes)
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[int64]bool{}
	for i, o := range outs {
		if !o.Committed || o.Code != 0 {
			t.Fatalf("batch %d of %d: %+v, want committed with code 0", i+1, count, o)
		}
		blocks[o.Height] = true
	}
	t.Logf("%d batches of %d %s documents committed in %d blocks", count, size, typeName, len(blocks))
	return ids
}

// snapshotAfter waits for node0 to keep a snapshot of a height past h, and returns its
// height.
func (n *network) snapshotAfter(ctx context.Context, h int64) int64 {
	for {
		infos, _, err := node.Snapshots(n.nodes[0].home)
		if err != nil {
			n.t.Fatal(err)
		}
		if len(infos) > 0 && infos[0].Manifest.Height > h {
			return infos[0].Manifest.Height
		}
		select {
		case <-ctx.Done():
			n.t.Fatalf("no snapshot past height %d: %v", h, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// joinTime is how a node joined: the height it reached the network's at, how long
// after begin.
type joinTime struct {
	name   string
	height int64
	took   time.Duration
	err    error
}

// join waits for m to answer at height target or later, no longer catching up.
func (n *network) join(ctx context.Context, m *member, target int64, begin time.Time) joinTime {
	ctx, cancel := context.WithTimeout(ctx, joinWithin)
	defer cancel()
	for {
		cctx, ccancel := context.WithTimeout(ctx, callTimeout)
		st, err := m.raw.Status(cctx)
		ccancel()
		if err == nil && !st.SyncInfo.CatchingUp && st.SyncInfo.LatestBlockHeight >= target {
			return joinTime{name: m.name, height: st.SyncInfo.LatestBlockHeight, took: time.Since(begin)}
		}
		select {
		case <-ctx.Done():
			return joinTime{name: m.name, err: fmt.Errorf("%s did not reach height %d: %w", m.name, target, ctx.Err())}
		case <-time.After(poll):
		}
	}
}

// restoredHeight reads ttld_app_restored_height from m's metrics, published one port
// above its RPC's.
func restoredHeight(t *testing.T, ctx context.Context, m *member) int64 {
	t.Helper()
	port, err := strconv.Atoi(m.rpc[strings.LastIndex(m.rpc, ":")+1:])
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/metrics", port+3), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	match := regexp.MustCompile(`(?m)^ttld_app_restored_height\{[^}]*\} (\S+)$`).FindSubmatch(body)
	if match == nil {
		t.Fatalf("%s's metrics have no ttld_app_restored_height", m.name)
	}
	f, err := strconv.ParseFloat(string(match[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return int64(f)
}

// expireAlike waits for the documents ids of the flash type, created by height created,
// to expire, and checks that every node deletes them in the same block: proven present
// at the height before it, absent from it on with nothing of them due, on each.
func (n *network) expireAlike(ctx context.Context, contract protocol.ContractID, ids []protocol.DocumentID, created int64) {
	t := n.t
	ref := n.nodes[0].client
	var expiresAt uint64
	for _, id := range ids {
		st, err := ref.Document(ctx, contract, "flash", id, created, true)
		if err != nil || !st.Present || st.ExpiresAtMs == 0 {
			t.Fatalf("flash %s at %d: %+v %v", id, created, st, err)
		}
		expiresAt = max(expiresAt, st.ExpiresAtMs)
	}
	wait := max(time.Until(time.UnixMilli(int64(expiresAt))), 0)
	t.Logf("the ttl documents expire in %s", wait.Round(time.Second))
	select {
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	case <-time.After(wait):
	}
	// latest: a height past the expiry that every node has, and the header after it.
	var latest int64
	for deadline := time.Now().Add(catchUp); ; {
		latest = n.lowest(ctx) - 1
		if bt, err := ref.BlockTime(ctx, latest, true); latest > created && err == nil && bt > expiresAt {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no block past the expiry on every node by height %d", latest)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(poll):
		}
	}
	// gone: the first height whose state holds none of them, on node0.
	absent := func(c *client.Client, h int64) (bool, error) {
		for _, id := range ids {
			st, err := c.Document(ctx, contract, "flash", id, h, true)
			if err != nil || !st.Verified {
				return false, fmt.Errorf("flash %s at %d: %+v %v", id, h, st, err)
			}
			if st.Present {
				return false, nil
			}
		}
		return true, nil
	}
	lo, hi := created, latest // not all absent at lo, all absent at hi
	if ok, err := absent(ref, lo); err != nil || ok {
		t.Fatalf("the ttl documents are absent at %d, where they were created, on %s: %v", lo, n.nodes[0].name, err)
	}
	if ok, err := absent(ref, hi); err != nil || !ok {
		t.Fatalf("the ttl documents are still present at %d on %s: %v", hi, n.nodes[0].name, err)
	}
	for lo+1 < hi {
		mid := (lo + hi) / 2
		ok, err := absent(ref, mid)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	gone := hi
	for _, m := range n.nodes {
		before, err := absent(m.client, gone-1)
		if err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		after, err := absent(m.client, gone)
		if err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		bt, err := m.client.BlockTime(ctx, gone, true)
		if err != nil {
			t.Fatal(err)
		}
		due, err := m.client.Expirations(ctx, bt, gone, true)
		if err != nil || !due.Verified {
			t.Fatalf("%s: expirations at %d: %+v %v", m.name, gone, due, err)
		}
		if before || !after || len(due.Entries) != 0 {
			t.Fatalf("%s: the ttl documents absent at %d: %v, at %d: %v, %d entries due", m.name, gone-1, before, gone, after, len(due.Entries))
		}
	}
	t.Logf("the ttl documents were deleted by block %d on every node (%d), proven", gone, len(n.nodes))
}
