package genesis

import (
	"errors"
	"strings"
	"testing"

	dbm "github.com/cosmos/cosmos-db"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

const key1 = "8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c"

func TestDecodeRefusals(t *testing.T) {
	addr := strings.Repeat("ab", 20)
	id := strings.Repeat("cd", 32)
	cases := map[string]string{
		"unknown field":    `{"nope": 1}`,
		"unknown version":  `{"protocol_version": 99}`,
		"bad address":      `{"addresses": [{"address": "xyz", "balance": 1}]}`,
		"repeated address": `{"addresses": [{"address": "` + addr + `", "balance": 1}, {"address": "` + addr + `", "balance": 2}]}`,
		"bad identity":     `{"identities": [{"id": "00", "balance": 1, "keys": ["` + key1 + `"]}]}`,
		"no keys":          `{"identities": [{"id": "` + id + `", "balance": 1, "keys": []}]}`,
		"bad key":          `{"identities": [{"id": "` + id + `", "balance": 1, "keys": ["00"]}]}`,
		"supply overflow":  `{"addresses": [{"address": "` + addr + `", "balance": 18446744073709551615}], "identities": [{"id": "` + id + `", "balance": 1, "keys": ["` + key1 + `"]}]}`,
		"not json":         `{`,
	}
	for name, raw := range cases {
		if _, err := Decode([]byte(raw)); !errors.As(err, new(ErrInvalid)) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

// TestInitChain writes a genesis state and reads every part back; the supply is the sum
// of all balances, and the same state written twice gives the same root.
func TestInitChain(t *testing.T) {
	raw := []byte(`{
	  "addresses": [{"address": "` + strings.Repeat("ab", 20) + `", "balance": 700}, {"address": "` + strings.Repeat("01", 20) + `", "balance": 300}],
	  "identities": [{"id": "` + strings.Repeat("cd", 32) + `", "balance": 5, "keys": ["` + key1 + `"]}]
	}`)
	var roots [][]byte
	for i := 0; i < 2; i++ {
		s, err := drive.NewStore(dbm.NewMemDB(), drive.Options{})
		if err != nil {
			t.Fatal(err)
		}
		kv := s.Working()
		if err := InitChain(kv, Params{ChainID: "c", GenesisTimeMs: 42, InitialHeight: 1}, raw); err != nil {
			t.Fatal(err)
		}
		if supply, _ := drive.GetSupply(kv); supply != 1005 {
			t.Fatalf("supply %d, want 1005", supply)
		}
		if v, _ := drive.GetProtocolVersion(kv); v != protocol.Latest {
			t.Fatalf("protocol version %d", v)
		}
		if p, _ := drive.GetChainParams(kv); p.ChainID != "c" || p.GenesisTimeMs != 42 {
			t.Fatalf("params %+v", p)
		}
		a, _ := protocol.ParseAddress(strings.Repeat("ab", 20))
		if st, ok, _ := drive.GetAddress(kv, a); !ok || st.Balance != 700 || st.Nonce.Last != 0 {
			t.Fatalf("address %+v %v", st, ok)
		}
		id, _ := protocol.ParseIdentityID(strings.Repeat("cd", 32))
		if k, _ := drive.GetIdentityKey(kv, id, 0); k == nil {
			t.Fatal("identity key missing")
		}
		if err := drive.CheckCredits(kv); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, s.WorkingHash())
	}
	if string(roots[0]) != string(roots[1]) {
		t.Fatal("the same genesis gave two roots")
	}
	if err := InitChain(drive.NewCache(drive.Empty()), Params{ChainID: ""}, raw); !errors.As(err, new(ErrInvalid)) {
		t.Fatalf("empty chain id: %v", err)
	}
}
