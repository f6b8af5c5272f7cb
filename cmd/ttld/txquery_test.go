package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// cli runs ttld in process against env's node and home.
type cli struct {
	t   *testing.T
	env *e2e.Env
	// stdin, when not empty, is the commands' standard input.
	stdin string
}

// run executes the root command with args and returns its standard output and error.
func (c cli) run(args ...string) (string, error) {
	c.t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	if c.stdin != "" {
		root.SetIn(strings.NewReader(c.stdin))
	}
	root.SetArgs(append(args, "--home", c.env.Home, "--node", c.env.RPC))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// newIdentity creates an identity holding 1,000,000,000 credits from the dev key's
// address and returns its id.
func (c cli) newIdentity() string {
	c.t.Helper()
	var tx txOutput
	if err := c.json(&tx, "tx", "identity", "create", "--from", node.DevKeyName, "--amount", "1000000000", "--commit"); err != nil || tx.Code != 0 {
		c.t.Fatalf("identity create: %+v %v", tx, err)
	}
	return tx.Identity
}

// json runs args with -o json and decodes the printed object into v.
func (c cli) json(v any, args ...string) error {
	c.t.Helper()
	out, err := c.run(append(args, "-o", "json")...)
	if jerr := json.Unmarshal([]byte(out), v); jerr != nil {
		c.t.Fatalf("ttld %s printed %q (error %v): %v", strings.Join(args, " "), out, err, jerr)
	}
	return err
}

func TestTxAndQueryCommands(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	c := cli{t: t, env: env}
	ctx := context.Background()
	devAddr := env.Dev.Address()
	bob, err := keyring.Open(env.Home).Add("bob")
	if err != nil {
		t.Fatal(err)
	}

	// Address to address, committed, as JSON.
	before, err := env.Client.Address(ctx, devAddr, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	var tx txOutput
	if err := c.json(&tx, "tx", "address", "transfer", "--to", bob.Address().String(), "--amount", "1000000000", "--from", node.DevKeyName, "--commit"); err != nil {
		t.Fatal(err)
	}
	if tx.Status != txCommitted || tx.Code != 0 || !tx.Committed || tx.Height == 0 || tx.Fee == nil || *tx.Fee == 0 || tx.Nonce != 1 || len(tx.TxHash) != 64 {
		t.Fatalf("transfer: %+v", tx)
	}
	after, err := env.Client.Address(ctx, devAddr, tx.Height, false)
	if err != nil {
		t.Fatal(err)
	}
	if after.Balance != before.Balance-1_000_000_000-*tx.Fee || after.Nonce != 1 {
		t.Fatalf("dev after the transfer: %+v, before %+v, fee %d", after, before, *tx.Fee)
	}

	// A dry run: the code and the fee the node would charge, and nothing sent (the
	// nonce stays, so the next send uses the same one).
	var dry dryRunOutput
	if err := c.json(&dry, "tx", "address", "transfer", "--to", bob.Address().String(), "--amount", "5", "--from", node.DevKeyName, "--dry-run"); err != nil {
		t.Fatal(err)
	}
	if dry.Status != "dry_run" || dry.Code != 0 || dry.Fee == 0 || dry.MaxFee < dry.Fee || dry.Nonce != 2 {
		t.Fatalf("dry run: %+v", dry)
	}
	var dryRefused dryRunOutput
	err = c.json(&dryRefused, "tx", "address", "transfer", "--to", bob.Address().String(), "--amount", "18446744073709551615", "--from", node.DevKeyName, "--dry-run")
	var dre errRefused
	if !errors.As(err, &dre) || dre.Code != protocol.CodeAddressInsufficientBalance || dryRefused.Fee == 0 {
		t.Fatalf("dry run of an unaffordable transfer: %+v %v", dryRefused, err)
	}

	// The same, as text.
	out, err := c.run("tx", "address", "transfer", "--to", bob.Address().String(), "--amount", "5", "--from", node.DevKeyName, "--commit")
	if err != nil || !strings.Contains(out, "code: 0\n") || !strings.Contains(out, "nonce: 2\n") || !strings.Contains(out, "fee paid: "+strconv.FormatUint(dry.Fee, 10)+"\n") {
		t.Fatalf("text transfer: %q %v; the dry run said fee %d", out, err, dry.Fee)
	}

	// A stale --nonce is refused: non-zero exit, the code printed.
	var refused txOutput
	err = c.json(&refused, "tx", "address", "transfer", "--to", bob.Address().String(), "--amount", "5", "--from", node.DevKeyName, "--nonce", "1", "--commit")
	var re errRefused
	if !errors.As(err, &re) || re.Code != protocol.CodeInvalidAddressNonce || refused.Status != txRefused || refused.Fee != nil || refused.Code != uint32(protocol.CodeInvalidAddressNonce) || refused.Committed || refused.Log == "" {
		t.Fatalf("stale nonce: %+v %v", refused, err)
	}

	// Verified reads of a used and of a never used address.
	out, err = c.run("query", "address", devAddr.String(), "--prove")
	if err != nil || !strings.Contains(out, "VERIFIED presence at height ") {
		t.Fatalf("query dev --prove: %q %v", out, err)
	}
	never := protocol.AddressOf(bytes.Repeat([]byte{7}, 32))
	out, err = c.run("query", "address", never.String(), "--prove")
	if err != nil || !strings.Contains(out, "VERIFIED absence at height ") {
		t.Fatalf("query unused address --prove: %q %v", out, err)
	}
	var vq struct {
		Answer   addressJSON `json:"answer"`
		Verified string      `json:"verified"`
		Height   int64       `json:"height"`
	}
	if err := c.json(&vq, "query", "address", bob.Address().String(), "--prove"); err != nil {
		t.Fatal(err)
	}
	if vq.Verified != "presence" || !vq.Answer.Present || vq.Answer.Balance != 1_000_000_005 || vq.Height != vq.Answer.Height {
		t.Fatalf("query bob --prove -o json: %+v", vq)
	}

	// Identity create, top-up and transfer to an address, then their reads.
	var created txOutput
	if err := c.json(&created, "tx", "identity", "create", "--from", "bob", "--amount", "200000000", "--commit"); err != nil {
		t.Fatal(err)
	}
	id := protocol.NewIdentityID(bob.Address(), created.Nonce)
	if created.Code != 0 || created.Identity != id.String() {
		t.Fatalf("identity create: %+v, want identity %s", created, id)
	}
	if err := c.json(&tx, "tx", "identity", "top-up", id.String(), "--amount", "1000", "--from", "bob", "--commit"); err != nil || tx.Code != 0 {
		t.Fatalf("top-up: %+v %v", tx, err)
	}
	if err := c.json(&tx, "tx", "identity", "transfer-to-address", "--identity", id.String(), "--to", never.String(), "--amount", "77", "--from", "bob", "--commit"); err != nil || tx.Code != 0 {
		t.Fatalf("transfer to address: %+v %v", tx, err)
	}
	var iq struct {
		Answer   identityJSON `json:"answer"`
		Verified string       `json:"verified"`
	}
	if err := c.json(&iq, "query", "identity", id.String(), "--prove"); err != nil {
		t.Fatal(err)
	}
	if iq.Verified != "presence" || iq.Answer.Balance != 200_001_000-77-*tx.Fee || iq.Answer.Nonce != 1 || len(iq.Answer.Keys) != 1 {
		t.Fatalf("query identity --prove: %+v", iq)
	}
	var cq struct {
		Answer   changesJSON `json:"answer"`
		Verified string      `json:"verified"`
	}
	if err := c.json(&cq, "query", "address-changes", never.String(), "--since", "0", "--prove"); err != nil {
		t.Fatal(err)
	}
	if cq.Verified != "presence" || len(cq.Answer.Changes) != 1 || cq.Answer.Changes[0].Balance != 77 || cq.Answer.Changes[0].ToHeight != uint64(tx.Height) {
		t.Fatalf("query address-changes --prove: %+v (transfer at %d)", cq, tx.Height)
	}
	since := strconv.FormatInt(tx.Height+1, 10)
	if err := c.json(&cq, "query", "address-changes", never.String(), "--since", since, "--prove"); err != nil || cq.Verified != "absence" || len(cq.Answer.Changes) != 0 {
		t.Fatalf("query address-changes --since %s --prove: %+v %v", since, cq, err)
	}

	// Another home's genesis names another validator: its headers do not verify.
	other := t.TempDir()
	if _, err := node.Init(node.InitOptions{Home: other, ChainID: e2e.ChainID}); err != nil {
		t.Fatal(err)
	}
	root := newRootCmd()
	root.SetOut(new(bytes.Buffer))
	root.SetErr(new(bytes.Buffer))
	root.SetArgs([]string{"query", "address", devAddr.String(), "--prove", "--home", other, "--node", env.RPC})
	err = root.ExecuteContext(ctx)
	var ve errVerification
	var vh client.ErrGenesisMismatch
	if !errors.As(err, &ve) || !errors.As(err, &vh) {
		t.Fatalf("verification against another genesis: %v", err)
	}
	if code := Execute(ctx, []string{"query", "address", devAddr.String(), "--prove", "--home", other, "--node", env.RPC}, new(bytes.Buffer), new(bytes.Buffer)); code == 0 {
		t.Fatal("a failed verification exits 0")
	}

	// Without a genesis in the home, a verified read needs a header to trust: a set the
	// node names is no root of trust. With --trust-height and --trust-hash it verifies.
	bare := cli{t: t, env: &e2e.Env{Home: t.TempDir(), RPC: env.RPC}}
	if out, err := bare.run("query", "address", devAddr.String(), "--prove"); err == nil || !strings.Contains(err.Error(), "root of trust") {
		t.Fatalf("query --prove without a genesis: %q %v", out, err)
	}
	trusted := int64(2)
	commit, err := env.Client.RPC().Commit(ctx, &trusted)
	if err != nil {
		t.Fatal(err)
	}
	out, err = bare.run("query", "address", devAddr.String(), "--prove", "--trust-height", "2", "--trust-hash", hex.EncodeToString(commit.Header.Hash()))
	if err != nil || !strings.Contains(out, "VERIFIED presence") {
		t.Fatalf("query --prove from a trusted header: %q %v", out, err)
	}
}
