package sim

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	dbm "github.com/cosmos/cosmos-db"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// TestDryRunBoundsFees: over random transitions of every kind, documents batches
// among them (of types with a ttl too: seed 7 upgrades to protocol version 14 at
// height 17), valid and not, the dry run's code is the code the block gives, its fee
// is what the block charges on the same state in the same epoch, and its max fee is
// never below what the block charges; a change of a document whose expiry falls
// between the dry run's time and the block's is refused with 40140 by the block, for
// no more than the max fee: the dry run (and CheckTx's estimate) is never below what
// execution charges (docs/TX.md, "Fee estimates"). Each transaction is dry-run against
// the check state (judged at the last block's time) and then executed alone in the next
// block, whose time may fall in a later epoch: the price never decreases with the
// lifetime, so an estimate at an earlier block time is an upper bound, and a renewal's
// estimate adds what a later block may add. Seeds 12 and 10 start on the latest
// protocol version, renewals among their batches.
func TestDryRunBoundsFees(t *testing.T) {
	t.Parallel()
	expiredSince := 0
	for _, seed := range []int64{7, 12, 10} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { expiredSince += dryRunBoundsFees(t, seed, 1500) })
	}
	if expiredSince == 0 {
		t.Fatal("no change estimated before its document's expiry was executed after it")
	}
}

// dryRunBoundsFees runs TestDryRunBoundsFees on seed's chain for blocks blocks and
// returns how many changes it saw estimated before their document's expiry and
// refused after it.
func dryRunBoundsFees(t *testing.T, seed int64, blocks int) int {
	c, err := Open(dbm.NewMemDB())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g := NewGenerator(seed, 20)
	if _, err := c.InitChain(g.Genesis(), g.Validators()...); err != nil {
		t.Fatal(err)
	}
	charged, batches, expiredSince := 0, map[uint32]int{}, 0
	for i := 0; i < blocks; i++ {
		before, err := c.NextBlockState()
		if err != nil {
			t.Fatal(err)
		}
		epoch, err := epochAt(before, 0)
		if err != nil {
			t.Fatal(err)
		}
		at, txs, err := c.NextBlock(g, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(txs) == 0 {
			continue
		}
		ans := dryRun(t, c, txs[0])
		blockEpoch, err := epochAt(before, uint64(at.UnixMilli()))
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Block(at, txs)
		if err != nil {
			t.Fatal(err)
		}
		tr := res.TxResults[0]
		if tr.Code == uint32(protocol.CodeDocumentExpired) && ans.Code != tr.Code {
			// A change estimated before its document's expiry and executed after:
			// refused with 40140, at no more than estimated.
			expiredSince++
			if uint64(tr.GasUsed) > ans.MaxFee {
				t.Errorf("seed %d height %d: the dry run said code %s fee %d, at most %d; the block refused it with 40140 and charged %d",
					seed, c.Height, protocol.Code(ans.Code), ans.Fee, ans.MaxFee, tr.GasUsed)
			}
			continue
		}
		if ans.Code != tr.Code || (epoch == blockEpoch && uint64(tr.GasUsed) != ans.Fee) || ans.MaxFee < ans.Fee {
			t.Fatalf("seed %d height %d (type %d, epoch %d, dry run in %d): dry run code %s fee %d max %d, the block gave code %s fee %d",
				seed, c.Height, txs[0][1], blockEpoch, epoch, protocol.Code(ans.Code), ans.Fee, ans.MaxFee, protocol.Code(tr.Code), tr.GasUsed)
		}
		if uint64(tr.GasUsed) > ans.MaxFee {
			t.Errorf("seed %d height %d (type %d): the dry run in epoch %d said fee %d, at most %d; the block in epoch %d charged %d",
				seed, c.Height, txs[0][1], epoch, ans.Fee, ans.MaxFee, blockEpoch, tr.GasUsed)
		}
		if tr.GasUsed > 0 {
			charged++
			if len(txs[0]) > 1 && protocol.TransitionType(txs[0][1]) == protocol.TypeDocumentsBatch {
				batches[tr.Code]++
			}
		}
	}
	if charged < 100 {
		t.Fatalf("only %d charged transactions: the test exercised too little", charged)
	}
	if batches[uint32(protocol.CodeOK)] < 20 {
		t.Fatalf("only %d documents batches executed: %v", batches[uint32(protocol.CodeOK)], batches)
	}
	t.Logf("charged documents batches by code: %v; %d estimated before their document's expiry and refused after it", batches, expiredSince)
	return expiredSince
}

// epochAt is the epoch of a block at atMs on kv's chain (0: at its last block's time,
// the time the dry run judges at).
func epochAt(kv drive.KV, atMs uint64) (uint32, error) {
	p, err := drive.GetChainParams(kv)
	if err != nil {
		return 0, err
	}
	if atMs == 0 {
		last, ok, err := drive.GetLastBlock(kv)
		if err != nil {
			return 0, err
		}
		atMs = p.GenesisTimeMs
		if ok {
			atMs = last.TimeMs
		}
	}
	return protocol.EpochIndex(p.GenesisTimeMs, p.EpochLengthS, atMs), nil
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

// TestDryRunBoundsFeesInBlocks: each transaction of random blocks is dry-run on the
// state before its block, then executed after the block's earlier transactions; every
// documents batch charged more than its dry run's max fee is reported with the seed
// and height: the dry run is never below what execution charges (docs/TX.md, "Fee
// estimates"). The other kinds are not checked here: between the dry run
// and the block, their balances and nonces change, which the max fee does not promise
// to bound (it bounds later states where keys the dry run found absent hold values).
// Nor are dry runs refused unpaid (a signer not yet created): their max fee is 0 by
// design. The batches reported so far were charged more because an earlier
// transaction of the block created their contract or document (keys the dry run found
// absent), or because the block's time differs from the dry run's (the tests below).
func TestDryRunBoundsFeesInBlocks(t *testing.T) {
	t.Parallel()
	const seed = 11
	c, err := Open(dbm.NewMemDB())
	if err != nil {
		t.Fatal(err)
	}
	g := NewGenerator(seed, 20)
	if _, err := c.InitChain(g.Genesis(), g.Validators()...); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 800; i++ {
		at, txs, err := c.NextBlock(g, 12)
		if err != nil {
			t.Fatal(err)
		}
		answers := make([]proofs.DryRunAnswer, len(txs))
		for j, tx := range txs {
			q, err := c.App.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathDryRun, Data: tx})
			if err != nil || q.Code != 0 {
				t.Fatalf("dry run: %v %d %s", err, q.Code, q.Log)
			}
			if err := json.Unmarshal(q.Value, &answers[j]); err != nil {
				t.Fatal(err)
			}
		}
		res, err := c.Block(at, txs)
		if err != nil {
			t.Fatal(err)
		}
		for j, tr := range res.TxResults {
			if uint64(tr.GasUsed) > answers[j].MaxFee && protocol.TransitionType(txs[j][1]) == protocol.TypeDocumentsBatch && protocol.Code(answers[j].Code).Paid() {
				t.Errorf("seed %d height %d tx %d (type %d): dry run code %s fee %d max %d; the block gave code %s and charged %d",
					seed, c.Height, j, txs[j][1], protocol.Code(answers[j].Code), answers[j].Fee, answers[j].MaxFee, protocol.Code(tr.Code), tr.GasUsed)
			}
		}
	}
}

// dryRun asks the chain's estimate query path for tx.
func dryRun(t *testing.T, c *Chain, tx []byte) proofs.DryRunAnswer {
	t.Helper()
	q, err := c.App.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathDryRun, Data: tx})
	if err != nil || q.Code != 0 {
		t.Fatalf("dry run: %v %d %s", err, q.Code, q.Log)
	}
	var ans proofs.DryRunAnswer
	if err := json.Unmarshal(q.Value, &ans); err != nil {
		t.Fatal(err)
	}
	return ans
}

// absentKeysChain is a chain whose first block created a funded identity of the
// generator's first key, which signs with it.
func absentKeysChain(t *testing.T) (*Chain, identity) { return identityChain(t, 9) }

// identityChain is absentKeysChain on the genesis of generator seed (an even seed
// starts on the latest protocol version).
func identityChain(t *testing.T, seed int64) (*Chain, identity) {
	c, err := Open(dbm.NewMemDB())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	g := NewGenerator(seed, 2)
	if _, err := c.InitChain(g.Genesis(), g.Validators()...); err != nil {
		t.Fatal(err)
	}
	k := g.keys[0]
	kv, err := c.NextBlockState()
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := drive.GetAddress(kv, protocol.AddressOf(pubOf(k)))
	if err != nil {
		t.Fatal(err)
	}
	create := &protocol.IdentityCreate{PubKey: pubOf(k), Nonce: 1, Amount: st.Balance / 2, Keys: []ed25519.PublicKey{pubOf(k)}}
	res, err := c.Block(GenesisTime.Add(time.Second), [][]byte{protocol.Sign(ChainID, create, k)})
	if err != nil || res.TxResults[0].Code != 0 {
		t.Fatalf("identity create: %v %+v", err, res.TxResults)
	}
	return c, identity{id: protocol.NewIdentityID(protocol.AddressOf(pubOf(k)), 1), key: k}
}

// TestDryRunBoundsBatchOnAbsentContract: a documents batch dry-run before its contract
// exists, then executed after the contract's create in the same block. The dry run's
// max fee is promised "never below what a block on kv's state, or on a later state
// where keys it found absent have been written, charges" (app.DryRun). The contract key
// is a key it found absent.
func TestDryRunBoundsBatchOnAbsentContract(t *testing.T) {
	c, idn := absentKeysChain(t)
	cc := &protocol.DataContractCreate{Identity: idn.id, Nonce: 1, Definition: []byte(shopDefinition)}
	b := &protocol.DocumentsBatch{Identity: idn.id, Nonce: 2, Contract: cc.ContractID(), Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionCreate, Type: "item", Entropy: [32]byte{1}, Data: []byte(`{"name":"a","qty":3,"tag":"x"}`)},
	}}
	b.Actions[0].ID = b.CreateID(b.Actions[0])
	checkBoundAfter(t, c, protocol.Sign(ChainID, b, idn.key), GenesisTime.Add(2*time.Second), "the contract", protocol.Sign(ChainID, cc, idn.key))
}

// TestDryRunBoundsReplaceOfAbsentDocument: a replace dry-run before its document
// exists, executed after the document's create in the same block (the document key is
// a key the dry run found absent).
func TestDryRunBoundsReplaceOfAbsentDocument(t *testing.T) {
	c, idn := absentKeysChain(t)
	cc := &protocol.DataContractCreate{Identity: idn.id, Nonce: 1, Definition: []byte(shopDefinition)}
	res, err := c.Block(GenesisTime.Add(2*time.Second), [][]byte{protocol.Sign(ChainID, cc, idn.key)})
	if err != nil || res.TxResults[0].Code != 0 {
		t.Fatalf("contract create: %v %+v", err, res.TxResults)
	}
	create := &protocol.DocumentsBatch{Identity: idn.id, Nonce: 2, Contract: cc.ContractID(), Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionCreate, Type: "item", Entropy: [32]byte{1}, Data: []byte(`{"name":"a","qty":3}`)},
	}}
	create.Actions[0].ID = create.CreateID(create.Actions[0])
	replace := &protocol.DocumentsBatch{Identity: idn.id, Nonce: 3, Contract: cc.ContractID(), Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionReplace, Type: "item", ID: create.Actions[0].ID, Revision: 2, Data: []byte(`{"name":"a","qty":3,"tag":"abcd","blob":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24]}`)},
	}}
	checkBoundAfter(t, c, protocol.Sign(ChainID, replace, idn.key), GenesisTime.Add(3*time.Second), "the document", protocol.Sign(ChainID, create, idn.key))
}

// checkBoundAfter dry-runs tx while what setup writes is absent, then executes setup
// and tx in one block at at, and fails when setup is refused or the block charges tx
// more than the dry run's max fee.
func checkBoundAfter(t *testing.T, c *Chain, tx []byte, at time.Time, what string, setup []byte) {
	t.Helper()
	ans := dryRun(t, c, tx)
	res, err := c.Block(at, [][]byte{setup, tx})
	if err != nil {
		t.Fatal(err)
	}
	if res.TxResults[0].Code != 0 {
		t.Fatalf("creating %s: code %d %s", what, res.TxResults[0].Code, res.TxResults[0].Log)
	}
	got := res.TxResults[1]
	if uint64(got.GasUsed) > ans.MaxFee {
		t.Fatalf("dry run (%s absent): code %s fee %d max %d; executed after %s was created: code %s, charged %d",
			what, protocol.Code(ans.Code), ans.Fee, ans.MaxFee, what, protocol.Code(got.Code), got.GasUsed)
	}
}

// replaceAfterCreate stores the shop contract and an "item" document (its bySeller
// index holds $updatedAt) in a block 2 s after genesis, then, after a block at gap
// (none when gap is 0), returns a replace that grows it.
func replaceAfterCreate(t *testing.T, gap time.Duration) (*Chain, []byte) {
	c, idn := absentKeysChain(t)
	cc := &protocol.DataContractCreate{Identity: idn.id, Nonce: 1, Definition: []byte(shopDefinition)}
	create := &protocol.DocumentsBatch{Identity: idn.id, Nonce: 2, Contract: cc.ContractID(), Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionCreate, Type: "item", Entropy: [32]byte{2}, Data: []byte(`{"name":"a","qty":3}`)},
	}}
	create.Actions[0].ID = create.CreateID(create.Actions[0])
	res, err := c.Block(GenesisTime.Add(2*time.Second), [][]byte{protocol.Sign(ChainID, cc, idn.key), protocol.Sign(ChainID, create, idn.key)})
	if err != nil || res.TxResults[0].Code != 0 || res.TxResults[1].Code != 0 {
		t.Fatalf("contract and document create: %v %+v", err, res.TxResults)
	}
	if gap > 0 {
		if _, err := c.Block(GenesisTime.Add(2*time.Second+gap), nil); err != nil {
			t.Fatal(err)
		}
	}
	replace := &protocol.DocumentsBatch{Identity: idn.id, Nonce: 3, Contract: cc.ContractID(), Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionReplace, Type: "item", ID: create.Actions[0].ID, Revision: 2, Data: []byte(`{"name":"a","qty":3,"tag":"abcd"}`)},
	}}
	return c, protocol.Sign(ChainID, replace, idn.key)
}

// checkBound dry-runs tx, executes it alone in a block at at, and fails when the block
// charges more than the dry run's max fee.
func checkBound(t *testing.T, c *Chain, tx []byte, at time.Time) {
	t.Helper()
	ans := dryRun(t, c, tx)
	res, err := c.Block(at, [][]byte{tx})
	if err != nil {
		t.Fatal(err)
	}
	got := res.TxResults[0]
	if got.Code != 0 {
		t.Fatalf("code %d %s", got.Code, got.Log)
	}
	if uint64(got.GasUsed) > ans.MaxFee {
		t.Fatalf("the dry run said fee %d, at most %d; the block at %s charged %d", ans.Fee, ans.MaxFee, at.Sub(GenesisTime), got.GasUsed)
	}
}

// TestDryRunBoundsGrowingReplaceInLaterEpoch: a replace that grows its document,
// dry-run in the epoch the document was paid in (the dry run judges at the last
// block's time) and executed in a block epochs later. The grown row's storage flags
// gain an entry for the new epoch: 40 bytes more to write than the dry run counted
// (seed 7 of TestDryRunBoundsFees meets it at height 27). The max fee must bound it.
func TestDryRunBoundsGrowingReplaceInLaterEpoch(t *testing.T) {
	c, tx := replaceAfterCreate(t, time.Second)
	checkBound(t, c, tx, GenesisTime.Add(5*EpochLengthS*time.Second))
}

// TestDryRunBoundsReplaceOfDocumentWrittenInLastBlock: a replace dry-run right after
// the block that wrote its document, so at that block's time, which is the document's
// $updatedAt: the dry run leaves the document's entry in the index on $updatedAt where
// it is, the next block (a second later, same epoch) moves it, an entry's key stored
// anew. The max fee must bound it.
func TestDryRunBoundsReplaceOfDocumentWrittenInLastBlock(t *testing.T) {
	c, tx := replaceAfterCreate(t, 0)
	checkBound(t, c, tx, GenesisTime.Add(3*time.Second))
}
