package abci

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	abcicli "github.com/cometbft/cometbft/abci/client"
	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/cometbft/cometbft/config"
	mempl "github.com/cometbft/cometbft/mempool"
	"github.com/cometbft/cometbft/proxy"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// heldClient is the node's mempool client (ClientCreator) that holds one
// transaction's answer, once CheckTx has judged it, until release is closed: what a
// goroutine descheduled between the application's answer and CometBFT's mempool list
// does, when transactions arrive at once from several peers or connections.
type heldClient struct {
	abcicli.Client
	hold    []byte
	judged  chan struct{} // closed once the held transaction is judged
	release chan struct{}
}

func (c *heldClient) CheckTxAsync(ctx context.Context, req *abcitypes.RequestCheckTx) (*abcicli.ReqRes, error) {
	rr, err := c.Client.CheckTxAsync(ctx, req)
	if bytes.Equal(req.Tx, c.hold) && req.Type == abcitypes.CheckTxType_New {
		close(c.judged)
		<-c.release
	}
	return rr, err
}

// mempoolOf is CometBFT's own mempool over the application, through the node's mempool
// client with tx's answer held (heldClient), at the harness's height.
func mempoolOf(t *testing.T, h *harness, hold []byte) (*mempl.CListMempool, *heldClient) {
	t.Helper()
	cl, err := h.app.ClientCreator().NewABCIClient()
	if err != nil {
		t.Fatal(err)
	}
	held := &heldClient{Client: cl, hold: hold, judged: make(chan struct{}), release: make(chan struct{})}
	return mempl.NewCListMempool(config.TestMempoolConfig(), proxy.NewAppConnMempool(held, proxy.NopMetrics()), h.height), held
}

// accept sends tx to the mempool as the RPC's broadcast_tx_sync does and fails t unless
// CheckTx accepts it.
func accept(t *testing.T, mem *mempl.CListMempool, tx []byte) {
	t.Helper()
	codes := make(chan uint32, 1)
	if err := mem.CheckTx(tx, func(res *abcitypes.ResponseCheckTx) { codes <- res.Code }, mempl.TxInfo{}); err != nil {
		t.Fatal(err)
	}
	if code := <-codes; code != 0 {
		t.Fatalf("CheckTx refused %X with code %d", cmttypes.Tx(tx).Hash(), code)
	}
}

// acceptedOutOfOrder makes CometBFT's mempool hold first, then second, in the other
// order: second built on first (it was judged after first was staged), but its answer
// reached the mempool's list before first's did.
func acceptedOutOfOrder(t *testing.T, h *harness, first, second []byte) *mempl.CListMempool {
	t.Helper()
	mem, held := mempoolOf(t, h, first)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		accept(t, mem, first)
	}()
	<-held.judged
	accept(t, mem, second)
	close(held.release)
	wg.Wait()
	if list := listOf(mem); len(list) != 2 || !bytes.Equal(list[0], second) || !bytes.Equal(list[1], first) {
		t.Fatalf("the mempool's list is not second, first: %d transactions", len(list))
	}
	return mem
}

// update tells the mempool of a committed block, as CometBFT's block executor does
// (which rechecks what is left), and returns the mempool's transactions after.
func update(t *testing.T, h *harness, mem *mempl.CListMempool, txs [][]byte, results []*abcitypes.ExecTxResult) [][]byte {
	t.Helper()
	mem.Lock()
	err := mem.Update(h.height, cmttypes.ToTxs(txs), results, nil, nil)
	mem.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	return listOf(mem)
}

// listOf is the mempool's list of transactions, in its order.
func listOf(mem *mempl.CListMempool) [][]byte {
	var out [][]byte
	for _, tx := range mem.ReapMaxTxs(-1) {
		out = append(out, tx)
	}
	return out
}

// TestRecheckKeepsTheCheckStatesOrder: a transaction the check state accepted stays
// valid until a block includes it or one that conflicts with it, whatever order the
// mempool's list holds the transactions in. bob's transfer spends what alice's gave
// him; the list holds bob's first. A block that includes neither (another proposer's)
// leaves both in the mempool: CometBFT rechecks them in the list's order, and bob's,
// judged before alice's, would be refused and dropped with nobody told. Then the
// proposal takes both, alice's first, and the block accepts both.
func TestRecheckKeepsTheCheckStatesOrder(t *testing.T) {
	t.Parallel()
	h := fundedHarness(t, "alice")
	fund := h.tx("address-transfer from=alice nonce=1 to=bob amount=1000000000")
	spend := h.tx("address-transfer from=bob nonce=1 to=carol amount=1000")
	mem := acceptedOutOfOrder(t, h, fund, spend)

	h.block(genesisTime.Add(2*time.Second), nil)
	left := update(t, h, mem, nil, nil)
	if len(left) != 2 {
		t.Fatalf("after an empty block the mempool holds %d of the 2 transactions CheckTx accepted", len(left))
	}

	h.proposer = consensusAddress("val")
	at := genesisTime.Add(3 * time.Second)
	prep, err := h.app.PrepareProposal(context.Background(), &abcitypes.RequestPrepareProposal{
		Height: h.height + 1, Time: at, Txs: left, MaxTxBytes: 1 << 20, ProposerAddress: h.proposer,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(prep.Txs) != 2 || !bytes.Equal(prep.Txs[0], fund) || !bytes.Equal(prep.Txs[1], spend) {
		t.Fatalf("the proposal takes %d transactions, want alice's then bob's", len(prep.Txs))
	}
	res := h.block(at, prep.Txs)
	for i, r := range res.TxResults {
		if r.Code != 0 {
			t.Fatalf("tx %d: code %s (%s)", i, codeName(r.Code), r.Log)
		}
	}
	if left := update(t, h, mem, prep.Txs, res.TxResults); len(left) != 0 {
		t.Fatalf("the mempool holds %d transactions after the block that included them", len(left))
	}
}

// TestProposalKeepsTheCheckStatesOrder: a signer's transactions the mempool's list
// holds out of the order CheckTx accepted them in are proposed in that order: a
// document's replace after its create, though the list holds the replace first.
func TestProposalKeepsTheCheckStatesOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.identities["gina"] = genesisIdentityID("gina")
	h.initChain(genesis.AppState{Identities: []genesis.Identity{{ID: genesisIdentityID("gina").String(), Balance: 1_000_000_000, Keys: []string{hex.EncodeToString(pub("gina"))}}}})
	if res := h.block(genesisTime.Add(time.Second), [][]byte{h.tx("contract-create identity=gina signer=gina nonce=1 file=docs/examples/note.json as=notes")}); res.TxResults[0].Code != 0 {
		t.Fatalf("contract-create: %s", res.TxResults[0].Log)
	}
	create := h.tx(`doc identity=gina signer=gina nonce=2 contract=notes create:note:n1:{"text":"hi"}`)
	replace := h.tx(`doc identity=gina signer=gina nonce=3 contract=notes replace:note:n1:2:{"text":"hello"}`)
	mem := acceptedOutOfOrder(t, h, create, replace)

	h.proposer = consensusAddress("val")
	at := genesisTime.Add(2 * time.Second)
	prep, err := h.app.PrepareProposal(context.Background(), &abcitypes.RequestPrepareProposal{
		Height: h.height + 1, Time: at, Txs: listOf(mem), MaxTxBytes: 1 << 20, ProposerAddress: h.proposer,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(prep.Txs) != 2 || !bytes.Equal(prep.Txs[0], create) || !bytes.Equal(prep.Txs[1], replace) {
		t.Fatalf("the proposal takes %d transactions, want the create then the replace", len(prep.Txs))
	}
	res := h.block(at, prep.Txs)
	for i, r := range res.TxResults {
		if r.Code != 0 {
			t.Fatalf("tx %d: code %s (%s)", i, codeName(r.Code), r.Log)
		}
	}
}

// TestCheckStateHoldsWhatTheMempoolHolds: a transaction carried over from before a
// block that the recheck does not ask for is no longer in CometBFT's mempool (an
// operator flushed it): the first new transaction after the recheck finds the check
// state without it, so its nonce is free again.
func TestCheckStateHoldsWhatTheMempoolHolds(t *testing.T) {
	t.Parallel()
	h := fundedHarness(t, "alice")
	ctx := context.Background()
	flushed := h.tx("address-transfer from=alice nonce=1 to=bob amount=5")
	if res, err := h.app.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: flushed}); err != nil || res.Code != 0 {
		t.Fatalf("CheckTx: %v %v", res, err)
	}
	h.block(genesisTime.Add(2*time.Second), nil)
	// The carried transfer holds nonce 1 until a new transaction settles the check
	// state: no recheck asked for it.
	if n := pendingNonce(t, h, addr("alice")); n != 1 {
		t.Fatalf("pending nonce %d before the check state settles, want 1 (the carried transfer)", n)
	}
	other := h.tx("address-transfer from=alice nonce=1 to=carol amount=7")
	if res, err := h.app.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: other}); err != nil || res.Code != 0 {
		t.Fatalf("a new transaction under the flushed one's nonce: code %d (%s) %v", res.Code, res.Log, err)
	}
}

// TestCheckTxRefusesWhatTheMempoolCannotHold: the check state accepts no more than
// CometBFT's mempool holds, so the mempool never drops a transaction CheckTx accepted
// for want of room (it would tell nobody): the next one is refused with a node code,
// charged nothing, and taken once a block has made room.
func TestCheckTxRefusesWhatTheMempoolCannotHold(t *testing.T) {
	t.Parallel()
	h := fundedHarness(t, "alice")
	if err := h.app.SetMempool(MempoolConfig{Limits: MempoolLimits{Size: 2}}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	txs := [][]byte{
		h.tx("address-transfer from=alice nonce=1 to=bob amount=5"),
		h.tx("address-transfer from=alice nonce=2 to=bob amount=5"),
		h.tx("address-transfer from=alice nonce=3 to=bob amount=5"),
	}
	for i, tx := range txs[:2] {
		if res, _ := h.app.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: tx}); res.Code != 0 {
			t.Fatalf("tx %d: code %d (%s)", i, res.Code, res.Log)
		}
	}
	res, _ := h.app.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: txs[2]})
	if res.Codespace != CodespaceNode || res.Code != NodeCodeMempoolFull {
		t.Fatalf("the third transaction: codespace %q code %d, want %s %d", res.Codespace, res.Code, CodespaceNode, NodeCodeMempoolFull)
	}
	// The block includes the first; the recheck keeps the second.
	h.block(genesisTime.Add(2*time.Second), txs[:1])
	if res, _ := h.app.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: txs[1], Type: abcitypes.CheckTxType_Recheck}); res.Code != 0 {
		t.Fatalf("the recheck of the second: code %d (%s)", res.Code, res.Log)
	}
	if res, _ := h.app.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: txs[2]}); res.Code != 0 {
		t.Fatalf("the third after the block: codespace %q code %d (%s)", res.Codespace, res.Code, res.Log)
	}
}

// TestCheckTxRefusesWhileCatchingUp: a node catching up with the chain refuses new
// transactions with a node code rather than judge them against a state it knows to be
// behind; rechecks go on, and it takes transactions again once in step.
func TestCheckTxRefusesWhileCatchingUp(t *testing.T) {
	t.Parallel()
	h := fundedHarness(t, "alice")
	ctx := context.Background()
	var syncing sync.Mutex
	catchingUp := true
	h.app.SetCatchingUp(func() bool {
		syncing.Lock()
		defer syncing.Unlock()
		return catchingUp
	})
	tx := h.tx("address-transfer from=alice nonce=1 to=bob amount=5")
	res, _ := h.app.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: tx})
	if res.Codespace != CodespaceNode || res.Code != NodeCodeCatchingUp {
		t.Fatalf("while catching up: codespace %q code %d, want %s %d", res.Codespace, res.Code, CodespaceNode, NodeCodeCatchingUp)
	}
	if res, _ := h.app.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: tx, Type: abcitypes.CheckTxType_Recheck}); res.Code != 0 {
		t.Fatalf("a recheck while catching up: codespace %q code %d (%s)", res.Codespace, res.Code, res.Log)
	}
	syncing.Lock()
	catchingUp = false
	syncing.Unlock()
	other := h.tx("address-transfer from=alice nonce=2 to=bob amount=5")
	if res, _ := h.app.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: other}); res.Code != 0 || res.Codespace != "" {
		t.Fatalf("in step: codespace %q code %d (%s)", res.Codespace, res.Code, res.Log)
	}
}

// pendingNonce is the node's pending nonce of a (proofs.PathPendingNonce).
func pendingNonce(t *testing.T, h *harness, a protocol.Address) uint64 {
	t.Helper()
	res, err := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathPendingNonce, Data: a[:]})
	if err != nil || res.Code != 0 || len(res.Value) != 8 {
		t.Fatalf("pending nonce: %v %d %s", err, res.Code, res.Log)
	}
	return binary.BigEndian.Uint64(res.Value)
}
