//go:build !js

package drive

import (
	"bytes"
	"fmt"
	"math"
	"slices"
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
	// WriteSlice is how many writes of the working tree a Batch makes under one hold
	// of the readers' lock; 0 means DefaultWriteSlice, 1 takes it for every write.
	WriteSlice int
}

// Store is the application state: one IAVL tree. FinalizeBlock writes the working tree
// through Working; Commit saves it as a version; queries and the check state read saved
// versions only, through Saved and View, from other goroutines.
//
// NB: IAVL v1 is not safe for reading a saved version while the working tree changes:
// a write clones shared nodes and clears their child pointers in place, which readers of
// saved versions follow (the race detector shows it). treeMu makes every write of the
// tree exclusive and every read of a saved version shared, one operation at a time, so
// queries and CheckTx wait for single writes, never for whole blocks. A block's writes
// run in a Batch, which takes treeMu once for writeSlice writes instead of once for
// each: while CheckTx reads on every core, a writer that waited for the readers at
// every write spent most of a block waiting.
type Store struct {
	db         dbm.DB
	opts       Options
	tree       *iavl.MutableTree
	keepRecent int64
	treeMu     *sync.RWMutex
	writeSlice int
	// batch is set while the writer runs a Batch; sliced counts the writes it made
	// under treeMu since it took it (0: it does not hold it). Only the writer uses them.
	batch  bool
	sliced int
	// updated holds the keys the working tree has updated since the last commit or
	// rollback: keys written while the tree held them already, and neither removed nor
	// inserted since. A key's value is its newest value when the tree does not hold it
	// yet, nil when it does. Only the writer uses it (see treeKV).
	updated map[string][]byte

	mu          sync.RWMutex // guards lastVersion, lastHash and held
	lastVersion int64
	lastHash    []byte
	// held are the versions exports are reading, one entry an export (export.go):
	// pruning stops short of the lowest.
	held []int64
}

// ErrVersionNotKept: a query asked for a version that was pruned or never saved.
type ErrVersionNotKept struct{ Version, Latest int64 }

func (e ErrVersionNotKept) Error() string {
	return fmt.Sprintf("version %d is not kept (latest %d)", e.Version, e.Latest)
}

// NewStore loads the latest saved version of the tree in db. A database a restore
// left unfinished (Store.Import) is emptied first: nothing of it is a state.
func NewStore(db dbm.DB, opts Options) (*Store, error) {
	if opts.CacheSize == 0 {
		opts.CacheSize = DefaultCacheSize
	}
	if opts.WriteSlice <= 0 {
		opts.WriteSlice = DefaultWriteSlice
	}
	restoring, err := db.Has(restoringKey)
	if err != nil {
		return nil, fmt.Errorf("drive: read the restore mark: %w", err)
	}
	if restoring {
		if err := wipe(db); err != nil {
			return nil, err
		}
	}
	tree, version, err := loadTree(db, opts)
	if err != nil {
		return nil, err
	}
	return &Store{db: db, opts: opts, tree: tree, keepRecent: opts.KeepRecent, treeMu: &sync.RWMutex{}, writeSlice: opts.WriteSlice,
		updated: map[string][]byte{}, lastVersion: version, lastHash: tree.Hash()}, nil
}

// loadTree opens the tree in db at its latest saved version.
func loadTree(db dbm.DB, opts Options) (*iavl.MutableTree, int64, error) {
	// NB: IAVL v1.2.6's BatchWithFlusher unlocks its mutex to flush a batch that passes
	// FlushThreshold and, when that flush fails, returns without locking it again: its
	// deferred unlock then ends the process ("fatal error: sync: unlock of unlocked
	// mutex") instead of returning the error. So no batch flushes in the middle of a
	// commit: the threshold is out of reach, and batches are not preallocated to it
	// (unsizedBatches). A failed write comes back from Commit, and the node halts cleanly.
	iopts := []iavl.Option{iavl.AsyncPruningOption(true), iavl.FlushThresholdOption(math.MaxInt)}
	if opts.InitialVersion > 1 {
		iopts = append(iopts, iavl.InitialVersionOption(opts.InitialVersion))
	}
	tree := iavl.NewMutableTree(unsizedBatches{idb.NewWrapper(db)}, opts.CacheSize, true, iavl.NewNopLogger(), iopts...)
	version, err := tree.Load()
	if err != nil {
		return nil, 0, fmt.Errorf("drive: load tree: %w", err)
	}
	return tree, version, nil
}

// unsizedBatches makes every batch grow as it fills instead of being preallocated to
// IAVL's flush threshold, which NewStore puts out of reach.
type unsizedBatches struct{ idb.DB }

func (d unsizedBatches) NewBatchWithSize(int) idb.Batch { return d.DB.NewBatch() }

// Working is the uncommitted tree that block execution writes. Only the goroutine that
// executes blocks may use it.
func (s *Store) Working() KV { return treeKV{s} }

// DefaultWriteSlice is how many writes of the working tree a Batch makes under one hold
// of the lock that readers of saved versions share: they wait for at most that many
// writes, a few milliseconds.
const DefaultWriteSlice = 256

// Batch runs fn, whose writes of the working tree take the readers' lock once for
// Options.WriteSlice writes; fn's last slice ends when fn returns. fn must not call the
// store's other methods nor read a saved version: those wait for the lock fn's writes
// hold.
func (s *Store) Batch(fn func() error) error {
	s.batch = true
	defer func() {
		if s.sliced > 0 {
			s.sliced = 0
			s.treeMu.Unlock()
		}
		s.batch = false
	}()
	return fn()
}

// lockWrite takes treeMu for one write of the working tree, unless a Batch's slice
// holds it; unlockWrite ends the write, and the slice when it is full.
func (s *Store) lockWrite() {
	if !s.batch || s.sliced == 0 {
		s.treeMu.Lock()
	}
}

func (s *Store) unlockWrite() {
	if !s.batch {
		s.treeMu.Unlock()
		return
	}
	if s.sliced++; s.sliced >= s.writeSlice {
		s.sliced = 0
		s.treeMu.Unlock()
	}
}

// WorkingHash is the root hash of the working tree: the app hash FinalizeBlock returns.
// It fails when the updates treeKV kept back cannot be written (settle): IAVL could not
// load a node from the database.
func (s *Store) WorkingHash() ([]byte, error) {
	s.treeMu.Lock()
	defer s.treeMu.Unlock()
	if err := s.settle(); err != nil {
		return nil, fmt.Errorf("drive: write the block's updates: %w", err)
	}
	return s.tree.WorkingHash(), nil
}

// settle writes into the tree the updates treeKV kept back, in key order; the caller
// holds treeMu.
//
// Why they can be kept back: an AVL tree's shape is made by its insertions and
// removals alone. Writing a key the tree holds replaces the leaf's value on the same
// path, rebalancing nothing (IAVL's recursiveSet returns before balancing an update),
// and every node it copies on the way is one the key's first write that block copied
// already or one a rotation made since. So of several updates of one key, only the
// last one's value is ever seen, and writing that value once, whenever before the root
// is computed, leaves the same nodes, versions and hashes: the root does not change.
// A block of transfers writes each signer's balance and nonce at every one of its
// transfers, and every document write the same shared records: each such update after
// the first is one map entry instead of a walk and a copy of a 20-node path.
func (s *Store) settle() error {
	var keys []string
	for k, v := range s.updated {
		if v != nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, err := s.tree.Set([]byte(k), s.updated[k]); err != nil {
			return err
		}
		s.updated[k] = nil
	}
	return nil
}

// Commit saves the working tree as the next version and prunes what falls out of the
// kept window.
func (s *Store) Commit() (version int64, hash []byte, err error) {
	s.treeMu.Lock()
	defer s.treeMu.Unlock()
	if err := s.settle(); err != nil {
		return 0, nil, fmt.Errorf("drive: save version: %w", err)
	}
	clear(s.updated)
	hash, version, err = s.tree.SaveVersion()
	if err != nil {
		return 0, nil, fmt.Errorf("drive: save version: %w", err)
	}
	s.mu.Lock()
	s.lastVersion, s.lastHash = version, hash
	s.mu.Unlock()
	if to := s.pruneTo(version); to > 0 {
		if err := s.tree.DeleteVersionsTo(to); err != nil {
			return 0, nil, fmt.Errorf("drive: prune to %d: %w", to, err)
		}
	}
	return version, hash, nil
}

// pruneTo is the version pruning after saving version deletes up to, 0 for none: the
// kept window's lower edge, or below the lowest version an export reads.
func (s *Store) pruneTo(version int64) int64 {
	if s.keepRecent <= 0 || version <= s.keepRecent {
		return 0
	}
	to := version - s.keepRecent
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, v := range s.held {
		to = min(to, v-1)
	}
	return to
}

// Unchanged reports whether the working tree holds the last saved version with nothing
// staged over it, so that Rollback returns it to where the next block starts. Before
// the first commit it never does: the working tree then holds the genesis state, which
// Rollback would drop. Nor does it when the working tree's root cannot be computed
// (WorkingHash fails).
func (s *Store) Unchanged() bool {
	v, hash := s.LastCommit()
	working, err := s.WorkingHash()
	return err == nil && v > 0 && bytes.Equal(working, hash)
}

// Rollback drops the uncommitted changes of the working tree.
func (s *Store) Rollback() {
	s.treeMu.Lock()
	defer s.treeMu.Unlock()
	clear(s.updated)
	s.tree.Rollback()
}

// LastCommit returns the version and root hash of the last saved version (0 and the
// empty tree's hash before the first commit).
func (s *Store) LastCommit() (int64, []byte) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lastVersion, s.lastHash
}

// immutable returns saved version v (0: the latest); the caller holds treeMu.
func (s *Store) immutable(v int64) (*iavl.ImmutableTree, error) {
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

// Saved returns saved version v (0: the latest) as a read-only KV that any goroutine
// may read while blocks execute.
func (s *Store) Saved(v int64) (KV, error) {
	s.treeMu.RLock()
	defer s.treeMu.RUnlock()
	t, err := s.immutable(v)
	if err != nil {
		return nil, err
	}
	return lockedKV{kv: immutableKV{t}, mu: s.treeMu}, nil
}

// View calls fn with saved version v (0: the latest) while no write can reach the tree:
// for work on the IAVL tree itself, such as building proofs. fn must not write.
func (s *Store) View(v int64, fn func(*iavl.ImmutableTree) error) error {
	s.treeMu.RLock()
	defer s.treeMu.RUnlock()
	t, err := s.immutable(v)
	if err != nil {
		return err
	}
	return fn(t)
}

// Close releases the tree's background work; the caller closes the database.
func (s *Store) Close() error { return s.tree.Close() }

// treeKV is the working tree. Its writes are exclusive against readers of saved
// versions; its reads come from the one goroutine that writes, so they need no lock.
//
// A write of a key the tree holds and that this block updated already goes to
// Store.updated instead of the tree, and reads find it there; Store.settle writes it
// before the root is computed (WorkingHash, Commit), which the order of the updates
// does not change (see settle).
type treeKV struct{ s *Store }

func (k treeKV) Get(key []byte) ([]byte, error) {
	if v := k.s.updated[string(key)]; v != nil {
		return v, nil
	}
	return k.s.tree.Get(key)
}

func (k treeKV) Set(key, value []byte) error {
	if len(value) == 0 {
		return ErrEmptyValue
	}
	if _, ok := k.s.updated[string(key)]; ok {
		k.s.updated[string(key)] = value
		return nil
	}
	k.s.lockWrite()
	updated, err := k.s.tree.Set(key, value)
	k.s.unlockWrite()
	if err == nil && updated {
		k.s.updated[string(key)] = nil
	}
	return err
}

func (k treeKV) Delete(key []byte) error {
	delete(k.s.updated, string(key))
	k.s.lockWrite()
	_, _, err := k.s.tree.Remove(key)
	k.s.unlockWrite()
	return err
}

func (k treeKV) Iterate(start, end []byte, fn func(key, value []byte) (bool, error)) error {
	it, err := k.s.tree.Iterator(start, end, true)
	if err != nil {
		return err
	}
	return drain(it, func(key, value []byte) (bool, error) {
		if v := k.s.updated[string(key)]; v != nil {
			value = v
		}
		return fn(key, value)
	})
}

// lockedKV reads a saved version under the store's read lock, one operation at a time.
type lockedKV struct {
	kv KV
	mu *sync.RWMutex
}

func (k lockedKV) Get(key []byte) ([]byte, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.kv.Get(key)
}
func (k lockedKV) Set([]byte, []byte) error { return ErrReadOnly }
func (k lockedKV) Delete([]byte) error      { return ErrReadOnly }

// Iterate reads the range under the lock and calls fn after releasing it, so fn may
// read again without taking the lock twice (a waiting writer would deadlock that).
func (k lockedKV) Iterate(start, end []byte, fn func(key, value []byte) (bool, error)) error {
	var entries [][2][]byte
	k.mu.RLock()
	err := k.kv.Iterate(start, end, func(key, value []byte) (bool, error) {
		entries = append(entries, [2][]byte{append([]byte(nil), key...), append([]byte(nil), value...)})
		return false, nil
	})
	k.mu.RUnlock()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if stop, err := fn(e[0], e[1]); stop || err != nil {
			return err
		}
	}
	return nil
}

// ReadWritePath reads, in a saved version Store.Saved returned, what a write of key to
// the working tree loads: the path from the root to key's leaf (or to where it would
// be), and the other child of every node on that path. IAVL v1's Set and Remove clone
// every node on the path, and a clone loads both of its children (node.clone), so a
// write loads one sibling a level that no read of the key walks. The path is read as an
// ICS23 proof of the key, which holds each sibling's hash; the proof is dropped. Of any
// other KV it reads key. Reading ahead (abci) calls it so that a block's removals find
// those nodes in IAVL's node cache (docs/ARCHITECTURE.md, "Where the state lives").
func ReadWritePath(kv KV, key []byte) (err error) {
	l, ok := kv.(lockedKV)
	if !ok {
		_, err := kv.Get(key)
		return err
	}
	t, ok := l.kv.(immutableKV)
	if !ok {
		_, err := l.Get(key)
		return err
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if t.t.Size() == 0 {
		return nil
	}
	// NB: IAVL v1.2.6's createExistenceProof reads the leaf PathToLeaf returns before
	// it looks at the error, and that leaf is nil when a node could not be loaded: the
	// panic is that read's failure.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("drive: read the path of %X: %v", key, r)
		}
	}()
	// A key not stored fails the proof after its path has been read, which is all
	// that was asked.
	_, _ = t.t.GetMembershipProof(key)
	return nil
}

// Empty is a KV with no keys whose writes fail: the parent of a Cache that must hold
// a whole state by itself (the check state before the first commit).
func Empty() KV { return emptyKV{} }

type emptyKV struct{}

func (emptyKV) Get([]byte) ([]byte, error)                                         { return nil, nil }
func (emptyKV) Set([]byte, []byte) error                                           { return ErrReadOnly }
func (emptyKV) Delete([]byte) error                                                { return ErrReadOnly }
func (emptyKV) Iterate(_, _ []byte, _ func(key, value []byte) (bool, error)) error { return nil }

// ReadTree is saved version t as a Reader. The caller keeps writes away from the tree
// while it reads (Store.View).
func ReadTree(t *iavl.ImmutableTree) Reader { return immutableKV{t} }

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
func (k immutableKV) IterateReverse(start, end []byte, fn func(key, value []byte) (bool, error)) error {
	it, err := k.t.Iterator(start, end, false)
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
