package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/protocol"
)

// newQueryRemovalsCmd is `ttld query removals`: the records moderators' deletions keep.
func newQueryRemovalsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "removals CONTRACT [TYPE]",
		Short: "The removal records of a contract's moderated deletions, of one type or of all",
		Long: `The removal records a moderator's deletion keeps under the contract (where the type's
moderatorAbilities.deleteKeepsRecord holds): for each removed document its type and id, its
owner, the moderator, the reason, the block time of the deletion, until when a moderator may
restore it, and the sha256 of the document's encoding that the restore must match. With --prove
the list is proven complete, so an empty list is proven to hold no record.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := protocol.ParseContractID(args[0])
			if err != nil {
				return errBadArg{Name: "CONTRACT", Value: args[0], Want: fmt.Sprintf("a contract id of %d hex digits", 2*protocol.ContractIDLen)}
			}
			typeName := ""
			if len(args) == 2 {
				typeName = args[1]
				if reason := protocol.ValidName(typeName); reason != "" {
					return errBadArg{Name: "TYPE", Value: typeName, Want: "a document type name: " + reason}
				}
			}
			return runQuery(cmd, func(ctx context.Context, cl *client.Client, height int64, prove bool) (queryOutput, error) {
				records, h, err := cl.Removals(ctx, c, typeName, height, prove)
				if err != nil {
					return nil, err
				}
				lim, err := protocol.LimitsFor(protocol.Newest())
				if err != nil {
					return nil, err
				}
				out := removalsJSON{Contract: c.String(), Type: typeName, Height: h, Records: []removalJSON{}}
				for _, r := range records {
					out.Records = append(out.Records, removalJSON{
						Type: r.Type, Document: r.ID.String(), Owner: r.Owner.String(), Moderator: r.Moderator.String(),
						Reason: r.Reason, RemovedAt: r.AtMs, RestorableUntil: r.AtMs + lim.RestoreWindowMs,
						DocumentHash: hex.EncodeToString(r.DocumentHash[:]),
					})
				}
				return out, nil
			})
		},
	}
}

type removalJSON struct {
	Type      string `json:"type"`
	Document  string `json:"document"`
	Owner     string `json:"owner"`
	Moderator string `json:"moderator"`
	Reason    string `json:"reason"`
	RemovedAt uint64 `json:"removed_at"`
	// RestorableUntil is the block time from which a restore is refused (40258).
	RestorableUntil uint64 `json:"restorable_until"`
	DocumentHash    string `json:"document_hash"`
}

type removalsJSON struct {
	Contract string        `json:"contract"`
	Type     string        `json:"type,omitempty"`
	Records  []removalJSON `json:"records"`
	Height   int64         `json:"height"`
}

func (o removalsJSON) verdict() (bool, int64) { return len(o.Records) > 0, o.Height }

func (o removalsJSON) text(w io.Writer) {
	fmt.Fprintf(w, "height: %d\n", o.Height)
	fmt.Fprintf(w, "removal records: %d\n", len(o.Records))
	for _, r := range o.Records {
		fmt.Fprintf(w, "%s %s owner %s moderator %s at %d (restorable until %d) hash %s reason %q\n",
			r.Type, r.Document, r.Owner, r.Moderator, r.RemovedAt, r.RestorableUntil, r.DocumentHash, r.Reason)
	}
}
