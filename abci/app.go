package abci

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	cryptoenc "github.com/cometbft/cometbft/crypto/encoding"
	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/cosmos/iavl"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/snapshot"
)

// CodespaceInternal is the codespace of CheckTx's answer when checking a transaction
// failed inside the node (a storage error): its code is then not a transition code.
const CodespaceInternal = "ttld-internal"

// CheckCodeInternal is the code CheckTx gives, in CodespaceInternal, to a transaction it
// could not check.
const CheckCodeInternal uint32 = 1

// Application is the ttld ABCI application.
type Application struct {
	abcitypes.BaseApplication

	store   *drive.Store
	log     zerolog.Logger
	metrics *Metrics
	// signatures checks every signature the connections meet, remembering those that
	// passed: a transaction is verified once, by CheckTx, however often it is checked.
	signatures *verifiedSignatures
	// checked holds the hashes of the transactions CheckTx accepted: FinalizeBlock
	// verifies the signatures of the others ahead, in parallel.
	checked *lru.Cache[[sha256.Size]byte, struct{}]

	// consensus connection only
	staged int64 // height FinalizeBlock staged and Commit has not saved; 0: none
	// kept is the last block executed before its decision (proposal.go), for the
	// FinalizeBlock of the same block; nil: none. FinalizeBlock takes it.
	kept *executed
	// swept is the block time of the staged block when it swept time-range grids (an
	// epoch change): Commit then observes their backlog. 0: it did not.
	swept uint64
	// setTouched: the staged block (or the process's first) changed the validator set,
	// its proposals or its evidence: Commit then observes them.
	setTouched bool
	// checkInvariants: after every block, the running total of credits must equal the
	// supply, or the node halts (--check-invariants).
	checkInvariants bool
	// readsAhead: the documents blocks' cleanups delete are read ahead on other
	// goroutines (readahead.go); reading is the reading in progress (nil: none), and
	// readers counts the goroutines that have not ended.
	readsAhead bool
	reading    *reader
	readers    sync.WaitGroup

	// signal is the version this node's proposals signal (upgrade.go); halted is
	// closed once the chain moved past this binary.
	signal protocol.Version
	halted halt
	// holdHalted: FinalizeBlock holds a block it halts the node at (HoldHalted); set
	// once CometBFT's node is made.
	holdHalted atomic.Bool

	// snapshots are the snapshots this node offers, scheduler takes them (nil: none);
	// restoring is the node's state sync (snapshots.go): made by ServeSnapshots before
	// the node starts and never replaced; its restore in progress belongs to the
	// snapshot connection, its status is read under its lock by queries and the node.
	snapshots *snapshot.Files
	scheduler *snapshot.Scheduler
	restoring *restore

	// check is the check state (checkstate.go), safe for concurrent use: nil before
	// InitChain. InitChain and Commit replace it; CheckTx and the check-state queries
	// judge on the one they load.
	check atomic.Pointer[checkState]
	// mempool is what CheckTx knows of CometBFT's mempool (SetMempool); settling
	// serialises settling a check state after the recheck (settledCheck).
	mempool  MempoolConfig
	settling sync.Mutex
	// catchingUp reports whether CometBFT is catching up with the chain (SetCatchingUp);
	// nil: never.
	catchingUp atomic.Pointer[func() bool]
	// skipped are the skipped nonces this node's proposals keep usable a while
	// (proposal.go). Consensus connection only.
	skipped skippedNonces
	// decided are the transactions of the block FinalizeBlock staged: Commit carries
	// the check state's others over (carry.go). Consensus connection only.
	decided [][]byte
	// genesisValidators are the chain's genesis validators (SetGenesisValidators),
	// which the switch to protocol version 16 records as the set. InitChain sets them
	// too.
	genesisValidators []drive.GenesisValidator
}

// New wraps a store. metrics may be nil.
func New(store *drive.Store, log zerolog.Logger, metrics *Metrics) (*Application, error) {
	if metrics == nil {
		var err error
		if metrics, err = NewMetrics(nil, ""); err != nil {
			return nil, err
		}
	}
	signatures, err := newVerifiedSignatures(DefaultVerifiedSignatures, metrics)
	if err != nil {
		return nil, err
	}
	checked, err := lru.New[[sha256.Size]byte, struct{}](DefaultVerifiedSignatures)
	if err != nil {
		return nil, err
	}
	a := &Application{store: store, log: log, metrics: metrics, signatures: signatures, checked: checked, setTouched: true,
		signal: protocol.Newest(), halted: halt{done: make(chan struct{})}}
	if err := a.checkSavedVersion(); err != nil {
		return nil, err
	}
	if err := a.resetCheckState(); err != nil {
		return nil, err
	}
	if v, _ := store.LastCommit(); v > 0 {
		a.observePools(v)
		if saved, err := store.Saved(v); err == nil {
			a.warnUpgrade(saved)
		}
	}
	return a, nil
}

// CheckInvariants makes every block check that the running total of credits equals
// the genesis supply, and halt the node (FinalizeBlock fails) with both totals and the
// height when it does not. Call it before the node starts.
func (a *Application) CheckInvariants() { a.checkInvariants = true }

// resetCheckState stages a fresh check state over the last saved version, holding no
// transaction.
func (a *Application) resetCheckState() error {
	cs, err := a.savedCheckState()
	if cs != nil {
		cs.settled.Store(true)
	}
	if err == nil {
		a.check.Store(cs)
	}
	return err
}

// savedCheckState is a fresh check state over the last saved version; nil before the
// first commit.
func (a *Application) savedCheckState() (*checkState, error) {
	v, _ := a.store.LastCommit()
	if v == 0 {
		return nil, nil
	}
	saved, err := a.store.Saved(v)
	if err != nil {
		return nil, err
	}
	return newCheckState(drive.NewMemo(saved), nil, a.mempool.MarginMs, a.mempool.Limits)
}

// settledCheck is the check state new transactions are judged on. The first call after
// a block ends the recheck, since CometBFT holds new transactions back until its
// recheck is over: a transaction carried over (carry.go) that the recheck did not ask
// for is not in CometBFT's mempool (it dropped it, or an operator flushed it), so the
// check state is judged again without it.
func (a *Application) settledCheck() (*checkState, error) {
	cs := a.check.Load()
	if cs == nil || cs.settled.Load() {
		return cs, nil
	}
	a.settling.Lock()
	defer a.settling.Unlock()
	if cs = a.check.Load(); cs.settled.Load() {
		return cs, nil
	}
	if a.mempool.NoRecheck || !cs.carried.anyUnasked() {
		cs.settled.Store(true)
		return cs, nil
	}
	keep := cs.accepted.inOrder(cs.carried.unasked)
	a.log.Warn().Int("held", cs.accepted.size()).Int("kept", len(keep)).
		Msg("the mempool no longer holds transactions the check state carried over from the last block: judging the others again without them")
	next, err := newCheckState(cs.base, nil, cs.marginMs, a.mempool.Limits)
	if err != nil {
		return nil, err
	}
	next.carry(keep, a.signatures, a.answer)
	next.carried = nil // no recheck asks for these: they are the mempool's already
	next.settled.Store(true)
	a.check.Store(next)
	return next, nil
}

// Info reports the last saved height and its root, so CometBFT's handshake replays the
// blocks the application lacks.
func (a *Application) Info(_ context.Context, _ *abcitypes.RequestInfo) (*abcitypes.ResponseInfo, error) {
	v, hash := a.store.LastCommit()
	res := &abcitypes.ResponseInfo{Data: "ttld", Version: "1", LastBlockHeight: v}
	if v > 0 {
		res.LastBlockAppHash = hash
		saved, err := a.store.Saved(v)
		if err != nil {
			return nil, err
		}
		pv, err := drive.GetProtocolVersion(saved)
		if err != nil {
			return nil, err
		}
		res.AppVersion = uint64(pv)
	}
	return res, nil
}

// InitChain writes the genesis app state into the working tree and returns its root.
func (a *Application) InitChain(_ context.Context, req *abcitypes.RequestInitChain) (*abcitypes.ResponseInitChain, error) {
	a.store.Rollback()
	if err := genesis.CheckTime(req.Time); err != nil {
		return nil, err
	}
	p := genesis.Params{ChainID: req.ChainId, GenesisTimeMs: protocol.BlockTimeMs(req.Time), InitialHeight: uint64(req.InitialHeight)}
	vals, err := GenesisValidators(req.Validators)
	if err != nil {
		return nil, err
	}
	p.Validators = vals
	a.genesisValidators = vals
	if err := genesis.InitChain(a.store.Working(), p, req.AppStateBytes); err != nil {
		return nil, err
	}
	// Until the first commit the check state is the genesis state, built apart from
	// the working tree, which FinalizeBlock is about to change.
	check, err := newCheckState(drive.Empty(), func(kv drive.KV) error { return genesis.InitChain(kv, p, req.AppStateBytes) }, a.mempool.MarginMs, a.mempool.Limits)
	if err != nil {
		return nil, err
	}
	check.settled.Store(true)
	a.check.Store(check)
	v, err := drive.GetProtocolVersion(a.store.Working())
	if err != nil {
		return nil, err
	}
	a.log.Info().Str("chain_id", req.ChainId).Int64("initial_height", req.InitialHeight).Uint32("protocol_version", uint32(v)).Msg("genesis state written")
	// The headers carry the protocol version as their app version from the first
	// block on; a block that switches it updates it (appVersionUpdate).
	params := &cmtproto.ConsensusParams{Version: &cmtproto.VersionParams{App: uint64(v)}}
	hash, err := a.store.WorkingHash()
	if err != nil {
		return nil, err
	}
	return &abcitypes.ResponseInitChain{AppHash: hash, ConsensusParams: params}, nil
}

// GenesisValidators reads CometBFT's genesis validators (RequestInitChain.Validators,
// or a genesis file's through types.TM2PB.ValidatorUpdates): ed25519 keys with a
// positive power, which the chain records as its set from protocol version 16 on.
func GenesisValidators(in []abcitypes.ValidatorUpdate) ([]drive.GenesisValidator, error) {
	out := make([]drive.GenesisValidator, 0, len(in))
	for _, v := range in {
		pub, err := cryptoenc.PubKeyFromProto(v.PubKey)
		if err != nil {
			return nil, fmt.Errorf("abci: genesis validator key: %w", err)
		}
		if pub.Type() != "ed25519" || v.Power <= 0 {
			return nil, fmt.Errorf("abci: genesis validator %X: want an ed25519 key and a positive power, got %s and %d", pub.Address(), pub.Type(), v.Power)
		}
		out = append(out, drive.GenesisValidator{PubKey: pub.Bytes(), Power: uint64(v.Power)})
	}
	return out, nil
}

// GenesisValidatorsOf reads the validators of a genesis file as GenesisValidators
// reads InitChain's.
func GenesisValidatorsOf(gen *cmttypes.GenesisDoc) ([]drive.GenesisValidator, error) {
	in := make([]abcitypes.ValidatorUpdate, len(gen.Validators))
	for i, v := range gen.Validators {
		pk, err := cryptoenc.PubKeyToProto(v.PubKey)
		if err != nil {
			return nil, fmt.Errorf("abci: genesis validator %X: %w", v.Address, err)
		}
		in[i] = abcitypes.ValidatorUpdate{PubKey: pk, Power: v.Power}
	}
	return GenesisValidators(in)
}

// SetGenesisValidators tells the application the chain's genesis validators, which a
// block switching to protocol version 16 records as the set (docs/STATE.md,
// "Validators"). The node sets them from its genesis file before CometBFT starts.
func (a *Application) SetGenesisValidators(vals []drive.GenesisValidator) { a.genesisValidators = vals }

// validatorUpdates turns a block's changes of the set into CometBFT's.
func validatorUpdates(in []app.ValidatorUpdate) []abcitypes.ValidatorUpdate {
	out := make([]abcitypes.ValidatorUpdate, len(in))
	for i, u := range in {
		out[i] = abcitypes.Ed25519ValidatorUpdate(u.PubKey, int64(u.Power))
	}
	return out
}

// CheckTx judges the transaction on the check state as the next block would
// (app.Judge). A success stays in the check state so later transactions see it; a
// refusal, or a failure to check this one transaction, leaves the check state of the
// other pending transactions as it was. It is safe for concurrent use: the mempool
// connection's client calls it on the goroutine of each sender (ClientCreator), and
// the check state judges the transactions as one serial order would (checkstate.go).
// A recheck after a block gets the verdict the check state gave the transaction when
// it carried it over (carry.go). A node that cannot judge a new transaction (it is
// catching up with the chain, or its mempool is full) refuses it with a node code
// (CodespaceNode).
func (a *Application) CheckTx(_ context.Context, req *abcitypes.RequestCheckTx) (*abcitypes.ResponseCheckTx, error) {
	if req.Type == abcitypes.CheckTxType_Recheck {
		cs := a.check.Load()
		if cs == nil {
			return nodeRefusal(NodeCodeCatchingUp, "the node holds no state yet"), nil
		}
		if res, ok := cs.carried.recheck(req.Tx); ok {
			return res, nil
		}
		cs.accepted.reserve(len(req.Tx), true)
		return a.judgeOn(cs, req.Tx, false), nil
	}
	if f := a.catchingUp.Load(); f != nil && (*f)() {
		return nodeRefusal(NodeCodeCatchingUp, "the node is catching up with the chain (block sync or state sync): its state is behind, so it cannot judge the transaction; send it to a node that is in step, or again once this one is (ttld status: catching_up false)"), nil
	}
	cs, err := a.settledCheck()
	switch {
	case err != nil:
		a.log.Error().Err(err).Msg("settling the check state after the recheck failed; the transaction is refused")
		return &abcitypes.ResponseCheckTx{Codespace: CodespaceInternal, Code: CheckCodeInternal, Log: err.Error()}, nil
	case cs == nil:
		return nodeRefusal(NodeCodeCatchingUp, "the node holds no state yet"), nil
	case !cs.accepted.reserve(len(req.Tx), false):
		l := cs.accepted.limits
		return nodeRefusal(NodeCodeMempoolFull, fmt.Sprintf("the node's mempool is full (%d transactions or %d bytes): send the transaction again after the next block, or to another node", l.Size, l.MaxTxsBytes)), nil
	}
	return a.judgeOn(cs, req.Tx, true), nil
}

// judgeOn judges tx on cs, in the room reserved for it, which it gives back unless tx
// is accepted.
func (a *Application) judgeOn(cs *checkState, tx []byte, isNew bool) *abcitypes.ResponseCheckTx {
	res, _, err := cs.checkTx(tx, isNew, a.signatures)
	ans := checkAnswer{res: res, err: err}
	if !ans.ok() {
		cs.accepted.release(len(tx))
	}
	return a.answer(tx, ans)
}

// checkAnswer is a transaction's judgement on the check state: its result, or the
// failure inside the node that kept it from being judged.
type checkAnswer struct {
	res app.TxResult
	err error
}

func (c checkAnswer) ok() bool { return c.err == nil && c.res.Code == protocol.CodeOK }

// answer is CheckTx's response of tx's judgement. FinalizeBlock verifies ahead the
// signatures of the transactions CheckTx did not accept (checked).
func (a *Application) answer(tx []byte, c checkAnswer) *abcitypes.ResponseCheckTx {
	if c.err != nil {
		a.log.Error().Err(c.err).Msg("checking a transaction failed; it is refused, the other pending ones are kept")
		return &abcitypes.ResponseCheckTx{Codespace: CodespaceInternal, Code: CheckCodeInternal, Log: c.err.Error()}
	}
	if c.ok() {
		a.checked.Add(sha256.Sum256(tx), struct{}{})
	}
	// NB: a refused transaction is kept out of the mempool even when the block
	// would charge it: the mempool only carries what can succeed.
	return &abcitypes.ResponseCheckTx{Code: uint32(c.res.Code), Log: c.res.Log, GasWanted: gas(c.res.Charged)}
}

// gas reports a credit amount in an int64 field of CometBFT's, clamped.
func gas(credits uint64) int64 {
	if credits > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(credits)
}

// FinalizeBlock stages the decided block on the working tree and returns its root. A
// block executed before its decision (PrepareProposal or ProcessProposal) is staged
// already, or on a branch that is flushed now; any other block, a replayed or caught-up
// one, which came with no proposal, or another than the one executed, is executed here,
// after what was kept is dropped.
func (a *Application) FinalizeBlock(_ context.Context, req *abcitypes.RequestFinalizeBlock) (*abcitypes.ResponseFinalizeBlock, error) {
	start := time.Now()
	base, _ := a.store.LastCommit()
	x := a.kept
	var err error
	switch {
	case x.of(base, req.Height, req.Time, req.ProposerAddress, req.Txs, misbehavior(req.Misbehavior), req.Hash):
		a.kept = nil
		a.metrics.Optimistic.WithLabelValues(optimisticHit).Inc()
		if x.branch != nil {
			err = a.store.Batch(x.branch.Flush)
		}
	default:
		result := optimisticUnprocessed
		if x != nil {
			result = optimisticMiss
		}
		a.metrics.Optimistic.WithLabelValues(result).Inc()
		x, err = a.execute(req)
	}
	if err == nil && a.checkInvariants {
		err = x.res.Credits.Conserved()
	}
	if err != nil {
		a.store.Rollback()
		if !a.haltOn(err) {
			a.log.Error().Err(err).Int64("height", req.Height).Msg("block execution failed; halting")
		} else if a.holdHalted.Load() {
			select {} // NB: the node stops without this call (HoldHalted)
		}
		return nil, err
	}
	a.staged, a.swept, a.decided = req.Height, 0, req.Txs
	for _, e := range x.res.Events {
		switch e.Type {
		case protocol.EventTimeRangeSweep:
			a.swept = protocol.BlockTimeMs(req.Time)
		case protocol.EventProtocolUpgradeDecided:
			a.warnUpgrade(a.store.Working())
		case protocol.EventValidatorMisbehavior:
			a.metrics.Misbehavior.WithLabelValues(e.Attr(protocol.AttrKind), e.Attr(protocol.AttrRemoved)).Inc()
		}
		a.setTouched = a.setTouched || strings.HasPrefix(e.Type, validatorEvents)
	}
	for _, tr := range x.res.TxResults {
		for _, e := range tr.Events {
			a.setTouched = a.setTouched || strings.HasPrefix(e.Type, validatorEvents)
		}
	}
	a.metrics.ValidatorUpdates.Add(float64(len(x.res.ValidatorUpdates)))
	out := &abcitypes.ResponseFinalizeBlock{
		TxResults: make([]*abcitypes.ExecTxResult, len(x.res.TxResults)),
		Events:    events(blockEvents(x.res)),
		AppHash:   x.appHash,
		// The header's app version follows the protocol version.
		ConsensusParamUpdates: appVersionUpdate(x.res),
		ValidatorUpdates:      validatorUpdates(x.res.ValidatorUpdates),
	}
	if out.AppHash == nil {
		var err error
		if out.AppHash, err = a.store.WorkingHash(); err != nil {
			return nil, err
		}
	}
	for i, tr := range x.res.TxResults {
		out.TxResults[i] = &abcitypes.ExecTxResult{Code: uint32(tr.Code), Log: tr.Log, GasUsed: gas(tr.Charged), Events: events(tr.Events)}
		a.metrics.Txs.WithLabelValues(strconv.FormatUint(uint64(tr.Code), 10)).Inc()
		a.metrics.FeesCollected.Add(float64(tr.Charged))
	}
	for _, c := range x.res.Cleanups {
		a.metrics.observeCleanup(c)
	}
	a.metrics.FinalizeBlock.Observe(time.Since(start).Seconds())
	a.log.Debug().Int64("height", req.Height).Int("txs", len(req.Txs)).Hex("app_hash", out.AppHash).Msg("block finalized")
	return out, nil
}

// execute drops whatever the working tree holds beyond the state the block starts
// from and executes the decided block on it. The error is a Fault.
func (a *Application) execute(req *abcitypes.RequestFinalizeBlock) (*executed, error) {
	start := time.Now()
	a.discard()
	blk := a.proposalBlock(req.Height, req.Time, req.ProposerAddress, req.Txs, req.Misbehavior)
	defer a.readBlockAhead(blk)()
	if err := a.verifyUnchecked(blk); err != nil {
		return nil, err
	}
	var res app.BlockResult
	err := a.store.Batch(func() (err error) {
		res, err = app.ExecuteBlock(a.store.Working(), blk)
		return err
	})
	if err != nil {
		return nil, err
	}
	a.metrics.BlockExecution.Observe(time.Since(start).Seconds())
	return &executed{res: res}, nil
}

// verifyUnchecked verifies ahead, in parallel, the signatures of the block's
// transactions that CheckTx did not accept on this node.
func (a *Application) verifyUnchecked(blk app.Block) error {
	var unchecked [][]byte
	for _, tx := range blk.Txs {
		if !a.checked.Contains(sha256.Sum256(tx)) {
			unchecked = append(unchecked, tx)
		}
	}
	if len(unchecked) < 2*minChecksPerWorker {
		return nil
	}
	checks, err := app.SignatureChecks(a.store.Working(), unchecked, blk.TimeMs)
	if err != nil {
		return err
	}
	a.signatures.verifyAhead(checks)
	return nil
}

// blockEvents are the block's own events, and the node's block_transactions when it
// holds transactions (protocol.EventBlockTransactions), which CometBFT's block index
// keeps, so that a reader can list the blocks that are not empty.
func blockEvents(res app.BlockResult) []protocol.Event {
	if len(res.TxResults) == 0 {
		return res.Events
	}
	return append(res.Events[:len(res.Events):len(res.Events)], protocol.NewBlockTransactionsEvent(len(res.TxResults)))
}

// events renders a result's events for CometBFT, marking indexed only the attributes
// a reader searches for (protocol.Searched). The Index flag is not part of the results
// hash (CometBFT hashes a transaction result's code, data and gas alone), so which
// attributes are indexed is the node's choice, never consensus.
func events(in []protocol.Event) []abcitypes.Event {
	out := make([]abcitypes.Event, len(in))
	for i, e := range in {
		out[i].Type = e.Type
		out[i].Attributes = make([]abcitypes.EventAttribute, len(e.Attrs))
		for j, at := range e.Attrs {
			out[i].Attributes[j] = abcitypes.EventAttribute{Key: at.Key, Value: at.Value, Index: protocol.IsSearched(e.Type, at.Key)}
		}
	}
	return out
}

// Commit saves the staged block and resets the check state over it. Blocks are kept
// (RetainHeight 0) so the block store can be replayed.
func (a *Application) Commit(context.Context, *abcitypes.RequestCommit) (*abcitypes.ResponseCommit, error) {
	start := time.Now()
	a.reading.stop()
	v, hash, err := a.store.Commit()
	if err != nil {
		return nil, err
	}
	a.staged = 0
	if err := a.carryCheckState(); err != nil {
		return nil, err
	}
	a.readCleanupAhead()
	a.metrics.Commit.Observe(time.Since(start).Seconds())
	a.metrics.Height.Set(float64(v))
	_ = a.store.View(v, func(t *iavl.ImmutableTree) error {
		a.metrics.StateKeys.Set(float64(t.Size()))
		return nil
	})
	a.observePools(v)
	if a.setTouched {
		a.observeValidators(v)
		a.setTouched = false
	}
	if a.swept != 0 {
		a.observeTimeRanges(v, a.swept)
		a.swept = 0
	}
	if a.scheduler != nil {
		a.scheduler.Committed(v)
	}
	a.log.Debug().Int64("height", v).Hex("app_hash", hash).Msg("committed")
	return &abcitypes.ResponseCommit{}, nil
}

// carryCheckState replaces the check state after a commit by one over the new version
// that holds what the one before accepted and the block did not include, judged again
// in the order it accepted them (carry.go).
func (a *Application) carryCheckState() error {
	prev := a.check.Load()
	next, err := a.savedCheckState()
	if err != nil {
		return err
	}
	if prev != nil {
		included := make(map[txKey]bool, len(a.decided))
		for _, tx := range a.decided {
			included[sha256.Sum256(tx)] = true
		}
		// A transaction carried over into prev that the recheck never asked for is not
		// in the mempool (settledCheck drops it too, once a new transaction comes).
		gone := func(k txKey) bool { return included[k] || (!a.mempool.NoRecheck && prev.carried.unasked(k)) }
		next.carry(prev.accepted.inOrder(gone), a.signatures, a.answer)
	}
	a.decided = nil
	a.check.Store(next)
	return nil
}

// observePools sets the pool gauges from saved version v. A failure to read them is
// logged: metrics never stop the node.
func (a *Application) observePools(v int64) {
	saved, err := a.store.Saved(v)
	if err == nil {
		err = a.metrics.observePools(saved)
	}
	if err != nil {
		a.log.Error().Err(err).Int64("height", v).Msg("reading the pools for the metrics failed")
	}
}

// validatorEvents starts the type of every event of the validator set
// (protocol.EventValidatorProposal and the others).
const validatorEvents = "validator_"

// observeValidators sets the validator set's gauges from saved version v. A failure is
// logged: metrics never stop the node.
func (a *Application) observeValidators(v int64) {
	saved, err := a.store.Saved(v)
	if err == nil {
		err = a.metrics.observeValidators(saved)
	}
	if err != nil {
		a.log.Error().Err(err).Int64("height", v).Msg("reading the validator set for the metrics failed")
	}
}

// observeTimeRanges sets the time-range backlog gauge from saved version v at block
// time nowMs. A failure is logged: metrics never stop the node.
func (a *Application) observeTimeRanges(v int64, nowMs uint64) {
	saved, err := a.store.Saved(v)
	if err == nil {
		err = a.metrics.observeTimeRanges(saved, nowMs)
	}
	if err != nil {
		a.log.Error().Err(err).Int64("height", v).Msg("reading the time-range backlog for the metrics failed")
	}
}

// Query answers a path at a saved version, with proofs when asked, or one of the
// check-state paths (checkstate.go; proofs/paths.go lists them), unproven.
func (a *Application) Query(_ context.Context, req *abcitypes.RequestQuery) (*abcitypes.ResponseQuery, error) {
	switch req.Path {
	case proofs.PathPendingNonce:
		return a.pendingNonce(req), nil
	case proofs.PathDryRun:
		return a.dryRun(req), nil
	case proofs.PathRestore:
		return a.restoreStatus(req), nil
	case proofs.PathDocuments, proofs.PathCount, proofs.PathSum, proofs.PathRanked:
		return a.documentQuery(req), nil
	case proofs.PathStatistics:
		return a.statistics(req), nil
	}
	target, err := proofs.TargetOf(req.Path, req.Data)
	if err != nil {
		return &abcitypes.ResponseQuery{Code: proofs.QueryCodeBadRequest, Log: err.Error()}, nil
	}
	var res *abcitypes.ResponseQuery
	err = a.store.View(req.Height, func(tree *iavl.ImmutableTree) error {
		res, err = answer(tree, req, target)
		return err
	})
	if err != nil {
		var nk drive.ErrVersionNotKept
		if errors.As(err, &nk) {
			return &abcitypes.ResponseQuery{Code: proofs.QueryCodeVersionMissing, Log: err.Error(), Height: req.Height}, nil
		}
		return &abcitypes.ResponseQuery{Code: proofs.QueryCodeInternal, Log: err.Error()}, nil
	}
	return res, nil
}

// statistics answers PathStatistics at a saved version, unproven.
func (a *Application) statistics(req *abcitypes.RequestQuery) *abcitypes.ResponseQuery {
	if req.Prove || len(req.Data) != 8 {
		return &abcitypes.ResponseQuery{Code: proofs.QueryCodeBadRequest, Log: proofs.ErrBadQuery{Path: req.Path, Reason: "data is a time in milliseconds (u64), and the statistics have no proof"}.Error()}
	}
	res := &abcitypes.ResponseQuery{}
	err := a.store.View(req.Height, func(tree *iavl.ImmutableTree) error {
		st, err := drive.CountStatistics(tree, binary.BigEndian.Uint64(req.Data))
		if err != nil {
			return err
		}
		res.Value, err = json.Marshal(st)
		res.Height, res.Log = tree.Version(), fmt.Sprintf("%d documents (unproven)", st.Documents)
		return err
	})
	if err != nil {
		return failedQuery(req, err, proofs.QueryCodeInternal)
	}
	return res
}

// failedQuery is the answer to req of a read that failed with err: code 2 for a version
// not kept, code otherwise.
func failedQuery(req *abcitypes.RequestQuery, err error, code uint32) *abcitypes.ResponseQuery {
	var nk drive.ErrVersionNotKept
	if errors.As(err, &nk) {
		return &abcitypes.ResponseQuery{Code: proofs.QueryCodeVersionMissing, Log: err.Error(), Height: req.Height}
	}
	return &abcitypes.ResponseQuery{Code: code, Log: err.Error()}
}

// documentQuery answers a document query path (proofs.AnswerDocuments,
// proofs.AnswerCount) at a saved version, with its proofs when asked.
func (a *Application) documentQuery(req *abcitypes.RequestQuery) *abcitypes.ResponseQuery {
	res := &abcitypes.ResponseQuery{}
	err := a.store.View(req.Height, func(tree *iavl.ImmutableTree) error {
		var answer any
		var ops *cmtcrypto.ProofOps
		var err error
		switch req.Path {
		case proofs.PathDocuments:
			var d proofs.DocumentsAnswer
			d, ops, err = proofs.AnswerDocuments(tree, req.Data)
			answer, res.Log = d, fmt.Sprintf("%d documents", len(d.Documents))
		case proofs.PathRanked:
			var r proofs.RankedAnswer
			r, ops, err = proofs.AnswerRanked(tree, req.Data)
			answer, res.Log = r, "a ranked page"
		default:
			var c proofs.CountAnswer
			c, ops, err = proofs.AnswerCount(tree, req.Path, req.Data)
			answer, res.Log = c, describeCount(c.Record)
		}
		if err != nil {
			return err
		}
		if res.Value, err = json.Marshal(answer); err != nil {
			return err
		}
		res.Height = tree.Version()
		if req.Prove {
			res.ProofOps = ops
		}
		return nil
	})
	if err != nil {
		return failedQuery(req, err, proofs.QueryCodeOf(err))
	}
	return res
}

// describeCount renders a count record for people reading raw RPC output.
func describeCount(record []byte) string {
	c, ok := drive.DecodeIndexCount(record)
	if !ok {
		return "count 0 sum 0"
	}
	return fmt.Sprintf("count %d sum %s", c.Count, c.Sum)
}

// answer reads target from a saved version, with its proof when asked.
func answer(tree *iavl.ImmutableTree, req *abcitypes.RequestQuery, target proofs.Target) (*abcitypes.ResponseQuery, error) {
	res := &abcitypes.ResponseQuery{Height: tree.Version()}
	if !target.Range() {
		res.Key = target.Key
		value, ops, err := proofs.Prove(tree, target.Key)
		if err != nil {
			return nil, err
		}
		res.Value = value
		if req.Prove {
			res.ProofOps = ops
		}
		res.Log = describe(req.Path, value)
		return res, nil
	}
	res.Key = target.Start
	entries, more, ops, err := proofs.ProveRange(tree, target.Start, target.End, proofs.MaxRangeEntries)
	if err != nil {
		return nil, err
	}
	res.Value = proofs.EncodeEntries(entries)
	if more {
		res.Info = proofs.InfoMore
	}
	if req.Prove {
		res.ProofOps = ops
	}
	res.Log = fmt.Sprintf("%d entries", len(entries))
	return res, nil
}

// describe renders an answer for people reading raw RPC output; it is not proven.
func describe(path string, value []byte) string {
	if value == nil {
		return "absent"
	}
	if path == proofs.PathTotalCredits && len(value) == drive.U64Len {
		return strconv.FormatUint(binary.BigEndian.Uint64(value), 10)
	}
	if path == proofs.PathAddress {
		if st, err := drive.DecodeAddressState(value); err == nil {
			b, _ := json.Marshal(map[string]uint64{"balance": st.Balance, "nonce": st.Nonce.Last, "skipped_nonces": uint64(st.Nonce.Missing)})
			return string(b)
		}
	}
	return hex.EncodeToString(value)
}
