package app

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/feeschedule"
	"github.com/ttld-dev/ttld/protocol"
)

// Block is what the pipeline needs of a block: its context and its transactions.
type Block struct {
	Height uint64
	// TimeMs is the block time from the header, milliseconds since 1970
	// (protocol.BlockTimeMs); a time past protocol.MaxBlockTimeMs, which no header
	// carries, is read as MaxBlockTimeMs.
	TimeMs uint64
	// Proposer is the CometBFT address of the validator that proposed the block
	// (RequestFinalizeBlock.ProposerAddress), whose blocks the epoch pays out.
	Proposer []byte
	Txs      [][]byte
	// Misbehavior is the evidence the block carries, handled from version 16 on.
	Misbehavior []Misbehavior
	// GenesisValidators is the genesis validator set, which the switch to version 16
	// records as the chain's set (docs/STATE.md, "Validators"); a block that does not
	// switch to 16 does not read it.
	GenesisValidators []drive.GenesisValidator
	// Verifier checks the transactions' signatures; nil checks every one with
	// ed25519 (protocol.VerifyEd25519). The node passes one that remembers what
	// CheckTx verified.
	Verifier protocol.Verifier
}

// TxResult is the outcome of one transaction.
type TxResult struct {
	Code protocol.Code
	Log  string // readable; never consensus data
	// Err is the refusal as its typed error (protocol's, carrying its fields), nil
	// when accepted; Log is its text.
	Err error
	// Fee is what the transition cost, by part; zero when the refusal is unpaid.
	Fee feeschedule.Result
	// Charged is what the payer paid: Fee.Charged().
	Charged uint64
	// MaxCharged bounds what the transaction would be charged on a state where the keys
	// it found absent hold values: the fee estimate of a dry run (>= Charged; 0 for an
	// unpaid refusal).
	MaxCharged uint64
	// Changes are the address balances the transaction set.
	Changes []drive.BalanceChange
	Events  []protocol.Event
}

// Unpaid reports a refusal that charges nothing and changes nothing (docs/ERRORS.md):
// the block without the transaction ends in the same state, with the same results for
// the others. A proposer leaves such a transaction out (ProposeBlock).
func (r TxResult) Unpaid() bool { return r.Code != protocol.CodeOK && !r.Code.Paid() }

// Cleanup is what one budgeted cleanup did in a block.
type Cleanup struct {
	// Name says which cleanup: "address_balances" (and, with document time to live,
	// "documents").
	Name  string
	Stats drive.DrainStats
	// Orphans counts the removed entries that had nothing to delete (documents only).
	Orphans int
}

// BlockResult is the outcome of a block.
type BlockResult struct {
	TxResults []TxResult
	Events    []protocol.Event
	// Fees is the sum of the block's transaction fees, by part.
	Fees     feeschedule.Result
	Cleanups []Cleanup
	// Epoch is the block's epoch.
	Epoch uint32
	// Version is the protocol version in force for the block; Switched: the block
	// switched to it (docs/STATE.md, "Protocol upgrades").
	Version  protocol.Version
	Switched bool
	// ValidatorUpdates are the block's changes of the validator set, by address, for
	// CometBFT, which applies them two blocks later.
	ValidatorUpdates []ValidatorUpdate
	// Credits is the running total of credits in state after the block, which every
	// write of the block updated, and the genesis supply it must equal.
	Credits Credits
}

// Credits is the running total of credits in state and the supply.
type Credits struct {
	Height        uint64
	Total, Supply uint64
}

// Conserved reports a total that differs from the supply as an
// drive.ErrCreditsNotConserved: the node halts on it when it checks invariants
// (--check-invariants), and tests always check.
func (c Credits) Conserved() error {
	if c.Total != c.Supply {
		return drive.ErrCreditsNotConserved{Height: c.Height, What: "running total", Total: strconv.FormatUint(c.Total, 10), Want: strconv.FormatUint(c.Supply, 10) + " (the supply)"}
	}
	return nil
}

// Fault is an error that is not the transaction's fault: a storage failure or a broken
// invariant. The node must halt on it rather than commit a block. Nothing a transaction
// can cause is a Fault.
type Fault struct{ Err error }

func (f Fault) Error() string { return "app: " + f.Err.Error() }
func (f Fault) Unwrap() error { return f.Err }

// rules are the versioned rules in force for one block (or one CheckTx).
type rules struct {
	chainID string
	params  drive.ChainParams
	ctx     protocol.Context
	fees    feeschedule.Schedule
	// verifier checks signatures: never nil once loadRules returns.
	verifier protocol.Verifier
	// check: the transaction is judged for the mempool (CheckTx), not executed in a
	// block.
	check bool
}

// epoch is the index of the epoch of the block the rules judge.
func (r rules) epoch() uint32 {
	return protocol.EpochIndex(r.params.GenesisTimeMs, r.params.EpochLengthS, r.ctx.BlockTimeMs)
}

// loadRules reads the rules in force in kv, for a block at atMs, checking signatures
// through verifier (nil: protocol.VerifyEd25519).
func loadRules(kv drive.KV, atMs uint64, verifier protocol.Verifier) (rules, error) {
	if verifier == nil {
		verifier = protocol.VerifyEd25519
	}
	v, err := drive.GetProtocolVersion(kv)
	if err != nil {
		return rules{}, err
	}
	params, err := drive.GetChainParams(kv)
	if err != nil {
		return rules{}, err
	}
	ctx, err := protocol.ContextFor(v, atMs)
	if err != nil {
		return rules{}, err
	}
	local, err := drive.GetLocalLimits(kv)
	if err != nil {
		return rules{}, err
	}
	ctx.Limits = ctx.Limits.WithLocal(local)
	f, err := feeschedule.For(v)
	if err != nil {
		return rules{}, err
	}
	return rules{chainID: params.ChainID, params: params, ctx: ctx, fees: f, verifier: verifier}, nil
}

// ExecuteBlock applies b to kv (the working tree) and returns its results. An error is a
// Fault: kv may then hold part of the block and must be rolled back.
func ExecuteBlock(kv drive.KV, b Block) (BlockResult, error) {
	res, err := executeBlock(kv, b, nil)
	return res, asFault(err)
}

// asFault returns err as a Fault, wrapping it once; nil stays nil.
func asFault(err error) error {
	var f Fault
	if err == nil || errors.As(err, &f) {
		return err
	}
	return Fault{err}
}

// executeBlock runs b on kv. With a picker, b's transactions are a proposal's
// candidates: those the picker does not take are left out of the block as if they had
// never been in it.
func executeBlock(kv drive.KV, b Block, pick *picker) (BlockResult, error) {
	// NB: bounding the time bounds every sum over it: epochs stay at least 2,000 +
	// lifetime below protocol.MaxEpoch (TestTimesLeaveRoomForTheSpread), expiries and
	// windows far below 2^64.
	b.TimeMs = min(b.TimeMs, protocol.MaxBlockTimeMs)
	// Every write of the block goes through the ledger, which follows the credits it
	// moves into the running total.
	led := drive.NewLedger(kv)
	kv = led
	up, err := upgradeStep(kv, b)
	if err != nil {
		return BlockResult{}, err
	}
	r, err := loadRules(kv, b.TimeMs, b.Verifier)
	if err != nil {
		return BlockResult{}, err
	}
	res := BlockResult{TxResults: make([]TxResult, 0, len(b.Txs)), Version: r.ctx.Version, Switched: up.switched}

	// 1. The block's context (what CheckTx and queries judge time against until the
	// next block) and its epoch: on an epoch change, storage fees distributed and
	// pending refunds taken back.
	if err := drive.SetLastBlock(kv, drive.LastBlock{Height: b.Height, TimeMs: b.TimeMs}); err != nil {
		return res, err
	}
	res.Events = append(res.Events, up.events...)
	var events []protocol.Event
	if res.Epoch, events, err = epochStep(kv, r.params, r.ctx.Limits, b); err != nil {
		return res, err
	}
	res.Events = append(append(res.Events, events...), up.decided...)

	// 1b. Evidence (version 16 on): a validator that misbehaved leaves the set.
	var set setChanges
	if r.ctx.Limits.ValidatorVotes {
		if events, err = misbehaviorStep(kv, &set, b, res.Epoch); err != nil {
			return BlockResult{}, err
		}
		res.Events = append(res.Events, events...)
	}

	// 2. Transitions, in block order; a proposer's version signal first.
	collected, err := drive.GetU64(kv, drive.EpochFeesKey(res.Epoch))
	if err != nil {
		return res, err
	}
	changed := map[protocol.Address]uint64{}
	for _, tx := range b.Txs {
		size, fits := pick.fits(tx)
		if !fits {
			break
		}
		admitted, err := pick.admits(kv, r, b.TimeMs, tx)
		if err != nil {
			return BlockResult{}, err
		}
		if !admitted {
			continue
		}
		var tr TxResult
		if protocol.IsVersionSignal(tx) {
			tr, err = signalTx(kv, r, res.Epoch, len(res.TxResults), tx)
		} else {
			tr, collected, err = executeTx(kv, r, tx, collected)
		}
		if err != nil {
			return BlockResult{}, err
		}
		if !pick.take(tx, size, tr) {
			continue
		}
		// The fee pool's sum was checked per transaction, so the parts cannot
		// overflow here.
		if res.Fees, err = res.Fees.Add(tr.Fee); err != nil {
			return BlockResult{}, err
		}
		for _, c := range tr.Changes {
			changed[c.Address] = c.Balance
		}
		res.TxResults = append(res.TxResults, tr)
	}

	// 2b. The validator set (version 16 on): expired proposals removed, passed ones
	// applied.
	if r.ctx.Limits.ValidatorVotes {
		if events, err = validatorStep(kv, &set, r.ctx.Limits, b); err != nil {
			return BlockResult{}, err
		}
		res.Events = append(res.Events, events...)
		if res.ValidatorUpdates, err = set.updates(kv); err != nil {
			return BlockResult{}, err
		}
	}

	// 3. Address balances: record, compact, clean up.
	events, cleanup, err := addressBalanceStep(kv, r.ctx.Limits, b, changed)
	if err != nil {
		return BlockResult{}, err
	}
	res.Events = append(res.Events, events...)
	res.Cleanups = append(res.Cleanups, cleanup)

	// 4. expire_documents (protocol version 14 on).
	events, cleanup, err = expireDocumentsStep(kv, r, b)
	if err != nil {
		return BlockResult{}, err
	}
	res.Events = append(res.Events, events...)
	res.Cleanups = append(res.Cleanups, cleanup)

	// 5. Fees into the pools, and the proposer's block counted (not a proposer whose
	// misbehaviour was handled in the epoch: it forfeits the epoch's share).
	proposer := b.Proposer
	if r.ctx.Limits.ValidatorVotes && len(proposer) == protocol.ConsensusAddressLen {
		forfeit, err := forfeitedEpoch(kv, protocol.ConsensusAddress(proposer))
		if err != nil {
			return BlockResult{}, err
		}
		if forfeit {
			proposer = nil
		}
	}
	if err := feesStep(kv, res.Epoch, proposer, res.Fees); err != nil {
		return BlockResult{}, err
	}

	// 6. The oldest finished epoch not yet paid, to its proposers.
	if events, err = payoutStep(kv, res.Epoch, r.ctx.Limits); err != nil {
		return BlockResult{}, err
	}
	res.Events = append(res.Events, events...)

	// 7. The running total of credits, which the caller checks against the supply.
	res.Credits.Height = b.Height
	if res.Credits.Total, err = led.UpdateTotal(b.Height); err != nil {
		return BlockResult{}, err
	}
	if res.Credits.Supply, err = drive.GetSupply(kv); err != nil {
		return BlockResult{}, err
	}
	return res, nil
}

// addressBalanceStep records the balances the block changed, compacts the pending
// records once AddressBalanceCompactAfterBlocks records or
// AddressBalanceCompactAfterAddresses entries have gathered, and removes expired
// compacted records within the block's budget.
func addressBalanceStep(kv drive.KV, l protocol.Limits, b Block, changed map[protocol.Address]uint64) ([]protocol.Event, Cleanup, error) {
	var events []protocol.Event
	cleanup := Cleanup{Name: "address_balances"}
	if len(changed) > 0 {
		changes := make([]drive.BalanceChange, 0, len(changed))
		for a, bal := range changed {
			changes = append(changes, drive.BalanceChange{Address: a, Balance: bal})
		}
		drive.SortBalanceChanges(changes)
		if err := drive.RecordBlockChanges(kv, b.Height, changes); err != nil {
			return nil, cleanup, err
		}
	}
	pending, err := drive.PendingBlockChanges(kv)
	if err != nil {
		return nil, cleanup, err
	}
	entries := 0
	for _, p := range pending {
		entries += len(p.Changes)
	}
	if len(pending) > 0 && (len(pending) >= l.AddressBalanceCompactAfterBlocks || entries >= l.AddressBalanceCompactAfterAddresses) {
		expires := b.TimeMs + l.CompactedAddressBalanceLifetimeMs
		if err := drive.CompactBlockChanges(kv, pending, expires); err != nil {
			return nil, cleanup, err
		}
		events = append(events, protocol.NewAddressBalancesCompactedEvent(pending[0].Height, pending[len(pending)-1].Height, entries, expires))
	}
	budget := drive.Budget{MaxCount: l.MaxAddressBalanceCleanupsPerBlock, MaxWeight: uint64(l.MaxAddressBalanceCleanupsPerBlock)}
	if cleanup.Stats, err = drive.Drain(kv, drive.AddressBalanceCleanup, b.TimeMs, budget); err != nil {
		return nil, cleanup, err
	}
	if st := cleanup.Stats; st.Removed > 0 {
		events = append(events, protocol.NewAddressBalancesCleanupEvent(st.Removed, st.Backlog, st.OldestOverdueMs))
	}
	return events, cleanup, nil
}

func faultf(format string, args ...any) error { return Fault{fmt.Errorf(format, args...)} }
