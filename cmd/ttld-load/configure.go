package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/load"
)

func newConfigureCmd() *cobra.Command {
	def := load.DefaultSettings()
	cmd := &cobra.Command{
		Use:   "configure --home H [settings]",
		Short: "Write the consensus, mempool, RPC and indexer settings into a CometBFT home (ttld's or cometbft's) before its first start",
		Long: `configure sets every setting below in the home's config.toml, and the block size in
its genesis.json, to the flags' values (defaults: CometBFT's, but a mempool of 50,000
transactions), so two homes configured alike differ only in their application.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, _ := cmd.Flags().GetString("home")
			if home == "" {
				return fmt.Errorf("--home: want a CometBFT home directory")
			}
			f := cmd.Flags()
			s := load.Settings{}
			s.TimeoutCommit, _ = f.GetDuration("timeout-commit")
			s.TimeoutPropose, _ = f.GetDuration("timeout-propose")
			s.CreateEmptyBlocks, _ = f.GetBool("create-empty-blocks")
			s.MempoolSize, _ = f.GetInt("mempool-size")
			s.MempoolMaxTxsBytes, _ = f.GetInt64("mempool-max-txs-bytes")
			s.BlockMaxBytes, _ = f.GetInt64("block-max-bytes")
			s.RPCMaxRequestBatchSize, _ = f.GetInt("rpc-max-request-batch-size")
			s.TxIndexer, _ = f.GetString("indexer")
			if err := load.Configure(home, s); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", home, s)
			return nil
		},
	}
	f := cmd.Flags()
	f.String("home", "", "the CometBFT home directory")
	f.Duration("timeout-commit", def.TimeoutCommit, "consensus.timeout_commit")
	f.Duration("timeout-propose", def.TimeoutPropose, "consensus.timeout_propose")
	f.Bool("create-empty-blocks", def.CreateEmptyBlocks, "consensus.create_empty_blocks (ttld's proofs and the latency report need the block after the last)")
	f.Int("mempool-size", def.MempoolSize, "mempool.size: the most transactions the mempool, and a block, holds")
	f.Int64("mempool-max-txs-bytes", def.MempoolMaxTxsBytes, "mempool.max_txs_bytes")
	f.Int64("block-max-bytes", def.BlockMaxBytes, "genesis consensus_params.block.max_bytes")
	f.Int("rpc-max-request-batch-size", def.RPCMaxRequestBatchSize, "rpc.max_request_batch_size")
	f.String("indexer", def.TxIndexer, "tx_index.indexer: kv (index every transaction) or null (none)")
	return cmd
}
