package abci

import (
	"errors"
	"sync"

	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// Protocol upgrades in place (docs/STATE.md, "Protocol upgrades"): the node's proposals
// signal the version it is set to, every block's switch moves the headers' app version
// (CometBFT's consensus params Version.App) with it, and a switch to a version this
// binary does not implement halts the node before the block, for a newer binary to
// continue from there.

// halt is how the application stops its node for good.
type halt struct {
	once sync.Once
	done chan struct{}
	err  error // set before done is closed
	// notify, when set, is called first (OnHalt).
	notify func()
}

// OnHalt sets a function the application calls when it halts the node, before the
// request that found the reason returns. Call it before the node starts.
func (a *Application) OnHalt(notify func()) { a.halted.notify = notify }

// HoldHalted makes FinalizeBlock hold a block it halts the node at, never returning,
// instead of failing: every CometBFT path but the handshake panics on the error, and
// block sync and the consensus replay that follows it panic outside any recovery, which
// would end the process with a stack trace before the node stops. The handshake, which
// runs before CometBFT's node exists, stops on the error, so call it once the node is
// made. The node then stops without waiting for the held request (node.StopHalted):
// CometBFT saved the block before executing it, and the binary that implements its
// version executes it at start. ProcessProposal rejects such a block and
// PrepareProposal proposes an empty one; neither fails.
func (a *Application) HoldHalted() { a.holdHalted.Store(true) }

// SignalVersion sets the version this node's proposals signal: protocol.Newest() unless
// the operator holds back to an earlier one (app.toml's signal_version, ttld start
// --signal-version). Call it before the node starts.
func (a *Application) SignalVersion(v protocol.Version) { a.signal = v }

// Halted is closed once the application has halted the node for good: the chain moved
// to a protocol version this binary does not implement, or a state sync cannot end
// (HaltStateSync). HaltErr then says which.
func (a *Application) Halted() <-chan struct{} { return a.halted.done }

// HaltErr is why the application halted the node (an app.ErrUpgradeNeeded, or the
// error HaltStateSync was given); nil while it has not.
func (a *Application) HaltErr() error {
	select {
	case <-a.halted.done:
		return a.halted.err
	default:
		return nil
	}
}

// haltOn halts the node when err says the chain moved past this binary, logging it
// once, and reports whether it did.
func (a *Application) haltOn(err error) bool {
	var need app.ErrUpgradeNeeded
	if !errors.As(err, &need) {
		return false
	}
	a.halted.once.Do(func() {
		if a.halted.notify != nil {
			a.halted.notify()
		}
		a.log.Error().Uint32("version", uint32(need.Version)).Uint64("height", need.Height).Uint32("newest_supported", uint32(need.Newest)).
			Msg(need.Error())
		a.halted.err = need
		close(a.halted.done)
	})
	return true
}

// appVersionUpdate is what FinalizeBlock returns to CometBFT for a block that switched
// the protocol version: the headers from the next height on carry it as their app
// version. nil for any other block.
func appVersionUpdate(res app.BlockResult) *cmtproto.ConsensusParams {
	if !res.Switched {
		return nil
	}
	return &cmtproto.ConsensusParams{Version: &cmtproto.VersionParams{App: uint64(res.Version)}}
}

// checkSavedVersion refuses a store whose last saved state runs a protocol version this
// binary does not implement (a node started again on an older binary after its chain
// moved on): the next block would run it. It logs the refusal as a halt does.
func (a *Application) checkSavedVersion() error {
	v, _ := a.store.LastCommit()
	if v == 0 {
		return nil
	}
	saved, err := a.store.Saved(v)
	if err != nil {
		return err
	}
	pv, err := drive.GetProtocolVersion(saved)
	if err != nil || protocol.Known(pv) {
		return err
	}
	err = app.ErrUpgradeNeeded{Version: pv, Height: uint64(v) + 1, Newest: protocol.Newest()}
	a.haltOn(err)
	return err
}

// warnUpgrade warns, from a saved state, when the chain has decided to move at the next
// epoch change to a version this binary does not implement.
func (a *Application) warnUpgrade(kv drive.KV) {
	next, ok, err := drive.GetNextVersion(kv)
	if err != nil || !ok || protocol.Known(next) {
		return
	}
	a.log.Warn().Uint32("version", uint32(next)).Uint32("newest_supported", uint32(protocol.Newest())).
		Msg("the chain moves to a protocol version this binary does not implement at the next epoch change: start a binary that implements it before then, or this node stops there")
}
