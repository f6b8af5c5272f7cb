package client

import (
	"bytes"
	"context"
	"errors"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// EpochState is one epoch's pool as read at Height (the state after block Height).
type EpochState struct {
	Index uint32
	// StartMs is when the epoch begins: the genesis time plus Index epoch lengths
	// (LengthS seconds each), from the chain's genesis parameters.
	StartMs uint64
	LengthS uint64
	// Fees are the processing fees collected in the epoch and StorageShare its share of
	// storage fees; both are 0 once the epoch is paid.
	Fees, StorageShare uint64
	// Proposers are the blocks each proposer (consensus address) proposed in the epoch,
	// in address order.
	Proposers []drive.ProposerBlocks
	// Paid: the epoch was paid out to its proposers, PaidCredits in all.
	Paid        bool
	PaidCredits uint64
	Height      int64
	Verified    bool
}

// PoolsState is what the pools root holds besides the epochs, as read at Height.
type PoolsState struct {
	// CurrentEpoch is the epoch of the last block; Started is false before the first
	// block, when it is unset.
	CurrentEpoch drive.CurrentEpoch
	Started      bool
	// StoragePool is the storage distribution pool: perpetual storage fees collected
	// since the last epoch change.
	StoragePool uint64
	// NextUnpaidEpoch is the oldest epoch not yet paid out.
	NextUnpaidEpoch uint32
	// PendingRefunds wait for the next epoch change, in (paid in, from) order.
	PendingRefunds []drive.PendingRefund
	// LifetimePools are the lifetime storage fee pools of documents with a ttl,
	// oldest first: spread over their epochs at the next epoch change.
	LifetimePools []drive.LifetimePool
	Height        int64
	Verified      bool
}

// Refunded is what the pending refunds returned to owners in all: what the next epoch
// change takes back from the epochs' pools.
func (p PoolsState) Refunded() uint64 {
	var n uint64
	for _, r := range p.PendingRefunds {
		n += r.Refunded
	}
	return n
}

// CreditTotals are the running total of credits in state and the genesis supply, as
// read at Height.
type CreditTotals struct {
	Total, Supply uint64
	Height        int64
	Verified      bool
}

// Conserved reports whether the running total equals the supply, as it must while
// credits are neither made nor lost.
func (t CreditTotals) Conserved() bool { return t.Total == t.Supply }

// Reasons of an ErrCorruptValue for an entry that is not of its range's kind.
var (
	errNotEpochKey         = errors.New("not a key of the epoch asked for")
	errNotPoolKey          = errors.New("not the current-epoch record or the storage pool")
	errNotPendingRefundKey = errors.New("not a pending refund key")
	errNotExpirationEntry  = errors.New("not an entry of the documents expirations tree")
	errNotRemovalKey       = errors.New("not a removal record key")
)

// corrupt turns a drive.ErrCorrupt from decoding an answer into an ErrCorruptValue.
func corrupt(err error) error {
	var c drive.ErrCorrupt
	if errors.As(err, &c) {
		return ErrCorruptValue{Key: c.Key, Err: err}
	}
	return err
}

// cutShort is the continuation of a range that is never cut.
func cutShort(path string) func(proofs.KV) ([]byte, error) {
	return func(proofs.KV) ([]byte, error) {
		return nil, ErrInconsistentAnswer{Path: path, Reason: "an answer cut short"}
	}
}

// Epoch reads epoch index's pool (every key under its prefix) and the chain's genesis
// parameters at height (0: the latest), both at the height the first answered; with
// prove, both are checked against the signed header after it, so an epoch that holds
// nothing is proven to.
//
// NB: an epoch's answer holds one entry per proposer; one over proofs.MaxRangeEntries
// (more proposers in one epoch than a CometBFT validator set holds in practice) is
// refused as cut short.
func (c *Client) Epoch(ctx context.Context, index uint32, height int64, prove bool) (EpochState, error) {
	entries, h, err := c.rangeRead(ctx, proofs.PathEpoch, proofs.EpochData(index), height, prove, cutShort(proofs.PathEpoch))
	if err != nil {
		return EpochState{}, err
	}
	for _, e := range entries {
		if epoch, _, _, ok := drive.ParseEpochKey(e.Key); !ok || epoch != index {
			return EpochState{}, ErrCorruptValue{Key: e.Key, Err: errNotEpochKey}
		}
	}
	params, err := c.chainParams(ctx, h, prove)
	if err != nil {
		return EpochState{}, err
	}
	kv := proofs.EntriesKV(entries)
	out := EpochState{
		Index:    index,
		StartMs:  protocol.EpochStartMs(params.GenesisTimeMs, params.EpochLengthS, index),
		LengthS:  params.EpochLengthS,
		Height:   h,
		Verified: prove,
	}
	if out.Fees, err = drive.GetU64(kv, drive.EpochFeesKey(index)); err != nil {
		return EpochState{}, corrupt(err)
	}
	if out.StorageShare, err = drive.GetU64(kv, drive.EpochStorageKey(index)); err != nil {
		return EpochState{}, corrupt(err)
	}
	if out.Proposers, err = drive.EpochProposers(kv, index); err != nil {
		return EpochState{}, corrupt(err)
	}
	paid, _ := kv.Get(drive.EpochPaidKey(index))
	if out.Paid = paid != nil; out.Paid {
		if out.PaidCredits, err = drive.GetU64(kv, drive.EpochPaidKey(index)); err != nil {
			return EpochState{}, corrupt(err)
		}
	}
	return out, nil
}

// chainParams reads the genesis parameters at height h.
func (c *Client) chainParams(ctx context.Context, h int64, prove bool) (drive.ChainParams, error) {
	key := drive.GenesisKey()
	v, _, err := c.single(ctx, proofs.PathKey, key, h, prove)
	if err != nil {
		return drive.ChainParams{}, err
	}
	if v == nil {
		return drive.ChainParams{}, ErrInconsistentAnswer{Path: proofs.PathKey, Reason: "no genesis parameters in state"}
	}
	p, err := drive.GetChainParams(proofs.SingleKV(key, v))
	return p, corrupt(err)
}

// Pools reads the current epoch, the storage distribution pool, the oldest unpaid
// epoch and the pending refunds at height (0: the latest), all at the height the first
// answered; with prove, each answer is checked (the ranges complete) against the
// signed header after it.
func (c *Client) Pools(ctx context.Context, height int64, prove bool) (PoolsState, error) {
	entries, h, err := c.rangeRead(ctx, proofs.PathPools, nil, height, prove, cutShort(proofs.PathPools))
	if err != nil {
		return PoolsState{}, err
	}
	for _, e := range entries {
		if !bytes.Equal(e.Key, drive.CurrentEpochKey()) && !bytes.Equal(e.Key, drive.StoragePoolKey()) {
			return PoolsState{}, ErrCorruptValue{Key: e.Key, Err: errNotPoolKey}
		}
	}
	kv := proofs.EntriesKV(entries)
	out := PoolsState{Height: h, Verified: prove}
	if out.CurrentEpoch, out.Started, err = drive.GetCurrentEpoch(kv); err != nil {
		return PoolsState{}, corrupt(err)
	}
	if out.StoragePool, err = drive.GetU64(kv, drive.StoragePoolKey()); err != nil {
		return PoolsState{}, corrupt(err)
	}
	key := drive.NextUnpaidEpochKey()
	v, _, err := c.single(ctx, proofs.PathKey, key, h, prove)
	if err != nil {
		return PoolsState{}, err
	}
	if out.NextUnpaidEpoch, err = drive.GetNextUnpaidEpoch(proofs.SingleKV(key, v)); err != nil {
		return PoolsState{}, corrupt(err)
	}
	refunds, _, err := c.rangeRead(ctx, proofs.PathPendingRefunds, nil, h, prove, func(last proofs.KV) ([]byte, error) {
		paidIn, from, ok := drive.ParsePendingRefundKey(last.Key)
		switch {
		case !ok:
			return nil, ErrCorruptValue{Key: last.Key, Err: errNotPendingRefundKey}
		case from < protocol.MaxEpoch:
			return proofs.PendingRefundsData(paidIn, from+1), nil
		case paidIn < protocol.MaxEpoch:
			return proofs.PendingRefundsData(paidIn+1, 0), nil
		}
		return nil, ErrInconsistentAnswer{Path: proofs.PathPendingRefunds, Reason: "an answer cut after the last possible key"}
	})
	if err != nil {
		return PoolsState{}, err
	}
	if out.PendingRefunds, err = drive.PendingRefunds(proofs.EntriesKV(refunds)); err != nil {
		return PoolsState{}, corrupt(err)
	}
	lifetime, _, err := c.rangeRead(ctx, proofs.PathLifetimePools, nil, h, prove, cutShort(proofs.PathLifetimePools))
	if err != nil {
		return PoolsState{}, err
	}
	if out.LifetimePools, err = drive.LifetimePools(proofs.EntriesKV(lifetime), protocol.MaxEpoch); err != nil {
		return PoolsState{}, corrupt(err)
	}
	return out, nil
}

// TotalCredits reads the running total of credits and the genesis supply at height
// (0: the latest), both at the height the first answered; with prove, both are checked
// against the signed header after it.
func (c *Client) TotalCredits(ctx context.Context, height int64, prove bool) (CreditTotals, error) {
	v, h, err := c.single(ctx, proofs.PathTotalCredits, nil, height, prove)
	if err != nil {
		return CreditTotals{}, err
	}
	out := CreditTotals{Height: h, Verified: prove}
	if out.Total, err = drive.GetU64(proofs.SingleKV(drive.TotalCreditsKey(), v), drive.TotalCreditsKey()); err != nil {
		return CreditTotals{}, corrupt(err)
	}
	if v, _, err = c.single(ctx, proofs.PathKey, drive.SupplyKey(), h, prove); err != nil {
		return CreditTotals{}, err
	}
	if out.Supply, err = drive.GetSupply(proofs.SingleKV(drive.SupplyKey(), v)); err != nil {
		return CreditTotals{}, corrupt(err)
	}
	return out, nil
}
