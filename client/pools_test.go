package client

import (
	"context"
	"errors"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// Epoch, Pools and TotalCredits read what blocks put in the pools: the fees of epoch
// 0, then, one epoch later, epoch 0 paid (nobody proposed: its pool rolls on to epoch
// 1's storage share), every read at one height.
func TestEpochPoolsAndTotals(t *testing.T) {
	c, chain := newTestClient(t)
	ctx := context.Background()
	alice, bob := seedKey("alice"), protocol.AddressOf(pubOf(seedKey("bob")))
	var fees uint64
	for i := 0; i < 2; i++ {
		tx, err := c.Sign(ctx, &protocol.AddressFundsTransfer{PubKey: pubOf(alice), Recipient: bob, Amount: 10}, alice)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Broadcast(ctx, tx, true)
		if err != nil || res.Refused() {
			t.Fatalf("transfer %d: %+v %v", i, res, err)
		}
		fees += res.Fee
	}
	e0, err := c.Epoch(ctx, 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	genesisMs := uint64(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	if e0.Index != 0 || e0.StartMs != genesisMs || e0.LengthS != 3600 || e0.Fees != fees || e0.StorageShare != 0 ||
		len(e0.Proposers) != 0 || e0.Paid || e0.Height != chain.height || e0.Verified {
		t.Fatalf("epoch 0: %+v, want fees %d at height %d", e0, fees, chain.height)
	}
	p, err := c.Pools(ctx, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Started || p.CurrentEpoch != (drive.CurrentEpoch{Index: 0, FirstHeight: 1, FirstTimeMs: genesisMs + 1000}) ||
		p.StoragePool != 0 || p.NextUnpaidEpoch != 0 || len(p.PendingRefunds) != 0 || p.Refunded() != 0 || p.Height != chain.height {
		t.Fatalf("pools: %+v", p)
	}
	tc, err := c.TotalCredits(ctx, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if tc.Total != funded || tc.Supply != funded || !tc.Conserved() || tc.Height != chain.height {
		t.Fatalf("total credits: %+v", tc)
	}

	// An hour later: epoch 1 begins, epoch 0 is paid nothing (no proposer) and its
	// fees roll on to epoch 1.
	before := chain.height
	chain.time = chain.time.Add(time.Hour)
	chain.block(nil)
	if e0, err = c.Epoch(ctx, 0, 0, false); err != nil {
		t.Fatal(err)
	}
	if e0.Fees != 0 || e0.StorageShare != 0 || !e0.Paid || e0.PaidCredits != 0 || e0.Height != chain.height {
		t.Fatalf("epoch 0 after the change: %+v", e0)
	}
	e1, err := c.Epoch(ctx, 1, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if e1.StartMs != genesisMs+3_600_000 || e1.Fees != 0 || e1.StorageShare != fees || e1.Paid {
		t.Fatalf("epoch 1: %+v", e1)
	}
	if p, err = c.Pools(ctx, 0, false); err != nil {
		t.Fatal(err)
	}
	if p.CurrentEpoch.Index != 1 || p.CurrentEpoch.FirstHeight != uint64(chain.height) || p.NextUnpaidEpoch != 1 {
		t.Fatalf("pools after the change: %+v", p)
	}
	// The state before the change, asked by height.
	if e0, err = c.Epoch(ctx, 0, before, false); err != nil || e0.Fees != fees || e0.Paid || e0.Height != before {
		t.Fatalf("epoch 0 at %d: %+v %v", before, e0, err)
	}
	if p, err = c.Pools(ctx, before, false); err != nil || p.CurrentEpoch.Index != 0 || p.Height != before {
		t.Fatalf("pools at %d: %+v %v", before, p, err)
	}
}

// Answers that do not decode as the path's kind, or whose later parts come from
// another height than the first, are refused with typed errors.
func TestPoolAnswersThatDoNotMatch(t *testing.T) {
	t.Parallel()
	c, chain := newTestClient(t)
	ctx := context.Background()
	var ce ErrCorruptValue

	// A key of another epoch inside an epoch answer.
	chain.queryHook = func(path string, resp *abcitypes.ResponseQuery) {
		if path == proofs.PathEpoch {
			resp.Value = proofs.EncodeEntries([]proofs.KV{{Key: drive.EpochFeesKey(9), Value: make([]byte, 8)}})
		}
	}
	if _, err := c.Epoch(ctx, 0, 0, false); !errors.As(err, &ce) || string(ce.Key) != string(drive.EpochFeesKey(9)) {
		t.Fatalf("foreign epoch key: %v", err)
	}
	// A fees record of the wrong size.
	chain.queryHook = func(path string, resp *abcitypes.ResponseQuery) {
		if path == proofs.PathEpoch {
			resp.Value = proofs.EncodeEntries([]proofs.KV{{Key: drive.EpochFeesKey(0), Value: []byte{1}}})
		}
	}
	if _, err := c.Epoch(ctx, 0, 0, false); !errors.As(err, &ce) || string(ce.Key) != string(drive.EpochFeesKey(0)) {
		t.Fatalf("short fees record: %v", err)
	}
	// A bad current-epoch record.
	chain.queryHook = func(path string, resp *abcitypes.ResponseQuery) {
		if path == proofs.PathPools {
			resp.Value = proofs.EncodeEntries([]proofs.KV{{Key: drive.CurrentEpochKey(), Value: []byte{1, 2}}})
		}
	}
	if _, err := c.Pools(ctx, 0, false); !errors.As(err, &ce) || string(ce.Key) != string(drive.CurrentEpochKey()) {
		t.Fatalf("bad current epoch: %v", err)
	}
	// A cut pools answer, which two keys can never fill.
	chain.queryHook = func(path string, resp *abcitypes.ResponseQuery) {
		if path == proofs.PathPools {
			resp.Info = proofs.InfoMore
		}
	}
	var ia ErrInconsistentAnswer
	if _, err := c.Pools(ctx, 0, false); !errors.As(err, &ia) || ia.Path != proofs.PathPools {
		t.Fatalf("cut pools answer: %v", err)
	}
	// The pending refunds answered at another height than the pools.
	chain.queryHook = func(path string, resp *abcitypes.ResponseQuery) {
		if path == proofs.PathPendingRefunds {
			resp.Height--
		}
	}
	var wh ErrWrongHeight
	if _, err := c.Pools(ctx, 0, false); !errors.As(err, &wh) || wh.Path != proofs.PathPendingRefunds || wh.Want != chain.height {
		t.Fatalf("pending refunds at another height: %v", err)
	}
	// The supply answered at another height than the total.
	chain.queryHook = func(path string, resp *abcitypes.ResponseQuery) {
		if path == proofs.PathKey {
			resp.Height--
		}
	}
	if _, err := c.TotalCredits(ctx, 0, false); !errors.As(err, &wh) || wh.Path != proofs.PathKey || wh.Want != chain.height {
		t.Fatalf("supply at another height: %v", err)
	}
	// No signed header can be had from this chain: proven reads fail closed.
	chain.queryHook = nil
	var hu proofs.ErrHeaderUnavailable
	if _, err := c.TotalCredits(ctx, 0, true); !errors.As(err, &hu) {
		t.Fatalf("proven read without headers: %v", err)
	}
}
