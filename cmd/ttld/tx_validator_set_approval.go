package main

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/protocol"
)

func init() {
	registerTx(txCommand{
		Kind:  protocol.TypeValidatorSetApproval,
		Group: "validator",
		Use:   "approve PROPOSAL --from KEY [--identity ID]",
		Short: "Approve a pending validator set proposal",
		Long: `Approve pending proposal PROPOSAL (its number: ttld query validator-proposals), signed
by the operator identity of a validator of the set with its key (--from; --identity, or,
without it, the operator of the set whose identity holds that key).
The approval that brings the approvals above two thirds of the set's power passes the
proposal, and its block applies it (docs/STATE.md, "Validators").`,
		Args: cobra.ExactArgs(1),
		Flags: func(cmd *cobra.Command) {
			operatorFlags(cmd)
		},
		Build: func(in *txInput) (protocol.Transition, error) {
			n, err := strconv.ParseUint(in.args[0], 10, 64)
			if err != nil || n == 0 {
				return nil, errUsage{Flag: "PROPOSAL", Value: in.args[0], Want: "a proposal number (1, 2, ...)"}
			}
			id, index, err := operatorArg(in)
			if err != nil {
				return nil, err
			}
			return &protocol.ValidatorSetApproval{Identity: id, KeyIndex: index, Proposal: n}, nil
		},
		Describe: func(t protocol.Transition, _ *txInput, o *txOutput) {
			o.Proposal = t.(*protocol.ValidatorSetApproval).Proposal
		},
	})
}
