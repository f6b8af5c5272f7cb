package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/load"
)

func newSetupCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "setup --workload documents|documents-ttl [--node URL] [--seed S]",
		Short: "Register a document workload's contract, owned by signer 0's identity, and print its id (run --contract ID reuses it)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			node, _ := cmd.Flags().GetString("node")
			seed, _ := cmd.Flags().GetString("seed")
			name, _ := cmd.Flags().GetString("workload")
			w, err := load.ParseWorkload(name)
			if err != nil {
				return err
			}
			c, err := client.Dial(node, client.Options{})
			if err != nil {
				return err
			}
			id, err := load.Setup(cmd.Context(), c, load.DeriveSigner([]byte(seed), 0), w)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), id)
			return nil
		},
	}
	cmd.Flags().String("node", DefaultNode, "the node's RPC URL")
	cmd.Flags().String("seed", load.DefaultSeed, "the seed the signers' keys are derived from")
	cmd.Flags().String("workload", string(load.Documents), "documents or documents-ttl")
	return cmd
}
