package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/protocol"
)

// newQueryContractCmd is `ttld query contract ID`.
func newQueryContractCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "contract ID",
		Short: "A data contract: its owner, version and document types",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := contractPos(args[0])
			if err != nil {
				return err
			}
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				st, err := c.Contract(ctx, id, height, prove)
				if err != nil {
					return nil, err
				}
				return contractOutput(st), nil
			})
		},
	}
}

type contractJSON struct {
	ID      string `json:"id"`
	Present bool   `json:"present"`
	Owner   string `json:"owner,omitempty"`
	Version uint32 `json:"version,omitempty"`
	// DocumentTypes is the contract's JSON in canonical form ({"config": ...,
	// "documentSchemas": ...}).
	DocumentTypes json.RawMessage `json:"document_types,omitempty"`
	Height        int64           `json:"height"`
}

func contractOutput(st client.ContractState) contractJSON {
	out := contractJSON{ID: st.ID.String(), Present: st.Present, Height: st.Height}
	if st.Present {
		out.Owner, out.Version = st.Owner.String(), st.Version
		out.DocumentTypes = protocol.CanonicalDefinitionJSON(st.Definition())
	}
	return out
}

func (o contractJSON) verdict() (bool, int64) { return o.Present, o.Height }

func (o contractJSON) text(w io.Writer) {
	fmt.Fprintf(w, "contract: %s\n", o.ID)
	fmt.Fprintf(w, "height: %d\n", o.Height)
	if !o.Present {
		fmt.Fprintln(w, "present: false")
		return
	}
	fmt.Fprintf(w, "owner: %s\n", o.Owner)
	fmt.Fprintf(w, "version: %d\n", o.Version)
	fmt.Fprintf(w, "document types: %s\n", o.DocumentTypes)
}
