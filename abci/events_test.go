package abci

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// TestEventsIndexOnlySearched: a block's results mark indexed exactly the attributes a
// reader searches for (protocol.Searched), on the transaction's events and the
// block's own alike; every other attribute is emitted, unindexed.
func TestEventsIndexOnlySearched(t *testing.T) {
	h := fundedHarness(t, "alice")
	tx := protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub("alice"), Nonce: 1, Recipient: addr("bob"), Amount: 1}, key("alice"))
	res := h.block(genesisTime.Add(2*time.Second), [][]byte{tx})
	if res.TxResults[0].Code != 0 {
		t.Fatalf("transfer refused: %d %s", res.TxResults[0].Code, res.TxResults[0].Log)
	}
	indexed, unindexed := 0, 0
	for _, e := range append(res.TxResults[0].Events, res.Events...) {
		for _, a := range e.Attributes {
			if want := protocol.IsSearched(e.Type, a.Key); a.Index != want {
				t.Errorf("%s.%s: Index %t, want %t", e.Type, a.Key, a.Index, want)
			}
			if a.Index {
				indexed++
			} else {
				unindexed++
			}
		}
	}
	// The transfer's signer, type, code and recipient, and the block's count of
	// transactions.
	if indexed != 5 || unindexed == 0 {
		t.Errorf("%d attributes indexed (want 5), %d not", indexed, unindexed)
	}
}

// TestBlockTransactionsEvent: a block that holds transactions reports how many in the
// node's block_transactions event, which CometBFT's block index keeps (the view lists
// the blocks that are not empty by it); an empty block reports none.
func TestBlockTransactionsEvent(t *testing.T) {
	h := fundedHarness(t, "alice")
	count := func(res interface{ GetEvents() []abcitypes.Event }) []string {
		var out []string
		for _, e := range res.GetEvents() {
			if e.Type == protocol.EventBlockTransactions {
				for _, a := range e.Attributes {
					if a.Key == protocol.AttrCount && a.Index {
						out = append(out, a.Value)
					}
				}
			}
		}
		return out
	}
	var txs [][]byte
	for n := range uint64(3) {
		txs = append(txs, protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub("alice"), Nonce: 1 + n, Recipient: addr("bob"), Amount: 1}, key("alice")))
	}
	if got := count(h.block(genesisTime.Add(2*time.Second), txs)); len(got) != 1 || got[0] != "3" {
		t.Errorf("a block of three transactions: %v", got)
	}
	if got := count(h.block(genesisTime.Add(3*time.Second), nil)); len(got) != 0 {
		t.Errorf("an empty block: %v", got)
	}
}

// TestStatisticsQuery: /statistics counts a saved version's contracts, documents and
// expirations (drive.CountStatistics), unproven; a proof or data that is not a time in
// milliseconds is a bad request, a version not kept code 2.
func TestStatisticsQuery(t *testing.T) {
	h := fundedHarness(t, "alice")
	h.block(genesisTime.Add(2*time.Second), nil)
	ask := func(data []byte, prove bool, height int64) *abcitypes.ResponseQuery {
		res, err := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathStatistics, Data: data, Prove: prove, Height: height})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := ask(proofs.StatisticsData(1<<62), false, 0)
	var st drive.Statistics
	if err := json.Unmarshal(res.Value, &st); res.Code != 0 || err != nil || st.UntilMs != 1<<62 || res.Height != h.height || res.ProofOps != nil {
		t.Fatalf("statistics: %d %s %v %+v", res.Code, res.Log, err, st)
	}
	for _, bad := range []*abcitypes.ResponseQuery{ask(proofs.StatisticsData(1), true, 0), ask([]byte{1, 2, 3}, false, 0), ask(nil, false, 0)} {
		if bad.Code != proofs.QueryCodeBadRequest {
			t.Errorf("a bad request answered %d %s", bad.Code, bad.Log)
		}
	}
	if res := ask(proofs.StatisticsData(1), false, h.height+5); res.Code != proofs.QueryCodeVersionMissing {
		t.Errorf("a version not kept answered %d %s", res.Code, res.Log)
	}
}
