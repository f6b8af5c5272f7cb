package snapshot

import (
	"crypto/sha256"
	"errors"

	"github.com/ttld-dev/ttld/drive"
)

// Export cuts saved version height of store into chunks of about chunkBytes of items
// (DefaultChunkBytes when 0), in format Format, calling emit with each in order, and
// returns the snapshot's manifest. The tree has at least one key (genesis writes
// several), so a snapshot has at least one chunk.
//
// The export is a pipeline: while the store's exporter reads the nodes of chunk N+1,
// chunk N is compressed, hashed and emitted on a goroutine of Export's, which ends
// before Export returns. emit is called on that goroutine, one chunk at a time; an
// error it returns ends the export with that error.
func Export(store *drive.Store, height int64, chunkBytes int, emit func(index uint32, chunk []byte) error) (Manifest, error) {
	return export(store, height, chunkBytes, Format, emit)
}

// exportQueue is how many chunks of items the store's exporter may cut ahead of the
// one being compressed and emitted.
const exportQueue = 2

// export is Export in format f.
func export(store *drive.Store, height int64, chunkBytes int, f uint32, emit func(index uint32, chunk []byte) error) (Manifest, error) {
	if chunkBytes <= 0 {
		chunkBytes = DefaultChunkBytes
	}
	m := Manifest{Format: f, Height: height}
	items := make(chan []byte, exportQueue)
	// failed is closed when emit fails; emitErr is then its error.
	failed := make(chan struct{})
	var emitErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for b := range items {
			chunk := encodeChunk(f, b)
			m.Chunks = append(m.Chunks, sha256.Sum256(chunk))
			if err := emit(uint32(len(m.Chunks)-1), chunk); err != nil {
				emitErr = err
				close(failed)
				// Drain what the exporter sends until it sees failed.
				for range items {
				}
				return
			}
		}
	}()
	var chunk []byte
	sent := 0
	send := func() error {
		select {
		case items <- chunk:
			sent++
			chunk = make([]byte, 0, chunkBytes+chunkBytes/8)
			return nil
		case <-failed:
			return errEmit
		}
	}
	chunk = make([]byte, 0, chunkBytes+chunkBytes/8)
	root, err := store.Export(height, func(n drive.TreeNode) error {
		chunk = appendItem(chunk, n)
		if len(chunk) >= chunkBytes {
			return send()
		}
		return nil
	})
	if err == nil && (len(chunk) > 0 || sent == 0) {
		err = send()
	}
	close(items)
	<-done
	if errors.Is(err, errEmit) || (err == nil && emitErr != nil) {
		return Manifest{}, emitErr
	}
	if err != nil {
		return Manifest{}, err
	}
	m.Root = root
	return m, nil
}

// errEmit: the export stopped because emit failed (its error is the export's).
var errEmit = errors.New("snapshot: emit failed")
