package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/snapshot"
)

// statesync-config writes state sync on with a header read from a running node of the
// home's chain, and refuses a node of another chain; the snapshot commands list, take
// and refuse on a stopped node's home, and on a running node's list and refuse to take.
func TestStateSyncAndSnapshotCommands(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	joiner := filepath.Join(t.TempDir(), "joiner")
	if _, err := runCLI(t, "init", "--home", joiner, "--chain-id", e2e.ChainID); err != nil {
		t.Fatal(err)
	}
	if _, err := node.LoadConfig(joiner); err != nil {
		t.Fatalf("a new home: %v", err)
	}
	out, err := runCLI(t, "statesync-config", "--home", joiner, "--node", env.RPC, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	got := decodeJSON[stateSyncOutput](t, out)
	cfg, err := node.LoadConfig(joiner)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.StateSync.Enable || got.TrustHeight < 1 || cfg.StateSync.TrustHeight != got.TrustHeight || cfg.StateSync.TrustHash != got.TrustHash ||
		len(got.TrustHash) != 64 || strings.Join(cfg.StateSync.RPCServers, ",") != env.RPC+","+env.RPC {
		t.Fatalf("statesync-config wrote %+v; config %+v", got, cfg.StateSync)
	}
	other := filepath.Join(t.TempDir(), "other")
	if _, err := runCLI(t, "init", "--home", other, "--chain-id", "another-chain"); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "statesync-config", "--home", other, "--node", env.RPC); err == nil || !strings.Contains(err.Error(), "runs chain") {
		t.Fatalf("a node of another chain: %v", err)
	}
	// ttld testnet --state-sync: the full node's state sync is on, its RPC servers the
	// validator's (named twice), and it starts only once trusting a header.
	net := filepath.Join(t.TempDir(), "net")
	if _, err := runCLI(t, "testnet", "--validators", "1", "--full-nodes", "1", "--state-sync", "--snapshot-interval", "50", "--output", net); err != nil {
		t.Fatal(err)
	}
	if _, err := node.LoadConfig(filepath.Join(net, "full0")); !errors.As(err, new(node.ErrStateSyncTrust)) {
		t.Fatalf("a full node of ttld testnet --state-sync before statesync-config: %v", err)
	}
	if _, err := runCLI(t, "start", "--home", filepath.Join(net, "full0")); !errors.As(err, new(node.ErrStateSyncTrust)) {
		t.Fatalf("ttld start before statesync-config: %v", err)
	}
	for _, name := range []string{"node0", "full0"} {
		app, err := node.LoadAppConfig(filepath.Join(net, name))
		if err != nil || app.SnapshotInterval != 50 {
			t.Fatalf("%s: snapshot_interval %d, %v", name, app.SnapshotInterval, err)
		}
	}
	if _, err := runCLI(t, "testnet", "--validators", "1", "--state-sync", "--output", filepath.Join(t.TempDir(), "none")); err == nil {
		t.Fatal("--state-sync without full nodes")
	}

	// On the running node, list reads the snapshot folder; export, which opens the
	// state, is refused (ttld snapshots --help says which is which).
	out, err = runCLI(t, "snapshots", "list", "--home", env.Home, "-o", "json")
	if err != nil {
		t.Fatalf("list on a running node: %v", err)
	}
	if running := decodeJSON[struct {
		Dir       string           `json:"dir"`
		Snapshots []snapshotOutput `json:"snapshots"`
	}](t, out); running.Dir != filepath.Join(env.Home, "data", "snapshots") || len(running.Snapshots) != 0 {
		t.Fatalf("list on a running node: %+v", running)
	}
	if _, err := runCLI(t, "snapshots", "export", "--home", env.Home); err == nil {
		t.Fatal("export on a running node")
	}
	if err := env.Node.Stop(); err != nil {
		t.Fatal(err)
	}
	out, err = runCLI(t, "snapshots", "export", "--home", env.Home, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	taken := decodeJSON[snapshotOutput](t, out)
	if taken.Height < 2 || taken.Format != snapshot.Format2 || taken.Chunks != 1 || taken.Bytes == 0 || len(taken.AppHash) != 64 {
		t.Fatalf("export: %+v", taken)
	}
	out, err = runCLI(t, "snapshots", "list", "--home", env.Home, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	list := decodeJSON[struct {
		Dir       string           `json:"dir"`
		Snapshots []snapshotOutput `json:"snapshots"`
	}](t, out)
	if len(list.Snapshots) != 1 || list.Snapshots[0] != taken || list.Dir != filepath.Join(env.Home, "data", "snapshots") {
		t.Fatalf("list: %+v, taken %+v", list, taken)
	}
	if _, err := runCLI(t, "snapshots", "export", "--home", env.Home, "--height", "999999"); err == nil {
		t.Fatal("a snapshot of a height the node never saved")
	}
	// A restore into a home with a state, or without the light client's trust.
	if _, err := runCLI(t, "snapshots", "restore", "--home", env.Home); !errors.As(err, new(node.ErrStateSyncTrust)) {
		t.Fatalf("restore without [statesync]: %v", err)
	}
	if _, err := runCLI(t, "snapshots", "restore", "--home", joiner); err == nil || !strings.Contains(err.Error(), "holds no snapshot") {
		t.Fatalf("restore from no snapshot: %v", err)
	}
}
