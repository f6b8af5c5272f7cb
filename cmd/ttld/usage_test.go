package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// TestTxFlagsRefusedBeforeSigning: a missing or malformed flag is refused, naming the
// flag, before the command signs anything or talks to a node (--node is closed).
func TestTxFlagsRefusedBeforeSigning(t *testing.T) {
	home := t.TempDir()
	if _, err := keyring.Open(home).Add("dev"); err != nil {
		t.Fatal(err)
	}
	closed := "http://" + freeAddr(t)
	addr := "0000000000000000000000000000000000000001"
	id := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		args    []string
		missing string // the flag errMissingFlag names, or
		bad     string // the flag errUsage names, or
		badArg  string // the argument errBadArg names
	}{
		{args: []string{"tx", "address", "transfer", "--from", "dev", "--amount", "5"}, missing: "to"},
		{args: []string{"tx", "address", "transfer", "--from", "dev", "--to", addr}, missing: "amount"},
		{args: []string{"tx", "address", "transfer", "--to", addr, "--amount", "5"}, missing: "from"},
		{args: []string{"tx", "address", "transfer", "--from", "dev", "--to", "zz", "--amount", "5"}, bad: "to"},
		{args: []string{"tx", "address", "transfer", "--from", "dev", "--to", addr + "00", "--amount", "5"}, bad: "to"},
		{args: []string{"tx", "address", "transfer", "--from", "dev", "--to", addr, "--amount", "0"}, bad: "amount"},
		{args: []string{"tx", "identity", "create", "--from", "dev"}, missing: "amount"},
		{args: []string{"tx", "identity", "create", "--from", "dev", "--amount", "5", "--keys", "nothex"}, bad: "keys"},
		{args: []string{"tx", "identity", "top-up", "xyz", "--from", "dev", "--amount", "5"}, badArg: "ID"},
		{args: []string{"tx", "identity", "top-up", id, "--from", "dev"}, missing: "amount"},
		{args: []string{"tx", "identity", "transfer", "--from", "dev", "--to", id, "--amount", "5"}, missing: "identity"},
		{args: []string{"tx", "identity", "transfer", "--from", "dev", "--identity", id, "--amount", "5"}, missing: "to"},
		{args: []string{"tx", "identity", "transfer", "--from", "dev", "--identity", id, "--to", addr, "--amount", "5"}, bad: "to"},
		{args: []string{"tx", "identity", "transfer-to-address", "--from", "dev", "--identity", id, "--to", id, "--amount", "5"}, bad: "to"},
		{args: []string{"tx", "identity", "transfer-to-address", "--from", "dev", "--identity", "x", "--to", addr, "--amount", "5"}, bad: "identity"},
		{args: []string{"tx", "document", "create", "xyz", "note", "{}", "--from", "dev", "--identity", id}, badArg: "CONTRACT"},
		{args: []string{"tx", "document", "create", id, "$note", "{}", "--from", "dev", "--identity", id}, badArg: "TYPE"},
		{args: []string{"tx", "document", "create", id, "note", "{}", "--from", "dev"}, missing: "identity"},
		{args: []string{"tx", "document", "create", id, "note", "{}", "--from", "dev", "--identity", id, "--entropy", "abcd"}, bad: "entropy"},
		{args: []string{"tx", "document", "replace", id, "note", "xyz", "{}", "--from", "dev", "--identity", id}, badArg: "ID"},
		{args: []string{"tx", "document", "delete", id, "note", id + "00", "--from", "dev", "--identity", id}, badArg: "ID"},
		{args: []string{"tx", "document", "transfer", id, "note", id, "--from", "dev", "--identity", id}, missing: "to"},
		{args: []string{"tx", "document", "transfer", id, "note", id, "--from", "dev", "--identity", id, "--to", addr}, bad: "to"},
		{args: []string{"tx", "document", "set-price", id, "note", id, "--from", "dev", "--identity", id}, missing: "price"},
		{args: []string{"tx", "document", "purchase", id, "note", id, "--from", "dev", "--identity", "x"}, bad: "identity"},
		{args: []string{"query", "address", "xyz"}, badArg: "ADDR"},
		{args: []string{"query", "identity", "xyz"}, badArg: "ID"},
		{args: []string{"query", "epoch", "x1"}, badArg: "N"},
		{args: []string{"query", "epoch", "4294967296"}, badArg: "N"},
	} {
		_, err := runCLI(t, append(tc.args, "--home", home, "--node", closed)...)
		var missing errMissingFlag
		var bad errUsage
		var badArg errBadArg
		switch {
		case tc.missing != "" && errors.As(err, &missing) && missing.Flag == tc.missing:
		case tc.bad != "" && errors.As(err, &bad) && bad.Flag == tc.bad:
		case tc.badArg != "" && errors.As(err, &badArg) && badArg.Name == tc.badArg:
		default:
			t.Errorf("ttld %s: err = %v (%T), want the flag %q%q%q refused", strings.Join(tc.args, " "), err, err, tc.missing, tc.bad, tc.badArg)
		}
	}
}

// TestUnknownSubcommandsExitNonZero: every parent command refuses an unknown or missing
// subcommand with a non-zero exit code (cobra's default is help and exit 0).
func TestUnknownSubcommandsExitNonZero(t *testing.T) {
	home := t.TempDir()
	var parents []string
	root := newRootCmd()
	for _, c := range root.Commands() {
		if c.HasSubCommands() {
			parents = append(parents, c.Name())
			for _, sub := range c.Commands() {
				if sub.HasSubCommands() {
					parents = append(parents, c.Name()+" "+sub.Name())
				}
			}
		}
	}
	if len(parents) < 5 {
		t.Fatalf("parents found: %v", parents)
	}
	for _, p := range append([]string{""}, parents...) {
		args := append(strings.Fields(p), "no-such-command", "--home", home)
		_, err := runCLI(t, args...)
		var unknown errUnknownCommand
		if p != "" && !errors.As(err, &unknown) {
			t.Errorf("ttld %s no-such-command: err = %v, want errUnknownCommand", p, err)
		}
		if code := Execute(context.Background(), args, io.Discard, io.Discard); code == 0 {
			t.Errorf("ttld %s no-such-command exits 0", p)
		}
		if p == "" {
			continue
		}
		_, err = runCLI(t, append(strings.Fields(p), "--home", home)...)
		if !errors.As(err, new(errNoSubcommand)) {
			t.Errorf("ttld %s: err = %v, want errNoSubcommand", p, err)
		}
	}
	_, err := runCLI(t, "query", "adress", "x", "--home", home)
	var unknown errUnknownCommand
	if !errors.As(err, &unknown) || len(unknown.Suggest) != 1 || unknown.Suggest[0] != "address" {
		t.Fatalf("a typo: err = %v, want a suggestion of address", err)
	}
}

// fakeRPC answers every JSON-RPC call with the error CometBFT gives for data.
func fakeRPC(t *testing.T, data string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32603,"message":"Internal error","data":"` + data + `"}}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestBroadcastErrorsPrinted: a commit that times out and a transaction already in the
// node's cache print the hash and what they mean, and exit non-zero with the client's
// typed error; neither prints a fee paid.
func TestBroadcastErrorsPrinted(t *testing.T) {
	home := t.TempDir()
	if _, err := keyring.Open(home).Add("dev"); err != nil {
		t.Fatal(err)
	}
	tx := []string{"tx", "address", "transfer", "--from", "dev", "--to", "0000000000000000000000000000000000000001", "--amount", "5", "--nonce", "1", "--chain-id", "c", "--home", home}
	for _, tc := range []struct {
		data   string
		commit bool
		status string
	}{
		{"timed out waiting for tx to be included in a block", true, txCommitTimeout},
		{"error on broadcastTxCommit: tx already exists in cache", true, txInCache},
		{"tx already exists in cache", false, txInCache},
	} {
		args := append(tx, "--node", fakeRPC(t, tc.data))
		if tc.commit {
			args = append(args, "--commit")
		}
		var out txOutput
		o, err := runCLI(t, append(args, "-o", "json")...)
		if jerr := json.Unmarshal([]byte(o), &out); jerr != nil {
			t.Fatalf("%s: %v\n%s", tc.data, jerr, o)
		}
		if out.Status != tc.status || len(out.TxHash) != 64 || out.Fee != nil || out.Committed {
			t.Errorf("%s: printed %+v", tc.data, out)
		}
		switch tc.status {
		case txCommitTimeout:
			var timeout client.ErrCommitTimeout
			if !errors.As(err, &timeout) || strings.ToUpper(hex.EncodeToString(timeout.Hash)) != out.TxHash {
				t.Errorf("%s: err = %v, want ErrCommitTimeout with the printed hash", tc.data, err)
			}
		case txInCache:
			if !errors.As(err, new(client.ErrTxInCache)) {
				t.Errorf("%s: err = %v, want ErrTxInCache", tc.data, err)
			}
		}
		text, _ := runCLI(t, args...)
		if strings.Contains(text, "fee paid") || !strings.Contains(text, out.TxHash) {
			t.Errorf("%s: text output %q", tc.data, text)
		}
		if code := Execute(context.Background(), args, io.Discard, io.Discard); code == 0 {
			t.Errorf("%s: exit 0", tc.data)
		}
	}
}

// TestSendsWithoutCommitAndFutureHeights: sends that do not wait for their block take
// consecutive nonces and print no fee; the same bytes again are "already in cache"; a
// read at a future height says so.
func TestSendsWithoutCommitAndFutureHeights(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	c := cli{t: t, env: env}
	to := "0000000000000000000000000000000000000002"
	for want := uint64(1); want <= 3; want++ {
		var out txOutput
		if err := c.json(&out, "tx", "address", "transfer", "--from", node.DevKeyName, "--to", to, "--amount", "1"); err != nil {
			t.Fatal(err)
		}
		if out.Status != txAccepted || out.Nonce != want || out.Fee != nil || out.Committed {
			t.Fatalf("send %d: %+v", want, out)
		}
	}
	text, err := c.run("tx", "address", "transfer", "--from", node.DevKeyName, "--to", to, "--amount", "1")
	if err != nil || strings.Contains(text, "fee paid") || !strings.Contains(text, "nonce: 4\n") || !strings.Contains(text, "fee: not known") {
		t.Fatalf("text send: %q %v", text, err)
	}
	// The same bytes (same nonce, amount and key: ed25519 is deterministic) again.
	_, err = c.run("tx", "address", "transfer", "--from", node.DevKeyName, "--to", to, "--amount", "1", "--nonce", "4")
	if !errors.As(err, new(client.ErrTxInCache)) {
		t.Fatalf("the same transaction again: %v, want ErrTxInCache", err)
	}
	var out txOutput
	if err := c.json(&out, "tx", "address", "transfer", "--from", node.DevKeyName, "--to", to, "--amount", "1", "--commit"); err != nil || out.Nonce != 5 || out.Fee == nil {
		t.Fatalf("a committed send after four pending: %+v %v", out, err)
	}

	_, err = c.run("query", "address", to, "--height", "1000000")
	var future client.ErrFutureHeight
	if !errors.As(err, &future) || future.Height != 1000000 || future.Latest < out.Height {
		t.Fatalf("future height: %v, want ErrFutureHeight", err)
	}
	if _, err = c.run("query", "address", to, "--height", "1000000", "--prove"); !errors.As(err, &future) || errors.As(err, new(errVerification)) {
		t.Fatalf("future height with --prove: %v, want ErrFutureHeight and no verification failure", err)
	}
}

// TestEveryKindHasATxCommand: each registered transition kind has at least one
// command under `ttld tx`, in a known group, and no two commands share a name there. A
// kind has one command, or, when its transition carries several actions, a group of
// commands of its own: documents_batch has one per action kind, and batch, which sends
// a file of them.
func TestEveryKindHasATxCommand(t *testing.T) {
	count := map[protocol.TransitionType]int{}
	groups := map[string]bool{}
	for _, g := range txGroups {
		groups[g.Name] = true
	}
	names := map[string]bool{}
	for _, c := range txCommands {
		count[c.Kind]++
		if !groups[c.Group] {
			t.Errorf("%s: unknown group %q", c.Kind, c.Group)
		}
		name := c.Group + " " + strings.Fields(c.Use)[0]
		if names[name] {
			t.Errorf("two commands are called tx %s", name)
		}
		names[name] = true
	}
	kinds := 0 // the document action kinds the protocol names
	for k := protocol.DocumentActionKind(1); !strings.HasPrefix(k.String(), "DocumentActionKind("); k++ {
		kinds++
	}
	want := map[protocol.TransitionType]int{protocol.TypeDocumentsBatch: kinds + 1} // one per action kind, and batch
	for _, k := range protocol.Kinds() {
		n, ok := want[k.Type]
		if !ok {
			n = 1
		}
		if count[k.Type] != n {
			t.Errorf("%s has %d tx commands, want %d", k.Name, count[k.Type], n)
		}
	}
}

// TestSnapshotsHelpSaysWhenTheNodeMayRun: ttld snapshots --help tells, for each
// subcommand, whether it works on a running node (list reads the snapshot folder
// alone) or needs the node stopped (export and restore open its state, whose lock a
// running node holds); TestStateSyncAndSnapshotCommands runs them both ways.
func TestSnapshotsHelpSaysWhenTheNodeMayRun(t *testing.T) {
	out, err := runCLI(t, "snapshots", "--help")
	if err != nil {
		t.Fatal(err)
	}
	_, commands, ok := strings.Cut(out, "Available Commands:\n")
	if !ok {
		t.Fatalf("no commands in:\n%s", out)
	}
	listed := map[string]string{}
	for _, line := range strings.Split(commands, "\n") {
		name, short, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || !strings.HasPrefix(line, "  ") {
			break
		}
		listed[name] = short
	}
	for name, want := range map[string]string{"list": "works on a running node", "export": "the node stopped", "restore": "the node stopped"} {
		if !strings.Contains(listed[name], want) {
			t.Errorf("ttld snapshots --help shows %s as %q, which does not say %q", name, listed[name], want)
		}
	}
	if len(listed) != 3 {
		t.Errorf("ttld snapshots --help lists %v: say for each command whether the node may run", listed)
	}
}
