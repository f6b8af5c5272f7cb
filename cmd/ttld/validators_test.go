package main

import (
	"crypto/ed25519"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// TestValidatorCommands: on a chain of one validator of power 10 (ttld init's), its
// operator, the payout identity, topped up with credits, adds a validator of power 3
// (a validator holding more than two thirds of the power passes its own proposals), a
// second proposal waits for an approval, and the proven reads show the set and the
// pending proposal (docs/STATE.md, "Validators"): the light client follows the set
// from the home's genesis across every change.
func TestValidatorCommands(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	c := cli{t: t, env: env}
	validator := env.Trusted.Validators[0]
	operator := protocol.PayoutIdentityID(validator.Address).String()
	var tx txOutput
	if err := c.json(&tx, "tx", "identity", "top-up", operator, "--amount", "1000000000", "--from", node.DevKeyName, "--commit"); err != nil || tx.Code != 0 {
		t.Fatalf("top-up of the operator: %+v %v", tx, err)
	}
	payoutKey := node.PayoutKeyName("validator")
	newKey := ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey)
	newAddr := protocol.ConsensusAddressOf(newKey).String()
	other := c.newIdentity()

	if err := c.json(&tx, "tx", "validator", "propose", "add", "--pubkey", strings.ToUpper(hex.EncodeToString(newKey)), "--power", "3", "--operator", other,
		"--identity", operator, "--from", payoutKey, "--commit"); err != nil || tx.Code != 0 {
		t.Fatalf("propose add: %+v %v", tx, err)
	}
	if tx.Proposal != 1 || tx.Passed == nil || !*tx.Passed || tx.Validator != newAddr {
		t.Fatalf("propose add: proposal %d passed %v validator %s, want 1, passed, %s", tx.Proposal, tx.Passed, tx.Validator, newAddr)
	}
	out, err := c.run("query", "validators", "--prove")
	if err != nil || !strings.Contains(out, "validators: 2, total power 13\n") || !strings.Contains(out, newAddr+" power 3 (23.07%) operator "+other) || !strings.Contains(out, "VERIFIED presence at height ") {
		t.Fatalf("query validators --prove: %q %v", out, err)
	}

	// A change of a third of the power or more is refused, paid.
	err = c.json(&tx, "tx", "validator", "propose", "power", "--validator", newAddr, "--power", "8", "--identity", operator, "--from", payoutKey, "--commit")
	if tx.Code != uint32(protocol.CodeValidatorPowerMoveTooLarge) || err == nil {
		t.Fatalf("a move of 5 of 13: %+v %v", tx, err)
	}
	// The new validator's operator proposes; 3 of 13 does not pass it. (The new
	// validator runs no node: at power 5 the one that does would hold 10 of 15, not more
	// than two thirds, and the chain would stop.)
	if err := c.json(&tx, "tx", "validator", "propose", "power", "--validator", newAddr, "--power", "4", "--identity", other, "--from", node.DevKeyName, "--commit"); err != nil || tx.Code != 0 || tx.Passed == nil || *tx.Passed {
		t.Fatalf("propose power: %+v %v", tx, err)
	}
	id := strconv.FormatUint(tx.Proposal, 10)
	out, err = c.run("query", "validator-proposals", "--prove")
	if err != nil || !strings.Contains(out, "proposal "+id+": power "+newAddr+" to power 4") || !strings.Contains(out, "holding 3 of 13 power") || !strings.Contains(out, "VERIFIED presence") {
		t.Fatalf("query validator-proposals --prove: %q %v", out, err)
	}
	// The operator is found from the --from key.
	if err := c.json(&tx, "tx", "validator", "approve", id, "--from", payoutKey, "--commit"); err != nil || tx.Code != 0 || tx.Passed == nil || !*tx.Passed {
		t.Fatalf("approve: %+v %v", tx, err)
	}
	var set struct {
		Answer validatorsJSON `json:"answer"`
	}
	if err := c.json(&set, "query", "validators", "--prove"); err != nil || set.Answer.TotalPower != 14 {
		t.Fatalf("the set after the approval: %+v %v", set, err)
	}
}

// TestLightStoreFollowsTheGenesis: the light client's trusted store is named by the
// root of trust, so a chain started again under the same chain id in the same home (a
// new genesis) gets a store of its own, and a trusted header another.
func TestLightStoreFollowsTheGenesis(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dirOf := func(args ...string) string {
		t.Helper()
		q, _, err := newRootCmd().Find([]string{"query", "validators"})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.ParseFlags(append([]string{"--home", home}, args...)); err != nil {
			t.Fatal(err)
		}
		opts, _, err := lightOptions(q)
		if err != nil {
			t.Fatal(err)
		}
		return opts.Dir
	}
	if _, err := node.Init(node.InitOptions{Home: home, ChainID: e2e.ChainID}); err != nil {
		t.Fatal(err)
	}
	first := dirOf()
	if _, err := node.Init(node.InitOptions{Home: home, ChainID: e2e.ChainID, Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	second := dirOf()
	trusted := dirOf("--trust-height", "5", "--trust-hash", strings.Repeat("ab", 32))
	if first == second || second == trusted || !strings.HasPrefix(first, LightDir(home)) {
		t.Fatalf("stores %s, %s and %s: want three under %s", first, second, trusted, LightDir(home))
	}
}
