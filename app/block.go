package app

import (
	"fmt"
	"strconv"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/feeschedule"
	"github.com/ttld-dev/ttld/protocol"
)

// Block is what the pipeline needs of a block.
type Block struct {
	Height uint64
	TimeMs uint64 // block time from the header, milliseconds since the Unix epoch
	Txs    [][]byte
}

// Attr is one attribute of an event.
type Attr struct{ Key, Value string }

// Event is something a block did, reported in its results.
type Event struct {
	Type  string
	Attrs []Attr
}

// TxResult is the outcome of one transaction.
type TxResult struct {
	Code   protocol.Code
	Log    string // readable; never consensus data
	Fee    uint64 // credits charged (0 when the refusal is unpaid)
	Events []Event
}

// BlockResult is the outcome of a block.
type BlockResult struct {
	TxResults []TxResult
	Events    []Event
	// Fees is the processing fees the block collected.
	Fees uint64
}

// Fault is an error that is not the transaction's fault: a storage failure or a broken
// invariant. The node must halt on it rather than commit a block.
type Fault struct{ Err error }

func (f Fault) Error() string { return "app: " + f.Err.Error() }
func (f Fault) Unwrap() error { return f.Err }

// rules are the versioned rules in force for one block.
type rules struct {
	version protocol.Version
	chainID string
	limits  protocol.Limits
	fees    feeschedule.Schedule
}

func loadRules(kv drive.KV) (rules, error) {
	v, err := drive.GetProtocolVersion(kv)
	if err != nil {
		return rules{}, err
	}
	params, err := drive.GetChainParams(kv)
	if err != nil {
		return rules{}, err
	}
	l, err := protocol.LimitsFor(v)
	if err != nil {
		return rules{}, err
	}
	f, err := feeschedule.For(v)
	if err != nil {
		return rules{}, err
	}
	return rules{version: v, chainID: params.ChainID, limits: l, fees: f}, nil
}

// ExecuteBlock applies b to kv (the working tree) and returns its results. An error is a
// Fault: kv may then hold part of the block and must be rolled back.
func ExecuteBlock(kv drive.KV, b Block) (BlockResult, error) {
	r, err := loadRules(kv)
	if err != nil {
		return BlockResult{}, Fault{err}
	}
	res := BlockResult{TxResults: make([]TxResult, 0, len(b.Txs))}
	changed := map[protocol.Address]uint64{}

	// 2. Transitions, in block order.
	for _, tx := range b.Txs {
		tr, err := executeTx(kv, r, tx, changed)
		if err != nil {
			return BlockResult{}, Fault{err}
		}
		res.Fees += tr.Fee
		res.TxResults = append(res.TxResults, tr)
	}

	// 3. Address balances: record, compact, clean up.
	events, err := addressBalanceStep(kv, r.limits, b, changed)
	if err != nil {
		return BlockResult{}, Fault{err}
	}
	res.Events = append(res.Events, events...)

	// 5. Fees into the pools.
	if res.Fees > 0 {
		collected, err := drive.GetProcessingFees(kv)
		if err != nil {
			return BlockResult{}, Fault{err}
		}
		if err := drive.SetProcessingFees(kv, collected+res.Fees); err != nil {
			return BlockResult{}, Fault{err}
		}
	}
	return res, nil
}

// addressBalanceStep records the balances the block changed, compacts the pending
// records once AddressBalanceCompactAfterBlocks records or
// AddressBalanceCompactAfterAddresses entries have gathered, and removes expired
// compacted records, at most MaxAddressBalanceCleanupsPerBlock per block.
func addressBalanceStep(kv drive.KV, l protocol.Limits, b Block, changed map[protocol.Address]uint64) ([]Event, error) {
	var events []Event
	if len(changed) > 0 {
		changes := make([]drive.BalanceChange, 0, len(changed))
		for a, bal := range changed {
			changes = append(changes, drive.BalanceChange{Address: a, Balance: bal})
		}
		drive.SortBalanceChanges(changes)
		if err := drive.RecordBlockChanges(kv, b.Height, changes); err != nil {
			return nil, err
		}
	}
	pending, err := drive.PendingBlockChanges(kv)
	if err != nil {
		return nil, err
	}
	entries := 0
	for _, p := range pending {
		entries += len(p.Changes)
	}
	if len(pending) > 0 && (len(pending) >= l.AddressBalanceCompactAfterBlocks || entries >= l.AddressBalanceCompactAfterAddresses) {
		expires := b.TimeMs + l.CompactedAddressBalanceLifetimeMs
		if err := drive.CompactBlockChanges(kv, pending, expires); err != nil {
			return nil, err
		}
		events = append(events, Event{Type: "address_balances_compacted", Attrs: []Attr{
			{"start_height", strconv.FormatUint(pending[0].Height, 10)},
			{"end_height", strconv.FormatUint(pending[len(pending)-1].Height, 10)},
			{"entries", strconv.Itoa(entries)},
			{"expires_at_ms", strconv.FormatUint(expires, 10)},
		}})
	}
	removed, more, err := drive.RemoveExpiredChanges(kv, b.TimeMs, l.MaxAddressBalanceCleanupsPerBlock)
	if err != nil {
		return nil, err
	}
	if removed > 0 {
		events = append(events, Event{Type: "address_balances_cleanup", Attrs: []Attr{
			{"removed", strconv.Itoa(removed)},
			{"backlog", strconv.FormatBool(more)},
		}})
	}
	return events, nil
}

func faultf(format string, args ...any) error { return Fault{fmt.Errorf(format, args...)} }
