//go:build !js

package drive

import (
	"errors"
	"fmt"

	"github.com/cosmos/iavl"
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

// Export calls fn with every node of saved version v, in the order Import takes them,
// and returns the version's root hash. It holds the readers' lock throughout
// (Store.View): the working tree is not written meanwhile.
func (s *Store) Export(v int64, fn func(TreeNode) error) (root []byte, err error) {
	err = s.View(v, func(t *iavl.ImmutableTree) error {
		root = t.Hash()
		exp, err := t.Export()
		if err != nil {
			return fmt.Errorf("drive: export version %d: %w", v, err)
		}
		defer exp.Close()
		for {
			n, err := exp.Next()
			if errors.Is(err, iavl.ErrorExportDone) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("drive: export version %d: %w", v, err)
			}
			if err := fn(TreeNode{Key: n.Key, Value: n.Value, Version: n.Version, Height: n.Height}); err != nil {
				return err
			}
		}
	})
	return root, err
}

// Importer writes saved version Version of an empty store from the nodes Export gave
// of it (Store.Import). The nodes come from a peer: Add refuses what would not build a
// tree, and Commit saves the version; only the caller can tell whether its root is the
// one it trusts.
type Importer struct {
	s       *Store
	imp     *iavl.Importer
	version int64
}

// ErrImport: a node that cannot be part of the imported tree.
type ErrImport struct{ Reason string }

func (e ErrImport) Error() string { return "drive: import: " + e.Reason }

// Import starts writing version v of the tree, which must be empty (no version saved,
// nothing staged).
func (s *Store) Import(v int64) (*Importer, error) {
	if v < 1 {
		return nil, ErrImport{fmt.Sprintf("version %d", v)}
	}
	s.treeMu.Lock()
	defer s.treeMu.Unlock()
	imp, err := s.tree.Import(v)
	if err != nil {
		return nil, fmt.Errorf("drive: import version %d: %w", v, err)
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
// root hash.
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

// Close abandons an import not committed.
func (i *Importer) Close() {
	i.s.treeMu.Lock()
	defer i.s.treeMu.Unlock()
	i.imp.Close()
}
