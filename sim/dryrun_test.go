package sim

import (
	"context"
	"encoding/json"
	"testing"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	dbm "github.com/cosmos/cosmos-db"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// TestDryRunBoundsFees: over random transitions of every kind, valid and not, the dry
// run's code is the code the block gives, its fee is what the block charges on the same
// state, and its max fee is never below it. Each transaction is dry-run against the
// check state and then executed alone in the next block.
func TestDryRunBoundsFees(t *testing.T) {
	c, err := Open(dbm.NewMemDB())
	if err != nil {
		t.Fatal(err)
	}
	g := NewGenerator(7, 20)
	if _, err := c.InitChain(g.Genesis(), g.Validators()...); err != nil {
		t.Fatal(err)
	}
	charged := 0
	for i := 0; i < 400; i++ {
		at, txs, err := c.NextBlock(g, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(txs) == 0 {
			continue
		}
		q, err := c.App.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathDryRun, Data: txs[0]})
		if err != nil || q.Code != 0 {
			t.Fatalf("dry run: %v %d %s", err, q.Code, q.Log)
		}
		var ans proofs.DryRunAnswer
		if err := json.Unmarshal(q.Value, &ans); err != nil {
			t.Fatal(err)
		}
		res, err := c.Block(at, txs)
		if err != nil {
			t.Fatal(err)
		}
		tr := res.TxResults[0]
		if ans.Code != tr.Code || uint64(tr.GasUsed) != ans.Fee || ans.MaxFee < ans.Fee {
			t.Fatalf("tx %d: dry run code %s fee %d max %d, the block gave code %s fee %d",
				i, protocol.Code(ans.Code), ans.Fee, ans.MaxFee, protocol.Code(tr.Code), tr.GasUsed)
		}
		if tr.GasUsed > 0 {
			charged++
		}
	}
	if charged < 100 {
		t.Fatalf("only %d charged transactions: the test exercised too little", charged)
	}
}

// TestDryRunBeforeRecipientExists: a transfer dry-run while its recipient address does
// not exist yet, executed after another transfer created it, is charged more than the
// dry run's fee (the recipient's record is read) but never more than its max fee.
func TestDryRunBeforeRecipientExists(t *testing.T) {
	c, err := Open(dbm.NewMemDB())
	if err != nil {
		t.Fatal(err)
	}
	g := NewGenerator(8, 2)
	if _, err := c.InitChain(g.Genesis(), g.Validators()...); err != nil {
		t.Fatal(err)
	}
	a, b := g.keys[0], g.keys[1]
	fresh := protocol.Address{0xfe, 0xed}
	first := protocol.Sign(ChainID, &protocol.AddressFundsTransfer{PubKey: pubOf(a), Nonce: 1, Recipient: fresh, Amount: 5}, a)
	second := protocol.Sign(ChainID, &protocol.AddressFundsTransfer{PubKey: pubOf(b), Nonce: 1, Recipient: fresh, Amount: 5}, b)
	q, err := c.App.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathDryRun, Data: second})
	if err != nil || q.Code != 0 {
		t.Fatalf("dry run: %v %d", err, q.Code)
	}
	var ans proofs.DryRunAnswer
	if err := json.Unmarshal(q.Value, &ans); err != nil {
		t.Fatal(err)
	}
	res, err := c.Block(GenesisTime.Add(1e9), [][]byte{first, second})
	if err != nil {
		t.Fatal(err)
	}
	got := uint64(res.TxResults[1].GasUsed)
	if res.TxResults[1].Code != 0 || got <= ans.Fee || got > ans.MaxFee {
		t.Fatalf("charged %d (code %d); the dry run said %d, at most %d", got, res.TxResults[1].Code, ans.Fee, ans.MaxFee)
	}
}
