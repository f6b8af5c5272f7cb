package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// newQueryProtocolCmd reads the protocol version and the upgrade in place under way.
func newQueryProtocolCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "protocol",
		Short: "The protocol version in force, the version signals of the current and the last epoch, the threshold, and the next version once decided",
		Long: `The protocol version in force and the upgrade in place under way (docs/STATE.md,
"Protocol upgrades"): the blocks of the current epoch so far and of the last one that
signalled each version, the share of an epoch's blocks that must signal the next version
for the epoch change to decide on it, and the version the chain moves to at the next
epoch change once decided. With --prove every record is checked against a signed
header.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				p, err := c.Protocol(ctx, height, prove)
				if err != nil {
					return nil, err
				}
				return protocolOutput(p), nil
			})
		},
	}
}

type versionCountJSON struct {
	Version uint32 `json:"version"`
	Blocks  uint64 `json:"blocks"`
}

type epochSignalsJSON struct {
	Epoch  uint32 `json:"epoch"`
	Blocks uint64 `json:"blocks"`
	// Toward counts the blocks that signalled the version after the one in force, or
	// a later one.
	Toward  uint64             `json:"toward_next"`
	Signals []versionCountJSON `json:"signals"`
}

type protocolJSON struct {
	Version uint32 `json:"version"`
	// NewestSupported is what this client's binary implements.
	NewestSupported uint32 `json:"newest_supported_here"`
	// Next is the version decided for the next epoch change; 0: none.
	Next uint32 `json:"next_version"`
	// Scheduled is genesis's scheduled upgrade not yet carried out.
	Scheduled *scheduledJSON `json:"scheduled,omitempty"`
	// ThresholdPercent: 0 when this client does not know the version in force.
	ThresholdPercent uint64            `json:"threshold_percent"`
	Current          *epochSignalsJSON `json:"current_epoch"`
	Last             *epochSignalsJSON `json:"last_epoch,omitempty"`
	Height           int64             `json:"height"`
}

type scheduledJSON struct {
	Version uint32 `json:"version"`
	Height  uint64 `json:"height"`
}

func signalsJSON(epoch uint32, s drive.EpochSignals, next protocol.Version) *epochSignalsJSON {
	out := &epochSignalsJSON{Epoch: epoch, Blocks: s.Blocks, Toward: s.AtLeast(next), Signals: make([]versionCountJSON, len(s.Counts))}
	for i, c := range s.Counts {
		out.Signals[i] = versionCountJSON{Version: uint32(c.Version), Blocks: c.Blocks}
	}
	return out
}

func protocolOutput(p client.ProtocolState) protocolJSON {
	out := protocolJSON{Version: uint32(p.Version), NewestSupported: uint32(protocol.Newest()), Next: uint32(p.Next),
		ThresholdPercent: p.Limits.UpgradeThresholdPercent, Height: p.Height}
	if p.Scheduled != nil {
		out.Scheduled = &scheduledJSON{Version: uint32(p.Scheduled.Version), Height: p.Scheduled.Height}
	}
	if p.Started {
		out.Current = signalsJSON(p.Epoch.Index, p.Current, p.Version+1)
	}
	if p.Last != nil {
		out.Last = signalsJSON(p.LastEpoch, *p.Last, p.Version+1)
	}
	return out
}

// verdict: the version record is present in every state.
func (o protocolJSON) verdict() (bool, int64) { return true, o.Height }

func (o protocolJSON) text(w io.Writer) {
	fmt.Fprintf(w, "height: %d\n", o.Height)
	fmt.Fprintf(w, "protocol version: %d (this binary implements up to %d)\n", o.Version, o.NewestSupported)
	switch {
	case o.Next != 0 && o.Next > o.NewestSupported:
		fmt.Fprintf(w, "next version: %d, at the next epoch change: this binary does not implement it\n", o.Next)
	case o.Next != 0:
		fmt.Fprintf(w, "next version: %d, at the next epoch change\n", o.Next)
	default:
		fmt.Fprintln(w, "next version: none decided")
	}
	if o.Scheduled != nil {
		fmt.Fprintf(w, "scheduled by genesis: version %d at height %d\n", o.Scheduled.Version, o.Scheduled.Height)
	}
	if o.ThresholdPercent > 0 {
		fmt.Fprintf(w, "threshold: %d%% of an epoch's blocks signalling %d or later\n", o.ThresholdPercent, o.Version+1)
	}
	for _, e := range []struct {
		name string
		s    *epochSignalsJSON
	}{{"current epoch", o.Current}, {"last epoch", o.Last}} {
		if e.s == nil {
			continue
		}
		fmt.Fprintf(w, "%s %d: %d of %d blocks signalled %d or later", e.name, e.s.Epoch, e.s.Toward, e.s.Blocks, o.Version+1)
		for _, c := range e.s.Signals {
			fmt.Fprintf(w, "; %d: %d", c.Version, c.Blocks)
		}
		fmt.Fprintln(w)
	}
	if o.Last == nil {
		fmt.Fprintln(w, "last epoch: no block signalled")
	}
}
