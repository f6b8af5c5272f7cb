package main

import (
	"context"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/load"
)

func main() {
	os.Exit(Execute(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// Execute runs the command line args and returns the process exit code.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		return 1
	}
	return 0
}

// DefaultNode is the RPC URL of the node unless --node says otherwise.
const DefaultNode = "http://127.0.0.1:26657"

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "ttld-load",
		Short: "Load a ttld node (or CometBFT's kvstore) over websockets or HTTP and report what it committed",
		Long: `ttld-load sends transactions to a node over websockets or keep-alive HTTP
connections, sends again what a full mempool refused, and measures, from the node's
blocks, the committed transactions per second and their commit latency
(CometBFT's loadtime report).

  ttld init --home H && ttld-load genesis --home H && ttld-load configure --home H
  ttld start --home H &
  ttld-load run --workload transfers --time 20`,
		SilenceUsage: true,
	}
	root.AddCommand(newGenesisCmd(), newConfigureCmd(), newSetupCmd(), newRunCmd(), newReportCmd())
	return root
}

// signerFlags are the flags that name the signers: the seed and how many.
func signerFlags(cmd *cobra.Command) {
	cmd.Flags().String("seed", load.DefaultSeed, "the seed the signers' keys are derived from")
	cmd.Flags().Int("signers", load.DefaultSigners, "how many signers: 0 to N-1 of the seed")
}
