package sim

import (
	"bytes"
	"testing"
	"time"

	dbm "github.com/cosmos/cosmos-db"
)

type recordedBlock struct {
	at  time.Time
	txs [][]byte
}

// TestCrashBetweenWrites kills the application between the writes of a Commit, at every
// write from the commit of crashHeight on in turn, reopens the store as a restarted node does,
// replays from the height Info reports (what CometBFT's handshake does) and must reach
// the reference app hash at every height.
func TestCrashBetweenWrites(t *testing.T) {
	t.Parallel()
	const seed, blocks, crashHeight = 9, 40, 30
	want, err := Run(Config{Seed: seed, Blocks: blocks})
	if err != nil {
		t.Fatal(err)
	}
	crashes := 0
	for point := 0; ; point++ {
		mem := dbm.NewMemDB()
		cdb := NewCrashDB(mem)
		c, err := Open(cdb)
		if err != nil {
			t.Fatal(err)
		}
		g := NewGenerator(seed, 20)
		if _, err := c.InitChain(g.Genesis(), g.Validators()...); err != nil {
			t.Fatal(err)
		}
		recorded := map[int64]recordedBlock{}
		crashed := false
		for c.Height < blocks {
			h := c.Height + 1
			b, ok := recorded[h]
			if !ok {
				at, txs, err := c.NextBlock(g, 40)
				if err != nil {
					t.Fatal(err)
				}
				b = recordedBlock{at, txs}
				recorded[h] = b
			}
			fb, err := c.Finalize(b.at, b.txs)
			if err != nil {
				t.Fatal(err)
			}
			if h == crashHeight && !crashed {
				cdb.CrashAfter(point)
			}
			err = c.Commit(fb)
			if cdb.Crashed() && !crashed {
				// The process died somewhere in this commit: reopen what landed.
				crashed = true
				_ = c.Close()
				if c, err = Open(mem, g.Validators()...); err != nil {
					t.Fatalf("crash point %d: reopen: %v", point, err)
				}
				// The crash may land in this commit or, with fewer writes than the
				// point, in a later one (or in the background pruning): Info reports
				// the last version that was saved whole.
				if c.Height != h-1 && c.Height != h {
					t.Fatalf("crash point %d: Info reports %d after a crash in commit %d", point, c.Height, h)
				}
				continue
			}
			if err != nil {
				t.Fatalf("crash point %d: height %d: %v", point, h, err)
			}
			if !bytes.Equal(fb.AppHash, want.AppHashes[h]) {
				t.Fatalf("crash point %d: height %d: app hash %X, reference %X", point, h, fb.AppHash, want.AppHashes[h])
			}
		}
		_ = c.Close()
		if !crashed {
			// The commit made fewer writes than point: every crash point was tried.
			break
		}
		crashes++
	}
	if crashes == 0 {
		t.Fatal("no crash point was reached")
	}
	t.Logf("recovered from %d crash points, from the commit of height %d on", crashes, crashHeight)
}
