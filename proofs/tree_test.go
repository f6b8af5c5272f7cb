package proofs

import (
	"bytes"
	"sort"
	"testing"

	dbm "github.com/cosmos/cosmos-db"
	"github.com/cosmos/iavl"
	iavldb "github.com/cosmos/iavl/db"
)

// testTree is a saved IAVL version with the sorted key/values it holds (the "dumb"
// reference the proofs are compared with) and its root.
type testTree struct {
	tree *iavl.ImmutableTree
	root []byte
	kvs  []KV // sorted by key
}

// newVersions saves one version per write set on a fresh memdb tree and returns each
// version as a testTree, so that tests prove against saved, immutable versions that
// are not all the latest one.
func newVersions(t testing.TB, writes ...[]KV) []testTree {
	t.Helper()
	mt := iavl.NewMutableTree(iavldb.NewWrapper(dbm.NewMemDB()), 0, false, iavl.NewNopLogger())
	state := map[string][]byte{}
	var out []testTree
	for _, set := range writes {
		for _, kv := range set {
			if kv.Value == nil {
				if _, _, err := mt.Remove(kv.Key); err != nil {
					t.Fatal(err)
				}
				delete(state, string(kv.Key))
				continue
			}
			if _, err := mt.Set(kv.Key, kv.Value); err != nil {
				t.Fatal(err)
			}
			state[string(kv.Key)] = kv.Value
		}
		root, version, err := mt.SaveVersion()
		if err != nil {
			t.Fatal(err)
		}
		imm, err := mt.GetImmutable(version)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(imm.Hash(), root) {
			t.Fatalf("immutable version %d hashes to %X, SaveVersion returned %X", version, imm.Hash(), root)
		}
		kvs := make([]KV, 0, len(state))
		for k, v := range state {
			kvs = append(kvs, KV{Key: []byte(k), Value: v})
		}
		sort.Slice(kvs, func(i, j int) bool { return bytes.Compare(kvs[i].Key, kvs[j].Key) < 0 })
		out = append(out, testTree{tree: imm, root: root, kvs: kvs})
	}
	return out
}

// newTree saves the given key/values as version 1.
func newTree(t testing.TB, kvs ...KV) testTree {
	t.Helper()
	return newVersions(t, kvs)[0]
}

// kv builds a KV from strings.
func kv(k, v string) KV { return KV{Key: []byte(k), Value: []byte(v)} }

// refRange is the reference answer of a range query: the sorted slice filtered.
func (tt testTree) refRange(start, end []byte, limit int) (entries []KV, more bool) {
	for _, e := range tt.kvs {
		if bytes.Compare(e.Key, start) < 0 || (end != nil && bytes.Compare(e.Key, end) >= 0) {
			continue
		}
		if limit > 0 && len(entries) == limit {
			return entries, true
		}
		entries = append(entries, e)
	}
	return entries, false
}

func (tt testTree) get(key []byte) ([]byte, bool) {
	for _, e := range tt.kvs {
		if bytes.Equal(e.Key, key) {
			return e.Value, true
		}
	}
	return nil, false
}

func sameEntries(a, b []KV) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].Key, b[i].Key) || !bytes.Equal(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}
