package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/protocol"
)

// newQueryPoolsCmds are the queries of the pools: an epoch, the pools, the total of
// credits.
func newQueryPoolsCmds() []*cobra.Command {
	epoch := &cobra.Command{
		Use:   "epoch [N]",
		Short: "An epoch's pool: fees, storage share, proposers and their blocks, paid or not (N omitted: the current epoch)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var index uint64
			current := len(args) == 0
			if !current {
				var err error
				if index, err = strconv.ParseUint(args[0], 10, 32); err != nil {
					return errBadArg{Name: "N", Value: args[0], Want: fmt.Sprintf("an epoch index from 0 to %d", uint64(protocol.MaxEpoch))}
				}
			}
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				if current {
					// The current epoch is the pools' record; the epoch is read at the
					// height that answered it.
					p, err := c.Pools(ctx, height, prove)
					if err != nil {
						return nil, err
					}
					index, height = uint64(p.CurrentEpoch.Index), p.Height
				}
				e, err := c.Epoch(ctx, uint32(index), height, prove)
				if err != nil {
					return nil, err
				}
				return epochOutput(e, current), nil
			})
		},
	}
	pools := &cobra.Command{
		Use:   "pools",
		Short: "The current epoch, the storage distribution pool, the oldest unpaid epoch and the pending refunds",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				p, err := c.Pools(ctx, height, prove)
				if err != nil {
					return nil, err
				}
				return poolsOutput(p), nil
			})
		},
	}
	total := &cobra.Command{
		Use:   "total-credits",
		Short: "The running total of credits in state and the genesis supply it must equal",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				t, err := c.TotalCredits(ctx, height, prove)
				if err != nil {
					return nil, err
				}
				return totalCreditsJSON{Total: t.Total, Supply: t.Supply, Conserved: t.Conserved(), Height: t.Height}, nil
			})
		},
	}
	return []*cobra.Command{epoch, pools, total}
}

// msTime renders block-time milliseconds as UTC RFC 3339.
func msTime(ms uint64) string {
	return time.UnixMilli(int64(ms)).UTC().Format(time.RFC3339Nano)
}

type proposerJSON struct {
	Address string `json:"address"` // consensus address, hex
	Blocks  uint64 `json:"blocks"`
}

type epochJSON struct {
	Epoch uint32 `json:"epoch"`
	// Current: asked as the current epoch (no N).
	Current        bool           `json:"current"`
	Start          string         `json:"start"`
	StartMs        uint64         `json:"start_ms"`
	LengthS        uint64         `json:"length_s"`
	ProcessingFees uint64         `json:"processing_fees"`
	StorageShare   uint64         `json:"storage_share"`
	Proposers      []proposerJSON `json:"proposers"`
	Paid           bool           `json:"paid"`
	PaidCredits    uint64         `json:"paid_credits"`
	Height         int64          `json:"height"`
}

func epochOutput(e client.EpochState, current bool) epochJSON {
	out := epochJSON{Epoch: e.Index, Current: current, Start: msTime(e.StartMs), StartMs: e.StartMs, LengthS: e.LengthS,
		ProcessingFees: e.Fees, StorageShare: e.StorageShare, Proposers: make([]proposerJSON, len(e.Proposers)),
		Paid: e.Paid, PaidCredits: e.PaidCredits, Height: e.Height}
	for i, p := range e.Proposers {
		out.Proposers[i] = proposerJSON{Address: hex.EncodeToString(p.Proposer), Blocks: p.Blocks}
	}
	return out
}

// verdict: the epoch holds something (fees, a share, proposers, a paid record), or is
// proven to hold nothing.
func (o epochJSON) verdict() (bool, int64) {
	return o.ProcessingFees > 0 || o.StorageShare > 0 || len(o.Proposers) > 0 || o.Paid, o.Height
}

func (o epochJSON) text(w io.Writer) {
	fmt.Fprintf(w, "epoch: %d", o.Epoch)
	if o.Current {
		fmt.Fprint(w, " (current)")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "height: %d\n", o.Height)
	fmt.Fprintf(w, "start: %s (epochs of %d s)\n", o.Start, o.LengthS)
	fmt.Fprintf(w, "processing fees: %d\n", o.ProcessingFees)
	fmt.Fprintf(w, "storage share: %d\n", o.StorageShare)
	if len(o.Proposers) == 0 {
		fmt.Fprintln(w, "proposers: none")
	}
	for _, p := range o.Proposers {
		fmt.Fprintf(w, "proposer %s: %d blocks\n", p.Address, p.Blocks)
	}
	if o.Paid {
		fmt.Fprintf(w, "paid: %d\n", o.PaidCredits)
	} else {
		fmt.Fprintln(w, "paid: no")
	}
}

type pendingRefundJSON struct {
	PaidIn     uint32 `json:"paid_in"`
	From       uint32 `json:"from"`
	StorageFee uint64 `json:"storage_fee"`
	Refunded   uint64 `json:"refunded"`
}

type lifetimePoolJSON struct {
	Epoch    uint32 `json:"collected_in_epoch"`
	Lifetime uint16 `json:"lifetime_epochs"`
	Credits  uint64 `json:"credits"`
}

type poolsJSON struct {
	// Started is false before the first block (no current epoch yet).
	Started                 bool                `json:"started"`
	CurrentEpoch            uint32              `json:"current_epoch"`
	CurrentEpochFirstHeight uint64              `json:"current_epoch_first_height"`
	CurrentEpochFirstTime   string              `json:"current_epoch_first_time"`
	StoragePool             uint64              `json:"storage_pool"`
	OldestUnpaidEpoch       uint32              `json:"oldest_unpaid_epoch"`
	PendingRefunds          []pendingRefundJSON `json:"pending_refunds"`
	PendingRefunded         uint64              `json:"pending_refunded"`
	LifetimePools           []lifetimePoolJSON  `json:"lifetime_pools"`
	Height                  int64               `json:"height"`
}

func poolsOutput(p client.PoolsState) poolsJSON {
	out := poolsJSON{Started: p.Started, CurrentEpoch: p.CurrentEpoch.Index, CurrentEpochFirstHeight: p.CurrentEpoch.FirstHeight,
		StoragePool: p.StoragePool, OldestUnpaidEpoch: p.NextUnpaidEpoch, PendingRefunds: make([]pendingRefundJSON, len(p.PendingRefunds)),
		PendingRefunded: p.Refunded(), Height: p.Height}
	if p.Started {
		out.CurrentEpochFirstTime = msTime(p.CurrentEpoch.FirstTimeMs)
	}
	for i, r := range p.PendingRefunds {
		out.PendingRefunds[i] = pendingRefundJSON{PaidIn: r.PaidIn, From: r.From, StorageFee: r.StorageFee, Refunded: r.Refunded}
	}
	out.LifetimePools = make([]lifetimePoolJSON, len(p.LifetimePools))
	for i, l := range p.LifetimePools {
		out.LifetimePools[i] = lifetimePoolJSON{Epoch: l.Epoch, Lifetime: l.Lifetime, Credits: l.Credits}
	}
	return out
}

// verdict: the current-epoch record is present (from the first block on).
func (o poolsJSON) verdict() (bool, int64) { return o.Started, o.Height }

func (o poolsJSON) text(w io.Writer) {
	fmt.Fprintf(w, "height: %d\n", o.Height)
	if o.Started {
		fmt.Fprintf(w, "current epoch: %d (from height %d, %s)\n", o.CurrentEpoch, o.CurrentEpochFirstHeight, o.CurrentEpochFirstTime)
	} else {
		fmt.Fprintln(w, "current epoch: none (no block yet)")
	}
	fmt.Fprintf(w, "storage distribution pool: %d\n", o.StoragePool)
	fmt.Fprintf(w, "oldest unpaid epoch: %d\n", o.OldestUnpaidEpoch)
	fmt.Fprintf(w, "pending refunds: %d\n", o.PendingRefunded)
	for _, r := range o.PendingRefunds {
		fmt.Fprintf(w, "pending refund: paid in epoch %d, from epoch %d: storage fee %d, refunded %d\n", r.PaidIn, r.From, r.StorageFee, r.Refunded)
	}
	for _, l := range o.LifetimePools {
		fmt.Fprintf(w, "lifetime storage pool: collected in epoch %d for %d epochs: %d\n", l.Epoch, l.Lifetime, l.Credits)
	}
}

type totalCreditsJSON struct {
	Total     uint64 `json:"total_credits"`
	Supply    uint64 `json:"supply"`
	Conserved bool   `json:"conserved"` // the total equals the supply
	Height    int64  `json:"height"`
}

func (o totalCreditsJSON) verdict() (bool, int64) { return true, o.Height }

func (o totalCreditsJSON) text(w io.Writer) {
	fmt.Fprintf(w, "height: %d\n", o.Height)
	fmt.Fprintf(w, "total credits: %d\n", o.Total)
	fmt.Fprintf(w, "supply: %d\n", o.Supply)
	if o.Conserved {
		fmt.Fprintln(w, "conserved: yes")
	} else {
		fmt.Fprintf(w, "conserved: NO (total %d, supply %d)\n", o.Total, o.Supply)
	}
}
