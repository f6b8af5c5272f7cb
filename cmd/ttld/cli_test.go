package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	rpchttp "github.com/cometbft/cometbft/rpc/client/http"

	"github.com/ttld-dev/ttld/e2e/ports"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// syncBuffer is a bytes.Buffer safe for a command running in another goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runCLI runs ttld in process with args and returns what it printed on stdout.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut syncBuffer
	err := runCLIContext(context.Background(), &out, &errOut, args...)
	return out.String(), err
}

func runCLIContext(ctx context.Context, out, errOut *syncBuffer, args ...string) error {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(errOut)
	return root.ExecuteContext(ctx)
}

func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	d := json.NewDecoder(strings.NewReader(s))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("output is not the expected JSON: %v\n%s", err, s)
	}
	return v
}

func TestGlobalFlagDefaultsAndChecks(t *testing.T) {
	root := newRootCmd()
	g := globalFlags(root)
	if filepath.Base(g.Home) != ".ttld" || g.Node != DefaultNode || g.Output != outputText || g.LogFormat != "" || g.LogLevel != "" {
		t.Fatalf("defaults = %+v", g)
	}
	home := t.TempDir()
	for _, tc := range []struct{ flag, value string }{
		{flagOutput, "xml"},
		{flagLogFormat, "logfmt"},
		{flagLogLevel, "loud"},
		{flagHome, ""},
	} {
		args := []string{"--home", home, "keys", "list", "--" + tc.flag, tc.value}
		_, err := runCLI(t, args...)
		var usage errUsage
		if !errors.As(err, &usage) || usage.Flag != tc.flag || usage.Value != tc.value {
			t.Errorf("--%s %q: err = %v, want errUsage", tc.flag, tc.value, err)
		}
	}
	if code := Execute(context.Background(), []string{"--home", home, "-o", "xml", "keys", "list"}, &bytes.Buffer{}, &bytes.Buffer{}); code != 1 {
		t.Fatalf("Execute of a bad flag = exit %d, want 1", code)
	}
	var out bytes.Buffer
	if code := Execute(context.Background(), []string{"--home", home, "keys", "list"}, &out, &bytes.Buffer{}); code != 0 || out.String() != "no keys\n" {
		t.Fatalf("Execute keys list = exit %d, output %q", code, out.String())
	}
}

func TestInitCommand(t *testing.T) {
	home := filepath.Join(t.TempDir(), "h")
	out, err := runCLI(t, "init", "--home", home, "--chain-id", "cli-chain", "--dev-balance", "4242", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	got := decodeJSON[initOutput](t, out)
	if got.Home != home || got.ChainID != "cli-chain" || got.DevBalance != 4242 || got.DevKey != "dev" || got.NodeID == "" {
		t.Fatalf("init JSON = %+v", got)
	}
	for _, f := range []string{got.ConfigFile, got.AppConfigFile, got.GenesisFile, got.NodeKeyFile, got.ValidatorKeyFile, got.KeyringDir} {
		if _, err := os.Stat(f); err != nil || !strings.HasPrefix(f, home) {
			t.Errorf("init reported %s: %v", f, err)
		}
	}
	dev, err := keyring.Open(home).Get("dev")
	if err != nil {
		t.Fatal(err)
	}
	if got.DevAddress != dev.Address().String() {
		t.Fatalf("dev_address %s, keyring's dev key %s", got.DevAddress, dev.Address())
	}
	gen, err := node.LoadGenesis(home)
	if err != nil {
		t.Fatal(err)
	}
	if gen.ChainID != "cli-chain" || !strings.Contains(string(gen.AppState), `"balance": 4242`) {
		t.Fatalf("genesis chain %s, app state %s", gen.ChainID, gen.AppState)
	}

	_, err = runCLI(t, "init", "--home", home)
	var already node.ErrAlreadyInitialized
	if !errors.As(err, &already) || already.Home != home || !strings.Contains(err.Error(), "--overwrite") {
		t.Fatalf("second init: err = %v, want ErrAlreadyInitialized with a hint", err)
	}

	text, err := runCLI(t, "init", "--home", home, "--overwrite", "--chain-id", "second")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`chain "second"`, got.ConfigFile, got.GenesisFile, got.KeyringDir, got.NodeKeyFile, got.ValidatorKeyFile, got.DevAddress, "1000000000000000 credits", "unencrypted"} {
		if !strings.Contains(text, want) {
			t.Errorf("init text output lacks %q:\n%s", want, text)
		}
	}
	if gen, err := node.LoadGenesis(home); err != nil || gen.ChainID != "second" {
		t.Fatalf("after --overwrite genesis chain = %v, %v", gen, err)
	}
}

func TestKeysCommands(t *testing.T) {
	home := t.TempDir()
	out, err := runCLI(t, "--home", home, "keys", "add", "alice", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	added := decodeJSON[addedKeyOutput](t, out)
	if added.Name != "alice" || !added.Created || added.KeyringDir != filepath.Join(home, keyring.Dir) || !strings.Contains(added.Warning, "unencrypted") {
		t.Fatalf("keys add JSON = %+v", added)
	}
	stored, err := keyring.Open(home).Get("alice")
	if err != nil {
		t.Fatal(err)
	}
	if added.Address != stored.Address().String() || added.PubKey != hexPub(stored) {
		t.Fatalf("keys add printed %+v, keyring holds %s", added, stored.Address())
	}

	text, err := runCLI(t, "--home", home, "keys", "add", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "WARNING:") || !strings.Contains(text, "unencrypted test keyring") || !strings.Contains(text, "name:     bob") {
		t.Fatalf("keys add text = %q", text)
	}

	_, err = runCLI(t, "--home", home, "keys", "add", "alice")
	var exists keyring.ErrExists
	if !errors.As(err, &exists) || exists.Name != "alice" {
		t.Fatalf("duplicate keys add: err = %v", err)
	}
	// --if-missing keeps the existing key, so a pasted walkthrough runs twice.
	out, err = runCLI(t, "--home", home, "keys", "add", "alice", "--if-missing", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if again := decodeJSON[addedKeyOutput](t, out); again.Created || again.Address != added.Address || again.PubKey != added.PubKey {
		t.Fatalf("keys add --if-missing of an existing key: %+v, first %+v", again, added)
	}
	out, err = runCLI(t, "--home", t.TempDir(), "keys", "add", "carol", "--if-missing", "-o", "json")
	if err != nil || !decodeJSON[addedKeyOutput](t, out).Created {
		t.Fatalf("keys add --if-missing of a new key: %q %v", out, err)
	}
	_, err = runCLI(t, "--home", home, "keys", "add", "Bad Name")
	if !errors.As(err, new(keyring.ErrInvalidName)) {
		t.Fatalf("keys add of a bad name: err = %v", err)
	}

	out, err = runCLI(t, "--home", home, "keys", "show", "alice", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	shown := decodeJSON[map[string]string](t, out)
	if shown["name"] != "alice" || shown["address"] != added.Address || shown["pubkey"] != added.PubKey || len(shown) != 3 {
		t.Fatalf("keys show JSON = %v", shown)
	}
	a, err := protocol.ParseAddress(shown["address"])
	if err != nil || a != stored.Address() {
		t.Fatalf("keys show address does not parse back: %v", err)
	}

	_, err = runCLI(t, "--home", home, "keys", "show", "carol")
	var nf keyring.ErrNotFound
	if !errors.As(err, &nf) || nf.Name != "carol" {
		t.Fatalf("keys show of a missing key: err = %v", err)
	}

	out, err = runCLI(t, "--home", home, "keys", "list", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	list := decodeJSON[[]keyOutput](t, out)
	if len(list) != 2 || list[0].Name != "alice" || list[1].Name != "bob" || list[0].Address != added.Address {
		t.Fatalf("keys list JSON = %+v", list)
	}
	text, err = runCLI(t, "--home", home, "keys", "list")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "alice ") || !strings.Contains(lines[0], added.Address) || !strings.HasPrefix(lines[1], "bob ") {
		t.Fatalf("keys list text = %q", text)
	}
}

func hexPub(k keyring.Key) string { return newKeyOutput(k).PubKey }

// freeAddr is a loopback address free a moment ago (package ports).
func freeAddr(t *testing.T) string { return ports.Addr(t) }

// TestDevnetRunsAndStops runs devnet on a new home until it has made blocks, then ends
// its context as SIGINT would and expects a clean stop.
func TestDevnetRunsAndStops(t *testing.T) {
	home := t.TempDir()
	rpc := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runCLIContext(ctx, &out, &errOut, "devnet", "--home", home, "--chain-id", "devnet-test", "--log-format", "json", "--timeout-commit", "20ms",
			"--rpc-laddr", "tcp://"+rpc, "--p2p-laddr", "tcp://"+freeAddr(t), "--prometheus-laddr", freeAddr(t), "--web-laddr", freeAddr(t))
	}()

	client, err := rpchttp.New("http://"+rpc, "/websocket")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := client.Status(context.Background())
		if err == nil && st.SyncInfo.LatestBlockHeight >= 2 {
			if st.NodeInfo.Network != "devnet-test" {
				t.Fatalf("devnet runs chain %s", st.NodeInfo.Network)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no height 2 in 20s: %v\n%s", err, errOut.String())
		}
		select {
		case err := <-done:
			t.Fatalf("devnet ended early: %v\n%s", err, errOut.String())
		case <-tick.C:
		}
	}
	// CometBFT makes blocks from its start; the web view starts after it, and the
	// node is logged started and the banner printed after that.
	for !strings.Contains(out.String(), "Try next") || !strings.Contains(errOut.String(), `"message":"node started"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no banner in 20s:\n%s\n%.500s", out.String(), errOut.String())
		}
		select {
		case err := <-done:
			t.Fatalf("devnet ended early: %v\n%s", err, errOut.String())
		case <-tick.C:
		}
	}
	dev, err := keyring.Open(home).Get("dev")
	if err != nil {
		t.Fatal(err)
	}
	banner := out.String()
	for _, want := range []string{"devnet-test", "http://" + rpc, dev.Address().String(), "Try next", "/metrics", "\n  ./bin/ttld --home "} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
	if !strings.Contains(errOut.String(), `"message":"node started"`) {
		t.Errorf("--log-format json did not give JSON logs:\n%.500s", errOut.String())
	}

	// status reads the running node: a validator alone, caught up, at a height made.
	stOut, err := runCLI(t, "status", "--node", "http://"+rpc, "-o", "json", "--fail-catching-up")
	if err != nil {
		t.Fatal(err)
	}
	st := decodeJSON[statusOutput](t, stOut)
	if st.ChainID != "devnet-test" || st.Height < 2 || len(st.AppHash) != 64 || st.CatchingUp ||
		st.VotingPower != node.ValidatorPower || len(st.Peers) != 0 || len(st.NodeID) != 40 ||
		st.Protocol.Version != uint32(protocol.Newest()) || st.Protocol.Current == nil || st.Protocol.Next != 0 {
		t.Errorf("status -o json = %+v", st)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("devnet stop: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("devnet did not stop within 15s")
	}
	if !strings.Contains(errOut.String(), `"message":"stopped"`) {
		t.Errorf("no clean stop logged:\n%s", errOut.String()[max(0, len(errOut.String())-500):])
	}
	// A clean run and stop logs no error (CometBFT's listeners closing included).
	for _, line := range strings.Split(errOut.String(), "\n") {
		if strings.Contains(line, `"level":"error"`) {
			t.Errorf("error logged in a clean run: %s", line)
		}
	}
	if _, err := client.Status(context.Background()); err == nil {
		t.Fatal("RPC still answers after devnet stopped")
	}
	// A node that does not answer: status fails and prints nothing.
	if stOut, err := runCLI(t, "status", "--node", "http://"+rpc, "--timeout", "2s"); err == nil || stOut != "" {
		t.Fatalf("status of a stopped node: %q, err %v", stOut, err)
	}
}

// TestStartStopsOnSIGTERM runs start on an initialized home and sends this process
// SIGTERM, which start's handler takes, once the chain runs.
func TestStartStopsOnSIGTERM(t *testing.T) {
	home := t.TempDir()
	if _, err := runCLI(t, "init", "--home", home, "--timeout-commit", "20ms"); err != nil {
		t.Fatal(err)
	}
	rpc := freeAddr(t)
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runCLIContext(context.Background(), &out, &errOut, "start", "--home", home,
			"--rpc-laddr", "tcp://"+rpc, "--p2p-laddr", "tcp://"+freeAddr(t), "--prometheus-laddr", freeAddr(t), "--web-laddr", freeAddr(t))
	}()
	client, err := rpchttp.New("http://"+rpc, "/websocket")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := client.Status(context.Background())
		if err == nil && st.SyncInfo.LatestBlockHeight >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no block in 20s: %v\n%s", err, errOut.String())
		}
		select {
		case err := <-done:
			t.Fatalf("start ended early: %v\n%s", err, errOut.String())
		case <-tick.C:
		}
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("start after SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("start did not stop within 15s of SIGTERM")
	}
	if !strings.Contains(errOut.String(), "stopped") {
		t.Fatalf("no clean stop logged:\n%s", errOut.String())
	}
}

func TestStartUninitializedHome(t *testing.T) {
	home := t.TempDir()
	_, err := runCLI(t, "start", "--home", home)
	var ni node.ErrNotInitialized
	if !errors.As(err, &ni) || ni.Home != home {
		t.Fatalf("start on an empty home: err = %v, want ErrNotInitialized", err)
	}
}
