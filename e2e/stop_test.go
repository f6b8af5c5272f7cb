package e2e

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cometbft/cometbft/config"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	jsonrpc "github.com/cometbft/cometbft/rpc/jsonrpc/client"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/e2e/ports"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// stopRounds is how many times TestStopUnderLoad stops a node.
const stopRounds = 10

// A node stopped under load stops cleanly every time, while its peer catches up from
// it and while it catches up itself: Stop returns nil, no goroutine of the stopped node
// panics on the storage it closed (which would end this test's process), and a request
// to its RPC fails rather than waits. Two validators of equal power commit every block
// together, in tens of milliseconds, while transfers arrive; each round stops one of
// them, whose peer is at its height or one behind, restarts it in the same process
// behind its peer, and waits until both have made blocks again.
func TestStopUnderLoad(t *testing.T) {
	t.Parallel()
	res, err := node.Testnet(node.TestnetOptions{Output: filepath.Join(t.TempDir(), "net"), Validators: 2, ChainID: ChainID,
		DevBalance: DevBalance, Local: true, SnapshotInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ports, err := ports.Free(6)
	if err != nil {
		t.Fatal(err)
	}
	var nodes [2]*peerNode
	for i := range nodes {
		tn := res.Nodes[i]
		nodes[i] = &peerNode{home: tn.Home, id: tn.NodeID, rpcPort: ports[3*i], p2p: ports[3*i+1], prom: ports[3*i+2], log: testLogger(t, tn.Name)}
		configureFast(t, tn.Home)
	}
	for _, p := range nodes {
		p.start(t)
		t.Cleanup(func() { p.n.Stop() })
	}
	nodes[0].dial(t, nodes[1])
	dev, err := keyring.Open(res.ClientHome).Get(node.DevKeyName)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, p := range nodes {
		if _, err := p.c.WaitForHeight(ctx, 2); err != nil {
			t.Fatal(err)
		}
	}

	load := newTransferLoad(ctx, dev, nodes[0].c)
	defer load.stop()
	for round := range stopRounds {
		stopped, peer := nodes[round%2], nodes[(round+1)%2]
		load.sendTo(peer.c)
		h, err := peer.c.LatestHeight(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stopped.n.Stop(); err != nil {
			t.Fatalf("round %d: stop %s: %v", round, filepath.Base(stopped.home), err)
		}
		// The stopped node's RPC still serves the connections it kept alive: a request
		// there fails at once, neither answered nor kept waiting.
		if _, err := stopped.c.LatestHeight(ctx); err == nil {
			t.Fatalf("round %d: %s answers after Stop", round, filepath.Base(stopped.home))
		}
		stopped.start(t)
		stopped.dial(t, peer)
		for _, p := range nodes {
			if _, err := p.c.WaitForHeight(ctx, h+3); err != nil {
				t.Fatalf("round %d: %s did not reach height %d: %v", round, filepath.Base(p.home), h+3, err)
			}
		}
	}
	if sent := load.stop(); sent == 0 {
		t.Fatal("no transfer was accepted")
	}
}

// configureFast writes home's config.toml for a node on this machine that commits in
// tens of milliseconds, holds a few hundred transactions at most, and dials no peer of
// its own (peerNode.dial).
func configureFast(t *testing.T, home string) {
	t.Helper()
	cfg, err := node.LoadConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	cfg.P2P.PexReactor = false
	cfg.P2P.AllowDuplicateIP = true
	cfg.P2P.PersistentPeers = ""
	cfg.RPC.Unsafe = true  // dial_peers
	cfg.Mempool.Size = 100 // the load waits for blocks rather than making blocks that take seconds
	cfg.Consensus.TimeoutPropose = 500 * time.Millisecond
	cfg.Consensus.TimeoutPrevote = 100 * time.Millisecond
	cfg.Consensus.TimeoutPrecommit = 100 * time.Millisecond
	cfg.Consensus.TimeoutCommit = 20 * time.Millisecond
	cfg.Consensus.PeerGossipSleepDuration = 10 * time.Millisecond
	config.WriteConfigFile(node.ConfigFile(cfg.RootDir), cfg)
}

// peerNode is a home started again and again in this process on the same ports.
type peerNode struct {
	home               string
	id                 string
	rpcPort, p2p, prom int
	log                zerolog.Logger
	n                  *node.Node
	c                  *client.Client // a client of n, made anew at each start
}

func (p *peerNode) start(t *testing.T) {
	t.Helper()
	n, err := node.Start(node.StartOptions{
		Home:             p.home,
		Logger:           p.log,
		RPCListen:        fmt.Sprintf("tcp://127.0.0.1:%d", p.rpcPort),
		P2PListen:        fmt.Sprintf("tcp://127.0.0.1:%d", p.p2p),
		PrometheusListen: fmt.Sprintf("127.0.0.1:%d", p.prom),
		WebListen:        node.WebOff,
	})
	if err != nil {
		t.Fatal(err)
	}
	p.n = n
	vals, _, err := node.GenesisValidators(p.home)
	if err != nil {
		t.Fatal(err)
	}
	if p.c, err = client.Dial(n.RPCAddress(), client.Options{ChainID: ChainID, Trusted: vals}); err != nil {
		t.Fatal(err)
	}
}

// dial has p's node connect to peer's, once.
//
// NB: a persistent peer redials a node that stops as soon as their connection drops,
// and CometBFT v0.38's transport can still accept and handshake that dial before it
// closes; the dialer then keeps a connection nobody serves until its pong timeout. So
// the nodes here keep no persistent peers, and the test connects them.
func (p *peerNode) dial(t *testing.T, peer *peerNode) {
	t.Helper()
	c, err := jsonrpc.New(p.n.RPCAddress())
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]any{"peers": []string{fmt.Sprintf("%s@127.0.0.1:%d", peer.id, peer.p2p)}, "persistent": false, "unconditional": false, "private": false}
	if _, err := c.Call(context.Background(), "dial_peers", params, new(coretypes.ResultDialPeers)); err != nil {
		t.Fatal(err)
	}
}

// transferLoad signs and broadcasts transfers from one key, one after the other, to
// the node of the client it was last given, until stopped or 100,000 were sent.
type transferLoad struct {
	mu       sync.Mutex
	c        *client.Client
	accepted int
	cancel   context.CancelFunc
	done     chan struct{}
}

func newTransferLoad(ctx context.Context, key keyring.Key, c *client.Client) *transferLoad {
	ctx, cancel := context.WithCancel(ctx)
	l := &transferLoad{c: c, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		to := protocol.AddressOf(ed25519.PublicKey(make([]byte, 32)))
		for range 100_000 {
			if ctx.Err() != nil {
				return
			}
			l.mu.Lock()
			c := l.c
			l.mu.Unlock()
			tx, err := c.Sign(ctx, &protocol.AddressFundsTransfer{PubKey: key.Pub, Recipient: to, Amount: 1}, key.Priv)
			if err != nil {
				continue
			}
			if res, err := c.Broadcast(ctx, tx, false); err == nil && !res.Refused() {
				l.mu.Lock()
				l.accepted++
				l.mu.Unlock()
			}
		}
	}()
	return l
}

// sendTo sends the next transfers through c.
func (l *transferLoad) sendTo(c *client.Client) {
	l.mu.Lock()
	l.c = c
	l.mu.Unlock()
}

// stop ends the load and reports how many transfers a node accepted.
func (l *transferLoad) stop() int {
	l.cancel()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.accepted
}
