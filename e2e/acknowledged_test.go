package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cometbft/cometbft/config"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	jsonrpc "github.com/cometbft/cometbft/rpc/jsonrpc/client"
	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/e2e/ports"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// testnetNode is one node of an in-process network of validators on this machine,
// started and stopped again on the same ports.
type testnetNode struct {
	name          string
	home          string
	id            string // its P2P node id
	rpc, p2p, prm int    // its RPC, P2P and Prometheus ports
	n             *node.Node

	mu sync.Mutex
	c  *client.Client // the running node's client; start replaces it
}

// client is the running node's client.
func (tn *testnetNode) client() *client.Client {
	tn.mu.Lock()
	defer tn.mu.Unlock()
	return tn.c
}

// startTestnet writes the homes of a network of n validators that commit in tens of
// milliseconds, on free loopback ports, each dialing the others, and starts every node.
// The nodes stop when the test ends; the client home's dev key is funded.
func startTestnet(t *testing.T, n int) ([]*testnetNode, keyring.Key) {
	t.Helper()
	res, err := node.Testnet(node.TestnetOptions{Output: t.TempDir(), Validators: n, ChainID: ChainID, Local: true, DevBalance: DevBalance})
	if err != nil {
		t.Fatal(err)
	}
	ports, err := ports.Free(3 * n)
	if err != nil {
		t.Fatal(err)
	}
	nodes := make([]*testnetNode, n)
	for i, tn := range res.Nodes {
		nodes[i] = &testnetNode{name: tn.Name, home: tn.Home, id: tn.NodeID, rpc: ports[3*i], p2p: ports[3*i+1], prm: ports[3*i+2]}
	}
	for _, tn := range res.Nodes {
		cfg, err := node.LoadConfig(tn.Home)
		if err != nil {
			t.Fatal(err)
		}
		// NB: no persistent peers: a node dials the others once it starts (dial). A
		// persistent peer redials a node while it stops, and in one process the
		// stopping node's transport may take that connection and leave it open
		// after the stop: the peer then holds it until CometBFT's pong timeout (45 s)
		// and refuses the restarted node meanwhile.
		cfg.P2P.PersistentPeers = ""
		cfg.RPC.Unsafe = true // dial_peers
		cfg.P2P.PexReactor = false
		cfg.P2P.AllowDuplicateIP = true
		cfg.StateSync.RPCServers = nil
		cfg.Consensus.TimeoutPropose = 500 * time.Millisecond
		cfg.Consensus.TimeoutCommit = 80 * time.Millisecond
		cfg.Consensus.PeerGossipSleepDuration = 10 * time.Millisecond
		config.WriteConfigFile(node.ConfigFile(cfg.RootDir), cfg)
	}
	dev, err := keyring.Open(res.ClientHome).Get(node.DevKeyName)
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range nodes {
		tn.start(t)
	}
	for _, tn := range nodes {
		tn.dial(t, nodes)
	}
	t.Cleanup(func() {
		for _, tn := range nodes {
			if tn.n != nil {
				if err := tn.n.Stop(); err != nil {
					t.Errorf("stop %s: %v", tn.name, err)
				}
			}
		}
	})
	return nodes, dev
}

func (tn *testnetNode) start(t *testing.T) {
	t.Helper()
	n, err := node.Start(node.StartOptions{
		Home:             tn.home,
		Logger:           zerolog.Nop(),
		RPCListen:        fmt.Sprintf("tcp://127.0.0.1:%d", tn.rpc),
		P2PListen:        fmt.Sprintf("tcp://127.0.0.1:%d", tn.p2p),
		PrometheusListen: fmt.Sprintf("127.0.0.1:%d", tn.prm),
		WebListen:        node.WebOff,
	})
	if err != nil {
		t.Fatalf("start %s: %v", tn.name, err)
	}
	c, err := client.Dial(n.RPCAddress(), client.Options{ChainID: ChainID})
	if err != nil {
		t.Fatal(err)
	}
	tn.n = n
	tn.mu.Lock()
	tn.c = c
	tn.mu.Unlock()
}

// dial has the node connect to every other node of the network.
func (tn *testnetNode) dial(t *testing.T, nodes []*testnetNode) {
	t.Helper()
	var peers []string
	for _, other := range nodes {
		if other != tn {
			peers = append(peers, fmt.Sprintf("%s@127.0.0.1:%d", other.id, other.p2p))
		}
	}
	c, err := jsonrpc.New(tn.n.RPCAddress())
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]any{"peers": peers, "persistent": false, "unconditional": false, "private": false}
	if _, err := c.Call(context.Background(), "dial_peers", params, new(coretypes.ResultDialPeers)); err != nil {
		t.Fatal(err)
	}
}

func (tn *testnetNode) stop(t *testing.T) {
	t.Helper()
	if err := tn.n.Stop(); err != nil {
		t.Fatalf("stop %s: %v", tn.name, err)
	}
	tn.n = nil
}

// catchingUp asks the node whether it is catching up with the chain.
func (tn *testnetNode) catchingUp(ctx context.Context) bool {
	st, err := tn.c.RPC().Status(ctx)
	return err == nil && st.SyncInfo.CatchingUp
}

// sendLog is what the senders of a load were told, by transaction hash.
type sendLog struct {
	mu sync.Mutex
	// acknowledged: broadcast_tx_sync answered code 0.
	acknowledged map[string]string // hash -> what sent it
	// refusedByNode counts the refusals with a node code (ttld-node), by code.
	refusedByNode map[uint32]int
	// told counts every other answer that was not an acknowledgment: a refusal with a
	// protocol code, or an RPC error.
	told int
}

func (l *sendLog) record(who string, res client.BroadcastResult, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil && !res.Refused():
		l.acknowledged[strings.ToUpper(hex.EncodeToString(res.Hash))] = who
	case err == nil && res.ByNode():
		l.refusedByNode[uint32(res.Code)]++
	default:
		l.told++
	}
}

// TestAcknowledgedAcrossRestarts: under a load of transfers to every node of a
// four-validator network, each node is restarted in turn; every transaction a node
// acknowledged (broadcast_tx_sync, code 0) is committed, exactly once, or was never
// acknowledged: its sender was told otherwise. The senders are of two kinds. A careful
// one stays with one node and never reuses a nonce it used; the node is taken out of
// its rotation before it stops, as an operator drains a node. And, after each restart,
// while the node is catching up with the chain (started, not yet connected to its
// peers), a sender that asks that node for its next nonce, as `ttld tx` does: a node
// that judged the transaction against the state it restarted with would take a nonce
// the chain used meanwhile, and drop the transaction once in step, with nobody told;
// it refuses it instead.
func TestAcknowledgedAcrossRestarts(t *testing.T) {
	t.Parallel()
	began := time.Now()
	nodes, dev := startTestnet(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if _, err := nodes[0].c.WaitForHeight(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for _, tn := range nodes { // each node refuses transactions until its block sync ends
		waitFor(ctx, func() bool { return !tn.catchingUp(ctx) })
	}
	// Every sender's address is funded by the dev key.
	keys := make([]ed25519.PrivateKey, 9)
	var funding []protocol.Transition
	for i := range keys {
		seed := sha256.Sum256([]byte(fmt.Sprintf("acknowledged/%d", i)))
		keys[i] = ed25519.NewKeyFromSeed(seed[:])
		funding = append(funding, &protocol.AddressFundsTransfer{PubKey: dev.Pub, Nonce: uint64(i + 1), Recipient: protocol.AddressOf(keys[i].Public().(ed25519.PublicKey)), Amount: 1_000_000_000_000})
	}
	commitAll(ctx, t, nodes[0].c, dev.Priv, funding)
	start, err := nodes[0].c.LatestHeight(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sink := protocol.AddressOf(make(ed25519.PublicKey, ed25519.PublicKeySize))
	roamerAddr := protocol.AddressOf(keys[8].Public().(ed25519.PublicKey))
	log := &sendLog{acknowledged: map[string]string{}, refusedByNode: map[uint32]int{}}

	// Two careful senders a node, each with a node of its own while it runs.
	var mu sync.Mutex
	draining := map[int]bool{}
	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for s := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := keys[s]
			var last uint64
			// At most sendRate transfers a second, 3,000 in all.
			pace := time.NewTicker(time.Second / sendRate)
			defer pace.Stop()
			for i := 0; loadCtx.Err() == nil && i < 3_000; i++ {
				select {
				case <-loadCtx.Done():
					return
				case <-pace.C:
				}
				k := s % len(nodes)
				mu.Lock()
				tn, out := nodes[k], draining[k]
				mu.Unlock()
				if out {
					waitFor(loadCtx, func() bool { mu.Lock(); defer mu.Unlock(); return !draining[k] })
					continue
				}
				c := tn.client()
				next, err := c.NextAddressNonce(loadCtx, protocol.AddressOf(key.Public().(ed25519.PublicKey)))
				if err != nil {
					continue
				}
				tr := &protocol.AddressFundsTransfer{PubKey: key.Public().(ed25519.PublicKey), Nonce: max(next, last+1), Recipient: sink, Amount: 1}
				tx, err := c.Sign(loadCtx, tr, key)
				if err != nil {
					continue
				}
				res, err := c.Broadcast(loadCtx, tx, false)
				if loadCtx.Err() != nil {
					return
				}
				log.record(fmt.Sprintf("careful sender %d via %s, nonce %d", s, tn.name, tr.Nonce), res, err)
				if err == nil && !res.Refused() {
					last = tr.Nonce
				}
			}
		}()
	}

	// Each node in turn: drained, stopped while the others go on, started again; the
	// ninth sender then moves on the others and asks the restarted node, while it
	// catches up, for its next nonce.
	roamer := keys[8]
	whileCatchingUp := 0
	for k, tn := range nodes {
		mu.Lock()
		draining[k] = true
		mu.Unlock()
		other := nodes[(k+1)%len(nodes)]
		h, err := other.c.LatestHeight(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.c.WaitForHeight(ctx, h+2); err != nil { // what it acknowledged is gossiped and proposed
			t.Fatal(err)
		}
		tn.stop(t)
		st, err := other.c.Address(ctx, roamerAddr, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		var moves []protocol.Transition
		for i := range 3 {
			moves = append(moves, &protocol.AddressFundsTransfer{PubKey: roamer.Public().(ed25519.PublicKey), Nonce: st.Nonce + 1 + uint64(i), Recipient: sink, Amount: 1})
		}
		commitAll(ctx, t, other.c, roamer, moves)
		// Started and not yet connected to its peers, the node is catching up, and its
		// state is the one it stopped with.
		tn.start(t)
		if !tn.catchingUp(ctx) {
			t.Fatalf("%s, started without peers, is not catching up", tn.name)
		}
		tx, err := tn.client().Sign(ctx, &protocol.AddressFundsTransfer{PubKey: roamer.Public().(ed25519.PublicKey), Recipient: sink, Amount: 2}, roamer)
		if err != nil {
			t.Fatal(err)
		}
		res, err := tn.client().Broadcast(ctx, tx, false)
		log.record("the roaming sender via "+tn.name+", catching up", res, err)
		whileCatchingUp++
		tn.dial(t, nodes)
		if _, err := tn.c.WaitForHeight(ctx, h+4); err != nil {
			t.Fatalf("%s did not catch up: %v", tn.name, err)
		}
		waitFor(ctx, func() bool { return !tn.catchingUp(ctx) })
		mu.Lock()
		draining[k] = false
		mu.Unlock()
		t.Logf("%s restarted at height %d, in step again %s after the test began", tn.name, h, time.Since(began).Round(time.Millisecond))
	}
	stopLoad()
	wg.Wait()
	if whileCatchingUp == 0 {
		t.Fatal("no restarted node was asked anything while it caught up: the test proved nothing of it")
	}

	// Every acknowledged transaction is in a block, once.
	end, err := nodes[0].c.LatestHeight(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nodes[0].c.WaitForHeight(ctx, end+5); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	latest, _ := nodes[0].c.LatestHeight(ctx)
	for h := start + 1; h <= latest; h++ {
		blk, err := nodes[0].c.RPC().Block(ctx, &h)
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range blk.Block.Txs {
			seen[strings.ToUpper(hex.EncodeToString(cmttypes.Tx(tx).Hash()))]++
		}
	}
	lost := 0
	for hash, who := range log.acknowledged {
		switch seen[hash] {
		case 1:
		case 0:
			lost++
			t.Errorf("acknowledged and never committed: %s (%s)", hash, who)
		default:
			t.Errorf("committed %d times: %s (%s)", seen[hash], hash, who)
		}
	}
	st, err := nodes[0].c.Address(ctx, roamerAddr, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d acknowledged, %d lost; refused by a node %v; %d told otherwise; %d sends to a node catching up; the roaming sender's nonce %d; blocks %d..%d",
		len(log.acknowledged), lost, log.refusedByNode, log.told, whileCatchingUp, st.Nonce, start+1, latest)
}

// commitAll signs trs with key, sends them and waits until a block holds each,
// failing t unless every one succeeded.
func commitAll(ctx context.Context, t *testing.T, c *client.Client, key ed25519.PrivateKey, trs []protocol.Transition) {
	t.Helper()
	from, err := c.LatestHeight(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var hashes [][]byte
	for _, tr := range trs {
		tx, err := c.Sign(ctx, tr, key)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Broadcast(ctx, tx, false)
		if err != nil || res.Refused() {
			t.Fatalf("%T nonce %d: %+v %v", tr, tr.GetNonce(), res, err)
		}
		hashes = append(hashes, res.Hash)
	}
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	outcomes, err := c.Await(wait, from+1, hashes)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outcomes {
		if !o.Committed || o.Code != 0 {
			t.Fatalf("%T nonce %d: %+v", trs[i], trs[i].GetNonce(), o)
		}
	}
}

// sendRate is how many transfers a second each careful sender sends at most: eight of
// them keep blocks of tens of transactions coming while nodes restart.
const sendRate = 40

// waitFor polls cond every 20 ms until it holds or ctx ends.
func waitFor(ctx context.Context, cond func() bool) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
