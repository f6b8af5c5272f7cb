package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"

	"github.com/ttld-dev/ttld/protocol"
)

func init() {
	registerTx(txCommand{
		Kind:  protocol.TypeDataContractCreate,
		Group: "contract",
		Use:   "create FILE --identity ID --from KEY [--key-index 0]",
		Short: "Register the data contract of a JSON file (docs/CONTRACTS.md), owned by the identity",
		Args:  cobra.ExactArgs(1),
		Flags: contractSignerFlags,
		Build: func(in *txInput) (protocol.Transition, error) {
			owner, err := identityArg(in.cmd, "identity")
			if err != nil {
				return nil, err
			}
			def, err := os.ReadFile(in.args[0])
			if err != nil {
				return nil, err
			}
			if def, err = client.ContractDefinition(def); err != nil {
				return nil, err
			}
			return &protocol.DataContractCreate{Identity: owner, KeyIndex: flagUint8(in.cmd, "key-index"), Definition: def}, nil
		},
		Describe: func(t protocol.Transition, _ *txInput, o *txOutput) {
			o.Contract = t.(*protocol.DataContractCreate).ContractID().String()
		},
	})
}

// contractSignerFlags are the flags of the contract commands: the signing identity and
// the index of its key.
func contractSignerFlags(cmd *cobra.Command) {
	cmd.Flags().String("identity", "", "signing identity id (the contract's owner)")
	cmd.Flags().Uint8("key-index", 0, "index of the identity key --from holds")
}
