package genesis

import (
	"bytes"
	"crypto/ed25519"
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
	id2 := strings.Repeat("ef", 32)
	ids := `"identities": [{"id": "` + id + `", "balance": 1, "keys": ["` + key1 + `"]}, {"id": "` + id2 + `", "balance": 1, "keys": ["` + key1 + `"]}]`
	val := func(address, payout string) string {
		return `{"address": "` + address + `", "payout_identity": "` + payout + `"}`
	}
	const e = `"epoch_time_length_s": 3600, `
	cases := map[string]string{
		"unknown field":                 `{` + e + `"nope": 1}`,
		"unknown version":               `{` + e + `"protocol_version": 99}`,
		"bad address":                   `{` + e + `"addresses": [{"address": "xyz", "balance": 1}]}`,
		"repeated address":              `{` + e + `"addresses": [{"address": "` + addr + `", "balance": 1}, {"address": "` + addr + `", "balance": 2}]}`,
		"bad identity":                  `{` + e + `"identities": [{"id": "00", "balance": 1, "keys": ["` + key1 + `"]}]}`,
		"no keys":                       `{` + e + `"identities": [{"id": "` + id + `", "balance": 1, "keys": []}]}`,
		"bad key":                       `{` + e + `"identities": [{"id": "` + id + `", "balance": 1, "keys": ["00"]}]}`,
		"supply overflow":               `{` + e + `"addresses": [{"address": "` + addr + `", "balance": 18446744073709551615}], "identities": [{"id": "` + id + `", "balance": 1, "keys": ["` + key1 + `"]}]}`,
		"not json":                      `{`,
		"no epoch length":               `{}`,
		"epoch length 0":                `{"epoch_time_length_s": 0}`,
		"epoch length under a minute":   `{"epoch_time_length_s": 59}`,
		"epoch length over a year":      `{"epoch_time_length_s": 31536001}`,
		"bad validator address":         `{` + e + ids + `, "validators": [` + val("12", id) + `]}`,
		"repeated validator":            `{` + e + ids + `, "validators": [` + val(addr, id) + `, ` + val(addr, id2) + `]}`,
		"payout not a genesis identity": `{` + e + ids + `, "validators": [` + val(addr, strings.Repeat("99", 32)) + `]}`,
		"shared payout identity":        `{` + e + ids + `, "validators": [` + val(addr, id) + `, ` + val(strings.Repeat("ac", 20), id) + `]}`,
	}
	for name, raw := range cases {
		if _, err := Decode([]byte(raw)); !errors.As(err, new(ErrInvalid)) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	good := `{` + e + ids + `, "validators": [` + val(addr, id) + `, ` + val(strings.Repeat("ac", 20), id2) + `]}`
	if _, err := Decode([]byte(good)); err != nil {
		t.Fatalf("a valid app state: %v", err)
	}
}

// TestInitChainValidators: every genesis validator needs a payout identity in the app
// state, and the app state names no validator CometBFT's genesis lacks; a refusal
// writes nothing.
func TestInitChainValidators(t *testing.T) {
	id := strings.Repeat("cd", 32)
	keyA, keyB := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)).Public().(ed25519.PublicKey), ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, 32)).Public().(ed25519.PublicKey)
	a := protocol.ConsensusAddressOf(keyA)
	l16, err := protocol.LimitsFor(protocol.V16)
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(`{"epoch_time_length_s": 3600, "identities": [{"id": "` + id + `", "balance": 1, "keys": ["` + key1 + `"]}], "validators": [{"address": "` + a.String() + `", "payout_identity": "` + id + `"}]}`)
	for name, vals := range map[string][]drive.GenesisValidator{
		"a validator without a payout identity": {{PubKey: keyA, Power: 10}, {PubKey: keyB, Power: 10}},
		"a payout for no genesis validator":     {},
		"a power past the most (version 16)":    {{PubKey: keyA, Power: l16.MaxValidatorPower + 1}},
	} {
		kv := drive.NewCache(drive.Empty())
		err := InitChain(kv, Params{ChainID: "c", Validators: vals}, raw)
		if !errors.As(err, new(ErrInvalid)) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
		written := 0
		_ = kv.Iterate(nil, nil, func(_, _ []byte) (bool, error) { written++; return false, nil })
		if written != 0 {
			t.Errorf("%s: %d keys written", name, written)
		}
	}
	kv := drive.NewCache(drive.Empty())
	if err := InitChain(kv, Params{ChainID: "c", Validators: []drive.GenesisValidator{{PubKey: keyA, Power: 7}}}, raw); err != nil {
		t.Fatal(err)
	}
	got, ok, err := drive.GetPayoutIdentity(kv, a[:])
	if err != nil || !ok || got.String() != id {
		t.Fatalf("payout identity %s %v %v", got, ok, err)
	}
	// From version 16 on the genesis validators are the set in state, each operated by
	// its payout identity (docs/STATE.md, "Validators").
	set, err := drive.Validators(kv)
	if err != nil || len(set) != 1 || set[0].Address != a || set[0].Power != 7 || set[0].Operator.String() != id {
		t.Fatalf("the validator set in state: %+v %v", set, err)
	}
}

// TestInitChain writes a genesis state and reads every part back; the supply is the sum
// of all balances, and the same state written twice gives the same root.
func TestInitChain(t *testing.T) {
	raw := []byte(`{
	  "epoch_time_length_s": 3600,
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
		if p, _ := drive.GetChainParams(kv); p.ChainID != "c" || p.GenesisTimeMs != 42 || p.EpochLengthS != 3600 {
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
		root, err := s.WorkingHash()
		if err != nil {
			t.Fatal(err)
		}
		roots = append(roots, root)
	}
	if string(roots[0]) != string(roots[1]) {
		t.Fatal("the same genesis gave two roots")
	}
	if err := InitChain(drive.NewCache(drive.Empty()), Params{ChainID: ""}, raw); !errors.As(err, new(ErrInvalid)) {
		t.Fatalf("empty chain id: %v", err)
	}
	// A genesis time past the last millisecond a header carries (docs/STATE.md, "Block
	// time"); the last one itself is a genesis time.
	if err := InitChain(drive.NewCache(drive.Empty()), Params{ChainID: "c", GenesisTimeMs: protocol.MaxBlockTimeMs + 1, InitialHeight: 1}, raw); !errors.As(err, new(ErrInvalid)) {
		t.Fatalf("genesis past 9999: %v", err)
	}
	if err := InitChain(drive.NewCache(drive.Empty()), Params{ChainID: "c", GenesisTimeMs: protocol.MaxBlockTimeMs, InitialHeight: 1}, raw); err != nil {
		t.Fatalf("genesis at the last millisecond of 9999: %v", err)
	}
}

// "Local-network limits override: genesis may lower min_document_ttl_seconds (and raise
// nothing else) for local chains and tests only, [...] refused on a chain id marked as
// public". And the upgrade: a scheduled protocol_upgrade must be later, in height and
// version.
func TestInitChainLocalLimitsAndUpgrade(t *testing.T) {
	init := func(chainID, extra string) (drive.KV, error) {
		s, err := drive.NewStore(dbm.NewMemDB(), drive.Options{})
		if err != nil {
			t.Fatal(err)
		}
		raw := []byte(`{"epoch_time_length_s": 3600, "addresses": [{"address": "` + strings.Repeat("ab", 20) + `", "balance": 1}]` + extra + `}`)
		return s.Working(), InitChain(s.Working(), Params{ChainID: chainID, GenesisTimeMs: 42, InitialHeight: 1}, raw)
	}
	kv, err := init("ttld-local", `, "local_limits": {"min_document_ttl_seconds": 60}`)
	if err != nil {
		t.Fatal(err)
	}
	if o, err := drive.GetLocalLimits(kv); err != nil || o.MinDocumentTTLSeconds != 60 {
		t.Fatalf("local limits %+v %v", o, err)
	}
	for name, c := range map[string]struct{ chain, extra string }{
		"a public chain id":           {"ttld-mainnet", `, "local_limits": {"min_document_ttl_seconds": 60}`},
		"a raise":                     {"ttld-local", `, "local_limits": {"min_document_ttl_seconds": 7200}`},
		"zero":                        {"ttld-local", `, "local_limits": {"min_document_ttl_seconds": 0}`},
		"an upgrade to the same":      {"ttld-local", `, "protocol_version": 14, "protocol_upgrade": {"version": 14, "height": 5}`},
		"an upgrade at the first one": {"ttld-local", `, "protocol_version": 13, "protocol_upgrade": {"version": 14, "height": 1}`},
	} {
		if _, err := init(c.chain, c.extra); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	kv, err = init("c", `, "protocol_version": 13, "protocol_upgrade": {"version": 14, "height": 5}`)
	if err != nil {
		t.Fatal(err)
	}
	if u, ok, err := drive.GetProtocolUpgrade(kv); err != nil || !ok || u != (drive.ProtocolUpgrade{Version: protocol.V14, Height: 5}) {
		t.Fatalf("upgrade %+v %v %v", u, ok, err)
	}
}
