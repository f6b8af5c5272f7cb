package snapshot

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/ttld-dev/ttld/drive"
)

// ErrChunkHash: a chunk that is not the one the manifest names: CometBFT asks a peer
// for it again.
type ErrChunkHash struct{ Index uint32 }

func (e ErrChunkHash) Error() string {
	return fmt.Sprintf("snapshot: chunk %d does not hash to the manifest's", e.Index)
}

// ErrRoot: the imported tree's root is not the trusted app hash: the snapshot is
// refused whole.
type ErrRoot struct{ Got, Want []byte }

func (e ErrRoot) Error() string {
	return fmt.Sprintf("snapshot: the imported tree's root %X is not the trusted app hash %X", e.Got, e.Want)
}

// Restorer imports a snapshot's chunks, in order, into an empty store.
type Restorer struct {
	m     Manifest
	trust []byte
	imp   *drive.Importer
	next  uint32
}

// NewRestorer starts importing the snapshot m into store, which must be empty,
// accepting it only if the tree it builds has root trusted (the app hash of header
// m.Height+1, which the light client verified).
func NewRestorer(store *drive.Store, m Manifest, trusted []byte) (*Restorer, error) {
	if !bytes.Equal(m.Root, trusted) {
		return nil, ErrRoot{Got: m.Root, Want: trusted}
	}
	imp, err := store.Import(m.Height)
	if err != nil {
		return nil, err
	}
	return &Restorer{m: m, trust: trusted, imp: imp}, nil
}

// Next is the index of the chunk Apply takes next; len(manifest chunks): done.
func (r *Restorer) Next() uint32 { return r.next }

// Apply imports chunk index, which must be the next one. A chunk whose hash is not the
// manifest's is an ErrChunkHash and changes nothing (fetch it again); a chunk that
// hashes right but holds no items of a tree is an ErrChunk or a drive.ErrImport, after
// which the restore is unusable. After the last chunk Apply saves the version and checks
// its root: an ErrRoot refuses the snapshot.
func (r *Restorer) Apply(index uint32, chunk []byte) error {
	if index != r.next || int(index) >= len(r.m.Chunks) {
		return ErrChunk{index, 0, fmt.Sprintf("chunk %d where %d comes next", index, r.next)}
	}
	if len(chunk) > MaxChunkBytes || sha256.Sum256(chunk) != r.m.Chunks[index] {
		return ErrChunkHash{index}
	}
	if err := decodeItems(index, chunk, r.imp.Add); err != nil {
		return err
	}
	r.next++
	if int(r.next) < len(r.m.Chunks) {
		return nil
	}
	root, err := r.imp.Commit()
	if err != nil {
		return err
	}
	if !bytes.Equal(root, r.trust) {
		return ErrRoot{Got: root, Want: r.trust}
	}
	return nil
}

// Close abandons an unfinished restore. What it imported stays in the store's
// database until the caller clears it.
func (r *Restorer) Close() {
	if int(r.next) < len(r.m.Chunks) {
		r.imp.Close()
	}
}

// Refused reports whether err refuses the snapshot whole (its root, or chunks that
// hash as the manifest says but make no tree), rather than one chunk to fetch again.
func Refused(err error) bool {
	var c ErrChunk
	var i drive.ErrImport
	var root ErrRoot
	return errors.As(err, &c) || errors.As(err, &i) || errors.As(err, &root)
}
