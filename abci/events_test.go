package abci

import (
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

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
