package abci

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// benchLikesContract is a "like" of one of benchPosts posts into a countable, ranked,
// ttl'd time-range index on $createdAt with the given range and step (seconds; the ttl
// is the range).
func benchLikesContract(rangeS, stepS int) string {
	return fmt.Sprintf(`{"documentSchemas":{"like":{"type":"object","properties":{"post":{"type":"string","maxLength":63,"position":0}},`+
		`"required":["$createdAt","post"],"additionalProperties":false,"indices":[{"name":"trending","properties":[{"post":"asc"}],`+
		`"countable":true,"ranked":true,"timeRange":{"on":"$createdAt","range":%d,"step":%d,"ttl":%d}}]}}}`, rangeS, stepS, rangeS)
}

// benchLikedPosts is how many posts the likes go to.
const benchLikedPosts = 500

// benchLikes is a chain of benchChain's identities with the likes contract registered.
type benchLikes struct {
	h   *harness
	ids []benchIdentity
	t   drive.DocumentType
	seq uint64
}

func newBenchLikes(b *testing.B, rangeS, stepS int) *benchLikes {
	h, ids := benchChain(b)
	owner := &ids[0]
	owner.nonce++
	res := h.block(genesisTime.Add(2*time.Second), [][]byte{protocol.Sign(testChainID, &protocol.DataContractCreate{Identity: owner.id, Nonce: owner.nonce, Definition: []byte(benchLikesContract(rangeS, stepS))}, owner.key)})
	if res.TxResults[0].Code != 0 {
		b.Fatalf("contract refused: %s", res.TxResults[0].Log)
	}
	c, _, err := drive.GetContract(h.store.Working(), protocol.NewContractID(owner.id, owner.nonce), protocol.Latest)
	if err != nil {
		b.Fatal(err)
	}
	dt, _ := c.DocumentType("like")
	return &benchLikes{h: h, ids: ids, t: drive.DocumentType{Contract: c.ID, DocumentType: dt}}
}

// block signs txs batches of perTx likes, from distinct identities, of posts chosen in
// turn (post i % posts), and runs them as one block at at; it returns the block's time
// through FinalizeBlock and Commit.
func (l *benchLikes) block(b *testing.B, at time.Time, txs, perTx, posts int) time.Duration {
	b.StopTimer()
	batch := make([][]byte, 0, txs)
	for i := range txs {
		w := &l.ids[(int(l.seq)/perTx+i)%len(l.ids)]
		var actions []protocol.DocumentAction
		for range perTx {
			l.seq++
			var entropy [32]byte
			binary.BigEndian.PutUint64(entropy[:], l.seq)
			actions = append(actions, protocol.DocumentAction{Kind: protocol.ActionCreate, Type: l.t.Name, Entropy: entropy,
				Data: []byte(fmt.Sprintf(`{"post":"post-%04d"}`, l.seq%uint64(posts)))})
		}
		w.nonce++
		batch = append(batch, protocol.Sign(testChainID, &protocol.DocumentsBatch{Identity: w.id, Nonce: w.nonce, Contract: l.t.Contract, Actions: actions}, w.key))
	}
	b.StartTimer()
	res, took, _ := timedBlock(l.h, at, batch)
	b.StopTimer()
	for i, r := range res.TxResults {
		if r.Code != 0 {
			b.Fatalf("tx %d refused: %d %s", i, r.Code, r.Log)
		}
	}
	b.StartTimer()
	return took
}

// BenchmarkTimeRangeLikes measures a countable, ranked, ttl'd time-range index
// (docs/BENCHMARKS.md) on goleveldb with the node's IAVL cache, likes of
// 500 posts from benchChain's identities:
//
//   - likes/overlap=1 and likes/overlap=24: blocks of 1,000 likes (100 batches of 10)
//     through FinalizeBlock and Commit, one hour apart in block time divided by b.N,
//     every like stored under 1 or 24 windows; likes/s and the window keys a like
//     writes;
//   - trending-top10: the top-10 ranked page of the newest window (overlap 24, after
//     20 blocks of likes) generated through Query and verified as a client does;
//   - drain: a viral hour of 20,000 likes of one post (overlap 1), then, past its ttl,
//     an empty block (its epoch change sweeps 4,096 keys) and blocks of one like each:
//     the keys each write drains (its budget) and its time, and how many writes the
//     viral window would take to drain without the sweep.
func BenchmarkTimeRangeLikes(b *testing.B) {
	for _, c := range []struct {
		name          string
		rangeS, stepS int
	}{{"overlap=1", 3600, 3600}, {"overlap=24", 86_400, 3600}} {
		b.Run("likes/"+c.name, func(b *testing.B) {
			l := newBenchLikes(b, c.rangeS, c.stepS)
			before := windowKeyCount(b, l)
			var took time.Duration
			b.ResetTimer()
			for i := range b.N {
				took += l.block(b, genesisTime.Add(time.Hour+time.Duration(i)*time.Second), 100, 10, benchLikedPosts)
			}
			b.StopTimer()
			likes := float64(b.N * 1000)
			b.ReportMetric(likes/took.Seconds(), "likes/s")
			b.ReportMetric(float64(took.Microseconds())/likes, "us/like")
			b.ReportMetric(float64(windowKeyCount(b, l)-before)/likes, "window-keys/like")
		})
	}
	b.Run("trending-top10", func(b *testing.B) {
		l := newBenchLikes(b, 86_400, 3600)
		at := genesisTime.Add(time.Hour)
		for i := range 20 {
			l.block(b, at.Add(time.Duration(i)*time.Second), 100, 10, benchLikedPosts)
		}
		l.h.block(at.Add(time.Minute), nil)
		data := proofs.DocumentsData(l.t.Contract, l.t.Name, []byte(`{"window":{"index":"trending","newest":true},"limit":10}`))
		root := l.h.rootAt(l.h.height)
		var size int
		b.ResetTimer()
		for range b.N {
			res, err := l.h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathRanked, Data: data, Prove: true})
			if err != nil || res.Code != 0 {
				b.Fatalf("query: %v %d %s", err, res.GetCode(), res.GetLog())
			}
			a, err := proofs.DecodeRankedAnswer(res.Value)
			if err == nil {
				_, err = proofs.VerifyRanked(root, data, a, res.ProofOps)
			}
			if err != nil {
				b.Fatal(err)
			}
			size = len(res.Value) + opsSize(res.ProofOps)
		}
		b.ReportMetric(float64(size), "answer-bytes")
	})
	b.Run("drain", func(b *testing.B) {
		l := newBenchLikes(b, 3600, 3600)
		hour := genesisTime.Add(time.Hour)
		for i := range 20 {
			l.block(b, hour.Add(time.Duration(i)*time.Second), 100, 10, 1)
		}
		start := uint64(hour.UnixMilli())
		viral := windowKeysAt(b, l, start)
		// An empty block past the ttl first: its epoch change's sweep takes its share
		// (drive.SweepWindows), so the writes timed below drain only what they earn.
		l.h.block(hour.Add(2*time.Hour), nil)
		swept := viral - windowKeysAt(b, l, start)
		lim, err := protocol.LimitsFor(protocol.Latest)
		if err != nil {
			b.Fatal(err)
		}
		budget := drive.DrainBudget(l.t.DocumentType, l.t.Indices[0].TimeRange.Grid(), lim)
		var took time.Duration
		drained := 0
		b.ResetTimer()
		for i := range b.N {
			left := windowKeysAt(b, l, start)
			took += l.block(b, hour.Add(2*time.Hour+time.Duration(i+1)*time.Second), 1, 1, 1)
			drained += left - windowKeysAt(b, l, start)
		}
		b.StopTimer()
		b.ReportMetric(float64(took.Microseconds())/float64(b.N), "us/write")
		b.ReportMetric(float64(drained)/float64(b.N), "drained/write")
		b.ReportMetric(float64(viral), "viral-window-keys")
		b.ReportMetric(float64(swept), "swept-by-epoch-change")
		b.ReportMetric(float64((viral+budget-1)/budget), "writes-to-drain")
	})
}

// windowKeyCount counts every key under the likes type's windows.
func windowKeyCount(b *testing.B, l *benchLikes) int {
	prefix := drive.WindowsPrefix(l.t.Contract, l.t.Name, l.t.Indices[0].TimeRange.Grid())
	return countKeys(b, l.h, prefix)
}

// windowKeysAt counts the keys under the likes type's window at startMs.
func windowKeysAt(b *testing.B, l *benchLikes, startMs uint64) int {
	return countKeys(b, l.h, drive.WindowPrefix(l.t.Contract, l.t.Name, l.t.Indices[0].TimeRange.Grid(), startMs))
}

func countKeys(b *testing.B, h *harness, prefix []byte) int {
	n := 0
	if err := h.store.Working().Iterate(prefix, drive.PrefixEnd(prefix), func(_, _ []byte) (bool, error) { n++; return false, nil }); err != nil {
		b.Fatal(err)
	}
	return n
}
