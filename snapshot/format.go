package snapshot

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/ttld-dev/ttld/drive"
)

// The snapshot formats (docs/STATE.md, "Snapshots"). Both carry the nodes of a saved
// version of the tree in the order drive.Store.Export gives them, each encoded as an
// item, the items cut into chunks of whole items, and the same manifest. A number is
// never given to another format.
const (
	// Format1: a chunk is its items as they are. Restored, no longer taken.
	Format1 uint32 = 1
	// Format2: a chunk is one zstd frame of its items; the manifest hashes the frame,
	// the bytes a peer sends. Taken and restored.
	Format2 uint32 = 2
)

// Format is the format snapshots are taken in.
const Format = Format2

// Restores reports whether this build restores snapshots of format f.
func Restores(f uint32) bool { return f == Format1 || f == Format2 }

// DefaultChunkBytes is where Export closes a chunk: the first item that takes its items
// to this size or past it ends it.
const DefaultChunkBytes = 4 << 20

// MaxChunkBytes bounds a chunk a restore accepts, the bytes received and, in format 2,
// its items once decompressed: DefaultChunkBytes and one item of the largest key and
// value a transaction can write, with room to spare.
const MaxChunkBytes = 16 << 20

// encoder compresses the chunks of format 2. EncodeAll is safe for concurrent use.
// NewWriter and NewReader (decoder) fail only on an invalid option, and theirs are
// fixed: a failure is a bug of this file, hence the panics.
var encoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(2))
	if err != nil {
		panic(err)
	}
	return e
})

// decoder decompresses the chunks of format 2, never to more than MaxChunkBytes (nor
// with a window past it): a frame that would is refused before that memory is taken.
// DecodeAll is safe for concurrent use.
var decoder = sync.OnceValue(func() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(2), zstd.WithDecoderMaxMemory(MaxChunkBytes),
		zstd.WithDecoderMaxWindow(MaxChunkBytes))
	if err != nil {
		panic(err)
	}
	return d
})

// encodeChunk is the chunk of items in format f.
func encodeChunk(f uint32, items []byte) []byte {
	if f == Format1 {
		return items
	}
	return encoder().EncodeAll(items, make([]byte, 0, len(items)/2))
}

// chunkItems are the items of chunk index in format f, the chunk as received.
func chunkItems(f uint32, index uint32, chunk []byte) ([]byte, error) {
	if f == Format1 {
		return chunk, nil
	}
	items, err := decoder().DecodeAll(chunk, nil)
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
		return nil, ErrChunkSize{index}
	}
	if err != nil {
		return nil, ErrChunk{index, 0, "no zstd frame of items: " + err.Error()}
	}
	if len(items) == 0 {
		return nil, ErrChunk{index, 0, "no items"}
	}
	return items, nil
}

// An item is one tree node: height u8, version u64, key length u32, key, then for a
// leaf (height 0) value length u32 and value.
const itemHeaderLen = 1 + 8 + 4

// appendItem appends n's item to b.
func appendItem(b []byte, n drive.TreeNode) []byte {
	b = append(b, byte(n.Height))
	b = binary.BigEndian.AppendUint64(b, uint64(n.Version))
	b = binary.BigEndian.AppendUint32(b, uint32(len(n.Key)))
	b = append(b, n.Key...)
	if n.Height == 0 {
		b = binary.BigEndian.AppendUint32(b, uint32(len(n.Value)))
		b = append(b, n.Value...)
	}
	return b
}

// ErrChunk: a chunk that is not a run of whole items (in format 2, once decompressed;
// Offset counts the decompressed bytes).
type ErrChunk struct {
	Index  uint32
	Offset int
	Reason string
}

func (e ErrChunk) Error() string {
	return fmt.Sprintf("snapshot: chunk %d, byte %d: %s", e.Index, e.Offset, e.Reason)
}

// ErrChunkSize: a chunk of format 2 whose frame holds more than MaxChunkBytes of items,
// or asks for a larger window: refused before that memory is taken.
type ErrChunkSize struct{ Index uint32 }

func (e ErrChunkSize) Error() string {
	return fmt.Sprintf("snapshot: chunk %d: more than %d bytes once decompressed", e.Index, MaxChunkBytes)
}

// decodeItems calls fn with every item of chunk index.
func decodeItems(index uint32, chunk []byte, fn func(drive.TreeNode) error) error {
	for off := 0; off < len(chunk); {
		if len(chunk)-off < itemHeaderLen {
			return ErrChunk{index, off, "an item cut short"}
		}
		h := chunk[off]
		if h > 127 {
			return ErrChunk{index, off, fmt.Sprintf("height %d", h)}
		}
		n := drive.TreeNode{Height: int8(h), Version: int64(binary.BigEndian.Uint64(chunk[off+1:]) & (1<<63 - 1))}
		if binary.BigEndian.Uint64(chunk[off+1:]) >= 1<<63 {
			return ErrChunk{index, off, "a version past 2^63"}
		}
		kl := int(binary.BigEndian.Uint32(chunk[off+9:]))
		off += itemHeaderLen
		if kl > len(chunk)-off {
			return ErrChunk{index, off, "a key cut short"}
		}
		n.Key = chunk[off : off+kl : off+kl]
		off += kl
		if n.Height == 0 {
			if len(chunk)-off < 4 {
				return ErrChunk{index, off, "a value length cut short"}
			}
			vl := int(binary.BigEndian.Uint32(chunk[off:]))
			off += 4
			if vl == 0 || vl > len(chunk)-off {
				return ErrChunk{index, off, fmt.Sprintf("a value of %d bytes where %d are left (the tree holds no empty value)", vl, len(chunk)-off)}
			}
			n.Value = chunk[off : off+vl : off+vl]
			off += vl
		}
		if err := fn(n); err != nil {
			return err
		}
	}
	return nil
}

// Manifest describes a snapshot: what CometBFT's Snapshot carries as its metadata.
type Manifest struct {
	Format uint32
	Height int64
	// Root is the root hash of the tree at Height: the app hash of header Height+1.
	Root []byte
	// Chunks are the chunks' SHA-256 hashes, in order.
	Chunks [][sha256.Size]byte
}

// Encode writes m: format u32, height u64, root length u8 and root, chunk count u32,
// then each chunk's hash.
func (m Manifest) Encode() []byte {
	b := binary.BigEndian.AppendUint32(nil, m.Format)
	b = binary.BigEndian.AppendUint64(b, uint64(m.Height))
	b = append(b, byte(len(m.Root)))
	b = append(b, m.Root...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(m.Chunks)))
	for _, c := range m.Chunks {
		b = append(b, c[:]...)
	}
	return b
}

// Hash is the snapshot's hash, CometBFT's Snapshot.Hash: the SHA-256 of the manifest.
func (m Manifest) Hash() []byte {
	h := sha256.Sum256(m.Encode())
	return h[:]
}

// ErrManifest: metadata that is no manifest of a format this build restores.
type ErrManifest struct{ Reason string }

func (e ErrManifest) Error() string { return "snapshot: manifest: " + e.Reason }

// DecodeManifest reads what Manifest.Encode wrote.
func DecodeManifest(b []byte) (Manifest, error) {
	if len(b) < 4+8+1 {
		return Manifest{}, ErrManifest{"cut short"}
	}
	m := Manifest{Format: binary.BigEndian.Uint32(b), Height: int64(binary.BigEndian.Uint64(b[4:]))}
	if !Restores(m.Format) {
		return Manifest{}, ErrManifest{fmt.Sprintf("format %d, not %d nor %d", m.Format, Format1, Format2)}
	}
	if m.Height < 1 {
		return Manifest{}, ErrManifest{fmt.Sprintf("height %d", m.Height)}
	}
	rl := int(b[12])
	rest := b[13:]
	if rl != sha256.Size || len(rest) < rl+4 {
		return Manifest{}, ErrManifest{fmt.Sprintf("a root of %d bytes", rl)}
	}
	m.Root, rest = rest[:rl:rl], rest[rl:]
	n := binary.BigEndian.Uint32(rest)
	rest = rest[4:]
	if n == 0 || uint64(len(rest)) != uint64(n)*sha256.Size {
		return Manifest{}, ErrManifest{fmt.Sprintf("%d chunks and %d bytes of hashes", n, len(rest))}
	}
	m.Chunks = make([][sha256.Size]byte, n)
	for i := range m.Chunks {
		copy(m.Chunks[i][:], rest[i*sha256.Size:])
	}
	return m, nil
}
