package abci

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
)

// BenchmarkDecisionToCommit measures what a validator does between a block's
// decision and its commit, FinalizeBlock and Commit, and what it does before the
// decision, on blocks of 1,000 identity credit transfers over benchChain's 10,000
// identities that CheckTx took first (untimed), as on a validator whose mempool they
// came through:
//   - validator: another validator's proposal, ProcessProposal then FinalizeBlock;
//   - proposer: the node's own block, PrepareProposal of the same transactions, then
//     ProcessProposal of the block it returned (CometBFT v0.38 calls both on the
//     proposer) and FinalizeBlock.
//
// Reported per block: the proposal calls (before the decision), FinalizeBlock and
// Commit, each timed alone, and FinalizeBlock and Commit together.
func BenchmarkDecisionToCommit(b *testing.B) {
	for _, mode := range []string{"validator", "proposer"} {
		b.Run(mode, func(b *testing.B) { benchDecisionToCommit(b, mode == "proposer") })
	}
}

func benchDecisionToCommit(b *testing.B, proposer bool) {
	h, ids := benchChain(b)
	const perBlock = 1000
	ctx := context.Background()
	at := genesisTime.Add(time.Minute)
	var process, finalize, commit time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		txs := make([][]byte, 0, perBlock)
		for n := i * perBlock; n < (i+1)*perBlock; n++ {
			tx := benchTransfer(ids, n)
			if res, err := h.app.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: tx}); err != nil || res.Code != 0 {
				b.Fatalf("CheckTx refused a transfer: %d %s %v", res.GetCode(), res.GetLog(), err)
			}
			txs = append(txs, tx)
		}
		b.StartTimer()
		blockTime := at.Add(time.Duration(i) * time.Second)
		height := h.height + 1
		hash := sha256.Sum256([]byte(blockTime.String()))
		start := time.Now()
		if proposer {
			prep, err := h.app.PrepareProposal(ctx, &abcitypes.RequestPrepareProposal{Txs: txs, MaxTxBytes: 1 << 22, Height: height, Time: blockTime})
			if err != nil || len(prep.Txs) != len(txs) {
				b.Fatalf("PrepareProposal took %d of %d: %v", len(prep.GetTxs()), len(txs), err)
			}
			txs = prep.Txs
		}
		pp, err := h.app.ProcessProposal(ctx, &abcitypes.RequestProcessProposal{Txs: txs, Height: height, Time: blockTime, Hash: hash[:]})
		if err != nil || pp.Status != abcitypes.ResponseProcessProposal_ACCEPT {
			b.Fatalf("ProcessProposal: %v %v", pp.GetStatus(), err)
		}
		decided := time.Now()
		res, err := h.app.FinalizeBlock(ctx, &abcitypes.RequestFinalizeBlock{Txs: txs, Height: height, Time: blockTime, Hash: hash[:]})
		if err != nil {
			b.Fatal(err)
		}
		finalized := time.Now()
		if _, err := h.app.Commit(ctx, &abcitypes.RequestCommit{}); err != nil {
			b.Fatal(err)
		}
		committed := time.Now()
		h.height++
		process += decided.Sub(start)
		finalize += finalized.Sub(decided)
		commit += committed.Sub(finalized)
		for _, r := range res.TxResults {
			if r.Code != 0 {
				b.Fatalf("transfer refused: %d %s", r.Code, r.Log)
			}
		}
	}
	perBlockMs := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(perBlockMs(process), "proposal-ms/block")
	b.ReportMetric(perBlockMs(finalize), "finalize-ms/block")
	b.ReportMetric(perBlockMs(commit), "commit-ms/block")
	b.ReportMetric(perBlockMs(finalize+commit), "decision-to-commit-ms/block")
}
