package main

import (
	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/protocol"
)

func init() {
	registerTx(txCommand{
		Kind:  protocol.TypeIdentityTopUp,
		Group: "identity",
		Use:   "top-up ID --amount N --from KEY",
		Short: "Move credits from the key's address to an identity",
		Args:  cobra.ExactArgs(1),
		Flags: amountFlag,
		Build: func(in *txInput) (protocol.Transition, error) {
			id, err := identityPos(in.args[0])
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
			return &protocol.IdentityTopUp{PubKey: key.Pub, Identity: id, Amount: amount}, nil
		},
	})
}
