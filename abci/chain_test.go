package abci

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

func fundedHarness(t *testing.T, names ...string) *harness {
	h := newHarness(t)
	var st genesis.AppState
	for _, n := range names {
		st.Addresses = append(st.Addresses, genesis.Address{Address: addr(n).String(), Balance: 1_000_000_000_000})
	}
	h.initChain(st)
	h.block(genesisTime.Add(time.Second), nil)
	return h
}

// TestRandomBytes feeds random bytes to CheckTx and to FinalizeBlock: every one gets a
// non-zero code and no fee, nothing panics, and the state does not move.
func TestRandomBytes(t *testing.T) {
	h := fundedHarness(t, "alice")
	rng := rand.New(rand.NewSource(3))
	_, before := h.store.LastCommit()
	var txs [][]byte
	for i := 0; i < 2000; i++ {
		tx := make([]byte, rng.Intn(300))
		rng.Read(tx)
		if len(tx) > 2 && i%2 == 0 {
			tx[0], tx[1] = protocol.TxFormat1, byte(rng.Intn(7))
		}
		res, err := h.app.CheckTx(context.Background(), &abcitypes.RequestCheckTx{Tx: tx})
		if err != nil {
			t.Fatal(err)
		}
		if res.Code == 0 {
			t.Fatalf("random bytes %x accepted by CheckTx", tx)
		}
		txs = append(txs, tx)
	}
	res := h.finalize(genesisTime.Add(2*time.Second), txs)
	for i, tr := range res.TxResults {
		if tr.Code == 0 || tr.GasUsed != 0 {
			t.Fatalf("tx %d: code %d fee %d", i, tr.Code, tr.GasUsed)
		}
	}
	// Only the block's own bookkeeping may differ: the root is that of an empty block
	// at the same height and time.
	empty := fundedHarness(t, "alice")
	if _, same := empty.store.LastCommit(); !bytes.Equal(same, before) {
		t.Fatal("two harnesses from one genesis differ")
	}
	if want := empty.finalize(genesisTime.Add(2*time.Second), nil).AppHash; !bytes.Equal(res.AppHash, want) {
		t.Fatalf("random transactions moved the state: %X, an empty block gives %X", res.AppHash, want)
	}
}

// TestAddressBalanceLifecycle follows the platform's address-balance recent storage:
// every block records the balances it changed; AddressBalanceCompactAfterBlocks
// records are compacted into one; a compacted record expires one day (block time) after
// the compaction; the cleanup removes at most MaxAddressBalanceCleanupsPerBlock expired
// records per block and drains the backlog over the next blocks.
func TestAddressBalanceLifecycle(t *testing.T) {
	t.Parallel()
	l, _ := protocol.LimitsFor(protocol.V13)
	h := fundedHarness(t, "alice")
	at := genesisTime.Add(time.Second)
	nonce := uint64(0)
	compactions := 0
	records := l.MaxAddressBalanceCleanupsPerBlock + 2
	for compactions < records {
		at = at.Add(time.Second)
		nonce++
		tx := protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub("alice"), Nonce: nonce, Recipient: addr("bob"), Amount: 1}, key("alice"))
		res := h.block(at, [][]byte{tx})
		if res.TxResults[0].Code != 0 {
			t.Fatalf("transfer %d refused: %d %s", nonce, res.TxResults[0].Code, res.TxResults[0].Log)
		}
		for _, e := range res.Events {
			if e.Type == protocol.EventAddressBalancesCompacted {
				compactions++
				if got := attr(e, protocol.AttrEndHeight); got != strconv.FormatInt(h.height, 10) {
					t.Fatalf("compaction at %d ends at %s", h.height, got)
				}
			}
		}
	}
	if got := countPrefix(t, h, drive.CompactedChangesPrefix()); got != records {
		t.Fatalf("%d compacted records, want %d", got, records)
	}
	// One day after the last compaction every record has expired: the first block
	// removes the bound, the next the rest.
	at = at.Add(24 * time.Hour)
	res := h.block(at, nil)
	if got := cleanupRemoved(res); got != l.MaxAddressBalanceCleanupsPerBlock {
		t.Fatalf("first cleanup removed %d, want the bound %d", got, l.MaxAddressBalanceCleanupsPerBlock)
	}
	res = h.block(at.Add(time.Second), nil)
	if got := cleanupRemoved(res); got != 2 {
		t.Fatalf("second cleanup removed %d, want the 2 left", got)
	}
	if got := countPrefix(t, h, drive.CompactedChangesPrefix()); got != 0 {
		t.Fatalf("%d compacted records left", got)
	}
	if got := countPrefix(t, h, drive.ChangesExpiryPrefix()); got != 0 {
		t.Fatalf("%d expiry entries left", got)
	}
	if err := h.supplyCheck(); err != nil {
		t.Fatal(err)
	}
}

func attr(e abcitypes.Event, k string) string {
	for _, a := range e.Attributes {
		if a.Key == k {
			return a.Value
		}
	}
	return ""
}

func cleanupRemoved(res *abcitypes.ResponseFinalizeBlock) int {
	for _, e := range res.Events {
		if e.Type == protocol.EventAddressBalancesCleanup {
			n, _ := strconv.Atoi(attr(e, protocol.AttrRemoved))
			return n
		}
	}
	return 0
}

func countPrefix(t *testing.T, h *harness, prefix []byte) int {
	saved, err := h.store.Saved(0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	_ = saved.Iterate(prefix, drive.PrefixEnd(prefix), func(_, _ []byte) (bool, error) {
		n++
		return false, nil
	})
	return n
}

// TestQueryHeights: queries read saved versions only, at historical heights while kept;
// the working tree of a finalized, uncommitted block is invisible.
func TestQueryHeights(t *testing.T) {
	h := fundedHarness(t, "alice")
	tx := protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub("alice"), Nonce: 1, Recipient: addr("bob"), Amount: 5}, key("alice"))
	h.block(genesisTime.Add(2*time.Second), [][]byte{tx})
	tx2 := protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub("alice"), Nonce: 2, Recipient: addr("bob"), Amount: 5}, key("alice"))
	h.finalize(genesisTime.Add(3*time.Second), [][]byte{tx2})
	bob := addr("bob")
	for _, c := range []struct {
		height  int64
		balance uint64
		present bool
	}{{0, 5, true}, {2, 5, true}, {1, 0, false}} {
		res := h.query(proofs.PathAddress, bob[:], c.height)
		if res.Code != 0 {
			t.Fatalf("height %d: code %d", c.height, res.Code)
		}
		if c.present != (len(res.Value) > 0) {
			t.Fatalf("height %d: present %v", c.height, len(res.Value) > 0)
		}
		if c.present {
			st, _ := drive.DecodeAddressState(res.Value)
			if st.Balance != c.balance || res.Height != 2 {
				t.Fatalf("height %d: balance %d at %d", c.height, st.Balance, res.Height)
			}
		}
	}
	if res := h.query(proofs.PathAddress, bob[:], 3); res.Code != proofs.QueryCodeVersionMissing {
		t.Fatalf("the uncommitted height answered with code %d", res.Code)
	}
	if res := h.query("/nope", nil, 0); res.Code != proofs.QueryCodeBadRequest {
		t.Fatalf("unknown path: code %d", res.Code)
	}
}

// TestConcurrentConnections drives the consensus connection while the query and mempool
// connections run at the same time, as CometBFT's per-connection local client does;
// run under -race it checks the locking, and every answer must be a consistent saved
// version.
func TestConcurrentConnections(t *testing.T) {
	h := fundedHarness(t, "alice")
	done := make(chan struct{})
	errs := make(chan error, 2)
	bob := addr("bob")
	go func() {
		for {
			select {
			case <-done:
				errs <- nil
				return
			default:
			}
			res, err := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathAddress, Data: bob[:], Prove: true})
			if err != nil || res.Code != 0 {
				errs <- fmt.Errorf("query: %v %d", err, res.Code)
				return
			}
		}
	}()
	go func() {
		for n := uint64(100); ; n++ {
			select {
			case <-done:
				errs <- nil
				return
			default:
			}
			tx := protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub("carol"), Nonce: n, Recipient: bob, Amount: 1}, key("carol"))
			if _, err := h.app.CheckTx(context.Background(), &abcitypes.RequestCheckTx{Tx: tx}); err != nil {
				errs <- err
				return
			}
		}
	}()
	at := genesisTime.Add(time.Minute)
	for n := uint64(1); n <= 30; n++ {
		tx := protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub("alice"), Nonce: n, Recipient: bob, Amount: 1}, key("alice"))
		res := h.block(at.Add(time.Duration(n)*time.Second), [][]byte{tx})
		if res.TxResults[0].Code != 0 {
			t.Fatalf("block %d: code %d", n, res.TxResults[0].Code)
		}
	}
	close(done)
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckTxFailureKeepsOthers: when checking one transaction fails inside the node (a
// record of the check state that does not decode), that transaction is refused in the
// internal codespace, and the pending transactions of others stay in the check state:
// the next nonce of a signer whose transaction was accepted before is still its next.
func TestCheckTxFailureKeepsOthers(t *testing.T) {
	h := fundedHarness(t, "alice", "carol")
	check := func(tx []byte) *abcitypes.ResponseCheckTx {
		res, err := h.app.CheckTx(context.Background(), &abcitypes.RequestCheckTx{Tx: tx})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	transfer := func(from string, nonce uint64) []byte {
		return protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: pub(from), Nonce: nonce, Recipient: addr("bob"), Amount: 1}, key(from))
	}
	if res := check(transfer("alice", 1)); res.Code != 0 {
		t.Fatalf("alice 1: code %d", res.Code)
	}
	_, err := h.app.check.Load().exclusive(func(kv drive.KV) error {
		return kv.Set(drive.AddressKey(addr("carol")), []byte("not an address record"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if res := check(transfer("carol", 1)); res.Codespace != CodespaceInternal || res.Code != CheckCodeInternal {
		t.Fatalf("carol on a corrupt record: codespace %q code %d", res.Codespace, res.Code)
	}
	// alice's first transfer is still pending: her nonce 1 is taken, 2 is next.
	if res := check(transfer("alice", 1)); protocol.Code(res.Code) != protocol.CodeInvalidAddressNonce {
		t.Fatalf("alice 1 again: %s, want InvalidAddressNonce", protocol.Code(res.Code))
	}
	if res := check(transfer("alice", 2)); res.Code != 0 {
		t.Fatalf("alice 2: code %d", res.Code)
	}
}

// TestCreditsCheckHalts: with invariants checked (--check-invariants), a block after
// which the running total of credits differs from the supply fails FinalizeBlock with
// both totals and the height, and nothing is staged; a write that bypasses the ledger
// is caught by the full count.
func TestCreditsCheckHalts(t *testing.T) {
	h := fundedHarness(t, "alice")
	// One credit made from nothing, through a ledger, so the running total follows.
	led := drive.NewLedger(h.store.Working())
	if err := drive.SetAddress(led, addr("carol"), drive.AddressState{Balance: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := led.UpdateTotal(uint64(h.height)); err != nil {
		t.Fatal(err)
	}
	_, err := h.app.FinalizeBlock(context.Background(), &abcitypes.RequestFinalizeBlock{Height: h.height + 1, Time: genesisTime.Add(time.Minute)})
	var nc drive.ErrCreditsNotConserved
	if !errors.As(err, &nc) || nc.Height != uint64(h.height+1) || nc.Total == nc.Want {
		t.Fatalf("FinalizeBlock after a credit from nothing: %v, want ErrCreditsNotConserved at height %d", err, h.height+1)
	}
	working, err := h.store.WorkingHash()
	if err != nil {
		t.Fatal(err)
	}
	if _, saved := h.store.LastCommit(); !bytes.Equal(working, saved) {
		t.Fatal("the refused block left staged writes")
	}

	// A credit written around the ledger leaves the running total alone: the full
	// count finds it.
	g := fundedHarness(t, "alice")
	if err := drive.SetAddress(g.store.Working(), addr("carol"), drive.AddressState{Balance: 1}); err != nil {
		t.Fatal(err)
	}
	g.block(genesisTime.Add(time.Minute), nil)
	if err := g.supplyCheck(); !errors.As(err, &nc) {
		t.Fatalf("full count after a write around the ledger: %v, want ErrCreditsNotConserved", err)
	}
}
