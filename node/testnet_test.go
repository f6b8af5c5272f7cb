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
	if len(state.Addresses) != 4 || len(state.Identities) != 4 {
		t.Fatalf("app state = %+v", state)
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

		// Its dev key funded, and its payout identity keyed by the dev key.
		dev, err := keyring.Open(n.Home).Get(DevKeyName)
		if err != nil {
			t.Fatal(err)
		}
		if dev.Address() != n.DevAddress {
			t.Errorf("%s: dev key %s, result %s", n.Name, dev.Address(), n.DevAddress)
		}
		if state.Addresses[i] != (genesis.Address{Address: dev.Address().String(), Balance: 777}) {
			t.Errorf("%s: genesis address %+v", n.Name, state.Addresses[i])
		}
		sum := sha256.Sum256(append([]byte("ttld/validator-payout"), v.Address...))
		idn := state.Identities[i]
		if n.PayoutIdentity != PayoutIdentityID(v.Address) || idn.ID != hex.EncodeToString(sum[:]) ||
			idn.Balance != 0 || len(idn.Keys) != 1 || idn.Keys[0] != hex.EncodeToString(dev.Pub) {
			t.Errorf("%s: payout identity %+v, result %s", n.Name, idn, n.PayoutIdentity)
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
	if err := os.MkdirAll(filepath.Join(out, "node2", "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	second, err := Testnet(TestnetOptions{Output: out, Validators: 2, ChainID: "other", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if second.Nodes[0].NodeID == first.Nodes[0].NodeID || second.Nodes[0].DevAddress == first.Nodes[0].DevAddress {
		t.Fatal("--force kept the old keys")
	}
	if gen, err := LoadGenesis(second.Nodes[1].Home); err != nil || gen.ChainID != "other" {
		t.Fatalf("forced genesis: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "node2")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("--force kept a stale node2: %v", err)
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
