package abci

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

const benchIdentities = 10_000

// benchCache is the IAVL node cache of the benchmarks' stores: the node's setting
// (drive.DefaultCacheSize) unless -bench.cache names another, such as 100000, the
// cache the figures before 2026-12-03 were taken with.
var benchCache = flag.Int("bench.cache", drive.DefaultCacheSize, "IAVL node cache of the benchmarks' stores, in nodes")

// benchBlockCache is the goleveldb block cache of the benchmarks' databases in MiB: 0
// opens them as the node does (cosmos-db's defaults: a bloom filter of 10 bits a key,
// goleveldb's 8 MiB block cache).
var benchBlockCache = flag.Int("bench.leveldb-cache", 0, "goleveldb block cache of the benchmarks' databases in MiB (0: as the node opens it)")

// benchReadAhead turns reading ahead on, as on a node (app.toml's read_ahead).
var benchReadAhead = flag.Bool("bench.read-ahead", true, "read blocks' reads ahead on other goroutines, as a node does")

// openBenchDB opens a benchmark's application database in dir with a goleveldb block
// cache of blockCacheMiB (0: as the node opens it), closed when tb ends.
func openBenchDB(tb testing.TB, dir string, blockCacheMiB int) dbm.DB {
	var db dbm.DB
	var err error
	if blockCacheMiB == 0 {
		db, err = dbm.NewGoLevelDB("application", dir, nil)
	} else {
		db, err = dbm.NewGoLevelDBWithOpts("application", dir, &opt.Options{Filter: filter.NewBloomFilter(10), BlockCacheCapacity: blockCacheMiB * opt.MiB})
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

type benchIdentity struct {
	id    protocol.IdentityID
	key   ed25519.PrivateKey
	nonce uint64
}

// benchChain starts a chain with benchIdentities funded identities, each with one key.
// The state lives in goleveldb on disk, as on a node.
func benchChain(b *testing.B) (*harness, []benchIdentity) { return benchChainWith(b, nil) }

// benchTransfer signs the n-th transfer of a benchmark's sequence: from identity n (round
// robin) to a spread-out other one, at the sender's next nonce.
func benchTransfer(ids []benchIdentity, n int) []byte {
	from := &ids[n%len(ids)]
	to := ids[(n*7919+1)%len(ids)].id
	if to == from.id {
		to = ids[(n+1)%len(ids)].id
	}
	from.nonce++
	return protocol.Sign(testChainID, &protocol.IdentityCreditTransfer{Identity: from.id, Nonce: from.nonce, Recipient: to, Amount: 1}, from.key)
}

// benchChainWith is benchChain with more added to the genesis state (validators, their
// payout identities, funded addresses) before InitChain.
func benchChainWith(b *testing.B, more func(*harness, *genesis.AppState)) (*harness, []benchIdentity) {
	dir := b.TempDir()
	db := openBenchDB(b, dir, *benchBlockCache)
	h := &harness{t: b, db: db, dbDir: dir, identities: map[string]protocol.IdentityID{}, names: map[string]string{}, cacheSize: *benchCache,
		readAhead: *benchReadAhead}
	h.open()
	ids := make([]benchIdentity, benchIdentities)
	st := genesis.AppState{EpochTimeLengthS: genesis.DefaultEpochLengthS}
	for i := range ids {
		var seed [32]byte
		binary.BigEndian.PutUint64(seed[:], uint64(i))
		ids[i].key = ed25519.NewKeyFromSeed(seed[:])
		ids[i].id = protocol.IdentityID(sha256.Sum256(seed[:]))
		st.Identities = append(st.Identities, genesis.Identity{
			ID: ids[i].id.String(), Balance: 1_000_000_000_000,
			Keys: []string{hex.EncodeToString(ids[i].key.Public().(ed25519.PublicKey))},
		})
	}
	if more != nil {
		more(h, &st)
	}
	h.initChain(st)
	h.block(genesisTime.Add(time.Second), nil)
	return h, ids
}

// reopenWith closes a benchmark's store and database and opens them again with an IAVL
// node cache of iavlCache nodes and a goleveldb block cache of blockCacheMiB, both cold.
// The database stays open until the harness's benchmark ends.
func (h *harness) reopenWith(iavlCache, blockCacheMiB int) {
	h.app.ReadAhead(false)
	if err := errors.Join(h.store.Close(), h.db.Close()); err != nil {
		h.t.Fatal(err)
	}
	h.db = openBenchDB(h.t, h.dbDir, blockCacheMiB)
	h.cacheSize = iavlCache
	h.open()
}

// BenchmarkCreditTransfers measures identity credit transfers per second, in blocks of
// 1,000, among the first 1,000 and among all 10,000 funded identities (signers=: the
// signers and recipients; more distinct keys are more IAVL paths to read), signed
// before the timer starts:
//   - block: FinalizeBlock and Commit of transactions this node never checked (a block
//     of another node's mempool, or a replay): every signature verified in the block;
//   - checked-block: FinalizeBlock and Commit after CheckTx took each transaction
//     (untimed), as a validator whose mempool they came through: the block verifies no
//     signature again;
//   - node: CheckTx, FinalizeBlock and Commit, all timed: what one transaction costs
//     the application from the mempool to the saved state, CometBFT's own work and the
//     recheck (a state check) aside.
func BenchmarkCreditTransfers(b *testing.B) {
	for _, mode := range []string{"block", "checked-block", "node"} {
		for _, signers := range []int{1000, benchIdentities} {
			b.Run(fmt.Sprintf("%s/signers=%d", mode, signers), func(b *testing.B) { benchCreditTransfers(b, mode, signers) })
		}
	}
}

func benchCreditTransfers(b *testing.B, mode string, signers int) {
	h, ids := benchChain(b)
	ids = ids[:signers]
	const perBlock = 1000
	blocks := (b.N + perBlock - 1) / perBlock
	all := make([][][]byte, blocks)
	for n := 0; n < b.N; n++ {
		all[n/perBlock] = append(all[n/perBlock], benchTransfer(ids, n))
	}
	at := genesisTime.Add(time.Minute)
	b.ResetTimer()
	var elapsed time.Duration
	for i, txs := range all {
		start := time.Now()
		if mode != "block" {
			for _, tx := range txs {
				res, err := h.app.CheckTx(context.Background(), &abcitypes.RequestCheckTx{Tx: tx})
				if err != nil || res.Code != 0 {
					b.Fatalf("CheckTx refused a transfer: %d %s %v", res.GetCode(), res.GetLog(), err)
				}
			}
		}
		if mode == "checked-block" {
			start = time.Now()
		}
		res := h.block(at.Add(time.Duration(i)*time.Second), txs)
		elapsed += time.Since(start)
		for _, r := range res.TxResults {
			if r.Code != 0 {
				b.Fatalf("transfer refused: %d %s", r.Code, r.Log)
			}
		}
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "transfers/s")
}

// BenchmarkProofGenerate measures proven address queries per second over a tree of
// 10,000 identities (40,000 keys).
func BenchmarkProofGenerate(b *testing.B) {
	h, ids := benchChain(b)
	b.ResetTimer()
	start := time.Now()
	for n := 0; n < b.N; n++ {
		id := ids[n%len(ids)].id
		res, err := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathKey, Data: drive.IdentityBalanceKey(id), Prove: true})
		if err != nil || res.Code != 0 || res.ProofOps == nil {
			b.Fatalf("query: %v %d", err, res.Code)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "proofs/s")
}

// BenchmarkProofVerify measures presence-proof verifications per second.
func BenchmarkProofVerify(b *testing.B) {
	h, ids := benchChain(b)
	root := h.rootAt(0)
	type answer struct {
		key, value []byte
		res        *abcitypes.ResponseQuery
	}
	answers := make([]answer, 1000)
	for i := range answers {
		id := ids[i].id
		key := drive.IdentityBalanceKey(id)
		res, _ := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathKey, Data: key, Prove: true})
		answers[i] = answer{key, res.Value, res}
	}
	b.ResetTimer()
	start := time.Now()
	for n := 0; n < b.N; n++ {
		a := answers[n%len(answers)]
		if err := proofs.VerifyPresence(root, a.key, a.value, a.res.ProofOps); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "verifications/s")
}

// BenchmarkRangeProof measures identity answers (a complete range of 4 keys, one
// ttld:ics23-range batch op) generated and verified per second.
func BenchmarkRangeProof(b *testing.B) {
	h, ids := benchChain(b)
	root := h.rootAt(0)
	b.ResetTimer()
	start := time.Now()
	for n := 0; n < b.N; n++ {
		id := ids[n%len(ids)].id
		res, err := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathIdentity, Data: id[:], Prove: true})
		if err != nil || res.Code != 0 {
			b.Fatalf("query: %v %d", err, res.Code)
		}
		entries, err := proofs.DecodeEntries(res.Value)
		if err != nil || len(entries) == 0 {
			b.Fatalf("entries: %v", err)
		}
		p := drive.IdentityPrefix(id)
		if err := proofs.VerifyRange(root, p, drive.PrefixEnd(p), entries, false, res.ProofOps); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "answers/s")
}

// Figures of BenchmarkEpochChange.
const (
	benchProposers = 100
	// benchStorageFee is what each epoch change distributes: the perpetual storage fee
	// of a million bytes, large enough that every one of the 2,000 epochs gets a
	// non-zero part (the smallest, era 49's 125/100,000 over 40 epochs, needs 32,000).
	benchStorageFee = 27_000 * 1_000_000
)

// BenchmarkEpochChange measures an epoch-change block against an ordinary empty block
// on the same state (benchChain's 10,000 identities, 100 validators with payout
// identities), each through FinalizeBlock and Commit on goleveldb. Each iteration
// first (timer stopped) runs 100 blocks of one epoch, each proposed by another of the
// 100 validators, and puts benchStorageFee into the storage distribution pool; then
// the first block of the next epoch distributes the pool over the 2,000 epochs from it
// on and pays the finished epoch to its 100 proposers' payout identities, and the
// block after it is an ordinary empty one. Run by make bench with -benchtime 20x: each
// iteration executes 102 blocks.
func BenchmarkEpochChange(b *testing.B) {
	var validators []string
	funder := "epoch-bench-funder"
	h, _ := benchChainWith(b, func(h *harness, st *genesis.AppState) {
		for i := range benchProposers {
			name := fmt.Sprintf("validator%03d", i)
			payout := genesisIdentityID(name + "-payout")
			st.Identities = append(st.Identities, genesis.Identity{ID: payout.String(), Keys: []string{hex.EncodeToString(pub(name + "-payout"))}})
			h.addValidator(name, payout, 10, st)
			validators = append(validators, name)
		}
		st.Addresses = append(st.Addresses, genesis.Address{Address: addr(funder).String(), Balance: 1 << 62})
	})
	epochLength := time.Duration(genesis.DefaultEpochLengthS) * time.Second
	epochStart := func(e int) time.Time { return genesisTime.Add(time.Duration(e) * epochLength) }
	// The pool is a storage fee paid from the funder's address, moved through a
	// ledger so the running total stays right (as the storage-fee scenario command).
	fillPool := func() {
		h.moveCredits(func(kv drive.KV) error {
			st, _, err := drive.GetAddress(kv, addr(funder))
			if err != nil {
				return err
			}
			st.Balance -= benchStorageFee
			if err := drive.SetAddress(kv, addr(funder), st); err != nil {
				return err
			}
			pool, err := drive.GetU64(kv, drive.StoragePoolKey())
			if err != nil {
				return err
			}
			return drive.SetU64(kv, drive.StoragePoolKey(), pool+benchStorageFee)
		})
	}
	// timed runs one block through FinalizeBlock and Commit and returns the response
	// and the time each took.
	timed := func(at time.Time) (*abcitypes.ResponseFinalizeBlock, time.Duration, time.Duration) {
		start := time.Now()
		res := h.finalize(at, nil)
		finalized := time.Now()
		if _, err := h.app.Commit(context.Background(), &abcitypes.RequestCommit{}); err != nil {
			b.Fatal(err)
		}
		committed := time.Now()
		h.height++
		if v, hash := h.store.LastCommit(); v != h.height || !bytes.Equal(hash, res.AppHash) {
			b.Fatalf("committed %d %X, FinalizeBlock said %d %X", v, hash, h.height, res.AppHash)
		}
		return res, finalized.Sub(start), committed.Sub(finalized)
	}
	// Epoch 1 first, so that every epoch the loop pays holds a storage share.
	fillPool()
	h.block(epochStart(1), nil)

	var changeFinalize, changeCommit, ordinary time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		epoch := 1 + i
		for j, name := range validators {
			h.proposer = consensusAddress(name)
			h.block(epochStart(epoch).Add(time.Duration(2+j)*time.Second), nil)
		}
		fillPool()
		h.proposer = consensusAddress(validators[0])
		b.StartTimer()

		res, fin, com := timed(epochStart(epoch + 1))
		_, ordFin, ordCom := timed(epochStart(epoch + 1).Add(time.Second))

		b.StopTimer()
		changeFinalize += fin
		changeCommit += com
		ordinary += ordFin + ordCom
		payouts, distributed := 0, ""
		for _, ev := range res.Events {
			switch ev.Type {
			case protocol.EventEpochPayout:
				payouts++
			case protocol.EventEpochChange:
				for _, a := range ev.Attributes {
					if a.Key == protocol.AttrStorageDistributed {
						distributed = a.Value
					}
				}
			}
		}
		if payouts != benchProposers || distributed != strconv.Itoa(benchStorageFee) {
			b.Fatalf("epoch change to %d: %d payouts, %s distributed; want %d and %d", epoch+1, payouts, distributed, benchProposers, benchStorageFee)
		}
		b.StartTimer()
	}
	b.StopTimer()
	if err := h.supplyCheck(); err != nil {
		b.Fatal(err)
	}
	n := float64(b.N)
	b.ReportMetric(float64((changeFinalize+changeCommit).Nanoseconds())/n, "ns/epoch-change-block")
	b.ReportMetric(float64(changeFinalize.Nanoseconds())/n, "ns/epoch-change-finalize")
	b.ReportMetric(float64(ordinary.Nanoseconds())/n, "ns/empty-block")
}
