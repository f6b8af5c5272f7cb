package replay

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/node"
)

// TestReplayCorruptStore: a damaged database, or a record CometBFT panics (or exits)
// on, is an ErrCorruptStore naming the database and, when it is a block's, the height.
func TestReplayCorruptStore(t *testing.T) {
	t.Parallel()
	base := runChain(t, 4)
	garbage := []byte("\xff\xfenot a record")
	for _, tc := range []struct {
		name   string
		damage func(home string)
		db     string
		height int64
	}{
		{"manifest", func(home string) {
			ms, _ := filepath.Glob(filepath.Join(home, "data", "blockstore.db", "MANIFEST-*"))
			for _, m := range ms {
				if err := os.WriteFile(m, []byte("not a manifest"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}, "blockstore.db", 0},
		{"block store state", func(home string) { e2e.PutRecord(t, home, "blockstore", "blockStore", garbage) }, "blockstore.db", 0},
		{"block meta", func(home string) { e2e.PutRecord(t, home, "blockstore", "H:2", garbage) }, "blockstore.db", 2},
		{"block part", func(home string) { e2e.PutRecord(t, home, "blockstore", "P:3:0", garbage) }, "blockstore.db", 3},
		{"saved state", func(home string) { e2e.PutRecord(t, home, "state", "stateKey", garbage) }, "state.db", 0},
		{"state manifest", func(home string) {
			ms, _ := filepath.Glob(filepath.Join(home, "data", "state.db", "MANIFEST-*"))
			for _, m := range ms {
				if err := os.Truncate(m, 3); err != nil {
					t.Fatal(err)
				}
			}
		}, "state.db", 0},
	} {
		home := e2e.CopyHome(t, base)
		tc.damage(home)
		_, err := Run(context.Background(), Options{Home: home})
		var corrupt node.ErrCorruptStore
		if !errors.As(err, &corrupt) || filepath.Base(corrupt.Path) != tc.db || corrupt.Height != tc.height {
			t.Errorf("%s: %v, want ErrCorruptStore of %s at %d", tc.name, err, tc.db, tc.height)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 400 {
			t.Errorf("%s: the error is not one short line: %q", tc.name, msg)
		}
	}
}
