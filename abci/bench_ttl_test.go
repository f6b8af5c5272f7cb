package abci

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/protocol"
)

// benchTTLType is a document type of the ttl benchmarks: a one-hour ttl, three
// properties (a 32-byte author, a title, a number), documents of about 100 bytes, and
// the given indexes.
func benchTTLType(indices string) string {
	return `{"type":"object","ttl":3600,"properties":{` +
		`"author":{"type":"array","byteArray":true,"minItems":32,"maxItems":32,"contentMediaType":"application/x.dash.dpp.identifier","position":0},` +
		`"title":{"type":"string","maxLength":63,"position":1},` +
		`"n":{"type":"integer","position":2}},` +
		`"required":["$createdAt","author","title","n"],"additionalProperties":false,` +
		`"indices":[` + indices + `]}`
}

// benchTTLContract has two deletable types with a one-hour ttl: "one" with one index
// (weight 2 in the cleanup's budget) and "three" with three (weight 4).
var benchTTLContract = `{"documentSchemas":{` +
	`"one":` + benchTTLType(`{"name":"byTitle","properties":[{"title":"asc"}]}`) + `,` +
	`"three":` + benchTTLType(`{"name":"byTitle","properties":[{"title":"asc"}]},{"name":"byAuthor","properties":[{"author":"asc"}]},{"name":"byN","properties":[{"n":"asc"}]}`) + `}}`

// benchTTLTypes are benchTTLContract's types, in the order the benchmarks index them.
var benchTTLTypes = [2]string{"one", "three"}

// expiryBatch is max_document_expirations_per_block: what one block's cleanup removes.
const expiryBatch = 128

// benchTTLChain starts benchChain at protocol version 14 and registers benchTTLContract
// (owned by the first identity). It returns the contract's two types.
func benchTTLChain(b *testing.B) (*harness, []benchIdentity, [2]drive.DocumentType) {
	return benchTTLChainAt(b, protocol.V14)
}

// benchTTLChainAt is benchTTLChain at protocol version v.
func benchTTLChainAt(b *testing.B, v protocol.Version) (*harness, []benchIdentity, [2]drive.DocumentType) {
	h, ids := benchChainWith(b, func(_ *harness, st *genesis.AppState) { st.ProtocolVersion = v })
	owner := &ids[0]
	owner.nonce++
	res := h.block(genesisTime.Add(2*time.Second), [][]byte{protocol.Sign(testChainID, &protocol.DataContractCreate{Identity: owner.id, Nonce: owner.nonce, Definition: []byte(benchTTLContract)}, owner.key)})
	if res.TxResults[0].Code != 0 {
		b.Fatalf("contract refused: %s", res.TxResults[0].Log)
	}
	c, ok, err := drive.GetContract(h.store.Working(), protocol.NewContractID(owner.id, owner.nonce), v)
	if err != nil || !ok {
		b.Fatal(err)
	}
	var types [2]drive.DocumentType
	for i, name := range benchTTLTypes {
		dt, _ := c.DocumentType(name)
		types[i] = drive.DocumentType{Contract: c.ID, DocumentType: dt}
	}
	return h, ids, types
}

// benchExpiry is a chain prefilled with documents of both ttl types whose expiry times
// are laid out for the timed blocks: batch k of type i (documents k*128 .. k*128+127 of
// it) expires at at(k, i) = base + 2k s + i s, so that a block at at(k, i) finds exactly
// that batch due, oldest first, and everything later waits.
type benchExpiry struct {
	h       *harness
	ids     []benchIdentity
	types   [2]drive.DocumentType
	base    time.Time
	batches int // per type
	// front is the next batch the cleanup removes, back the last batch not yet
	// deleted by its owners.
	front, back int
	// live counts the documents stored.
	live int
}

func (e *benchExpiry) at(k, i int) time.Time {
	return e.base.Add(time.Duration(2*k+i) * time.Second)
}

// doc is document j of type i: owned by identity j mod 10,000, created an hour before
// its batch expires.
func (e *benchExpiry) doc(i, j int) (protocol.Document, *benchIdentity) {
	owner := &e.ids[j%len(e.ids)]
	var entropy [32]byte
	binary.BigEndian.PutUint64(entropy[:], uint64(j))
	entropy[8] = byte(i)
	created := uint64(e.at(j/expiryBatch, i).Add(-time.Hour).UnixMilli())
	return protocol.Document{
		ID: protocol.NewDocumentID(e.types[i].Contract, owner.id, e.types[i].Name, entropy), Owner: owner.id, Revision: 1,
		CreatedAt: created, UpdatedAt: created,
		Values: []protocol.Value{{Set: true, Bytes: owner.id[:]}, {Set: true, Bytes: []byte(fmt.Sprintf("document %d of %s", j, e.types[i].Name))}, {Set: true, Int: int64(j)}},
	}, owner
}

// benchExpiryChain starts benchTTLChain and stores live documents, half of each type,
// through drive.InsertDocument (a ttl type's items carry no storage flags, and no fee
// is charged: no benchmark reads it), committed 20,000 at a time.
func benchExpiryChain(b *testing.B, live int) *benchExpiry {
	h, ids, types := benchTTLChain(b)
	e := &benchExpiry{h: h, ids: ids, types: types, base: genesisTime.Add(2*time.Hour + 10*time.Minute), batches: live / 2 / expiryBatch}
	e.back = e.batches - 1
	const chunk = 20_000
	n := e.batches * expiryBatch * 2
	e.live = n
	for done := 0; done < n; done += chunk {
		kv := h.store.Working()
		for k := done; k < min(done+chunk, n); k++ {
			i, j := k%2, k/2
			d, owner := e.doc(i, j)
			if err := drive.InsertDocument(kv, &drive.Storage{Payer: owner.id}, types[i], d); err != nil {
				b.Fatal(err)
			}
		}
		if _, _, err := h.store.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	h.open() // the application again, over the versions committed beside it
	// Two untimed blocks before the first batch: the first crosses the epoch change at
	// two hours, the second warms the caches.
	h.block(e.base.Add(-5*time.Minute), nil)
	h.block(e.base.Add(-time.Minute), nil)
	return e
}

// benchBlockGap is a pause after every block of BenchmarkExpireDocuments's extra pass,
// outside the times it reports: the wait for the next proposal a node has between
// blocks (CometBFT's timeout_commit, a second on ttld's nodes), which reading ahead
// uses. 0: no extra pass.
var benchBlockGap = flag.Duration("bench.block-gap", 0, "BenchmarkExpireDocuments: one more pass with this pause after every block, outside its time (0: none)")

// timedBlockGap is the pause after every block timedBlock runs; 0 but in
// BenchmarkExpireDocuments's gap passes.
var timedBlockGap time.Duration

// timedBlock runs one block through FinalizeBlock and Commit and returns its response,
// how long it took, and how much of it FinalizeBlock took; then it waits timedBlockGap.
func timedBlock(h *harness, at time.Time, txs [][]byte) (*abcitypes.ResponseFinalizeBlock, time.Duration, time.Duration) {
	defer time.Sleep(timedBlockGap)
	start := time.Now()
	res := h.finalize(at, txs)
	finalized := time.Since(start)
	if _, err := h.app.Commit(context.Background(), &abcitypes.RequestCommit{}); err != nil {
		h.t.Fatal(err)
	}
	h.height++
	if v, hash := h.store.LastCommit(); v != h.height || !bytes.Equal(hash, res.AppHash) {
		h.t.Fatalf("committed %d %X, FinalizeBlock said %d %X", v, hash, h.height, res.AppHash)
	}
	return res, time.Since(start), finalized
}

// expiredIn counts the block's document_expired events of type name, and all of them.
func expiredIn(res *abcitypes.ResponseFinalizeBlock, name string) (ofType, all int) {
	for _, ev := range res.Events {
		if ev.Type != protocol.EventDocumentExpired {
			continue
		}
		all++
		for _, a := range ev.Attributes {
			if a.Key == protocol.AttrType && a.Value == name {
				ofType++
			}
		}
	}
	return ofType, all
}

// BenchmarkExpireDocuments measures expire_documents at the full budget of 128
// documents a block, with 10,000 and 1,000,000 live documents stored (half of each
// type of benchTTLContract: one index, three indexes), against an empty block on the
// same state and against the owners' deletes of documents of the same types. Each
// iteration runs five blocks through FinalizeBlock and Commit on goleveldb, each timed
// (and the cleanup blocks' FinalizeBlock apart):
//
//   - an empty block (no transactions) whose cleanup removes the next 128 documents of
//     type "one", and one removing 128 of "three" (each checked: 128 document_expired
//     events, all of the type);
//   - an empty block with nothing due (no document_expired event);
//   - a block of 128 documents batches, each one owner's delete of one document of
//     "one" (signed before the timer, every one accepted), and one of "three"; the
//     deleted documents are the last to expire, which no timed cleanup reaches.
//
// A delete transaction also decodes the batch, verifies its ed25519 signature, reads
// the identity, contract and document, and pays its fee; the cleanup does none of it.
// Each size is written once and measured in two passes (writing the million takes
// minutes). The state shrinks by 512 documents an iteration: make bench-ttl runs 4 a
// pass (after Go's first run of 1), so the 10,000 end at about 4,900.
func BenchmarkExpireDocuments(b *testing.B) {
	sizes, err := benchLiveSizes()
	if err != nil {
		b.Fatal(err)
	}
	stores, err := benchStoreConfigs()
	if err != nil {
		b.Fatal(err)
	}
	table := benchCSV(b, "cleanup.csv", "live_documents", "indexes", "cleanup_ms")
	for _, live := range sizes {
		b.Run(fmt.Sprintf("live=%d", live), func(b *testing.B) {
			start := time.Now()
			e := benchExpiryChain(b, live)
			b.Logf("%d documents written in %s (IAVL node cache %d)", live, time.Since(start).Round(time.Second), *benchCache)
			if *benchStores == "" {
				benchExpirePasses(b, e, table)
				return
			}
			for _, st := range stores {
				b.Run(fmt.Sprintf("iavl=%d/leveldb=%dMiB", st.iavl, st.leveldb), func(b *testing.B) {
					e.h.reopenWith(st.iavl, st.leveldb)
					// Only the node's own setting goes into cleanup.csv.
					rows := benchTable{}
					if st.iavl == drive.DefaultCacheSize && st.leveldb == 0 {
						rows = table
					}
					benchExpirePasses(b, e, rows)
				})
			}
		})
	}
}

// benchExpirePasses measures two passes of benchExpireBlocks on e, its blocks back to
// back, and with -bench.block-gap a third with that pause after every block (the
// 10,000 documents last three passes of 4 iterations).
func benchExpirePasses(b *testing.B, e *benchExpiry, table benchTable) {
	for pass := 1; pass <= 2; pass++ {
		b.Run(fmt.Sprintf("pass=%d", pass), func(b *testing.B) { benchExpireBlocks(b, e, table) })
	}
	if *benchBlockGap == 0 {
		return
	}
	timedBlockGap = *benchBlockGap
	defer func() { timedBlockGap = 0 }()
	b.Run(fmt.Sprintf("gap=%s", *benchBlockGap), func(b *testing.B) { benchExpireBlocks(b, e, benchTable{}) })
}

// benchStores lists store configurations BenchmarkExpireDocuments measures each size
// with, on the same state (the store and database reopened, caches cold): IAVL node
// cache:goleveldb block cache in MiB (0: as the node opens it), comma-separated.
// Empty: only the store the benchmark wrote the state with (-bench.cache and
// -bench.leveldb-cache).
var benchStores = flag.String("bench.stores", "", "store configurations of BenchmarkExpireDocuments, iavlNodes:leveldbMiB,... (empty: the one written with)")

type benchStore struct{ iavl, leveldb int }

func benchStoreConfigs() ([]benchStore, error) {
	if *benchStores == "" {
		return nil, nil
	}
	var out []benchStore
	for _, f := range strings.Split(*benchStores, ",") {
		iavl, leveldb, ok := strings.Cut(strings.TrimSpace(f), ":")
		n, err1 := strconv.Atoi(iavl)
		m, err2 := strconv.Atoi(leveldb)
		if !ok || err1 != nil || err2 != nil || n <= 0 || m < 0 {
			return nil, fmt.Errorf("-bench.stores %q: want iavlNodes:leveldbMiB,...", *benchStores)
		}
		out = append(out, benchStore{n, m})
	}
	return out, nil
}

// benchLive is the live document counts BenchmarkExpireDocuments measures.
var benchLive = flag.String("bench.live", "10000,1000000", "live documents of BenchmarkExpireDocuments, comma-separated")

func benchLiveSizes() ([]int, error) {
	var out []int
	for _, f := range strings.Split(*benchLive, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 4*expiryBatch {
			return nil, fmt.Errorf("-bench.live %q: each size must be a number of at least %d", *benchLive, 4*expiryBatch)
		}
		out = append(out, n)
	}
	return out, nil
}

// benchIndexes is how many indexes each of benchTTLTypes has.
var benchIndexes = [2]int{1, 3}

func benchExpireBlocks(b *testing.B, e *benchExpiry, table benchTable) {
	var expire, expireFinalize, deletes [2]time.Duration
	var empty time.Duration
	for range b.N {
		if e.front >= e.back {
			b.Fatalf("no documents left for another iteration (%d batches a type): measure fewer iterations or store configurations at this size, or a larger one", e.batches)
		}
		b.StopTimer()
		var deleteTxs [2][][]byte
		for i, t := range e.types {
			for j := e.back * expiryBatch; j < (e.back+1)*expiryBatch; j++ {
				d, owner := e.doc(i, j)
				owner.nonce++
				deleteTxs[i] = append(deleteTxs[i], protocol.Sign(testChainID, &protocol.DocumentsBatch{Identity: owner.id, Nonce: owner.nonce, Contract: t.Contract, Actions: []protocol.DocumentAction{
					{Kind: protocol.ActionDelete, Type: t.Name, ID: d.ID},
				}}, owner.key))
			}
		}
		b.StartTimer()

		var res [5]*abcitypes.ResponseFinalizeBlock
		var took, finalized [5]time.Duration
		res[0], took[0], finalized[0] = timedBlock(e.h, e.at(e.front, 0), nil)
		res[1], took[1], finalized[1] = timedBlock(e.h, e.at(e.front, 1), nil)
		res[2], took[2], _ = timedBlock(e.h, e.at(e.front, 1).Add(250*time.Millisecond), nil)
		res[3], took[3], _ = timedBlock(e.h, e.at(e.front, 1).Add(500*time.Millisecond), deleteTxs[0])
		res[4], took[4], _ = timedBlock(e.h, e.at(e.front, 1).Add(750*time.Millisecond), deleteTxs[1])

		b.StopTimer()
		for i := range e.types {
			table.row(strconv.Itoa(e.live), strconv.Itoa(benchIndexes[i]), strconv.FormatFloat(float64(took[i].Nanoseconds())/1e6, 'f', 3, 64))
			e.live -= expiryBatch
		}
		e.live -= 2 * expiryBatch // the owners' deletes
		for i, t := range e.types {
			if n, all := expiredIn(res[i], t.Name); n != expiryBatch || all != expiryBatch {
				b.Fatalf("cleanup of batch %d of %s: %d expired of the type, %d in all; want %d", e.front, t.Name, n, all, expiryBatch)
			}
			expire[i] += took[i]
			expireFinalize[i] += finalized[i]
			deletes[i] += took[3+i]
			for _, r := range res[3+i].TxResults {
				if r.Code != 0 {
					b.Fatalf("delete refused: %d %s", r.Code, r.Log)
				}
			}
		}
		for _, r := range res[2:] {
			if _, all := expiredIn(r, ""); all != 0 {
				b.Fatalf("%d documents expired in a block with nothing due", all)
			}
		}
		empty += took[2]
		e.front++
		e.back--
		b.StartTimer()
	}
	b.StopTimer()
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / n / 1e6 }
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / n / expiryBatch / 1e3 }
	b.ReportMetric(ms(expire[0]), "ms/expire-block-1index")
	b.ReportMetric(ms(expire[1]), "ms/expire-block-3index")
	b.ReportMetric(ms(expireFinalize[0]), "ms/expire-finalize-1index")
	b.ReportMetric(ms(expireFinalize[1]), "ms/expire-finalize-3index")
	b.ReportMetric(ms(empty), "ms/empty-block")
	b.ReportMetric(ms(deletes[0]), "ms/delete-block-1index")
	b.ReportMetric(ms(deletes[1]), "ms/delete-block-3index")
	b.ReportMetric(us(expire[0]), "us/expired-doc-1index")
	b.ReportMetric(us(expire[1]), "us/expired-doc-3index")
	b.ReportMetric(us(deletes[0]), "us/deleted-doc-1index")
	b.ReportMetric(us(deletes[1]), "us/deleted-doc-3index")
}

// Figures of BenchmarkTTLFlood.
const (
	floodStep   = 2 * time.Minute // block time step: an hour passes in 30 blocks
	floodBlocks = 90              // three hours
	floodSample = 10              // blocks between samples: 9 log lines, what Go prints of a benchmark's log
)

// BenchmarkTTLFlood runs a steady flood of creates of benchTTLContract's type "one"
// (one-hour ttl, one index) on a fresh chain per rate: 100, 128 and 1,000 creates a
// block (one create per documents batch, signed before each block), one block every
// two minutes for three hours (90 blocks), and logs every tenth block the live
// documents (entries of the expirations tree), the cleanup's removals, its backlog
// (entries due and left for later blocks) and the oldest overdue expiry's age. The
// cleanup removes at most 128 a block: at or below that the live documents plateau at
// an hour's creates once the first expire (block 30); above it, a backlog and the lag
// grow every block. make bench-ttl runs it with -benchtime 1x: an iteration is the
// whole flood.
func BenchmarkTTLFlood(b *testing.B) {
	table := benchCSV(b, "flood.csv", "rate", "block", "live", "backlog", "oldest_overdue_s")
	for _, rate := range []int{100, 128, 1000} {
		b.Run(fmt.Sprintf("perBlock=%d", rate), func(b *testing.B) {
			for range b.N {
				benchFlood(b, rate, table)
			}
		})
	}
}

func benchFlood(b *testing.B, rate int, table benchTable) {
	b.StopTimer()
	h, ids, types := benchTTLChain(b)
	t := types[0]
	start := genesisTime.Add(10 * time.Minute)
	var busy time.Duration
	var live, backlog int
	var overdue time.Duration
	var liveAt []int
	for blk := 1; blk <= floodBlocks; blk++ {
		txs := make([][]byte, rate)
		for i := range txs {
			w := &ids[(blk*rate+i)%len(ids)]
			w.nonce++
			benchSeq++
			var entropy [32]byte
			binary.BigEndian.PutUint64(entropy[:], benchSeq+2<<40)
			data := fmt.Sprintf(`{"author":[%s],"title":"flood %d","n":%d}`, byteList(w.id[:]), benchSeq, blk)
			txs[i] = protocol.Sign(testChainID, &protocol.DocumentsBatch{Identity: w.id, Nonce: w.nonce, Contract: t.Contract, Actions: []protocol.DocumentAction{
				{Kind: protocol.ActionCreate, Type: t.Name, Entropy: entropy, Data: []byte(data)},
			}}, w.key)
		}
		b.StartTimer()
		res, took, _ := timedBlock(h, start.Add(time.Duration(blk)*floodStep), txs)
		b.StopTimer()
		busy += took
		for _, r := range res.TxResults {
			if r.Code != 0 {
				b.Fatalf("create refused: %d %s", r.Code, r.Log)
			}
		}
		removed, _ := expiredIn(res, t.Name)
		backlog, overdue = cleanupLag(res)
		live = liveDocuments(b, h)
		liveAt = append(liveAt, live)
		table.row(strconv.Itoa(rate), strconv.Itoa(blk), strconv.Itoa(live), strconv.Itoa(backlog), strconv.FormatFloat(overdue.Seconds(), 'f', 3, 64))
		if blk%floodSample == 0 {
			b.Logf("%d/block, block %2d (%5.2f h): %6d live, %3d removed, backlog %5d, oldest overdue %s, %.1f ms", rate, blk, float64(blk)*floodStep.Hours(), live, removed, backlog, overdue, float64(took.Microseconds())/1e3)
		}
	}
	hour := int(time.Hour / floodStep)
	b.ReportMetric(float64(liveAt[2*hour-1]), "live-at-2h")
	b.ReportMetric(float64(live), "live-at-3h")
	b.ReportMetric(float64(backlog), "backlog-at-3h")
	b.ReportMetric(overdue.Seconds(), "s-overdue-at-3h")
	b.ReportMetric(float64(busy.Microseconds())/1e3/floodBlocks, "ms/block")
}

// cleanupLag reads the block's documents_cleanup event: the due entries it left for
// later blocks (counted up to BacklogCountLimit) and how overdue the oldest of them is.
func cleanupLag(res *abcitypes.ResponseFinalizeBlock) (backlog int, overdue time.Duration) {
	for _, ev := range res.Events {
		if ev.Type != protocol.EventDocumentsCleanup {
			continue
		}
		for _, a := range ev.Attributes {
			n, _ := strconv.Atoi(a.Value)
			switch a.Key {
			case protocol.AttrBacklog:
				backlog = n
			case protocol.AttrOldestOverdueMs:
				overdue = time.Duration(n) * time.Millisecond
			}
		}
	}
	return backlog, overdue
}

// liveDocuments counts the entries of the expirations tree in the working state: one
// per stored document of a type with a ttl.
func liveDocuments(b *testing.B, h *harness) int {
	live := 0
	if err := h.store.Working().Iterate(drive.ExpirationsPrefix(), drive.PrefixEnd(drive.ExpirationsPrefix()), func(_, _ []byte) (bool, error) {
		live++
		return false, nil
	}); err != nil {
		b.Fatal(err)
	}
	return live
}
