package snapshot_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ttld-dev/ttld/snapshot"
)

// restoreFrom restores the snapshot at height from files into an empty store and
// returns its root.
func restoreFrom(t *testing.T, files *snapshot.Files, height int64, trusted []byte) []byte {
	t.Helper()
	m, err := files.Manifest(height)
	if err != nil {
		t.Fatal(err)
	}
	s := emptyStore(t)
	r, err := snapshot.NewRestorer(s, m, trusted)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Chunks {
		chunk, err := files.Chunk(height, uint32(i))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Apply(uint32(i), chunk); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	_, root := s.LastCommit()
	return root
}

// Snapshots on disk: written whole or not at all, listed newest first, read back into
// the same tree, pruned to the newest few; what a stopped process left half written is
// removed when the directory is opened again.
func TestFiles(t *testing.T) {
	t.Parallel()
	c := chain(t, 30)
	dir := t.TempDir()
	files, err := snapshot.OpenFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, root := c.Store.LastCommit()
	m, size, err := files.Take(c.Store, c.Height, 8<<10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Chunks) < 3 || size == 0 || !bytes.Equal(m.Root, root) {
		t.Fatalf("%d chunks, %d bytes, root %X", len(m.Chunks), size, m.Root)
	}
	if got := restoreFrom(t, files, c.Height, root); !bytes.Equal(got, root) {
		t.Fatalf("restored root %X, want %X", got, root)
	}
	again, _, err := files.Take(c.Store, c.Height, 8<<10, nil)
	if err != nil || !bytes.Equal(again.Hash(), m.Hash()) {
		t.Fatalf("taken again: %v", err)
	}
	// Stopped after the first chunk: nothing kept.
	calls := 0
	if _, _, err := files.Take(c.Store, c.Height-1, 8<<10, func() bool { calls++; return calls > 1 }); !errors.As(err, new(snapshot.ErrStopped)) {
		t.Fatalf("stopped: %v", err)
	}
	for _, h := range []int64{c.Height - 2, c.Height - 3} {
		if _, _, err := files.Take(c.Store, h, 8<<10, nil); err != nil {
			t.Fatal(err)
		}
	}
	hs, err := files.Heights()
	if err != nil || !slices.Equal(hs, []int64{c.Height, c.Height - 2, c.Height - 3}) {
		t.Fatalf("heights %v, %v", hs, err)
	}
	if _, err := files.Manifest(c.Height - 1); !errors.As(err, new(snapshot.ErrNotFound)) {
		t.Fatalf("the stopped snapshot: %v", err)
	}
	gone, err := files.Prune(2)
	if err != nil || !slices.Equal(gone, []int64{c.Height - 3}) {
		t.Fatalf("pruned %v, %v", gone, err)
	}
	if err := os.Mkdir(filepath.Join(dir, "7-123"+snapshot.PartialSuffix), 0o755); err != nil {
		t.Fatal(err)
	}
	// A reader (ttld snapshots list beside a running node) leaves it alone.
	if hs, err := snapshot.ReadFiles(dir).Heights(); err != nil || len(hs) != 2 {
		t.Fatalf("read: %v %v", hs, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Fatalf("%d entries after a read, want the 2 snapshots and the one being written", len(entries))
	}
	if files, err = snapshot.OpenFiles(dir); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("%d entries in the directory after opening it again, want the 2 snapshots", len(entries))
	}
}

// The scheduler takes a snapshot at every multiple of its interval while the chain goes
// on, keeps the newest, and each restores to the root of its height.
func TestScheduler(t *testing.T) {
	t.Parallel()
	c, g := generated(t, 0)
	files, err := snapshot.OpenFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var taken []snapshot.Taken
	s := snapshot.NewScheduler(c.Store, files, 5, 2, 8<<10, func(tk snapshot.Taken) {
		mu.Lock()
		taken = append(taken, tk)
		mu.Unlock()
	})
	roots := map[int64][]byte{}
	for range 32 {
		at, txs, err := c.NextBlock(g, 40)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Block(at, txs); err != nil {
			t.Fatal(err)
		}
		_, roots[c.Height] = c.Store.LastCommit()
		s.Committed(c.Height)
	}
	s.Wait()
	s.Close()
	var took []int64
	for _, tk := range taken {
		if tk.Height%5 != 0 || (!tk.Skipped && tk.Err != nil) {
			t.Fatalf("%+v", tk)
		}
		if !tk.Skipped {
			took = append(took, tk.Height)
		}
	}
	slices.Sort(took)
	slices.Reverse(took)
	hs, err := files.Heights()
	if err != nil || len(took) < 2 || !slices.Equal(hs, took[:2]) {
		t.Fatalf("kept %v, took %v (%v)", hs, took, err)
	}
	for _, h := range hs {
		if got := restoreFrom(t, files, h, roots[h]); !bytes.Equal(got, roots[h]) {
			t.Fatalf("height %d restored to %X, want %X", h, got, roots[h])
		}
	}
	t.Logf("took %v, kept %v", took, hs)
}

// Close, racing a commit that makes a snapshot due, either stops that snapshot before
// it returns or keeps it from starting: no snapshot runs after Close, whatever the
// order of the two.
func TestSchedulerCloseRacesCommitted(t *testing.T) {
	t.Parallel()
	c := chain(t, 1)
	files, err := snapshot.OpenFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		var closed, late, go1 atomic.Bool
		s := snapshot.NewScheduler(c.Store, files, 1, 1, 8<<10, func(snapshot.Taken) {
			if closed.Load() {
				late.Store(true)
			}
		})
		committed := make(chan struct{})
		go func() {
			defer close(committed)
			for !go1.Load() {
			}
			s.Committed(c.Height)
		}()
		go1.Store(true)
		s.Close()
		closed.Store(true)
		<-committed
		s.Wait()
		if late.Load() {
			t.Fatalf("round %d: a snapshot ran after Close returned", i)
		}
	}
}

// One snapshot operation at a time: a restore waits for the snapshot being taken to
// end; while it runs, a snapshot is not taken (the scheduler counts it skipped, with
// the reason) and a second restore does not begin; once it ends, snapshots are taken
// again.
func TestOneOperationAtATime(t *testing.T) {
	t.Parallel()
	c := chain(t, 5)
	files, err := snapshot.OpenFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A snapshot being taken, held between its first two chunks.
	between, resume := make(chan struct{}), make(chan struct{})
	took := make(chan error, 1)
	calls := 0
	go func() {
		_, _, err := files.Take(c.Store, c.Height, 4<<10, func() bool {
			if calls++; calls == 2 {
				close(between)
				<-resume
			}
			return false
		})
		took <- err
	}()
	<-between
	began := make(chan func(), 1)
	go func() {
		end, err := files.BeginRestore()
		if err != nil {
			t.Error(err)
		}
		// The snapshot is in place before the restore begins.
		if _, err := files.Manifest(c.Height); err != nil {
			t.Errorf("the restore began before the snapshot being taken ended: %v", err)
		}
		began <- end
	}()
	close(resume)
	if err := <-took; err != nil {
		t.Fatal(err)
	}
	end := <-began
	var busy snapshot.ErrBusy
	if _, _, err := files.Take(c.Store, c.Height-1, 0, nil); !errors.As(err, &busy) {
		t.Fatalf("a snapshot taken during a restore: %v", err)
	}
	if _, err := files.BeginRestore(); !errors.As(err, &busy) {
		t.Fatalf("a second restore: %v", err)
	}
	taken := make(chan snapshot.Taken, 1)
	s := snapshot.NewScheduler(c.Store, files, 1, 2, 0, func(tk snapshot.Taken) { taken <- tk })
	defer s.Close()
	s.Committed(c.Height - 1)
	if tk := <-taken; !tk.Skipped || !errors.As(tk.Err, &busy) {
		t.Fatalf("a snapshot due during a restore: %+v", tk)
	}
	end()
	s.Committed(c.Height - 1)
	if tk := <-taken; tk.Skipped || tk.Err != nil || tk.Manifest.Height != c.Height-1 {
		t.Fatalf("a snapshot due after the restore: %+v", tk)
	}
}
