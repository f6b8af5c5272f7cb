package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/load"
)

func newGenesisCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "genesis --home H [--signers N] [--seed S] [--balance B]",
		Short: "Fund N seed-derived signers (an address and an identity each) in the genesis of a home ttld init wrote",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, _ := cmd.Flags().GetString("home")
			seed, _ := cmd.Flags().GetString("seed")
			n, _ := cmd.Flags().GetInt("signers")
			balance, _ := cmd.Flags().GetUint64("balance")
			if home == "" {
				return fmt.Errorf("--home: want the home ttld init wrote")
			}
			if err := load.AddSigners(home, []byte(seed), n, balance); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "funded %d signers of seed %q in %s: %d credits to each address and each identity\n", n, seed, load.GenesisFile(home), balance)
			return nil
		},
	}
	cmd.Flags().String("home", "", "the home directory (ttld init --home)")
	signerFlags(cmd)
	cmd.Flags().Uint64("balance", load.DefaultSignerBalance, "credits of each signer's address and of each signer's identity")
	return cmd
}
