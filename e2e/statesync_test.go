package e2e

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cometbft/cometbft/config"
	"github.com/cometbft/cometbft/p2p"
	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/e2e/ports"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/replay"
)

// startOn starts home's node on free loopback ports, with edit applied to its
// config.toml first; it returns the node and its P2P address. The node stops when the
// test ends.
func startOn(t *testing.T, home string, edit func(*config.Config)) (*node.Node, string) {
	t.Helper()
	cfg, err := node.LoadConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	cfg.P2P.PexReactor = false
	cfg.P2P.AllowDuplicateIP = true // every peer is on 127.0.0.1
	// Five blocks a second, not the pace of node.TestTimeouts: a node that joins
	// switches from block sync to consensus once it reaches the height its peers told
	// it at the start, and catches up from there through the consensus gossip, whose
	// messages each wait up to the connection's flush_throttle_timeout (100 ms): a few
	// blocks a second, which a chain of forty a second would leave behind for good.
	cfg.Consensus.TimeoutCommit = 200 * time.Millisecond
	if edit != nil {
		edit(cfg)
	}
	config.WriteConfigFile(node.ConfigFile(cfg.RootDir), cfg)
	ports, err := ports.Free(4)
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.Start(node.StartOptions{
		Home:             home,
		Logger:           testLogger(t, filepath.Base(home)),
		RPCListen:        fmt.Sprintf("tcp://127.0.0.1:%d", ports[0]),
		P2PListen:        fmt.Sprintf("tcp://127.0.0.1:%d", ports[1]),
		PrometheusListen: fmt.Sprintf("127.0.0.1:%d", ports[2]),
		WebListen:        node.WebOff,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Stop() })
	key, err := p2p.LoadNodeKey(cfg.NodeKeyFile())
	if err != nil {
		t.Fatal(err)
	}
	return n, fmt.Sprintf("%s@127.0.0.1:%d", key.ID(), ports[1])
}

// testLogger writes a node's log (info and above) to a file of the test's, in
// $TTLD_E2E_LOGS when set, and shows its end when the test fails.
func testLogger(t *testing.T, name string) zerolog.Logger {
	t.Helper()
	dir := os.Getenv("TTLD_E2E_LOGS")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name+".log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.Close()
		if t.Failed() {
			if b, err := os.ReadFile(path); err == nil {
				if len(b) > 20000 {
					b = b[len(b)-20000:]
				}
				t.Logf("log of %s (the end):\n%s", name, b)
			}
		}
	})
	return zerolog.New(f).Level(zerolog.InfoLevel).With().Timestamp().Logger()
}

// A node that joins by state sync: a validator takes a snapshot every 25 blocks; a new
// node, given only the genesis, the validator as its peer and a header it trusts,
// restores the newest snapshot, follows the chain without executing a block before it,
// proves the same answers as the validator at the same heights, deletes the ttl document
// it received in the snapshot at its expiry exactly as the validator does, and its
// block store replays from the snapshot's height on.
func TestStateSyncJoins(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	vhome := t.TempDir()
	if _, err := node.Init(node.InitOptions{Home: vhome, ChainID: ChainID, DevBalance: DevBalance, LocalMinTTLSeconds: 3}); err != nil {
		t.Fatal(err)
	}
	app, err := node.LoadAppConfig(vhome)
	if err != nil {
		t.Fatal(err)
	}
	app.SnapshotInterval = 25
	if err := node.SaveAppConfig(vhome, app); err != nil {
		t.Fatal(err)
	}
	vn, vaddr := startOn(t, vhome, nil)
	v, err := connect(vn, vhome)
	if err != nil {
		t.Fatal(err)
	}
	// A note (no expiry within the test) and a flash document that expires 25 s after
	// its block, after the new node has joined.
	note := v.SeedNote(t, "kept")
	cc := &protocol.DataContractCreate{Identity: note.Identity, Definition: []byte(`{"documentSchemas":{"flash":{"type":"object","ttl":25,` +
		`"properties":{"text":{"type":"string","maxLength":20,"position":0}},"required":["$createdAt"],"additionalProperties":false}}}`)}
	v.Commit(t, cc)
	b := &protocol.DocumentsBatch{Identity: note.Identity, Contract: cc.ContractID(), Actions: []protocol.DocumentAction{{Kind: protocol.ActionCreate, Type: "flash", Data: []byte(`{"text":"soon gone"}`)}}}
	flash := b.CreateID(b.Actions[0])
	created := v.Commit(t, b)
	for range 20 {
		v.Commit(t, &protocol.AddressFundsTransfer{PubKey: v.Dev.Pub, Recipient: protocol.AddressOf(ed25519.PublicKey(make([]byte, 32))), Amount: 1})
	}
	// The newest snapshot must hold the flash document: the validator writes it in
	// the background once the block of its height is committed.
	var snap int64
	waitFor(ctx, func() bool {
		infos, _, err := node.Snapshots(vhome)
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) > 0 {
			snap = infos[0].Manifest.Height
		}
		return snap > created
	})
	if snap <= created {
		t.Fatalf("no snapshot past height %d", created)
	}

	fhome := t.TempDir()
	if _, err := node.Init(node.InitOptions{Home: fhome, ChainID: ChainID}); err != nil {
		t.Fatal(err)
	}
	gen, err := os.ReadFile(filepath.Join(vhome, "config", "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fhome, "config", "genesis.json"), gen, 0o644); err != nil {
		t.Fatal(err)
	}
	rpc, err := rpchttp.New(v.RPC, "/websocket")
	if err != nil {
		t.Fatal(err)
	}
	st, err := rpc.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	th := st.SyncInfo.LatestBlockHeight
	hdr, err := rpc.Header(ctx, &th)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := node.SetStateSync(fhome, node.StateSyncTrust{Height: th, Hash: hdr.Header.Hash(), RPCServers: []string{v.RPC, v.RPC}}); err != nil {
		t.Fatal(err)
	}
	fn, _ := startOn(t, fhome, func(c *config.Config) {
		c.P2P.PersistentPeers = vaddr
		c.StateSync.DiscoveryTime = 5 * time.Second
	})
	f, err := client.Dial(fn.RPCAddress(), client.Options{ChainID: ChainID, Trusted: v.Trusted})
	if err != nil {
		t.Fatal(err)
	}
	frpc, err := rpchttp.New(fn.RPCAddress(), "/websocket")
	if err != nil {
		t.Fatal(err)
	}
	// Caught up: past the flash document's expiry.
	flashState, err := v.Client.Document(ctx, cc.ContractID(), "flash", flash, created, true)
	if err != nil || !flashState.Present {
		t.Fatalf("flash at %d: %+v %v", created, flashState, err)
	}
	// Each block the new node makes, once in step, it is asked for the flash document.
	var gone, seen int64
	for gone == 0 {
		latest, err := f.WaitForHeight(ctx, seen+1)
		if err != nil {
			t.Fatalf("the new node did not follow the chain past the flash document's expiry: %v", err)
		}
		seen = latest
		fst, err := frpc.Status(ctx)
		if err != nil || fst.SyncInfo.CatchingUp || seen < 3 {
			continue
		}
		d, err := f.Document(ctx, cc.ContractID(), "flash", flash, seen-1, true)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Present {
			gone = d.Height
		}
	}
	fst, err := frpc.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fst.SyncInfo.EarliestBlockHeight != snap+1 {
		t.Fatalf("the new node's first block is %d: it did not join from the snapshot at %d", fst.SyncInfo.EarliestBlockHeight, snap)
	}
	// Present on both up to the same height, absent on both from the same height.
	for _, h := range []int64{gone - 1, gone} {
		want, err := v.Client.Document(ctx, cc.ContractID(), "flash", flash, h, true)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.Document(ctx, cc.ContractID(), "flash", flash, h, true)
		if err != nil {
			t.Fatal(err)
		}
		if got.Present != want.Present || !got.Verified || !want.Verified || got.Present != (h < gone) {
			t.Fatalf("flash at %d: the new node %+v, the validator %+v", h, got, want)
		}
	}
	for _, h := range []int64{snap, gone} {
		want, err := v.Client.Document(ctx, note.Contract, "note", note.Document, h, true)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.Document(ctx, note.Contract, "note", note.Document, h, true)
		if err != nil || !got.Verified || !got.Present || !reflect.DeepEqual(got.Document, want.Document) {
			t.Fatalf("note at %d: the new node %+v %v, the validator %+v", h, got, err, want)
		}
	}
	t.Logf("snapshot at %d (document created at %d), the new node from %d, the flash document gone at %d on both", snap, created, fst.SyncInfo.EarliestBlockHeight, gone)

	// Offline: a third home restores the validator's newest snapshot, copied into its
	// data/snapshots, checked by its light client, then follows the chain.
	rhome := t.TempDir()
	if _, err := node.Init(node.InitOptions{Home: rhome, ChainID: ChainID}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rhome, "config", "genesis.json"), gen, 0o644); err != nil {
		t.Fatal(err)
	}
	infos, _, err := node.Snapshots(vhome)
	if err != nil || len(infos) == 0 {
		t.Fatalf("the validator's snapshots: %v %v", infos, err)
	}
	copied := infos[0].Manifest.Height
	name := fmt.Sprint(copied)
	if err := os.CopyFS(filepath.Join(rhome, "data", "snapshots", name), os.DirFS(filepath.Join(vhome, "data", "snapshots", name))); err != nil {
		t.Fatal(err)
	}
	if _, err := node.SetStateSync(rhome, node.StateSyncTrust{Height: th, Hash: hdr.Header.Hash(), RPCServers: []string{v.RPC, v.RPC}}); err != nil {
		t.Fatal(err)
	}
	// The light client bootstraps the state at the snapshot's height from the two
	// headers after it.
	if _, err := v.Client.WaitForHeight(ctx, copied+2); err != nil {
		t.Fatal(err)
	}
	chunks := 0
	info, err := node.RestoreSnapshot(ctx, rhome, 0, func(done, total int) { chunks = done })
	if err != nil || info.Manifest.Height != copied || chunks != len(info.Manifest.Chunks) {
		t.Fatalf("restore of the snapshot at %d: %+v, %d chunks reported, %v", copied, info, chunks, err)
	}
	rn, _ := startOn(t, rhome, func(c *config.Config) { c.P2P.PersistentPeers = vaddr })
	r, err := client.Dial(rn.RPCAddress(), client.Options{ChainID: ChainID, Trusted: v.Trusted})
	if err != nil {
		t.Fatal(err)
	}
	vh, err := v.Client.LatestHeight(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.WaitForHeight(ctx, vh); err != nil {
		t.Fatalf("the restored node did not follow to %d: %v", vh, err)
	}
	got, err := r.Document(ctx, note.Contract, "note", note.Document, vh-1, true)
	if err != nil || !got.Present || !got.Verified {
		t.Fatalf("note on the restored node at %d: %+v %v", vh-1, got, err)
	}
	t.Logf("offline: the snapshot at %d restored (%d chunks, %d bytes), the node followed to %d", copied, chunks, info.Bytes, vh)
	if err := fn.Stop(); err != nil {
		t.Fatal(err)
	}
	sum, err := replay.Run(ctx, replay.Options{Home: fhome, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Verdict != "match" || sum.Restored != snap || sum.From != snap+1 || sum.Checked == 0 {
		t.Fatalf("replay of the new node: %+v", sum)
	}
}
