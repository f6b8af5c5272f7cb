package snapshot_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"slices"
	"testing"

	dbm "github.com/cosmos/cosmos-db"
	"github.com/klauspost/compress/zstd"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/snapshot"
)

// importEnded fails t unless r's import goroutine has ended: a restore refused, closed
// or done leaves none behind.
func importEnded(t *testing.T, r *snapshot.Restorer) {
	t.Helper()
	select {
	case <-r.ImportEnded():
	default:
		t.Fatal("the restore's import goroutine still runs")
	}
}

// restoreChunks applies chunks in order until one is refused, and returns the index
// and error of that one (len(chunks) and nil when none is).
func restoreChunks(r *snapshot.Restorer, chunks [][]byte) (int, error) {
	for i, chunk := range chunks {
		if err := r.Apply(uint32(i), chunk); err != nil {
			return i, err
		}
	}
	return len(chunks), nil
}

// Snapshots are taken in format 2: each chunk one zstd frame of the items format 1
// would carry in that chunk, hashed as sent. A format-1 snapshot of the same version
// (taken by an earlier build) cuts the same items at the same places, and restores to
// the same tree.
func TestFormats(t *testing.T) {
	t.Parallel()
	c := chain(t, 40)
	_, root := c.Store.LastCommit()
	m2, chunks2 := export(t, c, 16<<10)
	if m2.Format != snapshot.Format2 || len(chunks2) < 3 {
		t.Fatalf("format %d, %d chunks", m2.Format, len(chunks2))
	}
	var chunks1 [][]byte
	m1, err := snapshot.ExportFormat(c.Store, c.Height, 16<<10, snapshot.Format1, func(_ uint32, chunk []byte) error {
		chunks1 = append(chunks1, chunk)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if m1.Format != snapshot.Format1 || len(chunks1) != len(chunks2) || !bytes.Equal(m1.Root, root) || bytes.Equal(m1.Hash(), m2.Hash()) {
		t.Fatalf("format 1: %d chunks, root %X; format 2: %d chunks", len(chunks1), m1.Root, len(chunks2))
	}
	var raw, compressed int
	for i := range chunks2 {
		if m2.Chunks[i] != sha256.Sum256(chunks2[i]) {
			t.Fatalf("chunk %d: the manifest's hash is not the compressed chunk's", i)
		}
		items, err := snapshot.ChunkItems(snapshot.Format2, uint32(i), chunks2[i])
		if err != nil || !bytes.Equal(items, chunks1[i]) {
			t.Fatalf("chunk %d decompressed: %d bytes, format 1's %d, %v", i, len(items), len(chunks1[i]), err)
		}
		raw, compressed = raw+len(chunks1[i]), compressed+len(chunks2[i])
	}
	if compressed >= raw {
		t.Fatalf("format 2 holds %d bytes, format 1 %d", compressed, raw)
	}
	for _, tc := range []struct {
		m      snapshot.Manifest
		chunks [][]byte
	}{{m1, chunks1}, {m2, chunks2}} {
		back, err := snapshot.DecodeManifest(tc.m.Encode())
		if err != nil || back.Format != tc.m.Format {
			t.Fatalf("format %d manifest: %+v, %v", tc.m.Format, back, err)
		}
		s := emptyStore(t)
		r, err := snapshot.NewRestorer(s, back, root)
		if err != nil {
			t.Fatal(err)
		}
		if i, err := restoreChunks(r, tc.chunks); err != nil {
			t.Fatalf("format %d, chunk %d: %v", tc.m.Format, i, err)
		}
		importEnded(t, r)
		if v, got := s.LastCommit(); v != c.Height || !bytes.Equal(got, root) {
			t.Fatalf("format %d restored %d %X", tc.m.Format, v, got)
		}
	}
	t.Logf("%d chunks: %d bytes of items, %d compressed", len(chunks2), raw, compressed)
}

// zeros is a zstd frame of n zero bytes, streamed (no content size in its header) or
// in one piece (its size in the header).
func zeros(t *testing.T, n int, streamed bool) []byte {
	t.Helper()
	if !streamed {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			t.Fatal(err)
		}
		return e.EncodeAll(make([]byte, n), nil)
	}
	var b bytes.Buffer
	e, err := zstd.NewWriter(&b, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	piece := make([]byte, 1<<20)
	for range n / len(piece) {
		if _, err := e.Write(piece); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A format-2 chunk whose hash is not the manifest's is refused before it is
// decompressed (fetched again); one the manifest names that is no zstd frame of
// items, or that would decompress past MaxChunkBytes (a decompression bomb: a
// gibibyte of zeros in a few hundred kilobytes), refuses the snapshot, and the store is empty
// again.
func TestCompressedChunksRefused(t *testing.T) {
	t.Parallel()
	c := chain(t, 20)
	m, chunks := export(t, c, 1<<30)
	if len(chunks) != 1 {
		t.Fatalf("%d chunks, want one", len(chunks))
	}
	flipped := bytes.Clone(chunks[0])
	flipped[len(flipped)/2] ^= 1
	bomb := zeros(t, 1<<30, true)
	declared := zeros(t, snapshot.MaxChunkBytes+1, false)
	if len(bomb) > 1<<20 {
		t.Fatalf("the bomb is %d bytes", len(bomb))
	}
	{
		s := emptyStore(t)
		r, err := snapshot.NewRestorer(s, m, m.Root)
		if err != nil {
			t.Fatal(err)
		}
		for name, chunk := range map[string][]byte{"flipped": flipped, "bomb": bomb, "empty": {}} {
			if err := r.Apply(0, chunk); !errors.As(err, new(snapshot.ErrChunkHash)) || snapshot.Refused(err) {
				t.Fatalf("%s, not the manifest's: %v", name, err)
			}
		}
		if err := r.Apply(0, chunks[0]); err != nil || !r.Done() {
			t.Fatalf("the chunk after the refusals: %v", err)
		}
	}
	// The manifest names the bad chunk: the snapshot is refused whole.
	items, err := snapshot.ChunkItems(snapshot.Format2, 0, chunks[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		chunk []byte
		// size: refused as decompressing past MaxChunkBytes; else as no items.
		size bool
	}{
		{"a gibibyte of zeros, streamed", bomb, true},
		{"MaxChunkBytes and one zeros, their size in the frame's header", declared, true},
		{"a frame with a byte flipped", flipped, false},
		{"a frame cut short", chunks[0][:len(chunks[0])-4], false},
		{"the items uncompressed", items, false},
		{"no items", snapshot.EncodeChunk(snapshot.Format2, nil), false},
	} {
		db := dbm.NewMemDB()
		s, err := drive.NewStore(db, drive.Options{CacheSize: 1000})
		if err != nil {
			t.Fatal(err)
		}
		forged := snapshot.Manifest{Format: snapshot.Format2, Height: m.Height, Root: m.Root, Chunks: [][sha256.Size]byte{sha256.Sum256(tc.chunk)}}
		r, err := snapshot.NewRestorer(s, forged, m.Root)
		if err != nil {
			t.Fatal(err)
		}
		err = r.Apply(0, tc.chunk)
		var size snapshot.ErrChunkSize
		var bad snapshot.ErrChunk
		if !snapshot.Refused(err) || errors.As(err, &size) != tc.size || (!tc.size && !errors.As(err, &bad)) {
			t.Fatalf("%s: %v", tc.name, err)
		}
		importEnded(t, r)
		empty(t, db, s)
	}
}

// The restore imports a chunk while the next arrives: a chunk that hashes right but
// does not import, in the middle of the snapshot, refuses it at a later chunk (the
// next, or the one after while the import catches up), never before; a chunk of the
// wrong hash meanwhile is refused at once and the import goes on; a tree of another
// root is refused at the last chunk. Each refusal ends the import goroutine and
// leaves the store empty; so does closing a restore mid-way.
func TestPipelinedRestoreRefusals(t *testing.T) {
	t.Parallel()
	c := chain(t, 40)
	m, chunks := export(t, c, 8<<10)
	if len(chunks) < 8 {
		t.Fatalf("%d chunks: want several", len(chunks))
	}
	open := func(m snapshot.Manifest) (dbm.DB, *drive.Store, *snapshot.Restorer) { return openRestore(t, m) }
	// Chunk mid's items cut short by a byte, under a forged manifest.
	mid := len(chunks) / 2
	items, err := snapshot.ChunkItems(m.Format, uint32(mid), chunks[mid])
	if err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(chunks)
	bad[mid] = snapshot.EncodeChunk(m.Format, items[:len(items)-1])
	forged := snapshot.Manifest{Format: m.Format, Height: m.Height, Root: m.Root, Chunks: slices.Clone(m.Chunks)}
	forged.Chunks[mid] = sha256.Sum256(bad[mid])

	db, s, r := open(forged)
	for i := range mid + 1 {
		if err := r.Apply(uint32(i), bad[i]); err != nil {
			t.Fatalf("chunk %d, before the bad one is imported: %v", i, err)
		}
	}
	refusedAt := len(bad)
	var chunkErr snapshot.ErrChunk
	for i := mid + 1; i < len(bad); i++ {
		if err := r.Apply(uint32(i), bad[i]); err != nil {
			if !errors.As(err, &chunkErr) || chunkErr.Index != uint32(mid) {
				t.Fatalf("chunk %d after the bad one: %v", i, err)
			}
			refusedAt = i
			break
		}
	}
	if refusedAt == len(bad) {
		t.Fatalf("a bad chunk at %d of %d: not refused", mid, len(bad))
	}
	importEnded(t, r)
	empty(t, db, s)
	if err := r.Close(); err != nil {
		t.Fatalf("close after the refusal: %v", err)
	}

	// The wrong hash in the middle of a good restore changes nothing.
	_, s, r = open(m)
	for i := range chunks {
		if i == mid {
			if err := r.Apply(uint32(i), chunks[i-1]); !errors.As(err, new(snapshot.ErrChunkHash)) || snapshot.Refused(err) {
				t.Fatalf("chunk %d of the wrong hash: %v", i, err)
			}
		}
		if err := r.Apply(uint32(i), chunks[i]); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	importEnded(t, r)
	if v, root := s.LastCommit(); v != m.Height || !bytes.Equal(root, m.Root) {
		t.Fatalf("restored %d %X", v, root)
	}

	// Another chain's whole tree under the trusted root: it imports, and is refused
	// at the last chunk, once its root is known.
	om, ochunks := export(t, chain(t, 41), 8<<10)
	db, s, r = open(snapshot.Manifest{Format: om.Format, Height: om.Height, Root: m.Root, Chunks: om.Chunks})
	if i, err := restoreChunks(r, ochunks); !errors.As(err, new(snapshot.ErrRoot)) || i != len(ochunks)-1 {
		t.Fatalf("another tree: refused at %d of %d: %v", i, len(ochunks), err)
	}
	importEnded(t, r)
	empty(t, db, s)

	// Closed mid-way, with chunks handed over and not imported yet.
	db, s, r = open(m)
	for i := range mid {
		if err := r.Apply(uint32(i), chunks[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); !errors.As(err, new(snapshot.ErrAbandoned)) {
		t.Fatalf("close: %v", err)
	}
	importEnded(t, r)
	empty(t, db, s)
}

// Export's pipeline: an emit that fails ends the export with its error, and emit is
// not called again.
func TestExportEmitFails(t *testing.T) {
	t.Parallel()
	c := chain(t, 20)
	stop := errors.New("the disk is full")
	calls := 0
	_, err := snapshot.Export(c.Store, c.Height, 4<<10, func(i uint32, _ []byte) error {
		calls++
		if i == 1 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 2 {
		t.Fatalf("%d calls, %v", calls, err)
	}
}
