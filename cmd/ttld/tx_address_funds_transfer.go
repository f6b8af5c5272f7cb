package main

import (
	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/protocol"
)

func init() {
	registerTx(txCommand{
		Kind:  protocol.TypeAddressFundsTransfer,
		Group: "address",
		Use:   "transfer --to ADDR --amount N --from KEY",
		Short: "Move credits from the key's address to another address",
		Args:  cobra.NoArgs,
		Flags: func(cmd *cobra.Command) {
			amountFlag(cmd)
			cmd.Flags().String("to", "", "recipient address")
		},
		Build: func(in *txInput) (protocol.Transition, error) {
			to, err := addressArg(in.cmd, "to")
			if err != nil {
				return nil, err
			}
			amount, err := amountArg(in.cmd)
			if err != nil {
				return nil, err
			}
			key, err := in.Key()
			if err != nil {
				return nil, err
			}
			return &protocol.AddressFundsTransfer{PubKey: key.Pub, Recipient: to, Amount: amount}, nil
		},
	})
}
