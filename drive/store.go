package drive

import (
	"errors"
	"fmt"
	"sync"

	dbm "github.com/cosmos/cosmos-db"
	"github.com/cosmos/iavl"
	idb "github.com/cosmos/iavl/db"
)

// DefaultKeepRecent is how many saved versions a store keeps for historical queries and
// proofs unless told otherwise: about a day of one-second blocks.
const DefaultKeepRecent = 100_000

// DefaultCacheSize is the IAVL node cache, in nodes.
const DefaultCacheSize = 1_000_000

// Options configure a Store.
type Options struct {
	// CacheSize is the IAVL node cache in nodes; 0 means DefaultCacheSize.
	CacheSize int
	// KeepRecent is how many recent versions are kept; older ones are pruned after
	// every commit, in the background. 0 keeps every version.
	KeepRecent int64
	// InitialVersion is the version the first commit saves (the chain's initial
	// height); 0 or 1 means 1.
	InitialVersion uint64
}

// Store is the application state: one IAVL tree. FinalizeBlock writes the working tree
// through Working; Commit saves it as a version; queries read saved versions only.
type Store struct {
	tree       *iavl.MutableTree
	keepRecent int64

	mu          sync.RWMutex // guards lastVersion and lastHash
	lastVersion int64
	lastHash    []byte
}

// ErrVersionNotKept: a query asked for a version that was pruned or never saved.
type ErrVersionNotKept struct{ Version, Latest int64 }

func (e ErrVersionNotKept) Error() string {
	return fmt.Sprintf("version %d is not kept (latest %d)", e.Version, e.Latest)
}

// NewStore loads the latest saved version of the tree in db.
func NewStore(db dbm.DB, opts Options) (*Store, error) {
	if opts.CacheSize == 0 {
		opts.CacheSize = DefaultCacheSize
	}
	iopts := []iavl.Option{iavl.AsyncPruningOption(true)}
	if opts.InitialVersion > 1 {
		iopts = append(iopts, iavl.InitialVersionOption(opts.InitialVersion))
	}
	tree := iavl.NewMutableTree(idb.NewWrapper(db), opts.CacheSize, true, iavl.NewNopLogger(), iopts...)
	version, err := tree.Load()
	if err != nil {
		return nil, fmt.Errorf("drive: load tree: %w", err)
	}
	return &Store{tree: tree, keepRecent: opts.KeepRecent, lastVersion: version, lastHash: tree.Hash()}, nil
}

// Working is the uncommitted tree that block execution writes.
func (s *Store) Working() KV { return treeKV{s.tree} }

// WorkingHash is the root hash of the working tree: the app hash FinalizeBlock returns.
func (s *Store) WorkingHash() []byte { return s.tree.WorkingHash() }

// Commit saves the working tree as the next version and prunes what falls out of the
// kept window.
func (s *Store) Commit() (version int64, hash []byte, err error) {
	hash, version, err = s.tree.SaveVersion()
	if err != nil {
		return 0, nil, fmt.Errorf("drive: save version: %w", err)
	}
	s.mu.Lock()
	s.lastVersion, s.lastHash = version, hash
	s.mu.Unlock()
	if s.keepRecent > 0 && version > s.keepRecent {
		if err := s.tree.DeleteVersionsTo(version - s.keepRecent); err != nil {
			return 0, nil, fmt.Errorf("drive: prune to %d: %w", version-s.keepRecent, err)
		}
	}
	return version, hash, nil
}

// Rollback drops the uncommitted changes of the working tree.
func (s *Store) Rollback() { s.tree.Rollback() }

// LastCommit returns the version and root hash of the last saved version (0 and the
// empty tree's hash before the first commit).
func (s *Store) LastCommit() (int64, []byte) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lastVersion, s.lastHash
}

// Saved returns saved version v read-only; v = 0 means the latest.
func (s *Store) Saved(v int64) (*iavl.ImmutableTree, error) {
	latest, _ := s.LastCommit()
	if v == 0 {
		v = latest
	}
	if v <= 0 || v > latest || !s.tree.VersionExists(v) {
		return nil, ErrVersionNotKept{Version: v, Latest: latest}
	}
	t, err := s.tree.GetImmutable(v)
	if err != nil {
		return nil, fmt.Errorf("drive: version %d: %w", v, err)
	}
	return t, nil
}

// Close releases the tree's background work; the caller closes the database.
func (s *Store) Close() error { return s.tree.Close() }

type treeKV struct{ t *iavl.MutableTree }

func (k treeKV) Get(key []byte) ([]byte, error) { return k.t.Get(key) }
func (k treeKV) Set(key, value []byte) error {
	if len(value) == 0 {
		return ErrEmptyValue
	}
	_, err := k.t.Set(key, value)
	return err
}
func (k treeKV) Delete(key []byte) error {
	_, _, err := k.t.Remove(key)
	return err
}
func (k treeKV) Iterate(start, end []byte, fn func(key, value []byte) (bool, error)) error {
	it, err := k.t.Iterator(start, end, true)
	if err != nil {
		return err
	}
	return drain(it, fn)
}

// ReadOnly adapts a saved version to KV for reads; its writes fail. CheckTx stages
// over it with a Cache.
func ReadOnly(t *iavl.ImmutableTree) KV { return immutableKV{t} }

// ErrReadOnly: a write reached a saved version.
var ErrReadOnly = errors.New("drive: saved versions are read-only")

// Empty is a KV with no keys whose writes fail: the parent of a Cache that must hold
// a whole state by itself (the check state before the first commit).
func Empty() KV { return emptyKV{} }

type emptyKV struct{}

func (emptyKV) Get([]byte) ([]byte, error)                                         { return nil, nil }
func (emptyKV) Set([]byte, []byte) error                                           { return ErrReadOnly }
func (emptyKV) Delete([]byte) error                                                { return ErrReadOnly }
func (emptyKV) Iterate(_, _ []byte, _ func(key, value []byte) (bool, error)) error { return nil }

type immutableKV struct{ t *iavl.ImmutableTree }

func (k immutableKV) Get(key []byte) ([]byte, error) { return k.t.Get(key) }
func (k immutableKV) Set([]byte, []byte) error       { return ErrReadOnly }
func (k immutableKV) Delete([]byte) error            { return ErrReadOnly }
func (k immutableKV) Iterate(start, end []byte, fn func(key, value []byte) (bool, error)) error {
	it, err := k.t.Iterator(start, end, true)
	if err != nil {
		return err
	}
	return drain(it, fn)
}

func drain(it dbm.Iterator, fn func(key, value []byte) (bool, error)) error {
	defer it.Close()
	for ; it.Valid(); it.Next() {
		stop, err := fn(it.Key(), it.Value())
		if err != nil || stop {
			return err
		}
	}
	return it.Error()
}
