package drive

import (
	"bytes"
	"fmt"
	"math/rand"
	"sync"
	"testing"

	dbm "github.com/cosmos/cosmos-db"
)

// TestReadCacheReadsWhatTheTreeHolds drives stores with a read cache of a few values
// (evicting all the time), with the cache off, and with IAVL's fast-node index, through
// the same random writes, reads, commits and rollbacks, and checks every read of the
// working tree and of saved versions (the latest, through the cache, and older ones)
// against a plain map of each version.
func TestReadCacheReadsWhatTheTreeHolds(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	open := func(opts Options) *Store {
		opts.CacheSize = 1_000
		s, err := NewStore(dbm.NewMemDB(), opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	stores := map[string]*Store{
		"cache":      open(Options{ReadCacheSize: 8}),
		"no-cache":   open(Options{ReadCacheSize: -1}),
		"fast-nodes": open(Options{ReadCacheSize: 8, FastNodes: true}),
	}
	names := []string{"cache", "no-cache", "fast-nodes"}
	key := func() []byte { return []byte{'k', byte(rng.Intn(40))} }
	working := map[string][]byte{}
	versions := []map[string][]byte{{}} // versions[v]: the state saved as version v
	latest := func() map[string][]byte { return versions[len(versions)-1] }
	// The working tree keeps one key so that every version is a tree with a root.
	for _, s := range stores {
		if err := s.Working().Set([]byte("root"), []byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	working["root"] = []byte{1}
	check := func(step int, what string, kv func(*Store) (KV, error), want map[string][]byte, k []byte) {
		t.Helper()
		for _, name := range names {
			r, err := kv(stores[name])
			if err != nil {
				t.Fatalf("step %d, %s, %s: %v", step, name, what, err)
			}
			got, err := r.Get(k)
			if err != nil {
				t.Fatal(err)
			}
			if w := want[string(k)]; !bytes.Equal(got, w) {
				t.Fatalf("step %d, %s: %s reads %x as %x, want %x", step, name, what, k, got, w)
			}
		}
	}
	for step := range 5_000 {
		k := key()
		switch n := rng.Intn(100); {
		case n < 25:
			v := []byte(fmt.Sprint(step))
			for _, s := range stores {
				if err := s.Working().Set(k, v); err != nil {
					t.Fatal(err)
				}
			}
			working[string(k)] = v
		case n < 35:
			for _, s := range stores {
				if err := s.Working().Delete(k); err != nil {
					t.Fatal(err)
				}
			}
			delete(working, string(k))
		case n < 60:
			check(step, "the working tree", func(s *Store) (KV, error) { return s.Working(), nil }, working, k)
		case n < 80 && len(versions) > 1:
			check(step, "the latest version", func(s *Store) (KV, error) { return s.Saved(0) }, latest(), k)
		case n < 88 && len(versions) > 1:
			v := 1 + rng.Intn(len(versions)-1)
			check(step, fmt.Sprintf("version %d", v), func(s *Store) (KV, error) { return s.Saved(int64(v)) }, versions[v], k)
		case n < 96:
			for _, name := range names {
				if _, _, err := stores[name].Commit(); err != nil {
					t.Fatal(err)
				}
			}
			saved := make(map[string][]byte, len(working))
			for k, v := range working {
				saved[k] = v
			}
			versions = append(versions, saved)
		default:
			for _, s := range stores {
				s.Rollback()
			}
			working = make(map[string][]byte, len(latest()))
			for k, v := range latest() {
				working[k] = v
			}
			if len(versions) == 1 {
				working = map[string][]byte{}
			}
		}
	}
	if len(versions) < 100 {
		t.Fatalf("only %d versions saved: the test exercises too little", len(versions))
	}
}

// TestReadCacheUnderConcurrentReaders reads the latest saved version from several
// goroutines, as CheckTx and reading ahead do, while blocks write the working tree and
// commit; each reader checks every value against the version it opened. Run it with
// -race.
func TestReadCacheUnderConcurrentReaders(t *testing.T) {
	s, err := NewStore(dbm.NewMemDB(), Options{CacheSize: 1_000, ReadCacheSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	const keys, blocks = 64, 200
	value := func(k, v int) []byte { return []byte(fmt.Sprintf("%d@%d", k, v)) }
	// Version v holds key k = value(k, the last version that wrote it): block v writes
	// the keys k with k % 4 == v % 4.
	lastWrite := func(k, v int) int {
		for w := v; w >= 1; w-- {
			if k%4 == w%4 {
				return w
			}
		}
		return 1
	}
	write := func(v int) {
		for k := range keys {
			if v == 1 || k%4 == v%4 {
				if err := s.Working().Set([]byte{byte(k)}, value(k, v)); err != nil {
					t.Error(err)
				}
			}
		}
	}
	write(1)
	if _, _, err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(r)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				kv, err := s.Saved(0)
				if err != nil {
					t.Error(err)
					return
				}
				v := int(kv.(lockedKV).version)
				for range 50 {
					k := rng.Intn(keys)
					got, err := kv.Get([]byte{byte(k)})
					if err != nil {
						t.Error(err)
						return
					}
					if want := value(k, lastWrite(k, v)); !bytes.Equal(got, want) {
						t.Errorf("version %d reads key %d as %s, want %s", v, k, got, want)
						return
					}
				}
			}
		}()
	}
	for v := 2; v <= blocks; v++ {
		write(v)
		for k := range keys {
			want := value(k, lastWrite(k, v))
			if got, err := s.Working().Get([]byte{byte(k)}); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("block %d: the working tree reads key %d as %s (%v), want %s", v, k, got, err, want)
			}
		}
		if _, _, err := s.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}
