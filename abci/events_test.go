package abci

import (
	"testing"
	"time"

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
	if indexed != 1 || unindexed == 0 {
		t.Errorf("%d attributes indexed (want the signer alone), %d not", indexed, unindexed)
	}
}
