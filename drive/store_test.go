package drive

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"sync/atomic"
	"testing"

	dbm "github.com/cosmos/cosmos-db"
	"github.com/cosmos/iavl"
	idb "github.com/cosmos/iavl/db"

	"github.com/ttld-dev/ttld/protocol"
)

func newTestStore(t testing.TB, keep int64) (*Store, dbm.DB) {
	t.Helper()
	db := dbm.NewMemDB()
	s, err := NewStore(db, Options{CacheSize: 10_000, KeepRecent: keep})
	if err != nil {
		t.Fatal(err)
	}
	return s, db
}

// TestCacheMatchesReference drives a Cache over the working tree and a plain sorted map
// with the same random operations and compares every read and every iteration.
func TestCacheMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	s, _ := newTestStore(t, 0)
	ref := map[string]string{}
	key := func() []byte { return []byte{byte('a' + rng.Intn(20))} }
	for i := 0; i < 10; i++ {
		k := key()
		if err := s.Working().Set(k, []byte{byte(i + 1)}); err != nil {
			t.Fatal(err)
		}
		ref[string(k)] = string([]byte{byte(i + 1)})
	}
	c := NewCache(s.Working())
	for step := 0; step < 2000; step++ {
		k := key()
		switch rng.Intn(4) {
		case 0:
			v := []byte(fmt.Sprint(step))
			if err := c.Set(k, v); err != nil {
				t.Fatal(err)
			}
			ref[string(k)] = string(v)
		case 1:
			if err := c.Delete(k); err != nil {
				t.Fatal(err)
			}
			delete(ref, string(k))
		case 2:
			got, err := c.Get(k)
			if err != nil {
				t.Fatal(err)
			}
			want, ok := ref[string(k)]
			if ok != (got != nil) || string(got) != want {
				t.Fatalf("step %d: Get(%s) = %q, want %q", step, k, got, want)
			}
		case 3:
			start, end := key(), key()
			if bytes.Compare(start, end) > 0 {
				start, end = end, start
			}
			var got []string
			stopAt := rng.Intn(6)
			err := c.Iterate(start, end, func(k, v []byte) (bool, error) {
				got = append(got, string(k)+"="+string(v))
				return len(got) == stopAt, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for rk, rv := range ref {
				if rk >= string(start) && rk < string(end) {
					want = append(want, rk+"="+rv)
				}
			}
			sort.Strings(want)
			if stopAt > 0 && len(want) > stopAt {
				want = want[:stopAt]
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("step %d: Iterate(%s, %s) = %v, want %v", step, start, end, got, want)
			}
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	for k, v := range ref {
		got, _ := s.Working().Get([]byte(k))
		if string(got) != v {
			t.Fatalf("after flush %s = %q, want %q", k, got, v)
		}
	}
}

// TestCacheDiscardChangesNothing: a discarded cache leaves the tree's hash as it was.
func TestCacheDiscardChangesNothing(t *testing.T) {
	s, _ := newTestStore(t, 0)
	_ = s.Working().Set([]byte("k"), []byte("v"))
	before := workingHash(t, s)
	c := NewCache(s.Working())
	_ = c.Set([]byte("x"), []byte("y"))
	_ = c.Delete([]byte("k"))
	c.Discard()
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, workingHash(t, s)) {
		t.Fatal("discarded writes reached the tree")
	}
}

// TestStoreUnchanged: the working tree is unchanged once a version is saved and again
// after a rollback, never before the first commit, and a write changes it.
func TestStoreUnchanged(t *testing.T) {
	s, _ := newTestStore(t, 0)
	if s.Unchanged() {
		t.Fatal("unchanged before the first commit")
	}
	_ = s.Working().Set([]byte("k"), []byte("v"))
	if s.Unchanged() {
		t.Fatal("unchanged with the genesis writes staged")
	}
	if _, _, err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if !s.Unchanged() {
		t.Fatal("changed right after a commit")
	}
	_ = s.Working().Set([]byte("k"), []byte("w"))
	if s.Unchanged() {
		t.Fatal("unchanged with a write staged")
	}
	s.Rollback()
	if !s.Unchanged() {
		t.Fatal("changed after a rollback")
	}
}

// TestCacheFlushKeepsTheRoot: random writes made through a Cache and flushed give the
// working tree the root the same writes give it made directly, deletions of keys
// written before and keys written twice included: a block executed on a branch and
// flushed commits to the app hash it would have executed to on the tree.
func TestCacheFlushKeepsTheRoot(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	direct, _ := newTestStore(t, 0)
	branched, _ := newTestStore(t, 0)
	for i := 0; i < 200; i++ {
		k, v := []byte(fmt.Sprint("base", i)), []byte{byte(i + 1)}
		_ = direct.Working().Set(k, v)
		_ = branched.Working().Set(k, v)
	}
	c := NewCache(branched.Working())
	for step := 0; step < 3000; step++ {
		k := []byte(fmt.Sprint("base", rng.Intn(400)))
		if rng.Intn(3) == 0 {
			_ = direct.Working().Delete(k)
			_ = c.Delete(k)
			continue
		}
		v := []byte(fmt.Sprint(step))
		_ = direct.Working().Set(k, v)
		_ = c.Set(k, v)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if d, b := workingHash(t, direct), workingHash(t, branched); !bytes.Equal(d, b) {
		t.Fatalf("flushed root %X, direct %X", b, d)
	}
}

// workingHash is s's working root.
func workingHash(t testing.TB, s *Store) []byte {
	t.Helper()
	h, err := s.WorkingHash()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestStoreVersionsAndPruning: commits save versions; queries read saved versions only;
// versions outside the kept window are refused.
func TestStoreVersionsAndPruning(t *testing.T) {
	s, db := newTestStore(t, 3)
	var hashes [][]byte
	for v := 1; v <= 8; v++ {
		if err := s.Working().Set([]byte("k"), []byte{byte(v)}); err != nil {
			t.Fatal(err)
		}
		version, hash, err := s.Commit()
		if err != nil || version != int64(v) {
			t.Fatalf("commit %d: %d %v", v, version, err)
		}
		hashes = append(hashes, hash)
	}
	// The working tree changes; saved versions do not.
	_ = s.Working().Set([]byte("k"), []byte{99})
	latest, err := s.Saved(0)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := latest.Get([]byte("k")); !bytes.Equal(v, []byte{8}) {
		t.Fatalf("latest saved = %v", v)
	}
	if _, err := s.Saved(9); err == nil {
		t.Fatal("an unsaved version answered")
	}
	// Reopen: the store reports the last saved version and its hash.
	s.Rollback()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := NewStore(db, Options{KeepRecent: 3})
	if err != nil {
		t.Fatal(err)
	}
	v, h := s2.LastCommit()
	if v != 8 || !bytes.Equal(h, hashes[7]) {
		t.Fatalf("reopened at %d %x, want 8 %x", v, h, hashes[7])
	}
	if old, err := s2.Saved(7); err != nil {
		t.Fatalf("version 7 should be kept: %v", err)
	} else if got, _ := old.Get([]byte("k")); !bytes.Equal(got, []byte{7}) {
		t.Fatalf("version 7 reads %v", got)
	}
}

// TestAddressBalanceRecords: block records merge into one compacted record that
// expires, and the cleanup removes at most its bound per call.
func TestAddressBalanceRecords(t *testing.T) {
	s, _ := newTestStore(t, 0)
	kv := s.Working()
	a1, a2 := protocol.Address{1}, protocol.Address{2}
	if err := RecordBlockChanges(kv, 5, []BalanceChange{{a1, 10}, {a2, 20}}); err != nil {
		t.Fatal(err)
	}
	if err := RecordBlockChanges(kv, 6, []BalanceChange{{a1, 11}}); err != nil {
		t.Fatal(err)
	}
	pending, err := PendingBlockChanges(kv)
	if err != nil || len(pending) != 2 || pending[0].Height != 5 {
		t.Fatalf("pending %+v %v", pending, err)
	}
	if err := CompactBlockChanges(kv, pending, 1000); err != nil {
		t.Fatal(err)
	}
	if p, _ := PendingBlockChanges(kv); len(p) != 0 {
		t.Fatalf("block records left after compaction: %+v", p)
	}
	v, _ := kv.Get(CompactedChangesKey(5, 6))
	merged, err := DecodeBalanceChanges(v)
	if err != nil || fmt.Sprint(merged) != fmt.Sprint([]BalanceChange{{a1, 11}, {a2, 20}}) {
		t.Fatalf("merged %+v %v", merged, err)
	}
	for i := uint64(0); i < 3; i++ {
		_ = RecordBlockChanges(kv, 10+i, []BalanceChange{{a1, i}})
		p, _ := PendingBlockChanges(kv)
		_ = CompactBlockChanges(kv, p, 2000+i)
	}
	budget := Budget{MaxCount: 2, MaxWeight: 2}
	if st, _ := Drain(kv, AddressBalanceCleanup, 999, budget); st != (DrainStats{}) {
		t.Fatalf("drained %+v before expiry", st)
	}
	// At 2001 three records are due (expiring at 1000, 2000, 2001): two go, the one of
	// 2001 is left, due for 0 ms.
	if st, _ := Drain(kv, AddressBalanceCleanup, 2001, budget); st != (DrainStats{Removed: 2, WeightUsed: 2, Backlog: 1}) {
		t.Fatalf("drained %+v, want the bound of 2 and a backlog of 1", st)
	}
	if st, _ := Drain(kv, AddressBalanceCleanup, 2001, budget); st != (DrainStats{Removed: 1, WeightUsed: 1}) {
		t.Fatalf("drained %+v, want the last expired one", st)
	}
	if v, _ := kv.Get(CompactedChangesKey(12, 12)); v == nil {
		t.Fatal("an unexpired record was removed")
	}
	if v, _ := kv.Get(CompactedChangesKey(5, 6)); v != nil {
		t.Fatal("an expired record is still there")
	}
}

func TestDecodeBalanceChangesRefusesBadBytes(t *testing.T) {
	good := EncodeBalanceChanges([]BalanceChange{{protocol.Address{1}, 1}, {protocol.Address{2}, 2}})
	bad := [][]byte{nil, {0, 0}, good[:len(good)-1], append(append([]byte(nil), good...), 0),
		EncodeBalanceChanges([]BalanceChange{{protocol.Address{2}, 1}, {protocol.Address{1}, 2}})}
	for i, b := range bad {
		if _, err := DecodeBalanceChanges(b); err == nil {
			t.Errorf("case %d decoded", i)
		}
	}
}

// TestDrainBudget: the count and weight limits, the first removal always allowed
// whatever it weighs, the backlog and the age of the oldest entry left.
func TestDrainBudget(t *testing.T) {
	s, _ := newTestStore(t, 0)
	kv := s.Working()
	prefix := []byte{RootMisc, 'T'}
	weights := map[string]uint64{}
	var removed []uint64
	idx := ExpiryIndex{
		Prefix: prefix,
		Weigh:  func(_ KV, k, _ []byte) (uint64, error) { return weights[string(k)], nil },
		Remove: func(kv KV, k, _ []byte) error {
			removed = append(removed, binary.BigEndian.Uint64(k[len(prefix):]))
			return kv.Delete(k)
		},
	}
	// Entries expiring at 10, 20, ..., 60 ms, weighing 5, 1, 1, 3, 1, 1.
	for i, w := range []uint64{5, 1, 1, 3, 1, 1} {
		k := binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), uint64(10*(i+1)))
		weights[string(k)] = w
		if err := kv.Set(k, []byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		now    uint64
		budget Budget
		want   DrainStats
		gone   []uint64
	}{
		// The first entry weighs 5, over the budget of 2: it goes all the same, alone.
		{100, Budget{MaxCount: 10, MaxWeight: 2}, DrainStats{Removed: 1, WeightUsed: 5, Backlog: 5, OldestOverdueMs: 80}, []uint64{10}},
		// Weight 2: 20 and 30 (1 each); 40 weighs 3 and waits.
		{100, Budget{MaxCount: 10, MaxWeight: 2}, DrainStats{Removed: 2, WeightUsed: 2, Backlog: 3, OldestOverdueMs: 60}, []uint64{20, 30}},
		// Count 1 at time 45: only 40 is due.
		{45, Budget{MaxCount: 1, MaxWeight: 100}, DrainStats{Removed: 1, WeightUsed: 3}, []uint64{40}},
		{100, Budget{MaxCount: 10, MaxWeight: 100}, DrainStats{Removed: 2, WeightUsed: 2}, []uint64{50, 60}},
		{100, Budget{MaxCount: 10, MaxWeight: 100}, DrainStats{}, nil},
	}
	for i, c := range cases {
		removed = nil
		st, err := Drain(kv, idx, c.now, c.budget)
		if err != nil || st != c.want || fmt.Sprint(removed) != fmt.Sprint(c.gone) {
			t.Fatalf("case %d: %+v removed %v (%v), want %+v removed %v", i, st, removed, err, c.want, c.gone)
		}
	}
}

// TestBatchLetsReadersIn: while a Batch rewrites every key of the working tree, readers
// of the saved version read on other goroutines (the race detector watches the tree's
// shared nodes), always see the saved values, and get in between the Batch's slices of
// DefaultWriteSlice writes: the writer does not hold the lock for the whole batch.
func TestBatchLetsReadersIn(t *testing.T) {
	s, _ := newTestStore(t, 0)
	const keys = 20 * DefaultWriteSlice
	key := func(i int) []byte { return binary.BigEndian.AppendUint32([]byte("k"), uint32(i)) }
	for i := 0; i < keys; i++ {
		if err := s.Working().Set(key(i), []byte("saved")); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	saved, err := s.Saved(0)
	if err != nil {
		t.Fatal(err)
	}
	written := make(chan int64, keys) // how many writes the Batch had made when a read ended
	var writes atomic.Int64
	done := make(chan struct{})
	errs := make(chan error, 2)
	for r := 0; r < 2; r++ {
		go func(r int) {
			for i := r; ; i = (i + 7) % keys {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				v, err := saved.Get(key(i))
				if err != nil || string(v) != "saved" {
					errs <- fmt.Errorf("saved key %d = %q, %v", i, v, err)
					return
				}
				select {
				case written <- writes.Load():
				default:
				}
			}
		}(r)
	}
	err = s.Batch(func() error {
		for i := 0; i < keys; i++ {
			if err := s.Working().Set(key(i), []byte("new")); err != nil {
				return err
			}
			writes.Add(1)
		}
		return nil
	})
	close(done)
	for r := 0; r < 2; r++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	close(written)
	inside := false
	for w := range written {
		inside = inside || (w > 0 && w < keys)
	}
	if !inside {
		t.Fatal("no read ended while the Batch was writing")
	}
	if v, _ := s.Working().Get(key(keys - 1)); string(v) != "new" {
		t.Fatalf("working tree: %q after the Batch", v)
	}
}

// TestKeptBackUpdatesKeepTheRoot drives the store's working tree, which keeps back the
// repeated updates of a key (treeKV, Store.settle), and a bare IAVL tree written at
// every operation, with the same random blocks: inserts, updates of keys written
// earlier in the block or not, removals and re-inserts over 48 keys. Every read and
// iteration of the working tree must give the bare tree's values, and every block's
// root, before and after its commit, the bare tree's; a block rolled back must leave
// the last saved version.
func TestKeptBackUpdatesKeepTheRoot(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	s, _ := newTestStore(t, 0)
	bare := iavl.NewMutableTree(idb.NewWrapper(dbm.NewMemDB()), 10_000, true, iavl.NewNopLogger())
	kv := s.Working()
	key := func() []byte { return []byte(fmt.Sprintf("k%02d", rng.Intn(48))) }
	for block := range 300 {
		for range rng.Intn(60) {
			k := key()
			switch r := rng.Intn(10); {
			case r < 6:
				v := []byte(fmt.Sprint(rng.Int63()))
				if err := kv.Set(k, v); err != nil {
					t.Fatal(err)
				}
				if _, err := bare.Set(k, v); err != nil {
					t.Fatal(err)
				}
			case r < 8:
				if err := kv.Delete(k); err != nil {
					t.Fatal(err)
				}
				if _, _, err := bare.Remove(k); err != nil {
					t.Fatal(err)
				}
			case r < 9:
				got, err := kv.Get(k)
				want, _ := bare.Get(k)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("block %d: %s = %q (%v), the bare tree's %q", block, k, got, err, want)
				}
			default:
				var got, want []string
				_ = kv.Iterate([]byte("k1"), []byte("k4"), func(k, v []byte) (bool, error) {
					got = append(got, string(k)+"="+string(v))
					return false, nil
				})
				bare.IterateRange([]byte("k1"), []byte("k4"), true, func(k, v []byte) bool {
					want = append(want, string(k)+"="+string(v))
					return false
				})
				if !slices.Equal(got, want) {
					t.Fatalf("block %d: the range reads %v, the bare tree's %v", block, got, want)
				}
			}
		}
		if rng.Intn(8) == 0 {
			s.Rollback()
			bare.Rollback()
			if got, want := workingHash(t, s), bare.WorkingHash(); !bytes.Equal(got, want) {
				t.Fatalf("block %d rolled back: root %X, the bare tree's %X", block, got, want)
			}
			continue
		}
		if got, want := workingHash(t, s), bare.WorkingHash(); !bytes.Equal(got, want) {
			t.Fatalf("block %d: working root %X, the bare tree's %X", block, got, want)
		}
		_, got, err := s.Commit()
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := bare.SaveVersion()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("block %d: saved root %X, the bare tree's %X (%v)", block, got, want, err)
		}
	}
}

// countingDB counts the reads that reach the database: IAVL's node loads that its node
// cache did not serve.
type countingDB struct {
	dbm.DB
	gets atomic.Int64
}

func (d *countingDB) Get(key []byte) ([]byte, error) {
	d.gets.Add(1)
	return d.DB.Get(key)
}

// TestReadWritePathWarmsTheRemoval: after ReadWritePath of a saved key, the working
// tree's removal of it finds its path and the siblings on it in IAVL's node cache; after
// a read of the key, it loads the siblings from the database. Each side starts from the
// store reopened (its cache cold) and removes the same keys, to the same root.
func TestReadWritePathWarmsTheRemoval(t *testing.T) {
	db := &countingDB{DB: dbm.NewMemDB()}
	const n, removed = 20_000, 64
	key := func(i int) []byte { // spread over the tree as the state's hashed keys are
		h := sha256.Sum256(binary.BigEndian.AppendUint32(nil, uint32(i)))
		return h[:]
	}
	s, err := NewStore(db, Options{CacheSize: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for i := range n {
		if err := s.Working().Set(key(i), []byte("value")); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	var roots [2][]byte
	var loads [2]int64
	for side, read := range []func(KV, []byte) error{
		func(kv KV, k []byte) error { _, err := kv.Get(k); return err },
		ReadWritePath,
	} {
		s.Close()
		if s, err = NewStore(db, Options{CacheSize: 10_000}); err != nil {
			t.Fatal(err)
		}
		saved, err := s.Saved(0)
		if err != nil {
			t.Fatal(err)
		}
		for i := range removed {
			if err := read(saved, key(i*n/removed)); err != nil {
				t.Fatal(err)
			}
		}
		before := db.gets.Load()
		for i := range removed {
			if err := s.Working().Delete(key(i * n / removed)); err != nil {
				t.Fatal(err)
			}
		}
		loads[side] = db.gets.Load() - before
		roots[side] = workingHash(t, s)
	}
	t.Logf("node loads of %d removals: %d after reading the keys, %d after reading their write paths", removed, loads[0], loads[1])
	if !bytes.Equal(roots[0], roots[1]) {
		t.Fatalf("the removals end at %X and %X", roots[0], roots[1])
	}
	// What is left after the paths are read are the rotations, which load the children
	// of a sibling.
	if loads[0] < 4*removed || loads[1] > removed {
		t.Fatalf("removals loaded %d nodes after reading the keys, %d after reading their paths: want at least %d and at most %d", loads[0], loads[1], 4*removed, removed)
	}
	if err := ReadWritePath(s.Working(), key(0)); err != nil {
		t.Fatalf("a read of the working tree: %v", err)
	}
	saved, err := s.Saved(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := ReadWritePath(saved, []byte("absent")); err != nil {
		t.Fatalf("the path of a key not stored: %v", err)
	}
}
