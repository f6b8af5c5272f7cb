//go:build !js

package drive

import (
	"bytes"
	"fmt"

	"github.com/cosmos/iavl"
)

// ChangeKind says what happened to a key between two states.
type ChangeKind string

// The kinds of change.
const (
	Added   ChangeKind = "added"
	Changed ChangeKind = "changed"
	Removed ChangeKind = "removed"
)

// Change is one key that differs between two states.
type Change struct {
	Kind     ChangeKind
	Key      []byte
	Old, New []byte // Old nil when added, New nil when removed
}

// VersionChanges returns the keys the block of version v changed, in key order, with
// their values before and after: what a replay prints when that block diverges.
func (s *Store) VersionChanges(v int64) ([]Change, error) {
	s.treeMu.RLock()
	defer s.treeMu.RUnlock()
	after, err := s.immutable(v)
	if err != nil {
		return nil, err
	}
	var before *iavl.ImmutableTree
	if v > 1 && s.tree.VersionExists(v-1) {
		if before, err = s.tree.GetImmutable(v - 1); err != nil {
			return nil, fmt.Errorf("drive: version %d: %w", v-1, err)
		}
	}
	var out []Change
	err = after.TraverseStateChanges(v, v, func(_ int64, cs *iavl.ChangeSet) error {
		for _, p := range cs.Pairs {
			var old []byte
			if before != nil {
				if old, err = before.Get(p.Key); err != nil {
					return err
				}
			}
			switch {
			case p.Delete:
				out = append(out, Change{Kind: Removed, Key: p.Key, Old: old})
			case old == nil:
				out = append(out, Change{Kind: Added, Key: p.Key, New: p.Value})
			case !bytes.Equal(old, p.Value):
				out = append(out, Change{Kind: Changed, Key: p.Key, Old: old, New: p.Value})
			}
		}
		return nil
	})
	return out, err
}

// Diff returns the keys where state a differs from state b, in key order (Old from a,
// New from b).
func Diff(a, b KV) ([]Change, error) {
	collect := func(kv KV) ([][2][]byte, error) {
		var out [][2][]byte
		err := kv.Iterate(nil, nil, func(k, v []byte) (bool, error) {
			out = append(out, [2][]byte{append([]byte(nil), k...), append([]byte(nil), v...)})
			return false, nil
		})
		return out, err
	}
	as, err := collect(a)
	if err != nil {
		return nil, err
	}
	bs, err := collect(b)
	if err != nil {
		return nil, err
	}
	var out []Change
	i, j := 0, 0
	for i < len(as) || j < len(bs) {
		switch {
		case j == len(bs) || (i < len(as) && bytes.Compare(as[i][0], bs[j][0]) < 0):
			out = append(out, Change{Kind: Removed, Key: as[i][0], Old: as[i][1]})
			i++
		case i == len(as) || bytes.Compare(as[i][0], bs[j][0]) > 0:
			out = append(out, Change{Kind: Added, Key: bs[j][0], New: bs[j][1]})
			j++
		default:
			if !bytes.Equal(as[i][1], bs[j][1]) {
				out = append(out, Change{Kind: Changed, Key: as[i][0], Old: as[i][1], New: bs[j][1]})
			}
			i++
			j++
		}
	}
	return out, nil
}
