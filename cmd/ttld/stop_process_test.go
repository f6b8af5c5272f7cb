package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cometbft/cometbft/config"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// runAsTTLD, set to 1 in the environment, makes the test binary run as ttld itself
// (TestMain): the tests start nodes as processes of their own without building one.
const runAsTTLD = "TTLD_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsTTLD) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// processNode is a `ttld start` process of a home, started again and again on the
// same ports.
type processNode struct {
	home, rpc, p2p, prom string
	cmd                  *exec.Cmd
	stderr               *syncBuffer
	c                    *client.Client
}

func (p *processNode) start(t *testing.T) {
	t.Helper()
	p.stderr = &syncBuffer{}
	p.cmd = exec.Command(os.Args[0], "start", "--home", p.home, "--rpc-laddr", "tcp://"+p.rpc, "--p2p-laddr", "tcp://"+p.p2p,
		"--prometheus-laddr", p.prom, "--web-laddr", "off")
	p.cmd.Env = append(os.Environ(), runAsTTLD+"=1")
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial("http://"+p.rpc, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p.c = c
}

// stop sends SIGTERM and fails t unless the process exits with code 0.
func (p *processNode) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := p.cmd.Wait()
	if code := p.cmd.ProcessState.ExitCode(); err != nil || code != 0 {
		t.Fatalf("ttld start %s exited with code %d (%v) after SIGTERM:\n%s", p.home, code, err, tail(p.stderr.String(), 40))
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestSIGTERMUnderLoadExitsZero: two validators, as `ttld start` processes, commit
// every block together in tens of milliseconds under a load of transfers; ten times one
// of them (in turn) is stopped with SIGTERM while its peer is at its height, and its
// process exits with code 0 (a panic exits with 2), then starts again and catches up.
func TestSIGTERMUnderLoadExitsZero(t *testing.T) {
	t.Parallel()
	res, err := node.Testnet(node.TestnetOptions{Output: t.TempDir(), Validators: 2, Local: true})
	if err != nil {
		t.Fatal(err)
	}
	nodes := make([]*processNode, len(res.Nodes))
	for i, tn := range res.Nodes {
		nodes[i] = &processNode{home: tn.Home, rpc: freeAddr(t), p2p: freeAddr(t), prom: freeAddr(t)}
	}
	for i, tn := range res.Nodes {
		cfg, err := node.LoadConfig(tn.Home)
		if err != nil {
			t.Fatal(err)
		}
		other := res.Nodes[1-i]
		cfg.P2P.PersistentPeers = other.NodeID + "@" + nodes[1-i].p2p
		cfg.P2P.PexReactor = false
		cfg.P2P.AllowDuplicateIP = true
		cfg.StateSync.RPCServers = nil
		cfg.Consensus.TimeoutPropose = 500 * time.Millisecond
		cfg.Consensus.TimeoutCommit = 50 * time.Millisecond
		cfg.Consensus.PeerGossipSleepDuration = 10 * time.Millisecond
		config.WriteConfigFile(node.ConfigFile(cfg.RootDir), cfg)
	}
	for _, p := range nodes {
		p.start(t)
	}
	defer func() {
		for _, p := range nodes {
			if p.cmd.ProcessState == nil {
				_ = p.cmd.Process.Kill()
				_ = p.cmd.Wait()
			}
		}
	}()
	dev, err := keyring.Open(res.ClientHome).Get(node.DevKeyName)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := nodes[0].c.WaitForHeight(ctx, 3); err != nil {
		t.Fatal(err)
	}

	// The load: transfers to both nodes in turn, 200 a second at most, 20,000 in all.
	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	var sent int
	go func() {
		defer wg.Done()
		sink := protocol.AddressOf(make([]byte, 32))
		var cs [2]*client.Client
		for i, p := range nodes {
			c, err := client.Dial("http://"+p.rpc, client.Options{})
			if err != nil {
				return
			}
			cs[i] = c
		}
		pace := time.NewTicker(time.Second / 200)
		defer pace.Stop()
		for ; loadCtx.Err() == nil && sent < 20_000; sent++ {
			select {
			case <-loadCtx.Done():
				return
			case <-pace.C:
			}
			c := cs[sent%2]
			tx, err := c.Sign(loadCtx, &protocol.AddressFundsTransfer{PubKey: dev.Pub, Recipient: sink, Amount: 1}, dev.Priv)
			if err == nil {
				_, _ = c.Broadcast(loadCtx, tx, false)
			}
		}
	}()
	defer func() { stopLoad(); wg.Wait() }()

	for round := range 10 {
		p, peer := nodes[round%2], nodes[1-round%2]
		h, err := peer.c.LatestHeight(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.c.WaitForHeight(ctx, h); err != nil {
			t.Fatal(err)
		}
		p.stop(t)
		p.start(t)
		if _, err := p.c.WaitForHeight(ctx, h+3); err != nil {
			t.Fatalf("round %d: the restarted node made no blocks: %v\n%s", round, err, tail(p.stderr.String(), 40))
		}
	}
	stopLoad()
	wg.Wait()
	for _, p := range nodes {
		p.stop(t)
	}
	t.Logf("10 stops under a load of %d transfers, every one exited 0", sent)
}
