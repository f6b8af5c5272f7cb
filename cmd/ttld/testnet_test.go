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
	dir := filepath.Join(t.TempDir(), "net")
	out, err := runCLI(t, "testnet", "--validators", "3", "--output", dir, "--chain-id", "cli-net")
	if err != nil {
		t.Fatal(err)
	}
	for i, ip := range []string{"172.28.0.10", "172.28.0.11", "172.28.0.12"} {
		name := "node" + string(rune('0'+i))
		dev, err := keyring.Open(filepath.Join(dir, name)).Get(node.DevKeyName)
		if err != nil {
			t.Fatal(err)
		}
		port := []string{"26657", "26757", "26857"}[i]
		line := name + "   " + ip
		if !strings.Contains(out, line) || !strings.Contains(out, "http://127.0.0.1:"+port) || !strings.Contains(out, dev.Address().String()) {
			t.Errorf("text output lacks %s, %s or its dev address %s:\n%s", line, port, dev.Address(), out)
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

	// --force, -o json: four nodes now, ports and payout identities listed.
	out, err = runCLI(t, "testnet", "--output", dir, "--force", "--subnet-base", "10.9.8.7", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	res := decodeJSON[testnetOutput](t, out)
	if res.ChainID != node.DefaultTestnetChainID || res.DevKey != node.DevKeyName || len(res.Nodes) != 4 {
		t.Fatalf("json: %+v", res)
	}
	last := res.Nodes[3]
	if last.Name != "node3" || last.IP != "10.9.8.10" || last.HostRPC != "http://127.0.0.1:26957" ||
		last.HostMetrics != "http://127.0.0.1:26960/metrics" || len(last.PayoutIdentity) != 64 || len(last.NodeID) != 40 {
		t.Fatalf("json node3: %+v", last)
	}

	if _, err := runCLI(t, "testnet"); !errors.As(err, new(errUsage)) {
		t.Fatalf("no --output: %v", err)
	}
}
