package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
)

// newQueryExpirationsCmd is `ttld query expirations`: the cleanup's backlog.
func newQueryExpirationsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "expirations [--before MS]",
		Short: "The documents expirations tree's entries due at or before a time: the cleanup's backlog (protocol version 14)",
		Long: `The entries of the documents expirations tree (104/E) that expire at or before --before
(block time in milliseconds; 0 or absent: the block time of the state read, so the list is
what expire_documents has not reached yet), oldest first: expiry, document, contract and
type. With --prove the list is proven complete.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			before, err := cmd.Flags().GetUint64("before")
			if err != nil {
				return err
			}
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				st, err := c.Expirations(ctx, before, height, prove)
				if err != nil {
					return nil, err
				}
				out := expirationsJSON{Until: st.UntilMs, BlockTime: st.BlockTimeMs, Height: st.Height, Entries: []expirationJSON{}}
				for _, e := range st.Entries {
					out.Entries = append(out.Entries, expirationJSON{ExpiresAt: e.ExpiresAtMs, Document: e.ID.String(), Contract: e.Contract.String(), Type: e.Type})
				}
				return out, nil
			})
		},
	}
	cmd.Flags().Uint64("before", 0, "list the entries due at or before this block time, ms (0: the state's block time)")
	return cmd
}

type expirationJSON struct {
	ExpiresAt uint64 `json:"expires_at"`
	Document  string `json:"document"`
	Contract  string `json:"contract"`
	Type      string `json:"type"`
}

type expirationsJSON struct {
	Until     uint64           `json:"until"`
	BlockTime uint64           `json:"block_time"`
	Entries   []expirationJSON `json:"entries"`
	Height    int64            `json:"height"`
}

func (o expirationsJSON) verdict() (bool, int64) { return len(o.Entries) > 0, o.Height }

func (o expirationsJSON) text(w io.Writer) {
	fmt.Fprintf(w, "height: %d (block time %d)\n", o.Height, o.BlockTime)
	fmt.Fprintf(w, "due at or before %d: %d\n", o.Until, len(o.Entries))
	for _, e := range o.Entries {
		fmt.Fprintf(w, "%d %s %s %s\n", e.ExpiresAt, e.Document, e.Contract, e.Type)
	}
}
