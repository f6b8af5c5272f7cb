package load

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/cometbft/cometbft/config"
	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/spf13/viper"
)

// Settings are the CometBFT settings that decide how much a single validator can
// commit: Configure writes the same values into ttld's home and into the cometbft
// binary's, so that the two are compared under one configuration.
type Settings struct {
	// TimeoutCommit is how long a validator waits after a commit before the next
	// height (config.toml consensus.timeout_commit): the block interval when blocks
	// are quick to make.
	TimeoutCommit time.Duration
	// TimeoutPropose is how long a validator waits for a proposal
	// (consensus.timeout_propose).
	TimeoutPropose time.Duration
	// CreateEmptyBlocks keeps making blocks when the mempool is empty
	// (consensus.create_empty_blocks). NB: ttld needs it: the state after block H is
	// proven with header H+1, and the latency report dates a block's transactions by
	// the next block.
	CreateEmptyBlocks bool
	// MempoolSize bounds the transactions the mempool holds (mempool.size), and so
	// the transactions of one block: CometBFT's default 5,000 caps a saturated chain.
	MempoolSize int
	// MempoolMaxTxsBytes bounds the bytes the mempool holds (mempool.max_txs_bytes).
	MempoolMaxTxsBytes int64
	// BlockMaxBytes bounds a block's bytes: a consensus parameter, in genesis.json
	// (consensus_params.block.max_bytes), not in config.toml.
	BlockMaxBytes int64
	// RPCMaxRequestBatchSize bounds the requests of one JSON-RPC batch
	// (rpc.max_request_batch_size).
	RPCMaxRequestBatchSize int
	// TxIndexer is CometBFT's transaction indexer (tx_index.indexer): "kv" indexes
	// every transaction and its indexed event attributes in the node's goleveldb,
	// "null" nothing.
	TxIndexer string
}

// DefaultSettings are what a load home gets unless told otherwise: CometBFT's
// defaults, except a mempool of 50,000 transactions, so that neither chain is capped
// by the mempool at saturation.
func DefaultSettings() Settings {
	cfg := config.DefaultConfig()
	return Settings{
		TimeoutCommit:          cfg.Consensus.TimeoutCommit,
		TimeoutPropose:         cfg.Consensus.TimeoutPropose,
		CreateEmptyBlocks:      true,
		MempoolSize:            50_000,
		MempoolMaxTxsBytes:     cfg.Mempool.MaxTxsBytes,
		BlockMaxBytes:          cmttypes.DefaultBlockParams().MaxBytes,
		RPCMaxRequestBatchSize: cfg.RPC.MaxRequestBatchSize,
		TxIndexer:              cfg.TxIndex.Indexer,
	}
}

// String names every setting as config.toml (or genesis.json) does.
func (s Settings) String() string {
	return fmt.Sprintf("timeout_commit=%s timeout_propose=%s create_empty_blocks=%t mempool.size=%d mempool.max_txs_bytes=%d block.max_bytes=%d rpc.max_request_batch_size=%d tx_index.indexer=%s",
		s.TimeoutCommit, s.TimeoutPropose, s.CreateEmptyBlocks, s.MempoolSize, s.MempoolMaxTxsBytes, s.BlockMaxBytes, s.RPCMaxRequestBatchSize, s.TxIndexer)
}

// Configure writes s into the CometBFT home: config.toml, read over CometBFT's
// defaults and written back through CometBFT's template (what `ttld init` and
// `cometbft init` both write), and the block size in genesis.json. The home must not
// have started a chain: the genesis is part of the chain's identity.
func Configure(home string, s Settings) error {
	file := filepath.Join(home, config.DefaultConfigDir, config.DefaultConfigFileName)
	v := viper.New()
	v.SetConfigFile(file)
	if err := v.ReadInConfig(); err != nil {
		return fmt.Errorf("load: read %s: %w", file, err)
	}
	cfg := config.DefaultConfig()
	if err := v.Unmarshal(cfg); err != nil {
		return fmt.Errorf("load: %s: %w", file, err)
	}
	cfg.Consensus.TimeoutCommit = s.TimeoutCommit
	cfg.Consensus.TimeoutPropose = s.TimeoutPropose
	cfg.Consensus.CreateEmptyBlocks = s.CreateEmptyBlocks
	cfg.Mempool.Size = s.MempoolSize
	cfg.Mempool.MaxTxsBytes = s.MempoolMaxTxsBytes
	cfg.RPC.MaxRequestBatchSize = s.RPCMaxRequestBatchSize
	switch s.TxIndexer {
	case "kv", "null":
		cfg.TxIndex.Indexer = s.TxIndexer
	default:
		return fmt.Errorf("load: tx_index.indexer %q: want kv or null", s.TxIndexer)
	}
	if err := cfg.ValidateBasic(); err != nil {
		return fmt.Errorf("load: settings %s: %w", s, err)
	}
	config.WriteConfigFile(file, cfg)

	gen, err := cmttypes.GenesisDocFromFile(GenesisFile(home))
	if err != nil {
		return fmt.Errorf("load: read genesis: %w", err)
	}
	gen.ConsensusParams.Block.MaxBytes = s.BlockMaxBytes
	if err := gen.ValidateAndComplete(); err != nil {
		return fmt.Errorf("load: genesis with block.max_bytes %d: %w", s.BlockMaxBytes, err)
	}
	if err := gen.SaveAs(GenesisFile(home)); err != nil {
		return fmt.Errorf("load: write genesis: %w", err)
	}
	return nil
}
