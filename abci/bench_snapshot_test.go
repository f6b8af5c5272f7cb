package abci

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dbm "github.com/cosmos/cosmos-db"
	"github.com/cosmos/iavl"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/snapshot"
)

// BenchmarkSnapshot measures state sync's two ends (docs/STATE.md, "Snapshots") on
// BenchmarkDocuments' state at 100,000 and 1,000,000 documents (benchPosts: benchChain's
// 10,000 identities, the post contract, the documents with their index entries and
// storage flags, on goleveldb on disk). Each iteration, on the last saved version:
//
//   - snapshot: Files.Take writes the snapshot into a new directory in chunks of
//     snapshot.DefaultChunkBytes, as a node's scheduler does after Commit; reported
//     as snapshot-s, with the snapshot's size (MiB), its chunks and the tree's leaves
//     (keys);
//   - restore: a Restorer imports the chunks, read one by one from those files, into an
//     empty store over a new goleveldb database opened with the node's write options
//     (-bench.restore-writes) and goleveldb's 8 MiB block cache, up to the
//     root check and the store's acceptance; reported as restore-s. The restored root
//     must be the source's.
//
// Both are reported in MiB/s of the snapshot too. The chunks a restore reads were just
// written, so they come from the page cache: a joining node receives them from its
// peers instead. Writing the million takes most of the run (about 12 minutes on 2
// cores; -v prints it). One iteration gives every figure:
//
//	go test -run '^$' -bench '^BenchmarkSnapshot$' -benchtime 1x -timeout 60m ./abci/
//
// -bench.snapshot-docs chooses the sizes; -bench.snapshot-state keeps each state written
// in a folder of its own, which later runs open instead of writing it again.
func BenchmarkSnapshot(b *testing.B) {
	var sizes []int
	for _, f := range strings.Split(*benchSnapshotDocs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("-bench.snapshot-docs %q: each size must be a number of at least 1", *benchSnapshotDocs)
		}
		sizes = append(sizes, n)
	}
	for _, docs := range sizes {
		b.Run(fmt.Sprintf("documents=%d", docs), func(b *testing.B) {
			src := benchSnapshotState(b, docs)
			b.Run("take-restore", func(b *testing.B) { benchSnapshot(b, src) })
		})
	}
}

// benchSnapshotDocs are the sizes of BenchmarkSnapshot's states, in documents.
var benchSnapshotDocs = flag.String("bench.snapshot-docs", "100000,1000000", "documents of BenchmarkSnapshot's states, comma-separated")

// benchSnapshotStates is a directory keeping BenchmarkSnapshot's states between runs.
// A state opened from it was written by an earlier process, so goleveldb compacts
// nothing of it meanwhile, where a state just written may still be compacting while it
// is taken.
var benchSnapshotStates = flag.String("bench.snapshot-state", "", "directory keeping BenchmarkSnapshot's states between runs, one folder per size (empty: each run writes them)")

// benchRestoreWrites is goleveldb's write buffer, table size and level-1 size of the
// restored database, in MiB: by default node.ApplicationDBWriteBufferMiB,
// ApplicationDBTableMiB and ApplicationDBLevel1MiB, as the node opens it (abci cannot
// import node); 4:2:10 are goleveldb's own.
var benchRestoreWrites = flag.String("bench.restore-writes", "64:16:256", "goleveldb write buffer, table size and level-1 size of the restored database in MiB, w:t:l1 (default: as the node opens it; 4:2:10 goleveldb's own)")

// benchSnapshotState is the store of benchPosts' state of docs documents: written now,
// or opened from -bench.snapshot-state where an earlier run kept it.
func benchSnapshotState(b *testing.B, docs int) *drive.Store {
	kept := ""
	if *benchSnapshotStates != "" {
		kept = filepath.Join(*benchSnapshotStates, fmt.Sprintf("documents-%d", docs))
		if _, err := os.Stat(filepath.Join(kept, "application.db")); err == nil {
			return openBenchStore(b, kept)
		}
	}
	start := time.Now()
	h, _, _ := benchPosts(b, docs)
	b.Logf("%d documents written in %s", docs, time.Since(start).Round(time.Second))
	if kept == "" {
		return h.store
	}
	h.app.ReadAhead(false)
	if err := errors.Join(h.store.Close(), h.db.Close(), os.MkdirAll(kept, 0o755)); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(filepath.Join(h.dbDir, "application.db"), filepath.Join(kept, "application.db")); err != nil {
		b.Fatal(err)
	}
	return openBenchStore(b, kept)
}

// openBenchStore opens the store of the application database in dir as a node opens
// it, closed when b ends.
func openBenchStore(b *testing.B, dir string) *drive.Store {
	db := openBenchDB(b, dir, *benchBlockCache)
	store, err := drive.NewStore(db, drive.Options{CacheSize: *benchCache})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	return store
}

func benchSnapshot(b *testing.B, src *drive.Store) {
	height, root := src.LastCommit()
	var keys int64
	if err := src.View(height, func(t *iavl.ImmutableTree) error {
		keys = t.Size()
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	var took, restored time.Duration
	var size int64
	var chunks int
	b.ResetTimer()
	for range b.N {
		dir := b.TempDir()
		files, err := snapshot.OpenFiles(filepath.Join(dir, snapshot.DirName))
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		m, n, err := files.Take(src, height, 0, nil)
		if err != nil {
			b.Fatal(err)
		}
		took += time.Since(start)
		if !bytes.Equal(m.Root, root) {
			b.Fatalf("snapshot root %X, the store's %X", m.Root, root)
		}
		size, chunks = n, len(m.Chunks)

		b.StopTimer()
		var wb, table, l1 int
		if _, err := fmt.Sscanf(*benchRestoreWrites, "%d:%d:%d", &wb, &table, &l1); err != nil {
			b.Fatalf("-bench.restore-writes %q: %v", *benchRestoreWrites, err)
		}
		db, err := dbm.NewGoLevelDBWithOpts("application", dir, &opt.Options{Filter: filter.NewBloomFilter(10),
			WriteBuffer: wb * opt.MiB, CompactionTableSize: table * opt.MiB, CompactionTotalSize: l1 * opt.MiB})
		if err != nil {
			b.Fatal(err)
		}
		dst, err := drive.NewStore(db, drive.Options{CacheSize: *benchCache})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start = time.Now()
		restoreFiles(b, dst, files, m, root)
		restored += time.Since(start)
		b.StopTimer()
		// How long goleveldb held the import's writes back while it compacted.
		delay, _ := db.DB().GetProperty("leveldb.writedelay")
		b.Logf("restored database's write delays: %s", delay)
		if v, got := dst.LastCommit(); v != height || !bytes.Equal(got, root) {
			b.Fatalf("restored version %d root %X, the source's %d %X", v, got, height, root)
		}
		// The next iteration writes another snapshot and database: free the disk now.
		if err := errors.Join(dst.Close(), db.Close(), os.RemoveAll(dir)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	mib := float64(size) / (1 << 20)
	perTake, perRestore := took.Seconds()/float64(b.N), restored.Seconds()/float64(b.N)
	b.ReportMetric(perTake, "snapshot-s")
	b.ReportMetric(perRestore, "restore-s")
	b.ReportMetric(mib, "MiB")
	b.ReportMetric(mib/perTake, "snapshot-MiB/s")
	b.ReportMetric(mib/perRestore, "restore-MiB/s")
	b.ReportMetric(float64(chunks), "chunks")
	b.ReportMetric(float64(keys), "keys")
}

// restoreFiles imports snapshot m from files into the empty store dst, chunk by chunk
// in order, trusting root as a joining node trusts its light client's app hash.
func restoreFiles(b *testing.B, dst *drive.Store, files *snapshot.Files, m snapshot.Manifest, root []byte) {
	r, err := snapshot.NewRestorer(dst, m, root)
	if err != nil {
		b.Fatal(err)
	}
	for i := range m.Chunks {
		chunk, err := files.Chunk(m.Height, uint32(i))
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Apply(uint32(i), chunk); err != nil {
			b.Fatalf("chunk %d of %d: %v", i, len(m.Chunks), err)
		}
	}
	if !r.Done() {
		b.Fatalf("restore not done after the %d chunks", len(m.Chunks))
	}
}
