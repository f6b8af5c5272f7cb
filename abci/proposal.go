package abci

import (
	"bytes"
	"context"
	"slices"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// A block is executed before it is voted on (docs/ARCHITECTURE.md, "A block, top to
// bottom"): PrepareProposal builds the proposer's block by executing its candidates,
// ProcessProposal executes every other proposal, and the last execution is kept for the
// FinalizeBlock of the same block. All three run app's one block pipeline on the state
// the block starts from; what changes is only when it runs.

// executed is a block executed before its decision, by PrepareProposal or
// ProcessProposal, and kept for FinalizeBlock. At most one is kept: the last.
type executed struct {
	// What the execution read of its block (app.Block): FinalizeBlock uses the
	// execution only for a block that agrees in all of them. The last commit a request
	// carries is not read by the execution.
	height      int64
	time        time.Time
	proposer    []byte
	txs         [][]byte
	misbehavior []app.Misbehavior
	// hash is the block's hash once ProcessProposal named it; nil for the block
	// PrepareProposal built, which has no hash yet.
	hash []byte
	// base is the saved version the block was executed on.
	base int64
	res  app.BlockResult
	// appHash is the working tree's root after the block; nil with a branch, whose
	// root is known once it is flushed.
	appHash []byte
	// branch holds the block's writes when the working tree held more than the last
	// saved version (the genesis state, before the first commit), which a rollback
	// would lose; FinalizeBlock flushes it into the working tree, in the order the
	// block wrote. nil: the writes are staged on the working tree itself.
	branch *drive.Cache
}

// of reports whether x is the execution of the block a request names, on the state the
// next block starts from (the last saved version, base). A nil x is no block's.
func (x *executed) of(base, height int64, at time.Time, proposer []byte, txs [][]byte, misbehavior []app.Misbehavior, hash []byte) bool {
	if x == nil || x.base != base || x.height != height || !x.time.Equal(at) || !bytes.Equal(x.proposer, proposer) {
		return false
	}
	if !slices.Equal(x.misbehavior, misbehavior) {
		return false
	}
	if x.hash != nil && !bytes.Equal(x.hash, hash) {
		return false
	}
	if len(x.txs) != len(txs) {
		return false
	}
	for i := range txs {
		if !bytes.Equal(x.txs[i], txs[i]) {
			return false
		}
	}
	return true
}

// discard drops what the working tree holds beyond the state the next block starts
// from: an execution kept on it, or a block FinalizeBlock staged and Commit never saved
// (a consensus round replayed).
func (a *Application) discard() {
	if (a.kept != nil && a.kept.branch == nil) || a.staged != 0 {
		a.store.Rollback()
	}
	a.kept, a.staged, a.swept = nil, 0, 0
}

// executeAhead executes blk before its decision on the state the next block starts
// from, dropping any execution kept before: on the working tree when it holds the last
// saved version alone (a rollback undoes it), else on a branch over it. With a room,
// blk's transactions are candidates and the block executed is the proposal
// app.ProposeBlock builds of them. The error is a Fault; the working tree is then as it
// was.
func (a *Application) executeAhead(blk app.Block, at time.Time, room *app.Room) (*executed, error) {
	start := time.Now()
	a.discard()
	base, _ := a.store.LastCommit()
	x := &executed{height: int64(blk.Height), time: at, proposer: blk.Proposer, misbehavior: blk.Misbehavior, base: base}
	kv := a.store.Working()
	if !a.store.Unchanged() {
		x.branch = drive.NewCache(kv)
		kv = x.branch
	}
	stopReading := a.readBlockAhead(blk)
	err := a.verifyUnchecked(blk)
	if err == nil {
		err = a.store.Batch(func() (err error) {
			if room != nil {
				blk, x.res, err = app.ProposeBlock(kv, blk, *room, a.signal)
			} else {
				x.res, err = app.ExecuteBlock(kv, blk)
			}
			return err
		})
	}
	stopReading()
	if err != nil {
		if x.branch == nil {
			a.store.Rollback()
		}
		return nil, err
	}
	x.txs = blk.Txs
	if x.branch == nil {
		if x.appHash, err = a.store.WorkingHash(); err != nil {
			a.store.Rollback()
			return nil, err
		}
	}
	a.metrics.BlockExecution.Observe(time.Since(start).Seconds())
	return x, nil
}

// proposalBlock is the block a request describes.
func (a *Application) proposalBlock(height int64, at time.Time, proposer []byte, txs [][]byte, evidence []abcitypes.Misbehavior) app.Block {
	return app.Block{Height: uint64(height), TimeMs: protocol.BlockTimeMs(at), Proposer: proposer, Txs: txs,
		Misbehavior: misbehavior(evidence), GenesisValidators: a.genesisValidators, Verifier: a.signatures}
}

// misbehavior is the evidence a request carries, as the execution reads it: CometBFT's
// kind and the validator's address and height. An address of another length than a
// consensus address names no validator of the set, and is left out.
func misbehavior(in []abcitypes.Misbehavior) []app.Misbehavior {
	var out []app.Misbehavior
	for _, m := range in {
		if len(m.Validator.Address) != protocol.ConsensusAddressLen || m.Height < 0 {
			continue
		}
		out = append(out, app.Misbehavior{Kind: protocol.MisbehaviorKind(m.Type), Validator: protocol.ConsensusAddress(m.Validator.Address), Height: uint64(m.Height)})
	}
	return out
}

// PrepareProposal builds the proposer's block: it executes the mempool's transactions
// in the order the check state accepted them (orderByAcceptance: the mempool's list
// may hold them in another) while they fit, counted as CometBFT counts them (with
// their protobuf framing), leaving out every transaction the block would refuse unpaid
// (docs/ERRORS.md), which ProcessProposal would reject the block for. The execution is
// kept: CometBFT v0.38 hands the proposer's own block to its ProcessProposal, which
// then finds it executed. The request's time is the block's: CometBFT makes the block
// again from the transactions returned, at the same (median) time.
func (a *Application) PrepareProposal(_ context.Context, req *abcitypes.RequestPrepareProposal) (*abcitypes.ResponsePrepareProposal, error) {
	blk := a.proposalBlock(req.Height, req.Time, req.ProposerAddress, orderByAcceptance(a.check.Load(), req.Txs), req.Misbehavior)
	a.skipped.forget(blk.TimeMs)
	x, err := a.executeAhead(blk, req.Time, &app.Room{MaxBytes: req.MaxTxBytes, Size: txSize, MayDrop: a.skipped.mayDrop})
	if a.haltOn(err) {
		// NB: CometBFT panics on an error here; the node stops (HoldHalted).
		return &abcitypes.ResponsePrepareProposal{}, nil
	}
	if err != nil {
		a.log.Error().Err(err).Int64("height", req.Height).Msg("executing a proposal failed; halting")
		return nil, err
	}
	a.kept = x
	taken := len(x.txs)
	if len(x.txs) > 0 && protocol.IsVersionSignal(x.txs[0]) {
		taken-- // the signal is this node's own, no candidate
	}
	if left := len(req.Txs) - taken; left > 0 {
		a.log.Info().Int("left_out", left).Int("taken", taken).Int64("height", req.Height).Msg("left out of the proposal: transactions refused unpaid, or past the size limit")
	}
	return &abcitypes.ResponsePrepareProposal{Txs: x.txs}, nil
}

// SkippedNonceGraceMs is how long, in block time, this node's proposals keep a skipped
// nonce usable once they first meet a candidate that would drop it (app.Room.MayDrop).
// A signer's transactions reach the nodes by different paths, and a proposer can hold
// nonce n+1 .. n+30 of a fast sender before n: including them all would move n more
// than the window (24) below the signer's last nonce, and the transaction of n,
// accepted by the node it was sent to, would be refused everywhere it arrives after.
// The later ones wait instead, until n comes or its grace ends (a signer may skip a
// nonce on purpose).
const SkippedNonceGraceMs = 10_000

// skippedNonces remembers when this node's proposals first kept each skipped nonce
// from being dropped. Consensus connection only.
type skippedNonces struct {
	first map[skippedNonce]uint64 // block time, ms
}

type skippedNonce struct {
	account string
	nonce   uint64
}

// mayDrop reports whether a proposal at atMs may drop account's skipped nonce: once
// its grace, counted from the first proposal that met it, has ended.
func (s *skippedNonces) mayDrop(account []byte, nonce, atMs uint64) bool {
	k := skippedNonce{string(account), nonce}
	first, ok := s.first[k]
	if !ok {
		if s.first == nil {
			s.first = map[skippedNonce]uint64{}
		}
		s.first[k], first = atMs, atMs
	}
	return atMs >= first+SkippedNonceGraceMs
}

// forget drops what was met long enough before atMs for its grace to have ended
// twice over: such a nonce is dropped or used by now, or may be dropped at once.
func (s *skippedNonces) forget(atMs uint64) {
	for k, first := range s.first {
		if atMs >= first+2*SkippedNonceGraceMs {
			delete(s.first, k)
		}
	}
}

// txSize is what a transaction takes of a proposal's MaxTxBytes.
func txSize(tx []byte) int64 { return cmttypes.ComputeProtoSizeForTxs([]cmttypes.Tx{tx}) }

// ProcessProposal executes the proposal on the state it starts from and rejects it when
// a transaction in it is refused unpaid (docs/ERRORS.md): an honest proposer, executing
// the same block on the same state, leaves every such transaction out, so only a
// proposer filling blocks with what costs nobody anything proposes one. An accepted
// proposal's execution is kept for its FinalizeBlock; the block this node built itself
// is found kept already.
func (a *Application) ProcessProposal(_ context.Context, req *abcitypes.RequestProcessProposal) (*abcitypes.ResponseProcessProposal, error) {
	base, _ := a.store.LastCommit()
	blk := a.proposalBlock(req.Height, req.Time, req.ProposerAddress, req.Txs, req.Misbehavior)
	if a.kept.of(base, req.Height, req.Time, req.ProposerAddress, req.Txs, blk.Misbehavior, req.Hash) {
		a.kept.hash = req.Hash
		return &abcitypes.ResponseProcessProposal{Status: abcitypes.ResponseProcessProposal_ACCEPT}, nil
	}
	x, err := a.executeAhead(blk, req.Time, nil)
	if a.haltOn(err) {
		// NB: CometBFT panics on an error here, outside any recovery when it replays
		// its log at start; the node stops (HoldHalted).
		return &abcitypes.ResponseProcessProposal{Status: abcitypes.ResponseProcessProposal_REJECT}, nil
	}
	if err != nil {
		a.log.Error().Err(err).Int64("height", req.Height).Msg("executing a proposal failed; halting")
		return nil, err
	}
	for i, tr := range x.res.TxResults {
		if tr.Unpaid() {
			a.kept = x
			a.discard()
			a.log.Info().Int64("height", req.Height).Int("tx", i).Err(tr.Err).Msg("proposal rejected: a transaction in it is refused unpaid")
			a.metrics.ProposalsRejected.Inc()
			return &abcitypes.ResponseProcessProposal{Status: abcitypes.ResponseProcessProposal_REJECT}, nil
		}
	}
	x.hash = req.Hash
	a.kept = x
	return &abcitypes.ResponseProcessProposal{Status: abcitypes.ResponseProcessProposal_ACCEPT}, nil
}
