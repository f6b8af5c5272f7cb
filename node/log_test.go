package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// levels decodes JSON log lines into their levels by message.
func levels(t *testing.T, out string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", l, err)
		}
		got[fmt.Sprint(m["message"])] = fmt.Sprint(m["level"])
	}
	return got
}

// The listeners' closing is an error while the node runs, and a debug line once it is
// stopping; any other error stays an error.
func TestNodeCometLoggerQuietsClosedListenersOnStop(t *testing.T) {
	closed := &net.OpError{Op: "accept", Net: "tcp", Err: net.ErrClosed}
	logAll := func(l interface {
		Error(string, ...any)
	}) {
		l.Error("Stopped accept routine, as transport is closed", "numPeers", 0)
		l.Error("Error serving server", "err", closed)
		l.Error("Error serving server with TLS", "err", errors.New("tls: bad certificate"))
		l.Error("Accept on transport errored", "err", closed)
	}
	var stopping atomic.Bool
	var running, stopped strings.Builder
	logAll(nodeCometLogger(NewLogger(&running, true, zerolog.DebugLevel), &stopping, nil).With("module", "p2p"))
	stopping.Store(true)
	logAll(nodeCometLogger(NewLogger(&stopped, true, zerolog.DebugLevel), &stopping, nil).With("module", "p2p"))

	for msg, want := range map[string][2]string{
		"Stopped accept routine, as transport is closed": {"error", "debug"},
		"Error serving server":                           {"error", "debug"},
		"Error serving server with TLS":                  {"error", "error"},
		"Accept on transport errored":                    {"error", "error"},
	} {
		if got := [2]string{levels(t, running.String())[msg], levels(t, stopped.String())[msg]}; got != want {
			t.Errorf("%q logged at %v (running, stopping), want %v", msg, got, want)
		}
	}
	var quiet strings.Builder
	nodeCometLogger(NewLogger(&quiet, true, zerolog.InfoLevel), &stopping, nil).Error("Error serving server", "err", closed)
	if quiet.Len() != 0 {
		t.Errorf("a clean stop's listener error shows at level info: %s", quiet.String())
	}
}

// Once the application halted the node (the chain moved past this binary, which it logs
// in one line), CometBFT's errors about the halted block are debug lines, through every
// logger derived with With.
func TestNodeCometLoggerQuietsAfterAHalt(t *testing.T) {
	var halted atomic.Bool
	var before, after strings.Builder
	nodeCometLogger(NewLogger(&before, true, zerolog.DebugLevel), nil, &halted).With("module", "consensus").Error("error in proxyAppConn.FinalizeBlock", "err", "x")
	halted.Store(true)
	nodeCometLogger(NewLogger(&after, true, zerolog.DebugLevel), nil, &halted).With("module", "consensus").With("height", 7).Error("error in proxyAppConn.FinalizeBlock", "err", "x")
	if got := [2]string{levels(t, before.String())["error in proxyAppConn.FinalizeBlock"], levels(t, after.String())["error in proxyAppConn.FinalizeBlock"]}; got != [2]string{"error", "debug"} {
		t.Errorf("logged at %v (before, after the halt), want [error debug]", got)
	}
}

// Timestamps carry the date and milliseconds, in JSON and on the console.
func TestLogTimestamps(t *testing.T) {
	var js, console strings.Builder
	jl, cl := NewLogger(&js, true, zerolog.InfoLevel), NewLogger(&console, false, zerolog.InfoLevel)
	jl.Info().Msg("x")
	cl.Info().Msg("x")
	var m struct{ Time string }
	if err := json.Unmarshal([]byte(js.String()), &m); err != nil {
		t.Fatal(err)
	}
	ts, err := time.Parse(LogTimeFormat, m.Time)
	if err != nil || !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}`).MatchString(m.Time) || time.Since(ts) > time.Minute {
		t.Errorf("JSON time %q: %v", m.Time, err)
	}
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} `).MatchString(console.String()) {
		t.Errorf("console line %q has no date and milliseconds", console.String())
	}
}

// config.toml's log keys are not read: a home that sets them is told so at start.
func TestWarnIgnoredLogSettings(t *testing.T) {
	for _, c := range []struct {
		level, format string
		warned        bool
	}{
		{"info", "plain", false},
		{"consensus:debug,*:info", "plain", true},
		{"info", "json", true},
	} {
		cfg := DefaultConfig(t.TempDir(), "n")
		cfg.LogLevel, cfg.LogFormat = c.level, c.format
		var buf strings.Builder
		warnIgnoredLogSettings(cfg, NewLogger(&buf, true, zerolog.InfoLevel))
		if got := strings.Contains(buf.String(), `"level":"warn"`); got != c.warned {
			t.Errorf("config.toml log_level %q, log_format %q: warned %t, want %t", c.level, c.format, got, c.warned)
		}
	}
}

// CometBFT's one info line for every websocket RPC call is logged at debug; its other
// info lines stay at info.
func TestCometLoggerPerRequestAtDebug(t *testing.T) {
	var out strings.Builder
	l := CometLogger(NewLogger(&out, true, zerolog.DebugLevel)).With("module", "rpc-server")
	l.Info("WSJSONRPC", "method", "broadcast_tx_sync")
	l.Info("Starting RPC HTTP server on 127.0.0.1:26657")
	got := levels(t, out.String())
	if got["WSJSONRPC"] != "debug" || got["Starting RPC HTTP server on 127.0.0.1:26657"] != "info" {
		t.Fatalf("levels %v", got)
	}
	var quiet strings.Builder
	CometLogger(NewLogger(&quiet, true, zerolog.InfoLevel)).Info("WSJSONRPC", "method", "broadcast_tx_sync")
	if quiet.Len() != 0 {
		t.Fatalf("a websocket call shows at level info: %s", quiet.String())
	}
}
