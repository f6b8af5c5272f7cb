package abci

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/protocol"
)

// BenchmarkDecisionToCommit measures what a validator does between a block's
// decision and its commit, FinalizeBlock and Commit, when the block was processed
// before it was voted on (ProcessProposal, as CometBFT calls it on every validator,
// the proposer included). Blocks of 1,000 identity credit transfers over benchChain's
// 10,000 identities; CheckTx took each transaction first (untimed), as on a validator
// whose mempool they came through. Reported per block: ProcessProposal, FinalizeBlock
// and Commit, each timed alone.
func BenchmarkDecisionToCommit(b *testing.B) {
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
			from := &ids[n%len(ids)]
			to := ids[(n*7919+1)%len(ids)].id
			if to == from.id {
				to = ids[(n+1)%len(ids)].id
			}
			from.nonce++
			tx := protocol.Sign(testChainID, &protocol.IdentityCreditTransfer{Identity: from.id, Nonce: from.nonce, Recipient: to, Amount: 1}, from.key)
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
	b.ReportMetric(perBlockMs(process), "process-ms/block")
	b.ReportMetric(perBlockMs(finalize), "finalize-ms/block")
	b.ReportMetric(perBlockMs(commit), "commit-ms/block")
	b.ReportMetric(perBlockMs(finalize+commit), "decision-to-commit-ms/block")
}
