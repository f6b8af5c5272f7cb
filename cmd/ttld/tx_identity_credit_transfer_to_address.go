package main

import (
	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/protocol"
)

func init() {
	registerTx(txCommand{
		Kind:  protocol.TypeIdentityCreditTransferToAddress,
		Group: "identity",
		Use:   "transfer-to-address --identity ID --to ADDR --amount N --from KEY [--key-index 0]",
		Short: "Move credits from an identity to an address",
		Args:  cobra.NoArgs,
		Flags: func(cmd *cobra.Command) {
			identitySignerFlags(cmd)
			cmd.Flags().String("to", "", "recipient address")
		},
		Build: func(in *txInput) (protocol.Transition, error) {
			from, err := identityArg(in.cmd, "identity")
			if err != nil {
				return nil, err
			}
			to, err := addressArg(in.cmd, "to")
			if err != nil {
				return nil, err
			}
			amount, err := amountArg(in.cmd)
			if err != nil {
				return nil, err
			}
			return &protocol.IdentityCreditTransferToAddress{Identity: from, KeyIndex: flagUint8(in.cmd, "key-index"), Recipient: to, Amount: amount}, nil
		},
	})
}
