package node

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/protocol"
)

func TestTestnetWritesHomesSharingOneGenesis(t *testing.T) {
	out := filepath.Join(t.TempDir(), "net")
	res, err := Testnet(TestnetOptions{Output: out, Validators: 4, ChainID: "net-1", SubnetBase: "172.28.5.20", DevBalance: 777})
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != out || res.ChainID != "net-1" || res.DevBalance != 777 || len(res.Nodes) != 4 {
		t.Fatalf("result = %+v", res)
	}
	genFile, err := os.ReadFile(GenesisFile(res.Nodes[0].Home))
	if err != nil {
		t.Fatal(err)
	}
	gen, err := LoadGenesis(res.Nodes[0].Home)
	if err != nil {
		t.Fatal(err)
	}
	if gen.ChainID != "net-1" || len(gen.Validators) != 4 {
		t.Fatalf("genesis: chain %s, %d validators", gen.ChainID, len(gen.Validators))
	}
	state, err := genesis.Decode(gen.AppState)
	if err != nil {
		t.Fatal(err)
	}
	if len(state.Identities) != 4 {
		t.Fatalf("app state = %+v", state)
	}

	// The one funded address is the client home's dev key; the client home has the
	// same genesis, and the payout keys.
	client := keyring.Open(res.ClientHome)
	dev, err := client.Get(DevKeyName)
	if err != nil {
		t.Fatal(err)
	}
	if res.ClientHome != filepath.Join(out, "client") || dev.Address() != res.DevAddress ||
		len(state.Addresses) != 1 || state.Addresses[0] != (genesis.Address{Address: dev.Address().String(), Balance: 777}) {
		t.Fatalf("client home %s, dev %s, result %s, genesis addresses %+v", res.ClientHome, dev.Address(), res.DevAddress, state.Addresses)
	}
	if clientGen, err := os.ReadFile(GenesisFile(res.ClientHome)); err != nil || !bytes.Equal(clientGen, genFile) {
		t.Fatalf("client home's genesis differs: %v", err)
	}

	for i, n := range res.Nodes {
		wantName, wantIP := fmt.Sprintf("node%d", i), fmt.Sprintf("172.28.5.%d", 20+i)
		if n.Name != wantName || n.Home != filepath.Join(out, wantName) || n.IP != wantIP ||
			n.HostRPCPort != 26657+100*i || n.HostPrometheusPort != 26660+100*i {
			t.Errorf("node %d = %+v", i, n)
		}
		// The very same genesis file in every home.
		other, err := os.ReadFile(GenesisFile(n.Home))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(other, genFile) {
			t.Errorf("%s has another genesis", n.Name)
		}

		// Its validator, at equal power.
		v := gen.Validators[i]
		if !bytes.Equal(v.Address, n.ValidatorAddress) || v.Power != ValidatorPower || v.Name != n.Name {
			t.Errorf("genesis validator %d = %+v, node %+v", i, v, n)
		}
		pvKey, err := os.ReadFile(filepath.Join(n.Home, "config", "priv_validator_key.json"))
		if err != nil || !strings.Contains(string(pvKey), v.Address.String()) {
			t.Errorf("%s's validator key is not genesis validator %s: %v", n.Name, v.Address, err)
		}

		// No keyring in a node home; its payout identity keyed by the client's
		// node<i>-payout key.
		if _, err := os.Stat(keyring.Open(n.Home).Dir()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s has a keyring: %v", n.Name, err)
		}
		payout, err := client.Get(n.Name + "-payout")
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(append([]byte("ttld/validator-payout"), v.Address...))
		idn := state.Identities[i]
		if !n.Validator || n.PayoutIdentity != protocol.PayoutIdentityID(v.Address) || idn.ID != hex.EncodeToString(sum[:]) ||
			idn.Balance != 0 || len(idn.Keys) != 1 || idn.Keys[0] != hex.EncodeToString(payout.Pub) {
			t.Errorf("%s: payout identity %+v, result %+v", n.Name, idn, n)
		}

		// Listeners on every interface, peers by IP, a private network's P2P rules.
		cfg, err := LoadConfig(n.Home)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.RPC.ListenAddress != "tcp://0.0.0.0:26657" || cfg.P2P.ListenAddress != "tcp://0.0.0.0:26656" ||
			cfg.Instrumentation.PrometheusListenAddr != "0.0.0.0:26660" || !cfg.Instrumentation.Prometheus ||
			cfg.P2P.ExternalAddress != wantIP+":26656" || cfg.P2P.AddrBookStrict || !cfg.P2P.AllowDuplicateIP ||
			cfg.Moniker != n.Name || cfg.Storage.DiscardABCIResponses || !cfg.Consensus.CreateEmptyBlocks {
			t.Errorf("%s config: %+v %+v", n.Name, cfg.RPC, cfg.P2P)
		}
		var want []string
		for j, p := range res.Nodes {
			if j != i {
				want = append(want, fmt.Sprintf("%s@172.28.5.%d:26656", p.NodeID, 20+j))
			}
		}
		got := strings.Split(cfg.P2P.PersistentPeers, ",")
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s persistent_peers = %s, want %s", n.Name, cfg.P2P.PersistentPeers, want)
		}
		if _, err := LoadAppConfig(n.Home); err != nil {
			t.Errorf("%s app.toml: %v", n.Name, err)
		}
	}

	set, chainID, err := GenesisValidators(res.Nodes[3].Home)
	if err != nil || chainID != "net-1" || set.Size() != 4 || set.TotalVotingPower() != 4*ValidatorPower {
		t.Fatalf("validator set %v, chain %s: %v", set, chainID, err)
	}
}

func TestTestnetRefusesToOverwrite(t *testing.T) {
	out := t.TempDir() // exists and is empty: accepted
	first, err := Testnet(TestnetOptions{Output: out, Validators: 2})
	if err != nil {
		t.Fatal(err)
	}
	if first.ChainID != DefaultTestnetChainID || first.Nodes[0].IP != DefaultSubnetBase || first.Nodes[1].IP != "172.28.0.11" {
		t.Fatalf("defaults: %+v", first)
	}
	genBefore, err := os.ReadFile(GenesisFile(first.Nodes[0].Home))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Testnet(TestnetOptions{Output: out, Validators: 2, ChainID: "other"})
	var exists ErrOutputExists
	if !errors.As(err, &exists) || exists.Dir != out {
		t.Fatalf("second Testnet: err = %v, want ErrOutputExists{%s}", err, out)
	}
	genAfter, err := os.ReadFile(GenesisFile(first.Nodes[0].Home))
	if err != nil || !bytes.Equal(genAfter, genBefore) {
		t.Fatalf("a refused Testnet changed node0's genesis: %v", err)
	}

	// A folder holding anything at all is refused too.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Testnet(TestnetOptions{Output: other, Validators: 1}); !errors.As(err, &exists) {
		t.Fatalf("non-empty folder: err = %v", err)
	}

	// Force: new homes with new keys, a stale node2 gone, other files kept.
	keep := filepath.Join(out, "README")
	if err := os.WriteFile(keep, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, stale := range []string{"node2", "full3"} {
		if err := os.MkdirAll(filepath.Join(out, stale, "data"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	second, err := Testnet(TestnetOptions{Output: out, Validators: 2, ChainID: "other", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if second.Nodes[0].NodeID == first.Nodes[0].NodeID || second.DevAddress == first.DevAddress {
		t.Fatal("--force kept the old keys")
	}
	if gen, err := LoadGenesis(second.Nodes[1].Home); err != nil || gen.ChainID != "other" {
		t.Fatalf("forced genesis: %v", err)
	}
	for _, stale := range []string{"node2", "full3"} {
		if _, err := os.Stat(filepath.Join(out, stale)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("--force kept a stale %s: %v", stale, err)
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("--force deleted a file that is not a node home: %v", err)
	}
}

func TestTestnetRejectsBadOptions(t *testing.T) {
	for name, opts := range map[string]TestnetOptions{
		"no validators":      {Validators: 0},
		"too many":           {Validators: MaxTestnetValidators + 1},
		"public subnet":      {Validators: 4, SubnetBase: "192.167.10.2"},
		"not an address":     {Validators: 4, SubnetBase: "node0"},
		"ipv6":               {Validators: 4, SubnetBase: "fd00::10"},
		"leaves the /24":     {Validators: 4, SubnetBase: "172.28.0.252"},
		"network address":    {Validators: 1, SubnetBase: "172.28.0.0"},
		"chain id too long":  {Validators: 1, ChainID: strings.Repeat("c", 51)},
		"just fits, invalid": {Validators: 2, SubnetBase: "10.0.0.254"},
		"full nodes leave":   {Validators: 2, FullNodes: 1, SubnetBase: "10.0.0.253"},
		"too many full":      {Validators: 1, FullNodes: MaxTestnetFullNodes + 1},
		"negative full":      {Validators: 1, FullNodes: -1},
		"ports over 65535":   {Validators: 4, HostPortPrefix: 65},
		"negative prefix":    {Validators: 1, HostPortPrefix: -1},
	} {
		out := filepath.Join(t.TempDir(), "net")
		opts.Output = out
		if _, err := Testnet(opts); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a refused Testnet created %s", name, out)
		}
	}
	if _, err := Testnet(TestnetOptions{Output: t.TempDir(), Validators: 2, SubnetBase: "10.0.0.253"}); err != nil {
		t.Errorf("the last two addresses of a /24: %v", err)
	}
}

// Full nodes follow the chain without a vote: in no genesis validator set, peered with
// every validator, at the addresses and host ports after the validators'.
func TestTestnetFullNodes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "net")
	res, err := Testnet(TestnetOptions{Output: out, Validators: 2, FullNodes: 2, SubnetBase: "10.1.2.10", HostPortPrefix: 27})
	if err != nil {
		t.Fatal(err)
	}
	gen, err := LoadGenesis(res.Nodes[0].Home)
	if err != nil {
		t.Fatal(err)
	}
	inGenesis := map[string]bool{}
	for _, v := range gen.Validators {
		inGenesis[v.Address.String()] = true
	}
	want := []struct {
		name, ip   string
		validator  bool
		rpc, proms int
	}{
		{"node0", "10.1.2.10", true, 27657, 27660},
		{"node1", "10.1.2.11", true, 27757, 27760},
		{"full0", "10.1.2.12", false, 27557, 27560},
		{"full1", "10.1.2.13", false, 27457, 27460},
	}
	if len(res.Nodes) != len(want) || len(gen.Validators) != 2 || res.HostPortPrefix != 27 {
		t.Fatalf("%d nodes, %d genesis validators, prefix %d", len(res.Nodes), len(gen.Validators), res.HostPortPrefix)
	}
	for i, n := range res.Nodes {
		w := want[i]
		if n.Name != w.name || n.IP != w.ip || n.Validator != w.validator || n.HostRPCPort != w.rpc || n.HostPrometheusPort != w.proms ||
			n.Home != filepath.Join(out, w.name) || inGenesis[n.ValidatorAddress.String()] != w.validator {
			t.Errorf("node %d = %+v, want %+v (in genesis: %t)", i, n, w, inGenesis[n.ValidatorAddress.String()])
		}
		if !w.validator && n.PayoutIdentity != (protocol.IdentityID{}) {
			t.Errorf("%s: a full node with a payout identity", n.Name)
		}
		if other, err := os.ReadFile(GenesisFile(n.Home)); err != nil || !bytes.Equal(other, mustRead(t, GenesisFile(res.Nodes[0].Home))) {
			t.Errorf("%s has another genesis: %v", n.Name, err)
		}
		cfg, err := LoadConfig(n.Home)
		if err != nil {
			t.Fatal(err)
		}
		var peers []string
		for j, v := range res.Nodes[:2] {
			if j != i {
				peers = append(peers, v.NodeID+"@"+v.IP+":26656")
			}
		}
		got := strings.Split(cfg.P2P.PersistentPeers, ",")
		sort.Strings(got)
		sort.Strings(peers)
		if strings.Join(got, ",") != strings.Join(peers, ",") {
			t.Errorf("%s persistent_peers = %s, want the validators %s", n.Name, cfg.P2P.PersistentPeers, peers)
		}
		if _, err := os.Stat(keyring.Open(n.Home).Dir()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s has a keyring: %v", n.Name, err)
		}
	}
	keys, err := keyring.Open(res.ClientHome).List()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range keys {
		names = append(names, k.Name)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "dev,node0-payout,node1-payout" {
		t.Fatalf("client keyring = %v", names)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
