package load

import (
	"os"
	"testing"
	"time"

	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/node"
)

// TestConfigureWritesEverySetting: what Configure writes is what the node reads back
// (node.LoadConfig, the genesis), and a setting CometBFT refuses changes nothing.
func TestConfigureWritesEverySetting(t *testing.T) {
	home := initHome(t)
	s := Settings{TimeoutCommit: 700 * time.Millisecond, TimeoutPropose: 2 * time.Second, CreateEmptyBlocks: true, MempoolSize: 77_000, MempoolMaxTxsBytes: 1 << 29, BlockMaxBytes: 4 << 20, RPCMaxRequestBatchSize: 3, TxIndexer: "null"}
	if err := Configure(home, s); err != nil {
		t.Fatal(err)
	}
	cfg, err := node.LoadConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	got := Settings{
		TimeoutCommit: cfg.Consensus.TimeoutCommit, TimeoutPropose: cfg.Consensus.TimeoutPropose, CreateEmptyBlocks: cfg.Consensus.CreateEmptyBlocks,
		MempoolSize: cfg.Mempool.Size, MempoolMaxTxsBytes: cfg.Mempool.MaxTxsBytes, RPCMaxRequestBatchSize: cfg.RPC.MaxRequestBatchSize,
		TxIndexer: cfg.TxIndex.Indexer,
	}
	gen, err := cmttypes.GenesisDocFromFile(GenesisFile(home))
	if err != nil {
		t.Fatal(err)
	}
	got.BlockMaxBytes = gen.ConsensusParams.Block.MaxBytes
	if got != s {
		t.Fatalf("read back %s\nwrote     %s", got, s)
	}
	if cfg.RPC.ListenAddress != node.DefaultRPCListen || cfg.P2P.ListenAddress == "" {
		t.Fatalf("what init wrote besides is lost: rpc %s, p2p %s", cfg.RPC.ListenAddress, cfg.P2P.ListenAddress)
	}

	before, _ := os.ReadFile(GenesisFile(home))
	bad := s
	bad.MempoolSize = -1
	if Configure(home, bad) == nil {
		t.Fatal("a negative mempool size was written")
	}
	bad = s
	bad.TxIndexer = "psql"
	if Configure(home, bad) == nil {
		t.Fatal("an indexer other than kv and null was written")
	}
	if after, _ := os.ReadFile(GenesisFile(home)); string(after) != string(before) {
		t.Fatal("a refused configuration rewrote the genesis")
	}
}
