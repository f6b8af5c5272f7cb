package app

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/feeschedule"
	"github.com/ttld-dev/ttld/protocol"
)

// epochStep is step 1 of the pipeline: the block's epoch. The first block of a new
// epoch (whatever number of epochs passed since the last block) is the epoch change,
// done in one batch: the storage distribution pool is paid out to the PerpetualEpochs
// epochs from the new one on, the pending refunds are taken back from the epochs they
// were credited to, the new epoch is recorded, and the expired windows of ttl'd
// time-range grids are swept (drive.SweepWindows, at most lim's budget, nobody billed).
// It returns the block's epoch.
func epochStep(kv drive.KV, p drive.ChainParams, lim protocol.Limits, b Block) (uint32, []protocol.Event, error) {
	idx := protocol.EpochIndex(p.GenesisTimeMs, p.EpochLengthS, b.TimeMs)
	cur, ok, err := drive.GetCurrentEpoch(kv)
	if err != nil {
		return 0, nil, err
	}
	if ok && idx <= cur.Index {
		// NB: block times never go back (CometBFT's BFT time), so a lower index
		// cannot come; the block stays in the current epoch all the same.
		return cur.Index, nil, nil
	}
	distributed, err := distributeStoragePool(kv, idx)
	if err != nil {
		return 0, nil, err
	}
	taken, err := takeBackRefunds(kv)
	if err != nil {
		return 0, nil, err
	}
	lifetime, err := spreadLifetimePools(kv, idx)
	if err != nil {
		return 0, nil, err
	}
	if err := drive.SetCurrentEpoch(kv, drive.CurrentEpoch{Index: idx, FirstHeight: b.Height, FirstTimeMs: b.TimeMs}); err != nil {
		return 0, nil, err
	}
	change := protocol.EpochChangeEvent{Epoch: idx, StartMs: protocol.EpochStartMs(p.GenesisTimeMs, p.EpochLengthS, idx),
		StorageDistributed: distributed, RefundsTakenBack: taken, LifetimeStorageSpread: lifetime}
	if ok {
		change.PreviousEpoch = &cur.Index
	}
	events := []protocol.Event{change.Event()}
	if lim.MaxTimeRangeSweepDropsPerEpoch > 0 {
		removed, visited, err := drive.SweepWindows(kv, b.TimeMs, lim.MaxTimeRangeSweepDropsPerEpoch, lim.MaxTimeRangeSweepGridsPerEpoch)
		if err != nil {
			return 0, nil, err
		}
		if visited > 0 {
			events = append(events, protocol.NewTimeRangeSweepEvent(uint64(removed), uint64(visited)))
		}
	}
	return idx, events, nil
}

// spreadLifetimePools spreads every lifetime storage fee pool collected before epoch
// first evenly over its number of epochs from first on, the remainder of the division
// to first, and removes it (Document Time To Live: "the next epoch change spreads each pool of an
// earlier epoch evenly over its number of epochs from the new epoch on, the remainder
// of the division to the new epoch, and removes it"). It returns the amount spread.
func spreadLifetimePools(kv drive.KV, first uint32) (uint64, error) {
	pools, err := drive.LifetimePools(kv, first)
	if err != nil {
		return 0, err
	}
	var total uint64
	for _, p := range pools {
		if p.Lifetime == 0 {
			return 0, faultf("lifetime storage fee pool of epoch %d lives 0 epochs", p.Epoch)
		}
		each, rest := feeschedule.SpreadLifetimePool(p.Credits, p.Lifetime)
		err := creditEpochs(kv, first, uint32(p.Lifetime), func(i uint32) uint64 {
			if i == 0 {
				return each + rest
			}
			return each
		})
		if err != nil {
			return 0, err
		}
		if err := kv.Delete(drive.LifetimePoolKey(p.Epoch, p.Lifetime)); err != nil {
			return 0, err
		}
		total += p.Credits // the pools' sum is credits held, below 2^64
	}
	return total, nil
}

// distributeStoragePool pays the storage distribution pool out to the epochs from
// first on (feeschedule.SplitStorageFee) and empties it. It returns the amount.
func distributeStoragePool(kv drive.KV, first uint32) (uint64, error) {
	pool, err := drive.GetU64(kv, drive.StoragePoolKey())
	if err != nil || pool == 0 {
		return 0, err
	}
	split := feeschedule.SplitStorageFee(pool)
	if err := creditEpochs(kv, first, feeschedule.PerpetualEpochs, split.Part); err != nil {
		return 0, err
	}
	return pool, drive.SetU64(kv, drive.StoragePoolKey(), 0)
}

// creditEpochs adds part(i) to the storage share of epoch first+i, for i below n,
// skipping the parts that are 0.
func creditEpochs(kv drive.KV, first, n uint32, part func(i uint32) uint64) error {
	for i := uint32(0); i < n; i++ {
		c := part(i)
		if c == 0 {
			continue
		}
		epoch, err := epochAt(first, i)
		if err != nil {
			return err
		}
		if err := addU64(kv, drive.EpochStorageKey(epoch), c); err != nil {
			return err
		}
	}
	return nil
}

// takeBackRefunds takes every pending refund back from the epochs that were credited
// with the refunded fees, and removes them. What each epoch gives back is the sum, over
// the refunds, of the part the refunded fee paid it (SplitStorageFee of the fee, from the
// epoch after the one it was paid in, for the epochs from the refund's From on), never
// more than the epoch holds, until exactly what the owners were refunded is taken; what
// those parts leave (the flooring of refunds summed in one record, or an epoch that held
// less) is taken from the same epochs in order. The parts are summed in memory first, so
// each epoch is read and written once however many refunds are pending. It returns the
// credits taken.
func takeBackRefunds(kv drive.KV) (uint64, error) {
	pending, err := drive.PendingRefunds(kv)
	if err != nil || len(pending) == 0 {
		return 0, err
	}
	// want[e-low] sums the parts epoch e gives back; low is the lowest From.
	low, high := uint64(protocol.MaxEpoch), uint64(0)
	var owed uint64
	for _, r := range pending {
		low = min(low, uint64(r.From))
		high = max(high, uint64(r.PaidIn)+1+feeschedule.PerpetualEpochs)
		if owed+r.Refunded < owed {
			return 0, faultf("pending refunds pass 2^64-1")
		}
		owed += r.Refunded
	}
	if high <= low {
		high = low + 1
	}
	want := make([]uint64, high-low)
	for _, r := range pending {
		split := feeschedule.SplitStorageFee(r.StorageFee)
		first := uint64(r.PaidIn) + 1
		for e := max(uint64(r.From), first); e < first+feeschedule.PerpetualEpochs; e++ {
			want[e-low] += split.Part(uint32(e - first)) // parts of one fee sum to at most the fee
		}
	}
	left := owed
	shares := make([]uint64, len(want))
	read, taken := make([]bool, len(want)), make([]bool, len(want))
	share := func(i int) (uint64, error) {
		if !read[i] {
			v, err := drive.GetU64(kv, drive.EpochStorageKey(uint32(low+uint64(i))))
			if err != nil {
				return 0, err
			}
			shares[i], read[i] = v, true
		}
		return shares[i], nil
	}
	for pass := 0; pass < 2 && left > 0; pass++ {
		for i := range want {
			if left == 0 {
				break
			}
			have, err := share(i)
			if err != nil {
				return 0, err
			}
			most := want[i] // the first pass takes each epoch's parts, the second the rest
			if pass == 1 {
				most = left
			}
			n := min(most, have, left)
			if n == 0 {
				continue
			}
			shares[i] -= n
			taken[i] = true
			want[i] -= min(want[i], n)
			left -= n
		}
	}
	if left > 0 {
		return 0, faultf("pending refunds: %d credits refunded that no epoch holds", left)
	}
	for i := range shares {
		if taken[i] {
			if err := drive.SetU64(kv, drive.EpochStorageKey(uint32(low+uint64(i))), shares[i]); err != nil {
				return 0, err
			}
		}
	}
	for _, r := range pending {
		if err := kv.Delete(drive.PendingRefundKey(r.PaidIn, r.From)); err != nil {
			return 0, err
		}
	}
	return owed, nil
}

// epochAt is first+offset, refused past the largest epoch index.
func epochAt(first, offset uint32) (uint32, error) {
	e := uint64(first) + uint64(offset)
	if e > protocol.MaxEpoch {
		return 0, faultf("epoch %d is past the largest epoch index", e)
	}
	return uint32(e), nil
}

// addU64 adds n to the u64 record at key. The records it serves hold credits, whose sum
// is capped by the supply: an overflow is a broken invariant.
func addU64(kv drive.KV, key []byte, n uint64) error {
	v, err := drive.GetU64(kv, key)
	if err != nil {
		return err
	}
	if v+n < v {
		return faultf("record %x overflows", key)
	}
	return drive.SetU64(kv, key, v+n)
}

// feesStep is step 5 of the pipeline: the block's fees into the pools. Processing fees
// (and deletion prepay, charged as processing) to the current epoch's pool, perpetual
// storage fees to the storage distribution pool, refunds to their owners and to the
// pending refunds, and one more block to the proposer's count (none: nil).
func feesStep(kv drive.KV, epoch uint32, proposer []byte, fees feeschedule.Result) error {
	if err := addU64(kv, drive.EpochFeesKey(epoch), fees.Processing); err != nil {
		return err
	}
	if err := addU64(kv, drive.EpochFeesKey(epoch), fees.DeletionPrepay); err != nil {
		return err
	}
	if err := addU64(kv, drive.StoragePoolKey(), fees.PerpetualStorage); err != nil {
		return err
	}
	for _, l := range fees.LifetimeStorage {
		if l.Epochs == 0 {
			return faultf("lifetime storage fees of 0 epochs")
		}
		if err := addU64(kv, drive.LifetimePoolKey(epoch, l.Epochs), l.Credits); err != nil {
			return err
		}
	}
	for _, r := range fees.Refunds {
		if err := creditIdentity(kv, r.Owner, r.Credits); err != nil {
			return err
		}
		next, err := epochAt(epoch, 1)
		if err != nil {
			return err
		}
		if err := drive.AddPendingRefund(kv, drive.PendingRefund{PaidIn: r.PaidIn, From: next, StorageFee: r.StorageFee, Refunded: r.Credits}); err != nil {
			return err
		}
	}
	if len(proposer) > 0 {
		return addU64(kv, drive.EpochProposerKey(epoch, proposer), 1)
	}
	return nil
}

// creditIdentity raises an existing identity's balance by n, outside any transition
// (a refund, a payout).
func creditIdentity(kv drive.KV, id protocol.IdentityID, n uint64) error {
	bal, ok, err := drive.GetIdentityBalance(kv, id)
	if err != nil {
		return err
	}
	if !ok {
		return faultf("credits for identity %s, which does not exist", id)
	}
	if bal+n < bal {
		return faultf("identity %s balance overflows", id)
	}
	return drive.SetIdentityBalance(kv, id, bal+n)
}

// payoutStep is step 6 of the pipeline, every block: the finished epochs not yet paid
// (below the current one) are paid out, oldest first and at most
// MaxEpochsPaidPerBlock of them (epochs a halt skipped are paid over the next blocks).
func payoutStep(kv drive.KV, current uint32, l protocol.Limits) ([]protocol.Event, error) {
	var events []protocol.Event
	for i := 0; i < l.MaxEpochsPaidPerBlock; i++ {
		p, err := drive.GetNextUnpaidEpoch(kv)
		if err != nil || p >= current {
			return events, err
		}
		ev, err := payEpoch(kv, p)
		if err != nil {
			return nil, err
		}
		events = append(events, ev...)
	}
	return events, nil
}

// payEpoch pays epoch p out, its processing fees and storage share together, to its
// proposers' payout identities in proportion to the blocks each proposed. Each share is
// rounded down; the remainder goes to the proposer with the most blocks (the lowest
// address among equals). The share of a proposer with no payout identity, or the whole
// pool of an epoch nobody proposed in (epochs a halted chain skipped), goes to the next
// epoch's storage share. It reads the pool and the proposers, shares the pool
// (shareEpoch, which reads and writes nothing) and writes the result (settleEpoch).
func payEpoch(kv drive.KV, p uint32) ([]protocol.Event, error) {
	pool, err := epochPayPool(kv, p)
	if err != nil {
		return nil, err
	}
	proposers, err := epochPayees(kv, p)
	if err != nil {
		return nil, err
	}
	s := shareEpoch(pool, proposers)
	if err := settleEpoch(kv, p, s); err != nil {
		return nil, err
	}
	return s.events(p), nil
}

// epochPayPool reads what epoch p pays out: its processing fees and its storage share.
func epochPayPool(kv drive.KV, p uint32) (uint64, error) {
	fees, err := drive.GetU64(kv, drive.EpochFeesKey(p))
	if err != nil {
		return 0, err
	}
	share, err := drive.GetU64(kv, drive.EpochStorageKey(p))
	if err != nil {
		return 0, err
	}
	if fees+share < fees {
		return 0, faultf("epoch %d's pool overflows", p)
	}
	return fees + share, nil
}

// epochProposer is a proposer's blocks in an epoch and its payout identity (nil: it has
// none).
type epochProposer struct {
	drive.ProposerBlocks
	payout *protocol.IdentityID
}

// epochPayees reads epoch p's proposers, in address order, and the payout identity of
// each.
func epochPayees(kv drive.KV, p uint32) ([]epochProposer, error) {
	blocks, err := drive.EpochProposers(kv, p)
	if err != nil {
		return nil, err
	}
	proposers := make([]epochProposer, 0, len(blocks))
	for _, pb := range blocks {
		id, ok, err := drive.GetPayoutIdentity(kv, pb.Proposer)
		if err != nil {
			return nil, err
		}
		pr := epochProposer{ProposerBlocks: pb}
		if ok {
			pr.payout = &id
		}
		proposers = append(proposers, pr)
	}
	return proposers, nil
}

// payee is a proposer paid out of an epoch's pool: its blocks, its payout identity and
// the credits it gets.
type payee struct {
	drive.ProposerBlocks
	identity protocol.IdentityID
	credits  uint64
}

// epochShares is how an epoch's pool is shared. paid is the payees' credits summed;
// paid + rolledOver is the pool.
type epochShares struct {
	payees []payee
	paid   uint64
	// rolledOver goes to the next epoch's storage share: the shares of proposers
	// without a payout identity, or the whole pool when nobody is paid.
	rolledOver uint64
}

// shareEpoch shares pool among proposers as payEpoch says: each proposer with a payout
// identity gets pool times its blocks over all the epoch's blocks, rounded down, and
// the one with the most blocks (topPayee) the remainder of that rounding.
func shareEpoch(pool uint64, proposers []epochProposer) epochShares {
	var blocks uint64
	for _, pr := range proposers {
		blocks += pr.Blocks
	}
	var s epochShares
	for _, pr := range proposers {
		if pr.payout == nil {
			continue
		}
		hi, lo := bits.Mul64(pool, pr.Blocks)
		credits, _ := bits.Div64(hi, lo, blocks) // blocks >= pr.Blocks, so < 2^64
		s.payees = append(s.payees, payee{pr.ProposerBlocks, *pr.payout, credits})
		s.paid += credits
	}
	if len(s.payees) > 0 {
		due := payableShare(pool, s.payees, blocks)
		s.payees[topPayee(s.payees)].credits += due - s.paid // the shares sum to at most due
		s.paid = due
	}
	s.rolledOver = pool - s.paid
	return s
}

// payableShare is the payees' part of pool: pool times their blocks over all blocks
// (at least theirs), rounded down, and the whole pool when they proposed every block.
func payableShare(pool uint64, payees []payee, blocks uint64) uint64 {
	var payable uint64
	for _, pe := range payees {
		payable += pe.Blocks
	}
	if payable == blocks {
		return pool
	}
	hi, lo := bits.Mul64(pool, payable)
	due, _ := bits.Div64(hi, lo, blocks)
	return due
}

// topPayee is the index of the payee with the most blocks, the lowest address among
// equals: the one that gets the remainder of the rounding.
func topPayee(payees []payee) int {
	top := 0
	for i, pe := range payees {
		if pe.Blocks > payees[top].Blocks || (pe.Blocks == payees[top].Blocks && bytes.Compare(pe.Proposer, payees[top].Proposer) < 0) {
			top = i
		}
	}
	return top
}

// settleEpoch writes epoch p's payout s: the payees' credits, the roll-over into the
// next epoch's storage share, the emptied pools, the paid record and the next unpaid
// epoch, in that order.
func settleEpoch(kv drive.KV, p uint32, s epochShares) error {
	for _, pe := range s.payees {
		if err := creditIdentity(kv, pe.identity, pe.credits); err != nil {
			return err
		}
	}
	if s.rolledOver > 0 {
		next, err := epochAt(p, 1)
		if err != nil {
			return err
		}
		if err := addU64(kv, drive.EpochStorageKey(next), s.rolledOver); err != nil {
			return err
		}
	}
	if err := drive.SetU64(kv, drive.EpochFeesKey(p), 0); err != nil {
		return err
	}
	if err := drive.SetU64(kv, drive.EpochStorageKey(p), 0); err != nil {
		return err
	}
	// NB: a raw write, where drive.SetU64 would delete a zero: the paid record is
	// present once the epoch is paid, also when it paid nothing (docs/STATE.md, the
	// key table's 48 | 'e' | epoch | 'x'), and the client and the web view tell a paid
	// epoch by its presence. Skipping it would change the app hash of every payout of
	// an epoch that paid nothing.
	if err := kv.Set(drive.EpochPaidKey(p), u64Bytes(s.paid)); err != nil {
		return err
	}
	return drive.SetNextUnpaidEpoch(kv, p+1)
}

// events are epoch p's epoch_paid event and then each payee's epoch_payout.
func (s epochShares) events(p uint32) []protocol.Event {
	events := []protocol.Event{protocol.NewEpochPaidEvent(p, s.paid+s.rolledOver, s.paid)}
	for _, pe := range s.payees {
		events = append(events, protocol.NewEpochPayoutEvent(p, pe.Proposer, pe.identity, pe.Blocks, pe.credits))
	}
	return events
}

func u64Bytes(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }
