//go:build !js

package drive

import (
	"errors"
	"fmt"
	"slices"

	dbm "github.com/cosmos/cosmos-db"
	"github.com/cosmos/iavl"
	idb "github.com/cosmos/iavl/db"
)

// TreeNode is one node of a saved version's tree as Export gives it and Import takes
// it: depth-first post-order, so that the same nodes imported in the same order rebuild
// the same tree, with the same root hash. A leaf (Height 0) holds a key and its value;
// an inner node the key that splits its subtrees. Version is the version that last
// wrote the node.
type TreeNode struct {
	Key, Value []byte
	Version    int64
	Height     int8
}

// exportCacheSize is the node cache of the tree an export reads through: an export
// reads every node once, so a cache only holds the path it is on.
const exportCacheSize = 10_000

// Export calls fn with every node of saved version v, in the order Import takes them,
// and returns the version's root hash. It reads through a tree of its own over the
// store's database, whose saved nodes never change, so blocks go on executing and
// committing meanwhile: no lock of the working tree is held, and pruning leaves v alone
// until Export returns.
func (s *Store) Export(v int64, fn func(TreeNode) error) (root []byte, err error) {
	if err := s.hold(v); err != nil {
		return nil, err
	}
	defer s.release(v)
	tree := iavl.NewMutableTree(idb.NewWrapper(s.db), exportCacheSize, true, iavl.NewNopLogger())
	defer tree.Close()
	t, err := tree.GetImmutable(v)
	if err != nil {
		return nil, fmt.Errorf("drive: export version %d: %w", v, err)
	}
	exp, err := t.Export()
	if err != nil {
		return nil, fmt.Errorf("drive: export version %d: %w", v, err)
	}
	defer exp.Close()
	for {
		n, err := exp.Next()
		if errors.Is(err, iavl.ErrorExportDone) {
			return t.Hash(), nil
		}
		if err != nil {
			return nil, fmt.Errorf("drive: export version %d: %w", v, err)
		}
		if err := fn(TreeNode{Key: n.Key, Value: n.Value, Version: n.Version, Height: n.Height}); err != nil {
			return nil, err
		}
	}
}

// hold keeps saved version v from pruning until release(v); v must be kept now.
func (s *Store) hold(v int64) error {
	s.treeMu.RLock()
	defer s.treeMu.RUnlock()
	latest, _ := s.LastCommit()
	if v <= 0 || v > latest || !s.tree.VersionExists(v) {
		return ErrVersionNotKept{Version: v, Latest: latest}
	}
	s.mu.Lock()
	s.held = append(s.held, v)
	s.mu.Unlock()
	return nil
}

func (s *Store) release(v int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.held, v); i >= 0 {
		s.held = slices.Delete(s.held, i, i+1)
	}
}

// restoringKey marks a database an import is writing, outside the keys of IAVL's
// layout (its prefixes are f, m, n, o, r and s): from Import until Importer.Accept.
// A store opened over a marked database empties it (NewStore), so an import cut short
// by a crash leaves no state behind.
var restoringKey = []byte("t/restoring")

// Importer writes saved version Version of an empty store from the nodes Export gave
// of it (Store.Import). The nodes come from a peer: Add refuses what would not build a
// tree, Commit saves the version, and only the caller can tell whether its root is the
// one it trusts: Accept keeps it, Store.Reset drops it.
type Importer struct {
	s       *Store
	imp     *iavl.Importer
	version int64
}

// ErrImport: a node that cannot be part of the imported tree, or a store that cannot
// take an import.
type ErrImport struct{ Reason string }

func (e ErrImport) Error() string { return "drive: import: " + e.Reason }

// Import starts writing version v of the tree, which must be empty (no version saved,
// nothing staged). Whatever becomes of the import, the store's database holds no
// state until Importer.Accept: a store that does not accept it is Reset, and a process
// that stops before either finds an empty store at the next NewStore.
func (s *Store) Import(v int64) (*Importer, error) {
	if v < 1 {
		return nil, ErrImport{fmt.Sprintf("version %d", v)}
	}
	if latest, _ := s.LastCommit(); latest != 0 {
		return nil, ErrImport{fmt.Sprintf("the store holds version %d", latest)}
	}
	s.treeMu.Lock()
	defer s.treeMu.Unlock()
	if err := s.db.SetSync(restoringKey, []byte{1}); err != nil {
		return nil, fmt.Errorf("drive: mark the import: %w", err)
	}
	imp, err := s.tree.Import(v)
	if err != nil {
		return nil, ErrImport{err.Error()}
	}
	return &Importer{s: s, imp: imp, version: v}, nil
}

// Add adds the next node. A node IAVL's importer would not take as the next one
// (a version outside 1..the imported one, a height outside 0..127, a leaf without a
// value, an inner node with one, or one without the two subtrees it joins) is an
// ErrImport, and the import is then unusable: Close it.
func (i *Importer) Add(n TreeNode) (err error) {
	switch {
	case n.Version < 1 || n.Version > i.version:
		return ErrImport{fmt.Sprintf("node version %d outside 1..%d", n.Version, i.version)}
	case n.Height < 0:
		return ErrImport{fmt.Sprintf("node height %d", n.Height)}
	case n.Height == 0 && n.Value == nil, n.Height > 0 && n.Value != nil:
		return ErrImport{fmt.Sprintf("a node of height %d with %d value bytes", n.Height, len(n.Value))}
	}
	// NB: IAVL's importer trusts its input: a stream that does not make a tree can
	// make it panic (a child missing). The nodes come from a peer.
	defer func() {
		if r := recover(); r != nil {
			err = ErrImport{fmt.Sprintf("a node that makes no tree: %v", r)}
		}
	}()
	i.s.treeMu.Lock()
	defer i.s.treeMu.Unlock()
	if err := i.imp.Add(&iavl.ExportNode{Key: n.Key, Value: n.Value, Version: n.Version, Height: n.Height}); err != nil {
		return ErrImport{err.Error()}
	}
	return nil
}

// Commit saves the imported version and makes it the store's last one; it returns its
// root hash. The database stays marked until Accept.
func (i *Importer) Commit() (hash []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = ErrImport{fmt.Sprintf("the nodes make no tree: %v", r)}
		}
	}()
	i.s.treeMu.Lock()
	defer i.s.treeMu.Unlock()
	if err := i.imp.Commit(); err != nil {
		return nil, ErrImport{err.Error()}
	}
	hash = i.s.tree.Hash()
	i.s.mu.Lock()
	i.s.lastVersion, i.s.lastHash = i.version, hash
	i.s.mu.Unlock()
	return hash, nil
}

// Accept keeps the committed import: the store's state from now on.
func (i *Importer) Accept() error {
	if err := i.s.db.DeleteSync(restoringKey); err != nil {
		return fmt.Errorf("drive: unmark the import: %w", err)
	}
	return nil
}

// Close abandons an import not committed; Store.Reset then clears what it wrote.
func (i *Importer) Close() {
	i.s.treeMu.Lock()
	defer i.s.treeMu.Unlock()
	i.imp.Close()
}

// Reset deletes everything the store's database holds and leaves the store as
// NewStore leaves it over an empty database: what an import that was not accepted
// wrote, committed or not, is gone. Nothing may read or write the store meanwhile.
func (s *Store) Reset() error {
	s.treeMu.Lock()
	defer s.treeMu.Unlock()
	if err := s.tree.Close(); err != nil {
		return fmt.Errorf("drive: reset: %w", err)
	}
	if err := wipe(s.db); err != nil {
		return err
	}
	tree, version, err := loadTree(s.db, s.opts)
	if err != nil {
		return err
	}
	s.tree = tree
	s.mu.Lock()
	s.lastVersion, s.lastHash = version, tree.Hash()
	s.mu.Unlock()
	return nil
}

// wipeBatch is how many keys wipe deletes in one batch.
const wipeBatch = 10_000

// wipe deletes every key of db, the restore mark last.
func wipe(db dbm.DB) error {
	var from []byte
	for {
		keys, err := keysFrom(db, from, wipeBatch)
		if err != nil {
			return fmt.Errorf("drive: wipe: %w", err)
		}
		if len(keys) == 0 {
			break
		}
		b := db.NewBatch()
		for _, k := range keys {
			if err := b.Delete(k); err != nil {
				b.Close()
				return fmt.Errorf("drive: wipe: %w", err)
			}
		}
		err = b.Write()
		b.Close()
		if err != nil {
			return fmt.Errorf("drive: wipe: %w", err)
		}
		from = append(keys[len(keys)-1], 0)
	}
	if err := db.DeleteSync(restoringKey); err != nil {
		return fmt.Errorf("drive: wipe: %w", err)
	}
	return nil
}

// keysFrom returns up to n keys of db from the key from on (nil: the first), in
// order, the restore mark left out.
func keysFrom(db dbm.DB, from []byte, n int) ([][]byte, error) {
	it, err := db.Iterator(from, nil)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var keys [][]byte
	for ; it.Valid() && len(keys) < n; it.Next() {
		if string(it.Key()) != string(restoringKey) {
			keys = append(keys, slices.Clone(it.Key()))
		}
	}
	return keys, it.Error()
}
