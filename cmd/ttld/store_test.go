package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/node"
)

// garble overwrites one record of a CometBFT database of home with bytes that do not
// decode.
func garble(t *testing.T, home, db, key string) {
	e2e.PutRecord(t, home, db, key, []byte("\xff\xfenot a record"))
}

// TestCorruptStoresFailInOneLine: `ttld replay` and `ttld start` on a damaged store
// exit 1 with one error line naming the file (a typed error), never a panic trace.
func TestCorruptStoresFailInOneLine(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	if err := env.Node.Stop(); err != nil {
		t.Fatal(err)
	}
	copyOf := func() string { return e2e.CopyHome(t, env.Home) }
	ports := func() []string {
		return []string{"--rpc-laddr", "tcp://" + freeAddr(t), "--p2p-laddr", "tcp://" + freeAddr(t), "--prometheus-laddr", freeAddr(t), "--web-laddr", "off", "--log-level", "error"}
	}
	for _, tc := range []struct {
		name   string
		damage func(home string)
		cmd    []string
		check  func(error) bool
	}{
		{"replay, block store state", func(h string) { garble(t, h, "blockstore", "blockStore") }, []string{"replay"}, corruptFile("blockstore.db")},
		{"replay, block 1", func(h string) { garble(t, h, "blockstore", "H:1") }, []string{"replay"}, corruptFile("blockstore.db")},
		{"replay, saved state", func(h string) { garble(t, h, "state", "stateKey") }, []string{"replay"}, corruptFile("state.db")},
		{"start, block store state", func(h string) { garble(t, h, "blockstore", "blockStore") }, append([]string{"start"}, ports()...), corruptFile("blockstore.db")},
		{"start, saved state", func(h string) { garble(t, h, "state", "stateKey") }, append([]string{"start"}, ports()...), corruptFile("state.db")},
		{"start, seen commits", func(h string) {
			for _, k := range []string{"SC:1", "SC:2", "SC:3", "SC:4", "SC:5", "SC:6", "SC:7", "SC:8"} {
				garble(t, h, "blockstore", k)
			}
		}, append([]string{"start"}, ports()...), func(err error) bool { return errors.As(err, new(node.ErrCometRefused)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := copyOf()
			tc.damage(home)
			args := append(tc.cmd, "--home", home)
			if _, err := runCLI(t, args...); !tc.check(err) {
				t.Fatalf("err = %v (%T)", err, err)
			}
			var out, errOut strings.Builder
			if code := Execute(context.Background(), args, &out, &errOut); code != 1 {
				t.Fatalf("exit %d", code)
			}
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(errOut.String()), "\n") {
				if !strings.HasPrefix(l, "replay: ") || !strings.Contains(l, " blocks/s") { // progress lines
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 || strings.Contains(errOut.String(), "panic") || strings.Contains(errOut.String(), "goroutine") || out.Len() != 0 {
				t.Fatalf("stderr is not one error line:\n%s\nstdout:\n%s", errOut.String(), out.String())
			}
		})
	}
}

func corruptFile(db string) func(error) bool {
	return func(err error) bool {
		var c node.ErrCorruptStore
		return errors.As(err, &c) && filepath.Base(c.Path) == db
	}
}
