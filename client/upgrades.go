package client

import (
	"context"
	"errors"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// ProtocolState is the protocol version of a chain at one height and the upgrade in
// place under way (docs/STATE.md, "Protocol upgrades").
type ProtocolState struct {
	Height   int64
	Verified bool
	// Version is the version in force. Next is the version the last epoch change
	// decided the chain moves to at the next one; 0: none decided.
	Version protocol.Version
	Next    protocol.Version
	// Scheduled is the switch genesis scheduled and no block has carried out yet;
	// nil: none.
	Scheduled *drive.ProtocolUpgrade
	// Limits are Version's limits, UpgradeThresholdPercent the share of an epoch's
	// blocks that must signal the next version for the epoch change to decide on it;
	// zero when this client does not know Version.
	Limits protocol.Limits
	// Epoch is the current epoch; Started is false before the first block.
	Epoch   drive.CurrentEpoch
	Started bool
	// Current are the signals of the current epoch's blocks, Current.Blocks its blocks
	// up to Height.
	Current drive.EpochSignals
	// Last are the signals of the epoch before the current one, LastEpoch's, with its
	// block count; nil when none of its blocks signalled (or there was none).
	Last      *drive.EpochSignals
	LastEpoch uint32
}

var errNotUpgradeKey = errors.New("not a protocol upgrade record")

// Protocol reads the protocol version and the upgrade records at height (0: the
// latest), every read at the height the first answered; with prove, each answer is
// checked (the ranges complete) against the signed header after it.
func (c *Client) Protocol(ctx context.Context, height int64, prove bool) (ProtocolState, error) {
	key := drive.ProtocolVersionKey()
	v, h, err := c.single(ctx, proofs.PathKey, key, height, prove)
	if err != nil {
		return ProtocolState{}, err
	}
	out := ProtocolState{Height: h, Verified: prove}
	if v == nil {
		return ProtocolState{}, ErrInconsistentAnswer{Path: proofs.PathKey, Reason: "no protocol version in state"}
	}
	if out.Version, err = drive.DecodeProtocolVersion(v); err != nil {
		return ProtocolState{}, ErrCorruptValue{Key: key, Err: err}
	}
	out.Limits, _ = protocol.LimitsFor(out.Version)
	key = drive.ProtocolUpgradeKey()
	if v, _, err = c.single(ctx, proofs.PathKey, key, h, prove); err != nil {
		return ProtocolState{}, err
	}
	if v != nil {
		u, _, err := drive.GetProtocolUpgrade(proofs.SingleKV(key, v))
		if err != nil {
			return ProtocolState{}, corrupt(err)
		}
		out.Scheduled = &u
	}
	pools, _, err := c.rangeRead(ctx, proofs.PathPools, nil, h, prove, cutShort(proofs.PathPools))
	if err != nil {
		return ProtocolState{}, err
	}
	if out.Epoch, out.Started, err = drive.GetCurrentEpoch(proofs.EntriesKV(pools)); err != nil {
		return ProtocolState{}, corrupt(err)
	}
	key = drive.LastBlockKey()
	if v, _, err = c.single(ctx, proofs.PathKey, key, h, prove); err != nil {
		return ProtocolState{}, err
	}
	last, ok, err := drive.GetLastBlock(proofs.SingleKV(key, v))
	if err != nil {
		return ProtocolState{}, corrupt(err)
	}
	records, _, err := c.rangeRead(ctx, proofs.PathUpgrades, nil, h, prove, cutShort(proofs.PathUpgrades))
	if err != nil {
		return ProtocolState{}, err
	}
	kv := proofs.EntriesKV(records)
	for _, e := range records {
		epoch, isSignals := drive.ParseEpochSignalsKey(e.Key)
		switch {
		case isSignals && out.Started && epoch == out.Epoch.Index:
			if out.Current, _, err = drive.GetEpochSignals(kv, epoch); err != nil {
				return ProtocolState{}, corrupt(err)
			}
		case isSignals && out.Started && epoch < out.Epoch.Index:
			s, _, err := drive.GetEpochSignals(kv, epoch)
			if err != nil {
				return ProtocolState{}, corrupt(err)
			}
			out.Last, out.LastEpoch = &s, epoch
		case !isSignals && string(e.Key) == string(drive.NextVersionKey()):
			if out.Next, _, err = drive.GetNextVersion(kv); err != nil {
				return ProtocolState{}, corrupt(err)
			}
		default:
			return ProtocolState{}, ErrCorruptValue{Key: e.Key, Err: errNotUpgradeKey}
		}
	}
	if out.Started && ok && last.Height >= out.Epoch.FirstHeight {
		out.Current.Blocks = last.Height - out.Epoch.FirstHeight + 1
	}
	return out, nil
}
