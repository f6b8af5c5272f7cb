package abci

import (
	"encoding/binary"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cosmos/iavl"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// Reading ahead (docs/ARCHITECTURE.md, "Where the state lives"): other goroutines read
// what a block is about to read from the last saved version, the state the block
// starts from, so that its execution finds the paths in IAVL's node cache instead of
// loading them from goleveldb. They read only that saved version, through
// drive.Store.Saved, which no write of the working tree changes, and they write nothing
// anyone reads: what a block does is the same with or without them
// (TestReadAheadChangesNothing). They read, on every core:
//
//   - after a commit, while the node waits for the next proposal: the documents the next
//     block's cleanup is the first to delete, the expirations tree's first
//     MaxDocumentExpirationsPerBlock entries, each resolved to its document and removed
//     on a scratch branch, which reads its row, index entries and count records and is
//     then dropped; then the path of every key that removal wrote, with the sibling of
//     each node on it (drive.ReadWritePath), which the working tree's removal loads and
//     no read walks;
//   - when a block starts executing: the same for the entries due at its time, the last
//     first, while the block removes them from the first, so that the two meet in the
//     middle instead of walking the same cold paths together.
//
// A block's transactions are not read ahead: CheckTx and its rechecks have read the
// signers and recipients of those that came through this node's mempool, and reading
// those of the others (checked on a scratch branch without their signatures) took the
// cores the block's signature checks and execution need, for paths the node cache
// mostly held already: every block measured slower with it (docs/BENCHMARKS.md, "Reads
// without walks"). One reading runs at a time: starting one stops the last. Stopping
// does not wait for the reads under way, which end on their own (a read of a saved
// version is safe beside the working tree's writes, Store.Saved); only ReadAhead, before
// the store is closed, waits for them.

// reader is reading ahead in progress.
type reader struct{ stopped atomic.Bool }

// stop tells the reading to start no more reads. A nil reader is none.
func (r *reader) stop() {
	if r != nil {
		r.stopped.Store(true)
	}
}

// readAhead stops the reading in progress and, when reading ahead is on, starts the
// reads work lists of the last saved version v, on every core, last first. Nothing is
// read before the first commit.
func (a *Application) readAhead(work func(v int64, saved drive.KV) []func()) {
	a.reading.stop()
	a.reading = nil
	if !a.readsAhead {
		return
	}
	v, _ := a.store.LastCommit()
	saved, err := a.store.Saved(v)
	if err != nil {
		return
	}
	r := &reader{}
	a.readers.Add(1)
	go func() {
		defer a.readers.Done()
		reads := work(v, saved)
		var next atomic.Int64
		var workers sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			workers.Add(1)
			go func() {
				defer workers.Done()
				for !r.stopped.Load() {
					i := int(next.Add(1)) - 1
					if i >= len(reads) {
						return
					}
					reads[len(reads)-1-i]()
				}
			}()
		}
		workers.Wait()
	}()
	a.reading = r
}

// readBlockAhead reads ahead the documents blk's cleanup deletes, and returns the
// function that stops it, which the caller calls before the block is committed.
func (a *Application) readBlockAhead(blk app.Block) (stop func()) {
	a.readAhead(func(v int64, saved drive.KV) []func() {
		version, err := drive.GetProtocolVersion(saved)
		if err != nil {
			return nil
		}
		return a.expiringReads(v, saved, version, blk.TimeMs)
	})
	return func() {
		a.reading.stop()
		a.reading = nil
	}
}

// readCleanupAhead reads ahead the documents the next block's cleanup is the first to
// delete.
func (a *Application) readCleanupAhead() {
	a.readAhead(func(v int64, saved drive.KV) []func() {
		version, err := drive.GetProtocolVersion(saved)
		if err != nil {
			return nil
		}
		reads := a.expiringReads(v, saved, version, math.MaxUint64)
		slices.Reverse(reads) // the first to expire first
		return reads
	})
}

// expiringReads lists the reads of the cleanup's removals of the expirations tree's
// entries due at atMs in saved version v, at most MaxDocumentExpirationsPerBlock,
// oldest first. A read that fails is dropped: the execution meets the failure itself.
func (a *Application) expiringReads(v int64, saved drive.KV, version protocol.Version, atMs uint64) []func() {
	limits, err := protocol.LimitsFor(version)
	if err != nil || !limits.TTL() {
		return nil
	}
	prefix := drive.ExpirationsPrefix()
	end := drive.PrefixEnd(binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), atMs))
	if atMs == math.MaxUint64 {
		end = drive.PrefixEnd(prefix)
	}
	var reads []func()
	// NB: Store.Saved's Iterate reads its whole range before it calls back; the
	// tree's own iterator stops at the budget.
	_ = a.store.View(v, func(t *iavl.ImmutableTree) error {
		return drive.ReadTree(t).Iterate(prefix, end, func(k, val []byte) (bool, error) {
			key, value := append([]byte(nil), k...), append([]byte(nil), val...)
			reads = append(reads, func() { readExpiring(saved, version, key, value) })
			return len(reads) == limits.MaxDocumentExpirationsPerBlock, nil
		})
	})
	return reads
}

// readExpiring reads what the cleanup's removal of the expirations entry (key, value)
// loads: the document's contract and row, through a removal on a scratch branch its
// index entries and count records, and the paths of the keys that removal writes with
// their siblings.
func readExpiring(saved drive.KV, version protocol.Version, key, value []byte) {
	_, id, ok := drive.ParseExpirationKey(key)
	if !ok {
		return
	}
	cid, typeName, ok := drive.DecodeExpiration(value)
	if !ok {
		return
	}
	c, found, err := drive.GetContract(saved, cid, version)
	if err != nil || !found {
		return
	}
	dt, ok := c.DocumentType(typeName)
	if !ok {
		return
	}
	t := drive.DocumentType{Contract: cid, DocumentType: dt}
	d, found, err := drive.GetDocument(saved, t, id)
	if err != nil || !found {
		return
	}
	w := &writesOf{KV: drive.NewCache(saved)}
	if err := drive.RemoveDocument(w, &drive.Storage{}, t, d); err != nil {
		return
	}
	for _, k := range w.keys {
		if drive.ReadWritePath(saved, k) != nil {
			return
		}
	}
}

// writesOf is a KV that lists the keys written through it, in the order written.
type writesOf struct {
	drive.KV
	keys [][]byte
}

func (w *writesOf) Set(key, value []byte) error {
	w.keys = append(w.keys, append([]byte(nil), key...))
	return w.KV.Set(key, value)
}

func (w *writesOf) Delete(key []byte) error {
	w.keys = append(w.keys, append([]byte(nil), key...))
	return w.KV.Delete(key)
}

// ReadAhead turns reading ahead on or off (app.toml's read_ahead). It stops the reading
// in progress and waits until every read has ended, so that the store may be closed
// after it: call it before the node starts or after it stopped.
func (a *Application) ReadAhead(on bool) {
	a.reading.stop()
	a.reading = nil
	a.readers.Wait()
	a.readsAhead = on
}
