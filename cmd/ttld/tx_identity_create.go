package main

import (
	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/protocol"
)

func init() {
	registerTx(txCommand{
		Kind:  protocol.TypeIdentityCreate,
		Group: "identity",
		Use:   "create --from KEY --amount N [--keys HEX,...]",
		Short: "Create an identity funded from the key's address",
		Args:  cobra.NoArgs,
		Flags: func(cmd *cobra.Command) {
			amountFlag(cmd)
			cmd.Flags().StringSlice("keys", nil, "public keys of the new identity, hex, comma separated (default: the --from key's)")
		},
		Build: func(in *txInput) (protocol.Transition, error) {
			amount, err := amountArg(in.cmd)
			if err != nil {
				return nil, err
			}
			key, err := in.Key()
			if err != nil {
				return nil, err
			}
			keys, err := parsePubKeys(flagStringSlice(in.cmd, "keys"), key.Pub)
			if err != nil {
				return nil, err
			}
			return &protocol.IdentityCreate{PubKey: key.Pub, Amount: amount, Keys: keys}, nil
		},
		Describe: func(t protocol.Transition, in *txInput, o *txOutput) {
			o.Identity = protocol.NewIdentityID(in.key.Address(), t.GetNonce()).String()
		},
	})
}
