package drive

import (
	"bytes"
	"errors"
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
