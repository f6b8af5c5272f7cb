package snapshot

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/ttld-dev/ttld/drive"
)

// ErrChunkHash: a chunk that is not the one the manifest names, which changes nothing:
// CometBFT asks a peer for it again.
type ErrChunkHash struct{ Index uint32 }

func (e ErrChunkHash) Error() string {
	return fmt.Sprintf("snapshot: chunk %d does not hash to the manifest's", e.Index)
}

// ErrChunkOrder: a chunk out of turn, which changes nothing.
type ErrChunkOrder struct{ Index, Next uint32 }

func (e ErrChunkOrder) Error() string {
	return fmt.Sprintf("snapshot: chunk %d where %d comes next", e.Index, e.Next)
}

// ErrRoot: the imported tree's root is not the trusted app hash: the snapshot is
// refused whole.
type ErrRoot struct{ Got, Want []byte }

func (e ErrRoot) Error() string {
	return fmt.Sprintf("snapshot: the imported tree's root %X is not the trusted app hash %X", e.Got, e.Want)
}

// Restorer imports a snapshot's chunks, in order, into an empty store. Whatever ends
// it short of a tree with the trusted root (a refused chunk, the wrong root, Close)
// leaves the store empty again.
//
// The import is a pipeline: Apply checks a chunk against the manifest and hands it to
// the restorer's import goroutine, which decompresses it and imports its items while
// the next chunk arrives; at most one chunk waits for it besides the one it imports.
// A chunk that fails to import refuses the snapshot at the next Apply, or at the last
// chunk's, which waits for the import to end.
type Restorer struct {
	store *drive.Store
	m     Manifest
	trust []byte
	imp   *drive.Importer
	next  uint32
	// ended: the restore is done, refused or closed; the importer is gone.
	ended bool

	// chunks carries the chunks Apply took to the import goroutine, which ends when it
	// is closed or a chunk fails to import; done is closed when it has ended, and
	// importErr is then what failed, if anything. stop asks it to end before the
	// chunks it holds are imported.
	chunks    chan importChunk
	done      chan struct{}
	importErr error
	stop      atomic.Bool
}

// importChunk is a chunk on its way to the import goroutine.
type importChunk struct {
	index uint32
	chunk []byte
}

// importQueue is how many chunks may wait for the import goroutine.
const importQueue = 1

// NewRestorer starts importing the snapshot m into store, which must be empty,
// accepting it only if the tree it builds has root trusted (the app hash of header
// m.Height+1, which the light client verified).
func NewRestorer(store *drive.Store, m Manifest, trusted []byte) (*Restorer, error) {
	if !Restores(m.Format) {
		return nil, ErrManifest{fmt.Sprintf("format %d, not %d nor %d", m.Format, Format1, Format2)}
	}
	if !bytes.Equal(m.Root, trusted) {
		return nil, ErrRoot{Got: m.Root, Want: trusted}
	}
	imp, err := store.Import(m.Height)
	if err != nil {
		return nil, err
	}
	r := &Restorer{store: store, m: m, trust: trusted, imp: imp, chunks: make(chan importChunk, importQueue), done: make(chan struct{})}
	go r.importChunks()
	return r, nil
}

// importChunks imports the chunks Apply hands over, in order, until the last one, the
// first that fails, or stop.
func (r *Restorer) importChunks() {
	defer close(r.done)
	for c := range r.chunks {
		items, err := chunkItems(r.m.Format, c.index, c.chunk)
		if err == nil {
			err = decodeItems(c.index, items, func(n drive.TreeNode) error {
				if r.stop.Load() {
					return ErrAbandoned{}
				}
				return r.imp.Add(n)
			})
		}
		if err != nil {
			r.importErr = err
			return
		}
	}
}

// Manifest is the snapshot being restored.
func (r *Restorer) Manifest() Manifest { return r.m }

// Next is the index of the chunk Apply takes next; len(manifest chunks): done.
func (r *Restorer) Next() uint32 { return r.next }

// Done reports whether the snapshot is restored: the store holds its tree.
func (r *Restorer) Done() bool { return r.ended && int(r.next) == len(r.m.Chunks) }

// Apply takes chunk index, which must be the next one (a chunk applied already is
// taken again as nothing new; one further on is an ErrChunkOrder), and keeps it until
// it is imported: the caller must not change it. A chunk whose hash is not the
// manifest's is an ErrChunkHash and changes nothing: fetch it again. A chunk that
// hashes right but holds no items of a tree (in format 2, no zstd frame of at most
// MaxChunkBytes of items) is an ErrChunk or a drive.ErrImport, returned by the Apply
// after the one that handed it over, or by the last chunk's; after the last chunk a
// root other than the trusted one is an ErrRoot: those refuse the snapshot (Refused),
// and the store is emptied again. An import that failed refuses the snapshot before
// the chunk Apply was given is looked at. After the last chunk's nil the store holds
// the snapshot's tree.
func (r *Restorer) Apply(index uint32, chunk []byte) error {
	if int(index) >= len(r.m.Chunks) {
		return ErrChunk{index, 0, fmt.Sprintf("chunk %d of a snapshot of %d", index, len(r.m.Chunks))}
	}
	if err := r.importFailed(); err != nil {
		return r.refuse(err)
	}
	if len(chunk) > MaxChunkBytes || sha256.Sum256(chunk) != r.m.Chunks[index] {
		return ErrChunkHash{index}
	}
	if index < r.next {
		return nil
	}
	if r.ended || index > r.next {
		return ErrChunkOrder{Index: index, Next: r.next}
	}
	select {
	case r.chunks <- importChunk{index, chunk}:
	case <-r.done:
		return r.refuse(r.importErr)
	}
	r.next++
	if int(r.next) < len(r.m.Chunks) {
		return nil
	}
	close(r.chunks)
	<-r.done
	if r.importErr != nil {
		return r.refuse(r.importErr)
	}
	root, err := r.imp.Commit()
	if err != nil {
		return r.refuse(err)
	}
	r.ended = true
	if !bytes.Equal(root, r.trust) {
		return r.refuse(ErrRoot{Got: root, Want: r.trust})
	}
	return r.imp.Accept()
}

// importFailed is the error of a chunk that failed to import, if the import goroutine
// ended on one.
func (r *Restorer) importFailed() error {
	select {
	case <-r.done:
		return r.importErr
	default:
		return nil
	}
}

// refuse ends the restore on err, emptying the store once the import goroutine has
// ended.
func (r *Restorer) refuse(err error) error {
	if !r.ended {
		r.stop.Store(true)
		if int(r.next) < len(r.m.Chunks) {
			close(r.chunks)
		}
		<-r.done
		r.imp.Close()
		r.ended = true
	}
	r.next = 0
	if rerr := r.store.Reset(); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// Close abandons a restore not done, emptying the store; after Done it does nothing.
func (r *Restorer) Close() error {
	if r.Done() || (r.ended && r.next == 0) {
		return nil
	}
	return r.refuse(ErrAbandoned{})
}

// ErrAbandoned: a restore closed before its last chunk.
type ErrAbandoned struct{}

func (ErrAbandoned) Error() string { return "snapshot: restore abandoned" }

// Refused reports whether err refuses the snapshot whole (its root, or chunks that
// hash as the manifest says but make no tree or decompress past MaxChunkBytes), rather
// than one chunk to fetch again.
func Refused(err error) bool {
	var c ErrChunk
	var size ErrChunkSize
	var i drive.ErrImport
	var root ErrRoot
	return errors.As(err, &c) || errors.As(err, &size) || errors.As(err, &i) || errors.As(err, &root)
}
