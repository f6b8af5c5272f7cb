package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/protocol"
)

func init() {
	registerTx(txCommand{
		Kind:  protocol.TypeDataContractUpdate,
		Group: "contract",
		Use:   "update ID FILE --identity ID --from KEY [--version N] [--key-index 0]",
		Short: "Replace a data contract's document types with those of a JSON file, as its next version",
		Args:  cobra.ExactArgs(2),
		Flags: func(cmd *cobra.Command) {
			contractSignerFlags(cmd)
			cmd.Flags().Uint32("version", 0, "the version the update makes (0: the stored version plus one, read from the node)")
		},
		Build: func(in *txInput) (protocol.Transition, error) {
			id, err := contractPos(in.args[0])
			if err != nil {
				return nil, err
			}
			owner, err := identityArg(in.cmd, "identity")
			if err != nil {
				return nil, err
			}
			def, err := os.ReadFile(in.args[1])
			if err != nil {
				return nil, err
			}
			if def, err = client.ContractDefinition(def); err != nil {
				return nil, err
			}
			version, err := in.cmd.Flags().GetUint32("version")
			if err != nil {
				return nil, err
			}
			if version == 0 {
				if version, err = nextContractVersion(in.cmd, id); err != nil {
					return nil, err
				}
			}
			return &protocol.DataContractUpdate{Identity: owner, KeyIndex: flagUint8(in.cmd, "key-index"), Contract: id, Version: version, Definition: def}, nil
		},
		Describe: func(t protocol.Transition, _ *txInput, o *txOutput) {
			o.Contract = t.(*protocol.DataContractUpdate).Contract.String()
		},
	})
}

// nextContractVersion reads contract id's latest saved version from the node (unproven:
// a wrong answer only makes the update refused) and returns the one after it.
func nextContractVersion(cmd *cobra.Command, id protocol.ContractID) (uint32, error) {
	c, err := dialNode(cmd, client.Options{ChainID: flagString(cmd, "chain-id")})
	if err != nil {
		return 0, err
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	st, err := c.Contract(ctx, id, 0, false)
	if err != nil {
		return 0, err
	}
	if !st.Present {
		return 0, fmt.Errorf("contract %s not found", id)
	}
	return st.Version + 1, nil
}
