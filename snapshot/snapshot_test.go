package snapshot_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"slices"
	"testing"

	dbm "github.com/cosmos/cosmos-db"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/sim"
	"github.com/ttld-dev/ttld/snapshot"
)

// chain runs a simulated chain (documents with and without ttl, time-range windows,
// moderators' removals, pools) for blocks blocks and returns its store.
func chain(t *testing.T, blocks int) *sim.Chain {
	t.Helper()
	c, _ := generated(t, blocks)
	return c
}

// generated is chain with the generator of its blocks, to go on with.
func generated(t *testing.T, blocks int) (*sim.Chain, *sim.Generator) {
	t.Helper()
	c, err := sim.Open(dbm.NewMemDB())
	if err != nil {
		t.Fatal(err)
	}
	g := sim.NewGenerator(8, 20)
	if _, err := c.InitChain(g.Genesis(), g.Validators()...); err != nil {
		t.Fatal(err)
	}
	for range blocks {
		at, txs, err := c.NextBlock(g, 40)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Block(at, txs); err != nil {
			t.Fatal(err)
		}
	}
	return c, g
}

// export cuts the chain's last saved version into chunks of about chunkBytes.
func export(t *testing.T, c *sim.Chain, chunkBytes int) (snapshot.Manifest, [][]byte) {
	t.Helper()
	var chunks [][]byte
	m, err := snapshot.Export(c.Store, c.Height, chunkBytes, func(i uint32, chunk []byte) error {
		if int(i) != len(chunks) {
			t.Fatalf("chunk %d after %d", i, len(chunks))
		}
		chunks = append(chunks, chunk)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, chunks
}

func emptyStore(t *testing.T) *drive.Store {
	t.Helper()
	s, err := drive.NewStore(dbm.NewMemDB(), drive.Options{CacheSize: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// entries reads every key and value of a saved version.
func entries(t *testing.T, s *drive.Store, v int64) [][2][]byte {
	t.Helper()
	kv, err := s.Saved(v)
	if err != nil {
		t.Fatal(err)
	}
	var out [][2][]byte
	err = kv.Iterate(nil, nil, func(k, v []byte) (bool, error) {
		out = append(out, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A state with every kind of record, exported in many chunks and imported into an
// empty store, has the same root and the same keys and values; its manifest survives
// its encoding.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	c := chain(t, 150)
	want := entries(t, c.Store, c.Height)
	kinds := map[string]int{}
	for _, e := range want {
		k := e[0]
		switch p, ok := drive.ParseDocumentKey(k); {
		case ok && p.Window != nil:
			kinds["time-range window entries"]++
		case ok && p.Entry == drive.DocumentEntryDocument:
			kinds["documents"]++
		}
		if _, _, ok := drive.ParseExpirationKey(k); ok {
			kinds["ttl entries"]++
		}
		if _, _, ok := drive.ParseLifetimePoolKey(k); ok {
			kinds["lifetime pools"]++
		}
		if _, _, _, ok := drive.ParseRemovalKey(k); ok {
			kinds["removal records"]++
		}
		if _, _, _, ok := drive.ParseEpochKey(k); ok {
			kinds["epoch pools"]++
		}
		if _, ok := drive.ParseValidatorKey(k); ok {
			kinds["validators"]++
		}
		if _, _, _, ok := drive.ParseValidatorProposalKey(k); ok {
			kinds["validator proposals"]++
		}
		if _, _, ok := drive.ParseMisbehaviorKey(k); ok {
			kinds["misbehaviour"]++
		}
	}
	for _, kind := range []string{"documents", "ttl entries", "time-range window entries", "lifetime pools", "removal records", "epoch pools", "validators", "validator proposals", "misbehaviour"} {
		if kinds[kind] == 0 {
			t.Fatalf("the simulated state holds no %s: %v", kind, kinds)
		}
	}
	m, chunks := export(t, c, 64<<10)
	if len(chunks) < 3 {
		t.Fatalf("%d chunks of %d entries: want several", len(chunks), len(want))
	}
	back, err := snapshot.DecodeManifest(m.Encode())
	if err != nil || back.Height != m.Height || !bytes.Equal(back.Root, m.Root) || len(back.Chunks) != len(m.Chunks) || !bytes.Equal(back.Hash(), m.Hash()) {
		t.Fatalf("manifest %+v decoded as %+v, %v", m, back, err)
	}
	_, root := c.Store.LastCommit()
	if !bytes.Equal(m.Root, root) {
		t.Fatalf("manifest root %X, the store's %X", m.Root, root)
	}

	s := emptyStore(t)
	r, err := snapshot.NewRestorer(s, back, root)
	if err != nil {
		t.Fatal(err)
	}
	for i, chunk := range chunks {
		if err := r.Apply(uint32(i), chunk); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	if v, got := s.LastCommit(); v != c.Height || !bytes.Equal(got, root) {
		t.Fatalf("restored %d %X, want %d %X", v, got, c.Height, root)
	}
	got := entries(t, s, c.Height)
	if len(got) != len(want) {
		t.Fatalf("restored %d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i][0], want[i][0]) || !bytes.Equal(got[i][1], want[i][1]) {
			t.Fatalf("entry %d: %X=%X, want %X=%X", i, got[i][0], got[i][1], want[i][0], want[i][1])
		}
	}
	t.Logf("%d entries (%v) in %d chunks, restored with root %X", len(want), kinds, len(chunks), root)
}

// A chunk that is not the manifest's is refused and changes nothing: corrupted, cut
// short, another one (reordered), or out of turn.
func TestChunksRefused(t *testing.T) {
	t.Parallel()
	c := chain(t, 40)
	m, chunks := export(t, c, 16<<10)
	if len(chunks) < 3 {
		t.Fatalf("%d chunks: want several", len(chunks))
	}
	s := emptyStore(t)
	r, err := snapshot.NewRestorer(s, m, m.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	flipped := bytes.Clone(chunks[0])
	flipped[len(flipped)/2] ^= 1
	for name, try := range map[string]struct {
		index uint32
		chunk []byte
	}{
		"corrupted": {0, flipped},
		"truncated": {0, chunks[0][:len(chunks[0])-1]},
		"reordered": {0, chunks[1]},
	} {
		var h snapshot.ErrChunkHash
		if err := r.Apply(try.index, try.chunk); !errors.As(err, &h) || snapshot.Refused(err) || r.Next() != 0 {
			t.Errorf("%s: %v, next %d", name, err, r.Next())
		}
	}
	if err := r.Apply(1, chunks[1]); !errors.As(err, new(snapshot.ErrChunkOrder)) || snapshot.Refused(err) || r.Next() != 0 {
		t.Errorf("chunk 1 first: %v", err)
	}
	for i, chunk := range chunks {
		if err := r.Apply(uint32(i), chunk); err != nil {
			t.Fatalf("chunk %d after the refusals: %v", i, err)
		}
		if err := r.Apply(0, chunks[0]); err != nil {
			t.Fatalf("chunk 0 again after chunk %d: %v", i, err)
		}
	}
	if !r.Done() {
		t.Fatal("not done after the last chunk")
	}
	if v, root := s.LastCommit(); v != m.Height || !bytes.Equal(root, m.Root) {
		t.Fatalf("restored %d %X", v, root)
	}
}

// empty fails t unless db holds no key and a store opened over it holds no version.
func empty(t *testing.T, db dbm.DB, s *drive.Store) {
	t.Helper()
	if v, _ := s.LastCommit(); v != 0 {
		t.Fatalf("the store holds version %d", v)
	}
	it, err := db.Iterator(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if it.Valid() {
		t.Fatalf("the database holds %X", it.Key())
	}
	again, err := drive.NewStore(db, drive.Options{CacheSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := again.LastCommit(); v != 0 {
		t.Fatalf("reopened, the store holds version %d", v)
	}
}

// A restore refused or abandoned leaves nothing of what it imported, committed or not;
// one cut short by a crash (the process gone, the database kept) is emptied when a
// store is next opened over it. A store that holds a state takes no import.
func TestRefusedRestoreLeavesNothing(t *testing.T) {
	t.Parallel()
	c := chain(t, 40)
	m, chunks := export(t, c, 16<<10)
	open := func() (dbm.DB, *drive.Store, *snapshot.Restorer) { return openRestore(t, m) }
	// Abandoned after two chunks.
	db, s, r := open()
	for i := range 2 {
		if err := r.Apply(uint32(i), chunks[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); !errors.As(err, new(snapshot.ErrAbandoned)) {
		t.Fatalf("close: %v", err)
	}
	empty(t, db, s)
	// Every chunk but with the last one's items twice: committed, then refused.
	last := len(chunks) - 1
	doubled := append(bytes.Clone(chunks[last]), chunks[last]...)
	forged := snapshot.Manifest{Format: m.Format, Height: m.Height, Root: m.Root, Chunks: append(slices.Clone(m.Chunks[:last]), sha256.Sum256(doubled))}
	db = dbm.NewMemDB()
	s, err := drive.NewStore(db, drive.Options{CacheSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if r, err = snapshot.NewRestorer(s, forged, m.Root); err != nil {
		t.Fatal(err)
	}
	for i := range last {
		if err := r.Apply(uint32(i), chunks[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Apply(uint32(last), doubled); !snapshot.Refused(err) {
		t.Fatalf("the last chunk's items twice: %v", err)
	}
	empty(t, db, s)
	// Another chain's whole tree under the trusted root: committed, then refused.
	om, ochunks := export(t, chain(t, 41), 16<<10)
	db = dbm.NewMemDB()
	if s, err = drive.NewStore(db, drive.Options{CacheSize: 1000}); err != nil {
		t.Fatal(err)
	}
	r, err = snapshot.NewRestorer(s, snapshot.Manifest{Format: om.Format, Height: om.Height, Root: m.Root, Chunks: om.Chunks}, m.Root)
	if err != nil {
		t.Fatal(err)
	}
	for i, chunk := range ochunks {
		err = r.Apply(uint32(i), chunk)
	}
	if !errors.As(err, new(snapshot.ErrRoot)) {
		t.Fatalf("another tree: %v", err)
	}
	empty(t, db, s)
	// Cut short by a crash: nothing closed, the database opened again.
	db, _, r = open()
	for i := range 2 {
		if err := r.Apply(uint32(i), chunks[i]); err != nil {
			t.Fatal(err)
		}
	}
	s, err = drive.NewStore(db, drive.Options{CacheSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	empty(t, db, s)
	// A store with a state.
	if _, err := snapshot.NewRestorer(c.Store, m, m.Root); !errors.As(err, new(drive.ErrImport)) {
		t.Fatalf("an import over a state: %v", err)
	}
}

// A manifest whose chunks hash right but make no tree, or a tree of another root, is
// refused whole: the root the light client trusts is the judge, not the manifest.
func TestSnapshotsRefused(t *testing.T) {
	t.Parallel()
	c := chain(t, 30)
	m, chunks := export(t, c, 1<<30)
	if len(chunks) != 1 {
		t.Fatalf("%d chunks, want one", len(chunks))
	}
	// Another height's root: refused before anything is imported.
	other := bytes.Clone(m.Root)
	other[0] ^= 1
	if _, err := snapshot.NewRestorer(emptyStore(t), m, other); !snapshot.Refused(err) {
		t.Fatalf("a manifest of another root: %v", err)
	}
	// A manifest that claims the trusted root for other items: refused at the end.
	all, err := snapshot.ChunkItems(m.Format, 0, chunks[0])
	if err != nil {
		t.Fatal(err)
	}
	half := snapshot.EncodeChunk(m.Format, all[:len(all)/2])
	forged := snapshot.Manifest{Format: m.Format, Height: m.Height, Root: m.Root, Chunks: [][sha256.Size]byte{sha256.Sum256(half)}}
	r, err := snapshot.NewRestorer(emptyStore(t), forged, m.Root)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Apply(0, half); !snapshot.Refused(err) {
		t.Fatalf("half the items under the trusted root: %v", err)
	}
	// Items that make no tree at all: a lone inner node.
	lone := snapshot.EncodeChunk(m.Format, snapshot.AppendItem(nil, drive.TreeNode{Key: []byte("k"), Version: 1, Height: 3}))
	forged.Chunks = [][sha256.Size]byte{sha256.Sum256(lone)}
	r, err = snapshot.NewRestorer(emptyStore(t), forged, m.Root)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Apply(0, lone); !errors.As(err, new(drive.ErrImport)) {
		t.Fatalf("a lone inner node: %v", err)
	}
	for name, b := range map[string][]byte{
		"cut short":       {0, 0, 0, 1},
		"another format":  snapshot.Manifest{Format: 3, Height: 1, Root: m.Root, Chunks: m.Chunks}.Encode(),
		"no chunk":        snapshot.Manifest{Format: snapshot.Format1, Height: 1, Root: m.Root}.Encode(),
		"height 0":        snapshot.Manifest{Format: snapshot.Format1, Root: m.Root, Chunks: m.Chunks}.Encode(),
		"a trailing byte": append(m.Encode(), 0),
	} {
		if _, err := snapshot.DecodeManifest(b); !errors.As(err, new(snapshot.ErrManifest)) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzApply: no chunk bytes, as items (format 1) or as a compressed chunk (format 2),
// make a restore panic, take more than MaxChunkBytes once decompressed, or leave its
// import goroutine running.
func FuzzApply(f *testing.F) {
	leaf := snapshot.AppendItem(nil, drive.TreeNode{Key: []byte("a"), Value: []byte("b"), Version: 1})
	two := snapshot.AppendItem(bytes.Clone(leaf), drive.TreeNode{Key: []byte("a"), Version: 2, Height: 1})
	for _, items := range [][]byte{leaf, two, {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}} {
		f.Add(items, uint32(1))
		f.Add(snapshot.EncodeChunk(snapshot.Format2, items), uint32(2))
	}
	f.Fuzz(func(t *testing.T, chunk []byte, format uint32) {
		if !snapshot.Restores(format) {
			format = snapshot.Format2
		}
		m := snapshot.Manifest{Format: format, Height: 2, Root: make([]byte, sha256.Size), Chunks: [][sha256.Size]byte{sha256.Sum256(chunk)}}
		r, err := snapshot.NewRestorer(emptyStore(t), m, m.Root)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := r.Apply(0, chunk); err == nil {
			t.Fatalf("%X restored to the zero root", chunk)
		}
		select {
		case <-r.ImportEnded():
		default:
			t.Fatal("the import goroutine still runs")
		}
	})
}

// FuzzDecodeManifest: no metadata a peer offers makes decoding panic, and what decodes
// encodes back to the same bytes.
func FuzzDecodeManifest(f *testing.F) {
	f.Add(snapshot.Manifest{Format: snapshot.Format1, Height: 7, Root: make([]byte, sha256.Size), Chunks: make([][sha256.Size]byte, 2)}.Encode())
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 32})
	f.Add([]byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 32})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := snapshot.DecodeManifest(b)
		if err != nil {
			return
		}
		if !bytes.Equal(m.Encode(), b) || m.Height < 1 {
			t.Fatalf("%X decoded as %+v, which encodes as %X", b, m, m.Encode())
		}
	})
}

// openRestore starts a restore of m's snapshot into an empty store over a new database.
func openRestore(t *testing.T, m snapshot.Manifest) (dbm.DB, *drive.Store, *snapshot.Restorer) {
	t.Helper()
	db := dbm.NewMemDB()
	s, err := drive.NewStore(db, drive.Options{CacheSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	r, err := snapshot.NewRestorer(s, m, m.Root)
	if err != nil {
		t.Fatal(err)
	}
	return db, s, r
}
