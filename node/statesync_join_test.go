package node

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cometbft/cometbft/config"
	"github.com/cometbft/cometbft/light"
	"github.com/cometbft/cometbft/p2p"
	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/abci"
)

// joinTimeout bounds how long a joining node takes to halt in these tests.
const joinTimeout = 2 * time.Minute

// startPeer starts home's node with peer exchange off, every peer on 127.0.0.1 and
// blocks every 200 ms, after edit; it returns the node and its P2P address. The node
// stops when the test ends. Five blocks a second, not the pace of TestTimeouts: a node
// that joins switches from block sync to consensus at the height its peers told it at
// the start and catches up from there through the consensus gossip, whose messages
// each wait up to the connection's flush_throttle_timeout (100 ms): a few blocks a
// second, which a chain of forty a second would outrun.
func startPeer(t *testing.T, home string, log io.Writer, edit func(*config.Config)) (*Node, string) {
	t.Helper()
	cfg, err := readConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	cfg.P2P.PexReactor = false
	cfg.P2P.AllowDuplicateIP = true
	cfg.Consensus.TimeoutCommit = 200 * time.Millisecond
	if edit != nil {
		edit(cfg)
	}
	config.WriteConfigFile(ConfigFile(home), cfg)
	p2pAddr := freeAddr(t)
	n, err := Start(StartOptions{Home: home, Logger: NewLogger(log, true, zerolog.InfoLevel), RPCListen: "tcp://" + freeAddr(t),
		P2PListen: "tcp://" + p2pAddr, PrometheusListen: freeAddr(t), WebListen: WebOff})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Stop() })
	key, err := p2p.LoadNodeKey(cfg.NodeKeyFile())
	if err != nil {
		t.Fatal(err)
	}
	return n, string(key.ID()) + "@" + p2pAddr
}

// rpcOf is an RPC client of n.
func rpcOf(t *testing.T, n *Node) *rpchttp.HTTP {
	t.Helper()
	c, err := rpchttp.New(n.RPCAddress(), "/websocket")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// initHome initialises a home of chain chainID, with genesis gen when not nil.
func initHome(t *testing.T, chainID string, gen []byte) string {
	t.Helper()
	home := t.TempDir()
	if _, err := Init(InitOptions{Home: home, ChainID: chainID, Timeouts: TestTimeouts}); err != nil {
		t.Fatal(err)
	}
	if gen != nil {
		if err := os.WriteFile(filepath.Join(home, "config", "genesis.json"), gen, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// waitHalted waits for n to halt and returns why.
func waitHalted(t *testing.T, n *Node) error {
	t.Helper()
	select {
	case <-n.Halted():
		return n.HaltErr()
	case <-time.After(joinTimeout):
		t.Fatalf("the joining node did not halt within %s", joinTimeout)
		return nil
	}
}

// A node joins by state sync a network whose three peers all serve the only snapshot
// with a corrupt chunk: it refuses the chunk from each (CometBFT bans each sender), then
// the snapshot, and with no snapshot left it stops, saying what it refused and what to
// do, its store empty.
func TestStateSyncStopsOnCorruptSnapshot(t *testing.T) {
	t.Parallel()
	const chainID = "statesync-corrupt"
	vhome := initHome(t, chainID, nil)
	app, err := LoadAppConfig(vhome)
	if err != nil {
		t.Fatal(err)
	}
	app.SnapshotInterval = 5
	if err := SaveAppConfig(vhome, app); err != nil {
		t.Fatal(err)
	}
	v, _ := startPeer(t, vhome, io.Discard, nil)
	var snaps []SnapshotInfo
	for deadline := time.Now().Add(30 * time.Second); len(snaps) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no snapshot taken")
		}
		if snaps, _, err = Snapshots(vhome); err != nil {
			t.Fatal(err)
		}
	}
	// The validator goes on taking no snapshot, and offers one with a corrupt chunk.
	if err := v.Stop(); err != nil {
		t.Fatal(err)
	}
	app.SnapshotInterval = 0
	if err := SaveAppConfig(vhome, app); err != nil {
		t.Fatal(err)
	}
	snap := strconv.FormatInt(snaps[0].Manifest.Height, 10)
	for _, s := range snaps[1:] {
		if err := os.RemoveAll(filepath.Join(vhome, "data", "snapshots", strconv.FormatInt(s.Manifest.Height, 10))); err != nil {
			t.Fatal(err)
		}
	}
	chunk := filepath.Join(vhome, "data", "snapshots", snap, "0")
	b, err := os.ReadFile(chunk)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(chunk, b, 0o644); err != nil {
		t.Fatal(err)
	}
	v, vaddr := startPeer(t, vhome, io.Discard, nil)
	gen, err := os.ReadFile(filepath.Join(vhome, "config", "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Two full nodes serve a copy of it.
	peers := vaddr
	for range 2 {
		home := initHome(t, chainID, gen)
		if err := os.CopyFS(filepath.Join(home, "data", "snapshots", snap), os.DirFS(filepath.Join(vhome, "data", "snapshots", snap))); err != nil {
			t.Fatal(err)
		}
		_, addr := startPeer(t, home, io.Discard, func(c *config.Config) { c.P2P.PersistentPeers = vaddr })
		peers += "," + addr
	}

	trust := int64(2)
	hdr, err := rpcOf(t, v).Header(context.Background(), &trust)
	if err != nil {
		t.Fatal(err)
	}
	jhome := initHome(t, chainID, gen)
	if _, err := SetStateSync(jhome, StateSyncTrust{Height: trust, Hash: hdr.Header.Hash(), RPCServers: []string{v.RPCAddress(), v.RPCAddress()}}); err != nil {
		t.Fatal(err)
	}
	j, _ := startPeer(t, jhome, io.Discard, func(c *config.Config) {
		c.P2P.PersistentPeers = peers
		c.StateSync.DiscoveryTime = 5 * time.Second
	})
	var exhausted ErrStateSyncExhausted
	if err := waitHalted(t, j); !errors.As(err, &exhausted) || exhausted.Status != (abci.RestoreStatus{Offered: 1, Refused: 1, ChunksRefused: abci.MaxChunkRefusals}) {
		t.Fatalf("halted with %v", err)
	}
	if v, _ := j.store.LastCommit(); v != 0 {
		t.Fatalf("the joining node's store holds height %d", v)
	}
}

// A node joins by state sync with a lying server among its RPC servers, honest at the
// trust height and not after: CometBFT's light client drops it ("no witnesses
// connected") and the node stops, naming it.
func TestStateSyncStopsOnLyingServer(t *testing.T) {
	t.Parallel()
	const chainID, trust = "statesync-liar", 2
	vhome := initHome(t, chainID, nil)
	app, err := LoadAppConfig(vhome)
	if err != nil {
		t.Fatal(err)
	}
	app.SnapshotInterval = 5
	if err := SaveAppConfig(vhome, app); err != nil {
		t.Fatal(err)
	}
	v, vaddr := startPeer(t, vhome, io.Discard, nil)
	other, _ := startPeer(t, initHome(t, chainID, nil), io.Discard, nil)
	testNode{Node: v, rpc: rpcOf(t, v)}.waitHeight(t, 8)
	testNode{Node: other, rpc: rpcOf(t, other)}.waitHeight(t, trust+3)
	h := int64(trust)
	hdr, err := rpcOf(t, v).Header(context.Background(), &h)
	if err != nil {
		t.Fatal(err)
	}
	liar := lyingServer(t, v.RPCAddress(), other.RPCAddress(), trust)
	gen, err := os.ReadFile(filepath.Join(vhome, "config", "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	jhome := initHome(t, chainID, gen)
	if _, err := SetStateSync(jhome, StateSyncTrust{Height: trust, Hash: hdr.Header.Hash(), RPCServers: []string{v.RPCAddress(), liar}}); err != nil {
		t.Fatal(err)
	}
	j, _ := startPeer(t, jhome, io.Discard, func(c *config.Config) {
		c.P2P.PersistentPeers = vaddr
		c.StateSync.DiscoveryTime = 5 * time.Second
	})
	var failed ErrStateSyncFailed
	if err := waitHalted(t, j); !errors.As(err, &failed) || !errors.Is(err, light.ErrNoWitnesses) || len(failed.Servers) != 1 || failed.Servers[0].Server != liar {
		t.Fatalf("halted with %v", err)
	}
}
