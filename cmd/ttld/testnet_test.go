package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/node"
)

func TestTestnetCommand(t *testing.T) {
	t.Setenv(hostPortsEnv, "")
	dir := filepath.Join(t.TempDir(), "net")
	out, err := runCLI(t, "testnet", "--validators", "3", "--output", dir, "--chain-id", "cli-net")
	if err != nil {
		t.Fatal(err)
	}
	dev, err := keyring.Open(filepath.Join(dir, "client")).Get(node.DevKeyName)
	if err != nil {
		t.Fatal(err)
	}
	for i, ip := range []string{"172.28.0.10", "172.28.0.11", "172.28.0.12"} {
		name := "node" + string(rune('0'+i))
		port := []string{"26657", "26757", "26857"}[i]
		if !strings.Contains(out, name+"   validator  "+ip) || !strings.Contains(out, "http://127.0.0.1:"+port) {
			t.Errorf("text output lacks %s at %s, %s:\n%s", name, ip, port, out)
		}
	}
	for _, want := range []string{dev.Address().String(), "./bin/ttld --home " + filepath.Join(dir, "client") + " --node http://127.0.0.1:26657 tx address transfer --from dev"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}

	// Refused without --force, and nothing changed.
	genBefore, err := os.ReadFile(node.GenesisFile(filepath.Join(dir, "node0")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "testnet", "--output", dir); !errors.As(err, new(node.ErrOutputExists)) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second testnet: %v", err)
	}
	if genAfter, _ := os.ReadFile(node.GenesisFile(filepath.Join(dir, "node0"))); string(genAfter) != string(genBefore) {
		t.Fatal("a refused testnet changed node0's genesis")
	}

	// --force, -o json, a full node and TTLD_DEVNET_PORTS=27: four validators and
	// full0, ports and payout identities listed.
	t.Setenv(hostPortsEnv, "27")
	out, err = runCLI(t, "testnet", "--output", dir, "--force", "--full-nodes", "1", "--subnet-base", "10.9.8.7", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	res := decodeJSON[testnetOutput](t, out)
	if res.ChainID != node.DefaultTestnetChainID || res.DevKey != node.DevKeyName || res.HostPorts != 27 || len(res.Nodes) != 5 ||
		res.ClientHome != filepath.Join(dir, "client") || strings.Join(res.PayoutKeys, ",") != "node0-payout,node1-payout,node2-payout,node3-payout" {
		t.Fatalf("json: %+v", res)
	}
	last, full := res.Nodes[3], res.Nodes[4]
	if last.Name != "node3" || last.Role != roleValidator || last.IP != "10.9.8.10" || last.HostRPC != "http://127.0.0.1:27957" ||
		last.HostMetrics != "http://127.0.0.1:27960/metrics" || len(last.PayoutIdentity) != 64 || len(last.NodeID) != 40 {
		t.Fatalf("json node3: %+v", last)
	}
	if full.Name != "full0" || full.Role != roleFullNode || full.IP != "10.9.8.11" || full.HostRPC != "http://127.0.0.1:27557" ||
		full.PayoutIdentity != "" || full.ValidatorAddress != "" {
		t.Fatalf("json full0: %+v", full)
	}

	if _, err := runCLI(t, "testnet"); !errors.As(err, new(errUsage)) {
		t.Fatalf("no --output: %v", err)
	}
	t.Setenv(hostPortsEnv, "twenty-six")
	if _, err := runCLI(t, "testnet", "--output", t.TempDir()); !errors.As(err, new(errUsage)) {
		t.Fatalf("%s not a number: %v", hostPortsEnv, err)
	}
}

// ttld testnet --local writes homes for processes on this machine: every node on
// 127.0.0.1 at ports of its own, listed with the commands that start each; a subnet
// base, which is for docker's network, is refused with it.
func TestTestnetCommandLocal(t *testing.T) {
	t.Setenv(hostPortsEnv, "")
	dir := filepath.Join(t.TempDir(), "net")
	out, err := runCLI(t, "testnet", "--local", "--validators", "2", "--full-nodes", "1", "--host-ports", "28", "--output", dir, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	res := decodeJSON[testnetOutput](t, out)
	if !res.Local || len(res.Nodes) != 3 {
		t.Fatalf("json: %+v", res)
	}
	for i, want := range []struct{ name, p2p, rpc, web string }{
		{"node0", "127.0.0.1:28656", "http://127.0.0.1:28657", "http://127.0.0.1:28680/"},
		{"node1", "127.0.0.1:28756", "http://127.0.0.1:28757", "http://127.0.0.1:28780/"},
		{"full0", "127.0.0.1:28556", "http://127.0.0.1:28557", "http://127.0.0.1:28580/"},
	} {
		n := res.Nodes[i]
		if n.Name != want.name || n.IP != "127.0.0.1" || n.P2P != want.p2p || n.HostRPC != want.rpc || n.HostWeb != want.web {
			t.Errorf("json node %d: %+v, want %+v", i, n, want)
		}
		cfg, err := node.LoadConfig(n.Home)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.RPC.ListenAddress != "tcp://"+strings.TrimPrefix(want.rpc, "http://") || cfg.P2P.ListenAddress != "tcp://"+want.p2p {
			t.Errorf("%s listens at %s and %s", n.Name, cfg.RPC.ListenAddress, cfg.P2P.ListenAddress)
		}
	}
	out, err = runCLI(t, "testnet", "--local", "--validators", "2", "--host-ports", "28", "--output", dir, "--force")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ttld start --home " + filepath.Join(dir, "node0"), "ttld start --home " + filepath.Join(dir, "node1")} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if _, err := runCLI(t, "testnet", "--local", "--subnet-base", "10.0.0.2", "--output", t.TempDir()); !errors.As(err, new(errUsage)) {
		t.Fatalf("--local with --subnet-base: %v", err)
	}
}
