package drive

import (
	"bytes"
	"errors"
	"sync"
	"testing"
)

// countingKV counts the reads that reach a KV.
type countingKV struct {
	KV
	gets int
}

func (c *countingKV) Get(key []byte) ([]byte, error) {
	c.gets++
	return c.KV.Get(key)
}

// TestMemo: a Memo reads each key of its parent once, absent ones included, answers
// as the parent does, iterates the parent, and refuses writes.
func TestMemo(t *testing.T) {
	base := NewCache(Empty())
	for _, k := range []string{"a", "b", "c"} {
		if err := base.Set([]byte(k), []byte("v"+k)); err != nil {
			t.Fatal(err)
		}
	}
	parent := &countingKV{KV: base}
	m := NewMemo(parent)
	for round := 0; round < 3; round++ {
		for _, k := range []string{"a", "b", "zz"} {
			v, err := m.Get([]byte(k))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := base.Get([]byte(k))
			if !bytes.Equal(v, want) || (want == nil) != (v == nil) {
				t.Fatalf("Get(%s) = %q, the parent has %q", k, v, want)
			}
		}
	}
	if parent.gets != 3 {
		t.Fatalf("the parent was read %d times for 3 keys", parent.gets)
	}
	var keys []string
	if err := m.Iterate(nil, nil, func(k, _ []byte) (bool, error) { keys = append(keys, string(k)); return false, nil }); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 || keys[0] != "a" || keys[2] != "c" {
		t.Fatalf("iterated %v", keys)
	}
	if err := m.Set([]byte("a"), []byte("x")); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Set: %v", err)
	}
	if err := m.Delete([]byte("a")); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Delete: %v", err)
	}
}

// TestMemoConcurrent: goroutines reading the same keys at once through a Memo all get
// the parent's values, and once every key was read the parent is read no more.
func TestMemoConcurrent(t *testing.T) {
	base := NewCache(Empty())
	var keys [][]byte
	for i := 0; i < 200; i++ {
		k := []byte{byte(i), 'k'}
		keys = append(keys, k)
		if i%3 != 0 { // every third key is absent
			if err := base.Set(k, []byte{byte(i), 'v'}); err != nil {
				t.Fatal(err)
			}
		}
	}
	parent := &lockedCountingKV{KV: base}
	m := NewMemo(parent)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for round := 0; round < 5; round++ {
				for i := range keys {
					k := keys[(i+w*31)%len(keys)]
					v, err := m.Get(k)
					if err != nil {
						t.Error(err)
						return
					}
					if want := (k[0]%3 != 0); want != (v != nil) || (want && !bytes.Equal(v, []byte{k[0], 'v'})) {
						t.Errorf("Get(%x) = %x", k, v)
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	read := parent.count()
	if read < len(keys) || read > 8*len(keys) {
		t.Fatalf("the parent was read %d times for %d keys by 8 readers", read, len(keys))
	}
	for _, k := range keys {
		if _, err := m.Get(k); err != nil {
			t.Fatal(err)
		}
	}
	if parent.count() != read {
		t.Fatalf("read again after every key was memoized: %d, then %d", read, parent.count())
	}
}

// lockedCountingKV counts the reads that reach a KV, from any goroutine; the reads
// themselves are one at a time (a Cache is not safe for concurrent use).
type lockedCountingKV struct {
	KV
	mu   sync.Mutex
	gets int
}

func (c *lockedCountingKV) Get(key []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets++
	return c.KV.Get(key)
}

func (c *lockedCountingKV) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets
}
