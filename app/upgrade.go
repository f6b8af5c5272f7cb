package app

import (
	"fmt"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// Protocol upgrades in place (docs/STATE.md, "Protocol upgrades"): each proposer
// signals, as its block's first transaction, the newest version its binary implements;
// the signals are counted per epoch; at an epoch change, when at least the version's
// UpgradeThresholdPercent of the finished epoch's blocks signalled the next version or
// a later one, the chain decides to move to the next version, and the epoch change
// after that switches to it, before anything else of its first block. The epoch between
// gives the operators of binaries that stop short of the version time to replace them.

// ErrUpgradeNeeded: the block of Height runs protocol version Version, which this
// binary does not implement (it stops at Newest): the chain moves to Version at that
// block, or a node's saved state runs it already. It is no fault of the chain: the node
// stops before the block, its stores as they were, and a binary that implements
// Version continues from there.
type ErrUpgradeNeeded struct {
	Version protocol.Version
	Height  uint64
	Newest  protocol.Version
}

func (e ErrUpgradeNeeded) Error() string {
	return fmt.Sprintf("upgrade needed: the block at height %d runs protocol version %d, and this binary implements versions up to %d: start a binary that implements %d", e.Height, e.Version, e.Newest, e.Version)
}

// upgrade is what upgradeStep did.
type upgrade struct {
	// switched: the block switched the version, to the one in force for it; events
	// report the switch, decided the decision the epoch change made.
	switched bool
	events   []protocol.Event
	decided  []protocol.Event
}

// upgradeStep runs, before anything else of the block, the version switch the block
// carries: the upgrade genesis scheduled for its height, or, at an epoch change, the
// version the epoch change before decided on. Then, at an epoch change, it decides from
// the finished epoch's signals whether the chain moves on at the next one, records the
// finished epoch's block count beside its signals, and drops older epochs' signals.
// One version at a time, never down. A switch to a version this binary does not
// implement is ErrUpgradeNeeded, returned before the block writes anything.
func upgradeStep(kv drive.KV, b Block) (upgrade, error) {
	var up upgrade
	from, err := drive.GetProtocolVersion(kv)
	if err != nil {
		return up, err
	}
	to := from
	scheduled, ok, err := drive.GetProtocolUpgrade(kv)
	if err != nil {
		return up, err
	}
	if ok && scheduled.Height == b.Height {
		if err := kv.Delete(drive.ProtocolUpgradeKey()); err != nil {
			return up, err
		}
		to = max(to, scheduled.Version)
	}
	params, err := drive.GetChainParams(kv)
	if err != nil {
		return up, err
	}
	cur, started, err := drive.GetCurrentEpoch(kv)
	if err != nil {
		return up, err
	}
	change := started && protocol.EpochIndex(params.GenesisTimeMs, params.EpochLengthS, b.TimeMs) > cur.Index
	if change {
		next, ok, err := drive.GetNextVersion(kv)
		if err != nil {
			return up, err
		}
		if ok {
			if err := kv.Delete(drive.NextVersionKey()); err != nil {
				return up, err
			}
			to = max(to, next)
		}
	}
	if to != from {
		if !protocol.Known(to) {
			return up, ErrUpgradeNeeded{Version: to, Height: b.Height, Newest: protocol.Newest()}
		}
		if err := switchVersion(kv, from, to, b); err != nil {
			return up, err
		}
		up.switched = true
		up.events = append(up.events, protocol.NewProtocolUpgradeEvent(from, to))
	}
	if !change {
		return up, nil
	}
	if up.decided, err = decideUpgrade(kv, to, cur, b.Height); err != nil {
		return up, err
	}
	return up, drive.DeleteSignalsBefore(kv, cur.Index)
}

// switchVersion puts version to in force from block b, writing what the versions
// between from and to start with (for 14: drive.InsertDocumentTTLTrees; for 16: the
// genesis validator set).
func switchVersion(kv drive.KV, from, to protocol.Version, b Block) error {
	if err := drive.SetProtocolVersion(kv, to); err != nil {
		return err
	}
	if from < protocol.V14 && to >= protocol.V14 {
		if err := drive.InsertDocumentTTLTrees(kv, b.Height); err != nil {
			return err
		}
	}
	if from < protocol.V16 && to >= protocol.V16 {
		return drive.RecordGenesisSet(kv, b.GenesisValidators)
	}
	return nil
}

// decideUpgrade closes the signals of the finished epoch cur, which the block at height
// ends, and decides whether the chain moves from inForce to the next version at the
// next epoch change.
func decideUpgrade(kv drive.KV, inForce protocol.Version, cur drive.CurrentEpoch, height uint64) ([]protocol.Event, error) {
	s, ok, err := drive.GetEpochSignals(kv, cur.Index)
	if err != nil || !ok {
		return nil, err
	}
	s.Blocks = height - cur.FirstHeight
	if err := drive.SetEpochSignals(kv, cur.Index, s); err != nil {
		return nil, err
	}
	lim, err := protocol.LimitsFor(inForce)
	if err != nil {
		return nil, err
	}
	next := inForce + 1
	signals := s.AtLeast(next)
	if !lim.UpgradeReached(signals, s.Blocks) {
		return nil, nil
	}
	if err := drive.SetNextVersion(kv, next); err != nil {
		return nil, err
	}
	return []protocol.Event{protocol.NewProtocolUpgradeDecidedEvent(next, cur.Index, signals, s.Blocks, lim.UpgradeThresholdPercent)}, nil
}

// signalTx runs a version signal found at position of a block whose epoch is epoch:
// counted when it is the block's first transaction, well-formed and above the version
// in force; otherwise an unpaid refusal, which changes nothing.
func signalTx(kv drive.KV, r rules, epoch uint32, position int, tx []byte) (TxResult, error) {
	inForce := r.ctx.Version
	v, err := protocol.DecodeVersionSignal(tx, position, inForce)
	switch {
	case err != nil:
	case position != 0:
		err = protocol.ErrInvalidVersionSignal{Position: position, Version: v, InForce: inForce, Reason: "not the block's first transaction"}
	case v <= inForce:
		err = protocol.ErrInvalidVersionSignal{Position: position, Version: v, InForce: inForce, Reason: "at or below the version in force: the chain only moves up"}
	}
	if err != nil {
		return refused(err)
	}
	n, err := drive.AddSignal(kv, epoch, v)
	if err != nil {
		return TxResult{}, err
	}
	return TxResult{Events: []protocol.Event{protocol.NewVersionSignalEvent(v, epoch, n)}}, nil
}
