package load

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// TestDeriveSignerIsDeterministic: the same seed and index give the same signer, and
// any other index or seed another one.
func TestDeriveSignerIsDeterministic(t *testing.T) {
	a, again := DeriveSigner([]byte("s"), 7), DeriveSigner([]byte("s"), 7)
	if !bytes.Equal(a.Key, again.Key) || a.Address != again.Address || a.Identity != again.Identity || a.Index != 7 {
		t.Fatalf("signer 7 derived twice differs: %+v %+v", a, again)
	}
	if a.Address != protocol.AddressOf(a.Pub()) {
		t.Fatalf("address %s is not the key's", a.Address)
	}
	seen := map[string]bool{}
	for _, s := range append(DeriveSigners([]byte("s"), 50), DeriveSigners([]byte("t"), 50)...) {
		for _, k := range []string{string(s.Pub()), string(s.Address[:]), string(s.Identity[:])} {
			if seen[k] {
				t.Fatalf("signer %d repeats a key, address or identity: %x", s.Index, k)
			}
			seen[k] = true
		}
	}
}

// initHome is a home `ttld init` wrote, on a local chain id.
func initHome(t *testing.T) string {
	t.Helper()
	res, err := node.Init(node.InitOptions{Home: t.TempDir(), ChainID: "ttld-load-test"})
	if err != nil {
		t.Fatal(err)
	}
	return res.Home
}

// TestAddSignersFundsTheDerivedSigners: the genesis funds exactly the signers
// DeriveSigner gives, address and identity (with the signer's key as key 0), keeps
// what init wrote, validates, and refuses the same signers twice.
func TestAddSignersFundsTheDerivedSigners(t *testing.T) {
	home := initHome(t)
	before := appState(t, home)
	const n, balance = 30, 12345
	if err := AddSigners(home, []byte("seed"), n, balance); err != nil {
		t.Fatal(err)
	}
	after := appState(t, home)
	if len(after.Addresses) != len(before.Addresses)+n || len(after.Identities) != len(before.Identities)+n {
		t.Fatalf("%d addresses and %d identities after adding %d signers to %d and %d", len(after.Addresses), len(after.Identities), n, len(before.Addresses), len(before.Identities))
	}
	if after.Addresses[0] != before.Addresses[0] || after.Identities[0].ID != before.Identities[0].ID {
		t.Fatal("the accounts init wrote are gone")
	}
	for i := range n {
		s := DeriveSigner([]byte("seed"), i)
		a, id := after.Addresses[len(before.Addresses)+i], after.Identities[len(before.Identities)+i]
		if a.Address != s.Address.String() || a.Balance != balance {
			t.Fatalf("address of signer %d: %+v, want %s", i, a, s.Address)
		}
		if id.ID != s.Identity.String() || id.Balance != balance || len(id.Keys) != 1 || id.Keys[0] != hex.EncodeToString(s.Pub()) {
			t.Fatalf("identity of signer %d: %+v, want %s with key %x", i, id, s.Identity, s.Pub())
		}
	}
	err := AddSigners(home, []byte("seed"), n, balance)
	if !errors.As(err, new(ErrSignersPresent)) {
		t.Fatalf("adding the same signers again: %v, want ErrSignersPresent", err)
	}
}

func appState(t *testing.T, home string) genesis.AppState {
	t.Helper()
	gen, err := cmttypes.GenesisDocFromFile(GenesisFile(home))
	if err != nil {
		t.Fatal(err)
	}
	s, err := genesis.Decode(gen.AppState)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
