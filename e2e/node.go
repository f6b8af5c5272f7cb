package e2e

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cometbft/cometbft/config"
	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/e2e/ports"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// ChainID is the chain id of every node StartNode starts.
const ChainID = "ttld-e2e"

// DevBalance is the dev key's genesis balance.
const DevBalance uint64 = 1_000_000_000_000_000

// startTimeout bounds how long StartNode waits for the first provable state.
const startTimeout = 30 * time.Second

// Env is a running node and what a test needs to use it.
type Env struct {
	Home    string
	Node    *node.Node
	RPC     string // the RPC's URL
	Client  *client.Client
	Dev     keyring.Key
	Trusted *cmttypes.ValidatorSet // the genesis validator set
}

// StartNode initialises a home in a temporary directory, starts a node on free
// loopback ports, and returns once the state after block 1 is provable (block 2
// exists). The node stops when the test ends.
func StartNode(t testing.TB) *Env {
	t.Helper()
	return StartNodeFunded(t, DevBalance)
}

// StartNodeFunded is StartNode with the dev key funded with devBalance at genesis.
func StartNodeFunded(t testing.TB, devBalance uint64) *Env {
	t.Helper()
	return startNode(t, node.InitOptions{ChainID: ChainID, DevBalance: devBalance})
}

// StartNodeShortTTL is StartNode on a chain whose genesis lowers the minimum document
// ttl to minTTL seconds (a local chain's override), so documents expire within a test.
func StartNodeShortTTL(t testing.TB, minTTL uint64) *Env {
	t.Helper()
	return startNode(t, node.InitOptions{ChainID: ChainID, DevBalance: DevBalance, LocalMinTTLSeconds: minTTL})
}

// StartNodeOnChain is StartNode for a chain of another id than ChainID, with a genesis
// validator of its own: a second chain, such as the one a forged view would show.
func StartNodeOnChain(t testing.TB, chainID string) *Env {
	t.Helper()
	return startNode(t, node.InitOptions{ChainID: chainID, DevBalance: DevBalance})
}

// StartNodeWithoutIndex is StartNodeShortTTL(minTTL) for a node that keeps no
// transaction index (config.toml's [tx_index] indexer = "null").
func StartNodeWithoutIndex(t testing.TB, minTTL uint64) *Env {
	t.Helper()
	return startNodeWith(t, node.InitOptions{ChainID: ChainID, DevBalance: DevBalance, LocalMinTTLSeconds: minTTL},
		func(cfg *config.Config) { cfg.TxIndex.Indexer = "null" })
}

func startNode(t testing.TB, opts node.InitOptions) *Env {
	t.Helper()
	return startNodeWith(t, opts, func(*config.Config) {})
}

// startNodeWith is startNode with config.toml edited by edit before the node starts.
func startNodeWith(t testing.TB, opts node.InitOptions, edit func(*config.Config)) *Env {
	t.Helper()
	opts.Home = t.TempDir()
	env, err := start(opts, edit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Node.Stop(); err != nil {
			t.Errorf("stop node: %v", err)
		}
	})
	return env
}

// Start is StartNode for a caller without a test, such as a runnable example: it
// initialises a home in directory home, which must be empty or absent, and returns
// once block 2 exists. The caller stops env.Node.
func Start(home string) (*Env, error) {
	return start(node.InitOptions{Home: home, ChainID: ChainID, DevBalance: DevBalance}, func(*config.Config) {})
}

// start initialises opts.Home for blocks at the pace of tests (node.TestTimeouts),
// with peer exchange off and config.toml edited by edit, starts a node on free
// loopback ports and returns once block 2 exists; on an error no node is left running.
func start(opts node.InitOptions, edit func(*config.Config)) (*Env, error) {
	opts.Timeouts = node.TestTimeouts
	res, err := node.Init(opts)
	if err != nil {
		return nil, err
	}
	if err := editConfig(res.Home, func(cfg *config.Config) { cfg.P2P.PexReactor = false; edit(cfg) }); err != nil {
		return nil, err
	}
	ports, err := ports.Free(4)
	if err != nil {
		return nil, err
	}
	n, err := node.Start(node.StartOptions{
		Home:             res.Home,
		Logger:           zerolog.Nop(),
		RPCListen:        fmt.Sprintf("tcp://127.0.0.1:%d", ports[0]),
		P2PListen:        fmt.Sprintf("tcp://127.0.0.1:%d", ports[1]),
		PrometheusListen: fmt.Sprintf("127.0.0.1:%d", ports[2]),
		WebListen:        fmt.Sprintf("127.0.0.1:%d", ports[3]),
	})
	if err != nil {
		return nil, err
	}
	env, err := connect(n, res.Home)
	if err != nil {
		return nil, errors.Join(err, n.Stop())
	}
	return env, nil
}

// editConfig rewrites home's config.toml with edit's changes. Tests' nodes turn peer
// exchange off: the node has no peers to exchange, and CometBFT saves the address book
// of peer exchange from a goroutine of its own after the node has stopped, one
// Node.Stop cannot wait for, so a test's removal of the home would race that write.
func editConfig(home string, edit func(*config.Config)) error {
	cfg, err := node.LoadConfig(home)
	if err != nil {
		return err
	}
	edit(cfg)
	config.WriteConfigFile(filepath.Join(cfg.RootDir, config.DefaultConfigDir, config.DefaultConfigFileName), cfg)
	return nil
}

// connect dials running node n of home with the dev key and the genesis validators,
// and waits for block 2.
func connect(n *node.Node, home string) (*Env, error) {
	vals, chainID, err := node.GenesisValidators(home)
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(n.RPCAddress(), client.Options{ChainID: chainID, Trusted: vals})
	if err != nil {
		return nil, err
	}
	dev, err := keyring.Open(home).Get(node.DevKeyName)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if _, err := c.WaitForHeight(ctx, 2); err != nil {
		return nil, fmt.Errorf("node at %s produced no block 2: %w", n.RPCAddress(), err)
	}
	return &Env{Home: home, Node: n, RPC: n.RPCAddress(), Client: c, Dev: dev, Trusted: vals}, nil
}

// Commit signs tr with the dev key (filling in its next nonce), broadcasts it, waits for
// its block and fails the test unless the block accepted it; it returns the block's
// height.
func (e *Env) Commit(t testing.TB, tr protocol.Transition) int64 {
	t.Helper()
	return e.CommitSigned(t, tr, e.Dev.Priv)
}

// CommitSigned is Commit with tr signed by key.
func (e *Env) CommitSigned(t testing.TB, tr protocol.Transition, key ed25519.PrivateKey) int64 {
	t.Helper()
	ctx := context.Background()
	tx, err := e.Client.Sign(ctx, tr, key)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Client.Broadcast(ctx, tx, true)
	if err != nil || res.Code != 0 || !res.Committed {
		t.Fatalf("%T: %+v %v", tr, res, err)
	}
	return res.Height
}
