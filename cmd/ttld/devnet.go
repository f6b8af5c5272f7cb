package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/node"
)

func newDevnetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "devnet",
		Short: "Init --home if needed, then run a local single-validator chain",
		Long: `devnet initializes --home when it holds no chain yet (as ttld init would), prints
where the chain is and what to try, and runs it until SIGINT or SIGTERM. An
initialized home is started as it is: --chain-id and --dev-balance apply only to a
new one.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home := globalFlags(cmd).Home
			if !node.Initialized(home) {
				chainID, _ := cmd.Flags().GetString("chain-id")
				balance, _ := cmd.Flags().GetUint64("dev-balance")
				epoch, _ := cmd.Flags().GetUint64("epoch-length")
				res, err := node.Init(node.InitOptions{Home: home, ChainID: chainID, DevBalance: balance, EpochLengthS: epoch, LocalMinTTLSeconds: localMinTTL(cmd, chainID), Timeouts: timeouts(cmd)})
				if err != nil {
					return err
				}
				warnLocalLimits(cmd.OutOrStdout(), res.LocalMinTTL)
			}
			return runNode(cmd, func(n *node.Node) error { return printBanner(cmd, n) })
		},
	}
	initFlags(cmd)
	listenFlags(cmd)
	return cmd
}

func printBanner(cmd *cobra.Command, n *node.Node) error {
	dev, err := keyring.Open(n.Home()).Get(node.DevKeyName)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	home := n.Home()
	fmt.Fprintf(w, "ttld devnet is running\n")
	fmt.Fprintf(w, "  chain id:     %s\n", n.ChainID())
	fmt.Fprintf(w, "  home:         %s\n", home)
	fmt.Fprintf(w, "  RPC:          %s\n", n.RPCAddress())
	if m := n.MetricsAddress(); m != "" {
		fmt.Fprintf(w, "  metrics:      %s\n", m)
	}
	if web := n.WebAddress(); web != "" {
		fmt.Fprintf(w, "  web view:     %s (open it in a browser)\n", web)
	}
	fmt.Fprintf(w, "  dev address:  %s (key %q in the unencrypted test keyring)\n", dev.Address(), node.DevKeyName)
	fmt.Fprintf(w, "Try next:\n")
	fmt.Fprintf(w, "  %s --home %s --node %s query address %s --prove\n", repoBinary, home, n.RPCAddress(), dev.Address())
	fmt.Fprintf(w, "  %s --home %s --node %s tx --help\n", repoBinary, home, n.RPCAddress())
	fmt.Fprintf(w, "  %s --node %s status\n", repoBinary, n.RPCAddress())
	fmt.Fprintf(w, "  curl -s %s/status\n", n.RPCAddress())
	fmt.Fprintf(w, "Stop with Ctrl-C.\n")
	return nil
}

// repoBinary is the binary as the lines people paste name it: make devnet, make build
// and make devnet-up put it there, and their banners are read at the repository root.
const repoBinary = "./bin/ttld"
