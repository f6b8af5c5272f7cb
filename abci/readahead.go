package abci

import (
	"crypto/ed25519"
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// Reading ahead (docs/ARCHITECTURE.md, "Reading ahead"): while a block executes on the
// consensus goroutine, other goroutines read what it is about to read from the last
// saved version, the state the block starts from, so that the execution finds those
// values in the store's read cache and their paths in IAVL's node cache. They read
// only that saved version, through drive.Store.Saved, which the block's writes never
// change, and they write nothing anyone reads: what the block does is the same with or
// without them (TestReadAheadChangesNothing). What they read:
//
//   - the documents the block's cleanup is to delete: the expirations tree's entries
//     due at the block time, up to MaxDocumentExpirationsPerBlock, each resolved to its
//     document and removed on a scratch branch, which reads its row and index entries
//     and is then dropped;
//   - every transaction, checked on a scratch branch without its signature: its
//     signer's and recipient's state, and whatever else it reads.
//
// The work goes in the reverse of the order the block reads it (the cleanup's last
// document first, then the last transaction), so that the execution and the reading
// ahead meet in the middle instead of walking the same cold paths together.

// readAhead starts reading ahead for blk on every core and returns the function that
// stops it and waits until every read has ended; the caller calls it before the block
// is committed. Nothing is read before the first commit.
func (a *Application) readAhead(blk app.Block) (stop func()) {
	if !a.readsAhead {
		return func() {}
	}
	saved, err := a.store.Saved(0)
	if err != nil {
		return func() {}
	}
	var stopped atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		work := readAheadWork(saved, blk)
		var next atomic.Int64
		var workers sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			workers.Add(1)
			go func() {
				defer workers.Done()
				for !stopped.Load() {
					i := int(next.Add(1)) - 1
					if i >= len(work) {
						return
					}
					work[len(work)-1-i]()
				}
			}()
		}
		workers.Wait()
	}()
	return func() {
		stopped.Store(true)
		wg.Wait()
	}
}

// readAheadWork lists the reads of blk, each a function, in the order the block makes
// them. A read that fails is dropped: the execution meets the failure itself.
func readAheadWork(saved drive.KV, blk app.Block) []func() {
	version, err := drive.GetProtocolVersion(saved)
	if err != nil {
		return nil
	}
	var work []func()
	for _, tx := range blk.Txs {
		work = append(work, func() {
			_, _ = app.CheckTx(drive.NewCache(saved), tx, blk.TimeMs, unverified{})
		})
	}
	limits, err := protocol.LimitsFor(version)
	if err != nil || !limits.TTL() {
		return work
	}
	prefix := drive.ExpirationsPrefix()
	end := drive.PrefixEnd(binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), blk.TimeMs))
	var due [][2][]byte
	_ = saved.Iterate(prefix, end, func(k, v []byte) (bool, error) {
		due = append(due, [2][]byte{append([]byte(nil), k...), append([]byte(nil), v...)})
		return len(due) == limits.MaxDocumentExpirationsPerBlock, nil
	})
	for _, e := range due {
		work = append(work, func() { readExpiring(saved, version, e[0], e[1]) })
	}
	return work
}

// readExpiring reads what the cleanup's removal of the expirations entry (key, value)
// reads: the document's contract and row, and, through a removal on a scratch branch,
// its index entries and count records.
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
	_ = drive.RemoveDocument(drive.NewCache(saved), &drive.Storage{}, t, d)
}

// unverified accepts every signature: reading ahead checks a transaction for what it
// reads, on a branch that is dropped, and leaves its signature to the block.
type unverified struct{}

func (unverified) Verify(ed25519.PublicKey, []byte, []byte) bool { return true }

// ReadAhead turns reading ahead on or off; node.Start sets it from app.toml.
func (a *Application) ReadAhead(on bool) { a.readsAhead = on }
