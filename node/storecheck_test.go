package node

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/syndtr/goleveldb/leveldb"
)

// ranHome initialises a home with chainID, runs it to height 3 and stops it. Its
// blocks come a second apart, so that homes it runs stop at the same height: a
// damage that swaps in another chain's application state must meet a block store of
// its own height, which a pace of tests would leave to chance.
func ranHome(t *testing.T, chainID string) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if _, err := Init(InitOptions{Home: home, ChainID: chainID, DevBalance: 4242}); err != nil {
		t.Fatal(err)
	}
	n := startTest(t, home)
	n.waitHeight(t, 3)
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	return home
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

func putRecord(t *testing.T, home, db, key string) {
	t.Helper()
	ldb, err := leveldb.OpenFile(filepath.Join(home, "data", db+".db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ldb.Close()
	if err := ldb.Put([]byte(key), []byte("\xff\xfenot a record"), nil); err != nil {
		t.Fatal(err)
	}
}

// TestStartRefusesBadStores: a damaged database, a data directory or genesis of
// another chain, or an application state that does not belong with the block store
// is refused by Start with a typed error naming the file, one short line, and no
// panic escapes (CometBFT's own panics on a record are recovered).
func TestStartRefusesBadStores(t *testing.T) {
	t.Parallel()
	base := ranHome(t, "chain-a")
	other := ranHome(t, "chain-b")
	for _, tc := range []struct {
		name   string
		damage func(home string)
		check  func(err error) bool
	}{
		{"block store manifest", func(home string) {
			ms, _ := filepath.Glob(filepath.Join(home, "data", "blockstore.db", "MANIFEST-*"))
			for _, m := range ms {
				os.WriteFile(m, []byte("garbled"), 0o600)
			}
		}, corruptIn("blockstore.db")},
		{"block store state record", func(home string) { putRecord(t, home, "blockstore", "blockStore") }, corruptIn("blockstore.db")},
		{"saved state record", func(home string) { putRecord(t, home, "state", "stateKey") }, corruptIn("state.db")},
		{"seen commit record", func(home string) {
			for h := 1; h <= 50; h++ {
				putRecord(t, home, "blockstore", "SC:"+strconv.Itoa(h))
			}
		}, func(err error) bool { var r ErrCometRefused; return errors.As(err, &r) }},
		{"genesis of another chain", func(home string) {
			copyTree(t, filepath.Join(other, "config"), filepath.Join(home, "config"))
		}, genesisMismatch("chain id")},
		{"data directory of another chain", func(home string) {
			copyTree(t, filepath.Join(other, "data"), filepath.Join(home, "data"))
		}, genesisMismatch("chain id")},
		{"genesis app state edited", func(home string) {
			f := GenesisFile(home)
			b, _ := os.ReadFile(f)
			edited := strings.Replace(string(b), `"balance": 4242`, `"balance": 4243`, 1)
			if edited == string(b) {
				t.Fatal("no balance to edit in the genesis")
			}
			os.WriteFile(f, []byte(edited), 0o600)
		}, genesisMismatch("app state")},
		{"application state without its block store", func(home string) {
			os.RemoveAll(filepath.Join(home, "data", "blockstore.db"))
			os.RemoveAll(filepath.Join(home, "data", "state.db"))
		}, func(err error) bool { var d ErrStoresDisagree; return errors.As(err, &d) }},
		{"application state of another chain", func(home string) {
			copyTree(t, filepath.Join(other, "data", "application.db"), filepath.Join(home, "data", "application.db"))
		}, func(err error) bool { var d ErrStoresDisagree; return errors.As(err, &d) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			copyTree(t, base, home)
			tc.damage(home)
			n, err := Start(StartOptions{
				Home: home, Logger: NewLogger(io.Discard, true, zerolog.InfoLevel),
				RPCListen: "tcp://" + freeAddr(t), P2PListen: "tcp://" + freeAddr(t), PrometheusListen: freeAddr(t), WebListen: WebOff,
			})
			if err == nil {
				n.Stop()
				t.Fatal("started")
			}
			if !tc.check(err) {
				t.Fatalf("err = %v (%T)", err, err)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 500 {
				t.Fatalf("not one short line: %q", msg)
			}
		})
	}
}

func corruptIn(db string) func(error) bool {
	return func(err error) bool {
		var c ErrCorruptStore
		return errors.As(err, &c) && filepath.Base(c.Path) == db
	}
}

func genesisMismatch(field string) func(error) bool {
	return func(err error) bool {
		var g ErrGenesisMismatch
		return errors.As(err, &g) && g.Field == field
	}
}
