package abci

import (
	"context"
	"crypto/ed25519"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/cosmos/iavl"
	idb "github.com/cosmos/iavl/db"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// BenchmarkExecutionVsIAVL measures in-process block execution against raw IAVL writes
// of the same keys and values. Two chains start from the same state (the same genesis,
// checked by their roots): the application runs blocks of 1,000 transactions through
// FinalizeBlock and Commit on the first; the key/value writes each block made, read
// back from IAVL's change set of the saved version, are applied to the second as plain
// MutableTree.Set and Remove calls and a SaveVersion, on the same goleveldb and node
// cache. Reported per block: both times and their ratio, and the time the block's
// ed25519 signatures take to verify one after another (decoded apart, untimed) and, in
// block mode, the ratio the block would have without that time.
//
// The raw writes and the verifications together are the floor of a transaction: what
// it must cost at least, its signature checked and its keys written and saved, with
// nothing else (docs/BENCHMARKS.md states a create as a ratio to it). Reported per
// transaction: the application's time (µs/app-tx), the floor's (µs/floor-tx) and their
// ratio (app/floor). Both trees are read whole before the first block, so that both
// start with every node of the state in IAVL's node cache, as a node's tree does after
// it has run a while. Each workload runs in two modes:
//
//   - block: transactions this node never checked, so FinalizeBlock verifies every
//     signature (ahead, on every core);
//   - checked-block: CheckTx took each transaction first (untimed), as on a validator
//     whose mempool they came through, so the block verifies none again.
//
// NB: the change set comes in key order, not in the order the application wrote, so
// the raw tree ends with the same keys and values (checked at the end) but another
// root: IAVL's shape depends on insertion order.
//
//   - transfers: identity credit transfers over benchChain's 10,000 identities;
//   - creates: document creates (benchPosts' type, one create a documents batch) over
//     10,000 stored documents.
func BenchmarkExecutionVsIAVL(b *testing.B) {
	for _, mode := range []string{"block", "checked-block"} {
		b.Run("transfers/"+mode, func(b *testing.B) { benchTransfersVsIAVL(b, mode == "checked-block") })
		b.Run("creates/"+mode, func(b *testing.B) { benchCreatesVsIAVL(b, mode == "checked-block") })
	}
}

func benchTransfersVsIAVL(b *testing.B, checked bool) {
	h, ids := benchChain(b)
	raw, _ := benchChain(b)
	benchVsIAVL(b, h, raw, checked, func(blk int) ([][]byte, []ed25519.PublicKey) {
		txs, keys := make([][]byte, 0, vsBlock), make([]ed25519.PublicKey, 0, vsBlock)
		for i := range vsBlock {
			n := blk*vsBlock + i
			txs = append(txs, benchTransfer(ids, n))
			keys = append(keys, ids[n%len(ids)].key.Public().(ed25519.PublicKey))
		}
		return txs, keys
	})
}

func benchCreatesVsIAVL(b *testing.B, checked bool) {
	const existing = 10_000
	h, ids, t := benchPosts(b, existing)
	raw, _, _ := benchPosts(b, existing)
	benchVsIAVL(b, h, raw, checked, func(blk int) ([][]byte, []ed25519.PublicKey) {
		txs, keys := make([][]byte, 0, vsBlock), make([]ed25519.PublicKey, 0, vsBlock)
		for i := range vsBlock {
			w := &ids[(blk*vsBlock+i)%len(ids)]
			txs = append(txs, postCreate(w, t))
			keys = append(keys, w.key.Public().(ed25519.PublicKey))
		}
		return txs, keys
	})
}

// vsBlock is the transactions in a block of BenchmarkExecutionVsIAVL.
const vsBlock = 1000

// benchVsIAVL runs b.N blocks that block(i) builds (their transactions and the signers'
// keys) on h through the application, after CheckTx took each when checked, and their
// writes on raw's tree directly.
func benchVsIAVL(b *testing.B, h, raw *harness, checked bool, block func(i int) ([][]byte, []ed25519.PublicKey)) {
	if v, hash := h.store.LastCommit(); v != raw.height || string(hash) != string(raw.rootAt(0)) {
		b.Fatalf("the two chains differ before the first block: %d %X and %d %X", v, hash, raw.height, raw.rootAt(0))
	}
	// The second chain's tree, reopened as a bare MutableTree on its database.
	if err := raw.store.Close(); err != nil {
		b.Fatal(err)
	}
	tree := iavl.NewMutableTree(idb.NewWrapper(raw.db), *benchCache, true, iavl.NewNopLogger())
	b.Cleanup(func() { _ = tree.Close() })
	if _, err := tree.Load(); err != nil {
		b.Fatal(err)
	}
	warm(b, h, tree)
	version, err := drive.GetProtocolVersion(h.store.Working())
	if err != nil {
		b.Fatal(err)
	}
	at := genesisTime.Add(time.Hour + time.Duration(h.height)*time.Second)
	var app, sets, verify time.Duration
	var writes int
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		txs, keys := block(i)
		blockAt := at.Add(time.Duration(i) * time.Second)
		if checked {
			for _, tx := range txs {
				res, err := h.app.CheckTx(context.Background(), &abcitypes.RequestCheckTx{Tx: tx})
				if err != nil || res.Code != 0 {
					b.Fatalf("CheckTx refused a transaction: %d %s %v", res.GetCode(), res.GetLog(), err)
				}
			}
		}
		b.StartTimer()
		res, took, _ := timedBlock(h, blockAt, txs)
		b.StopTimer()
		app += took
		for _, r := range res.TxResults {
			if r.Code != 0 {
				b.Fatalf("transaction refused: %d %s", r.Code, r.Log)
			}
		}
		pairs := changeSet(b, h, h.height)
		writes += len(pairs)

		b.StartTimer()
		start := time.Now()
		for _, p := range pairs {
			if p.Delete {
				_, _, err = tree.Remove(p.Key)
			} else {
				_, err = tree.Set(p.Key, p.Value)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if _, _, err := tree.SaveVersion(); err != nil {
			b.Fatal(err)
		}
		sets += time.Since(start)
		b.StopTimer()

		ctx, err := protocol.ContextFor(version, uint64(blockAt.UnixMilli()))
		if err != nil {
			b.Fatal(err)
		}
		signed := make([]*protocol.Signed, len(txs))
		for j, tx := range txs {
			if signed[j], err = protocol.Decode(tx, ctx); err != nil {
				b.Fatal(err)
			}
		}
		start = time.Now()
		for j, s := range signed {
			if err := s.VerifySignature(testChainID, keys[j], protocol.VerifyEd25519); err != nil {
				b.Fatal(err)
			}
		}
		verify += time.Since(start)
		b.StartTimer()
	}
	b.StopTimer()
	saved, err := h.store.Saved(0)
	if err != nil {
		b.Fatal(err)
	}
	rawSaved, err := tree.GetImmutable(tree.Version())
	if err != nil {
		b.Fatal(err)
	}
	if diff, err := drive.Diff(saved, drive.ReadTree(rawSaved)); err != nil || len(diff) > 0 {
		b.Fatalf("the raw tree's state differs from the application's in %d keys (%v)", len(diff), err)
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / n / 1e6 }
	b.ReportMetric(ms(app), "ms/app-block")
	b.ReportMetric(ms(sets), "ms/iavl-block")
	b.ReportMetric(float64(app)/float64(sets), "app/iavl")
	b.ReportMetric(ms(verify), "ms/verify-block")
	if !checked {
		b.ReportMetric(float64(app-verify)/float64(sets), "app-verified/iavl")
	}
	b.ReportMetric(float64(writes)/n, "writes/block")
	perTx := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / n / vsBlock / 1e3 }
	b.ReportMetric(perTx(app), "µs/app-tx")
	b.ReportMetric(perTx(sets+verify), "µs/floor-tx")
	b.ReportMetric(float64(app)/float64(sets+verify), "app/floor")
}

// warm reads every key of h's last saved version and of raw, loading each tree's nodes
// into its node cache.
func warm(b *testing.B, h *harness, raw *iavl.MutableTree) {
	each := func(t *iavl.ImmutableTree) error {
		_, err := t.Iterate(func(_, _ []byte) bool { return false })
		return err
	}
	if err := h.store.View(0, each); err != nil {
		b.Fatal(err)
	}
	if err := each(raw.ImmutableTree); err != nil {
		b.Fatal(err)
	}
}

// changeSet is what version v of h's store wrote: IAVL's change set, in key order.
func changeSet(b *testing.B, h *harness, v int64) []*iavl.KVPair {
	var pairs []*iavl.KVPair
	err := h.store.View(v, func(t *iavl.ImmutableTree) error {
		return t.TraverseStateChanges(v, v, func(_ int64, cs *iavl.ChangeSet) error {
			pairs = append(pairs, cs.Pairs...)
			return nil
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	return pairs
}
