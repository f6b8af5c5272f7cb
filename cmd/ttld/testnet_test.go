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
