package feeschedule

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/ttld-dev/ttld/protocol"
)

// Result is what one transition (or, summed, one block) costs, by named part. The payer
// is charged Charged(); refunds are credited to the owners of what was removed. The
// parts are kept apart because each goes elsewhere: processing to the current epoch's
// pool, perpetual storage to the storage distribution pool, each lifetime part to the
// lifetime pool of its number of epochs, and refunds are taken back from the future
// epochs that were credited with them.
type Result struct {
	// Processing pays for the work the node did (seeks, bytes, hashes, signatures).
	Processing uint64
	// PerpetualStorage pays for bytes stored for ever, paid out over 50 eras.
	PerpetualStorage uint64
	// LifetimeStorage pays for bytes stored for a known lifetime, one part per number
	// of epochs, sorted by Epochs, each Epochs at most once.
	LifetimeStorage []LifetimeFee
	// DeletionPrepay is charged as processing at creation for the deletion the platform
	// will do when a document's time to live ends.
	DeletionPrepay uint64
	// Refunds go back to the owners of removed storage, sorted by owner then by the
	// epoch the storage was paid in, each pair at most once.
	Refunds []Refund
	// RemovedBytes counts the stored bytes the transition removed.
	RemovedBytes uint64
}

// LifetimeFee is the lifetime storage fee collected for a number of epochs.
type LifetimeFee struct {
	Epochs  uint16
	Credits uint64
}

// Refund is storage fee returned to an owner: Credits is StorageRefund of StorageFee,
// the part of the fee paid in epoch PaidIn for the removed storage. The epochs that fee
// was paid out to give Credits back at the next epoch change.
type Refund struct {
	Owner      protocol.IdentityID
	PaidIn     uint32
	StorageFee uint64
	Credits    uint64
}

// ErrOverflow: a sum of fees passes 2^64-1. Credits are conserved and capped at
// 2^64-1, so a caller that sees it refuses the transition rather than fails the block.
type ErrOverflow struct{ What string }

func (e ErrOverflow) Error() string { return "feeschedule: " + e.What + " overflows" }

func add(a, b uint64, what string) (uint64, error) {
	if a+b < a {
		return 0, ErrOverflow{What: what}
	}
	return a + b, nil
}

// Charged is what the payer pays: processing, storage of both kinds and the deletion
// prepay. Refunds are not netted: they are credited to their owners.
func (r Result) Charged() (uint64, error) {
	sum, err := add(r.Processing, r.PerpetualStorage, "charged fee")
	if err != nil {
		return 0, err
	}
	if sum, err = add(sum, r.DeletionPrepay, "charged fee"); err != nil {
		return 0, err
	}
	for _, l := range r.LifetimeStorage {
		if sum, err = add(sum, l.Credits, "charged fee"); err != nil {
			return 0, err
		}
	}
	return sum, nil
}

// RefundTotal is the sum of the refunds.
func (r Result) RefundTotal() (uint64, error) {
	var sum uint64
	var err error
	for _, f := range r.Refunds {
		if sum, err = add(sum, f.Credits, "refunds"); err != nil {
			return 0, err
		}
	}
	return sum, nil
}

// Add returns the part-by-part sum of r and o (a block's fees are the sum of its
// transitions'). An overflow of any part is an ErrOverflow and leaves r unchanged.
func (r Result) Add(o Result) (Result, error) {
	var out Result
	var err error
	if out.Processing, err = add(r.Processing, o.Processing, "processing fees"); err != nil {
		return r, err
	}
	if out.PerpetualStorage, err = add(r.PerpetualStorage, o.PerpetualStorage, "perpetual storage fees"); err != nil {
		return r, err
	}
	if out.DeletionPrepay, err = add(r.DeletionPrepay, o.DeletionPrepay, "deletion prepay"); err != nil {
		return r, err
	}
	if out.RemovedBytes, err = add(r.RemovedBytes, o.RemovedBytes, "removed bytes"); err != nil {
		return r, err
	}
	lifetime := map[uint16]uint64{}
	for _, l := range append(append([]LifetimeFee(nil), r.LifetimeStorage...), o.LifetimeStorage...) {
		if lifetime[l.Epochs], err = add(lifetime[l.Epochs], l.Credits, fmt.Sprintf("lifetime storage fees over %d epochs", l.Epochs)); err != nil {
			return r, err
		}
	}
	for epochs, credits := range lifetime {
		out.LifetimeStorage = append(out.LifetimeStorage, LifetimeFee{Epochs: epochs, Credits: credits})
	}
	sort.Slice(out.LifetimeStorage, func(i, j int) bool { return out.LifetimeStorage[i].Epochs < out.LifetimeStorage[j].Epochs })
	type refundKey struct {
		owner  protocol.IdentityID
		paidIn uint32
	}
	refunds := map[refundKey]Refund{}
	for _, f := range append(append([]Refund(nil), r.Refunds...), o.Refunds...) {
		k := refundKey{f.Owner, f.PaidIn}
		sum := refunds[k]
		sum.Owner, sum.PaidIn = f.Owner, f.PaidIn
		if sum.Credits, err = add(sum.Credits, f.Credits, "refunds of "+f.Owner.String()); err != nil {
			return r, err
		}
		if sum.StorageFee, err = add(sum.StorageFee, f.StorageFee, "refunded storage fees of "+f.Owner.String()); err != nil {
			return r, err
		}
		refunds[k] = sum
	}
	for _, f := range refunds {
		out.Refunds = append(out.Refunds, f)
	}
	sort.Slice(out.Refunds, func(i, j int) bool {
		a, b := out.Refunds[i], out.Refunds[j]
		if c := bytes.Compare(a.Owner[:], b.Owner[:]); c != 0 {
			return c < 0
		}
		return a.PaidIn < b.PaidIn
	})
	return out, nil
}
