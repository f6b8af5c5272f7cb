package snapshot

import (
	"crypto/sha256"

	"github.com/ttld-dev/ttld/drive"
)

// Export cuts saved version height of store into chunks of about chunkBytes
// (DefaultChunkBytes when 0), calling emit with each in order, and returns the
// snapshot's manifest. The tree has at least one key (genesis writes several), so a
// snapshot has at least one chunk.
func Export(store *drive.Store, height int64, chunkBytes int, emit func(index uint32, chunk []byte) error) (Manifest, error) {
	if chunkBytes <= 0 {
		chunkBytes = DefaultChunkBytes
	}
	m := Manifest{Format: Format1, Height: height}
	var chunk []byte
	flush := func() error {
		m.Chunks = append(m.Chunks, sha256.Sum256(chunk))
		err := emit(uint32(len(m.Chunks)-1), chunk)
		chunk = nil
		return err
	}
	root, err := store.Export(height, func(n drive.TreeNode) error {
		chunk = appendItem(chunk, n)
		if len(chunk) >= chunkBytes {
			return flush()
		}
		return nil
	})
	if err != nil {
		return Manifest{}, err
	}
	if len(chunk) > 0 || len(m.Chunks) == 0 {
		if err := flush(); err != nil {
			return Manifest{}, err
		}
	}
	m.Root = root
	return m, nil
}
