package load

import (
	"context"
	"testing"
	"time"

	"github.com/cometbft/cometbft/config"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/e2e/ports"
	"github.com/ttld-dev/ttld/node"
)

// startLoadNode starts, in process on loopback ports, a chain whose genesis funds n
// signers of seed, configured with s; it stops when the test ends.
func startLoadNode(t *testing.T, seed []byte, n int, s Settings) *node.Node {
	t.Helper()
	home := initHome(t)
	if err := AddSigners(home, seed, n, DefaultSignerBalance); err != nil {
		t.Fatal(err)
	}
	if err := Configure(home, s); err != nil {
		t.Fatal(err)
	}
	// NB: with peer exchange on, CometBFT saves config/addrbook.json from a goroutine
	// of its own after the node has stopped, racing the removal of the test's home.
	cfg, err := node.LoadConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	cfg.P2P.PexReactor = false
	config.WriteConfigFile(node.ConfigFile(cfg.RootDir), cfg)
	addrs := ports.Addrs(t, 3)
	nd, err := node.Start(node.StartOptions{Home: home, Logger: zerolog.Nop(), RPCListen: "tcp://" + addrs[0], P2PListen: "tcp://" + addrs[1], PrometheusListen: addrs[2], WebListen: node.WebOff})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := nd.Stop(); err != nil {
			t.Errorf("stop node: %v", err)
		}
	})
	return nd
}

// TestRunAgainstANode: over each client, a short load of transfers, then one of
// document creates with a ttl on the same chain (its contract registered by the run,
// its nonces read from the node after the first run), each accepted and committed in
// full, with latencies and throughput from the node's blocks.
func TestRunAgainstANode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a node and loads it for a few seconds")
	}
	seed := []byte("run-test")
	nd := startLoadNode(t, seed, 20, DefaultSettings())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tr := range Transports {
		for _, w := range []Workload{Transfers, DocumentsTTL} {
			r, err := Run(ctx, RunConfig{Node: nd.RPCAddress(), Transport: tr, Workload: w, Seed: seed, Signers: 20, Connections: 2, Rate: 30, Time: 2, Broadcast: "sync", Drain: 10 * time.Second})
			if err != nil {
				t.Fatalf("%s %s: %v", tr, w, err)
			}
			if r.Sent < 30 || r.Committed != r.Sent || r.Refused != 0 || r.NotCommitted != 0 || r.Left != 0 {
				t.Fatalf("%s %s: sent %d, committed %d, refused %d, not committed %d, left %d", tr, w, r.Sent, r.Committed, r.Refused, r.NotCommitted, r.Left)
			}
			if r.Sending != (Sending{Accepted: r.Sent}) || r.Transport != tr || r.TxIndex != "on" || r.Signers != 20 {
				t.Fatalf("%s %s: answers %+v of %d sent, client %s, tx_index %q, signers %d", tr, w, r.Sending, r.Sent, r.Transport, r.TxIndex, r.Signers)
			}
			if r.TxPerS <= 0 || r.Latency.Min <= 0 || r.Latency.P50 < r.Latency.Min || r.Latency.P99 < r.Latency.P50 || r.Latency.Max < r.Latency.P99 || r.Latency.Max > 10*time.Second {
				t.Fatalf("%s %s: %.1f tx/s, latency %+v", tr, w, r.TxPerS, r.Latency)
			}
			if (w == DocumentsTTL) != (r.Contract != nil) || len(ThroughputRows(r)) != int(r.Last-r.First+1) {
				t.Fatalf("%s %s: contract %v, %d throughput rows for blocks %d to %d", tr, w, r.Contract, len(ThroughputRows(r)), r.First, r.Last)
			}
		}
	}
}

// TestRunRetriesWhatAFullMempoolRefused: a node whose mempool holds 25 transactions,
// offered far more a second over each client: the node refuses some with "mempool is
// full" (CometBFT's error, or the node's code when what CheckTx accepted fills it), the
// run sends them again until they are taken and counts the retries; every transaction
// is accepted and committed: none is dropped after CheckTx accepted it. With no time
// for retries past the sending, what the full mempool refused then is counted as given
// up, not as accepted, and never committed.
func TestRunRetriesWhatAFullMempoolRefused(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a node and loads it for a few seconds")
	}
	seed := []byte("retry-test")
	s := DefaultSettings()
	s.MempoolSize, s.TimeoutCommit = 25, 200*time.Millisecond
	nd := startLoadNode(t, seed, 40, s)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tr := range Transports {
		r, err := Run(ctx, RunConfig{Node: nd.RPCAddress(), Transport: tr, Workload: Transfers, Seed: seed, Signers: 40, Connections: 4, Rate: 100, Time: 1, Broadcast: "sync", Drain: 30 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", tr, err)
		}
		if r.Retries == 0 || r.Sending.Accepted != r.Sent || r.GaveUp != 0 || r.Failed != 0 || r.RefusedAtCheck != 0 {
			t.Fatalf("%s: %d sent, answers %+v: want retries, and every transaction accepted", tr, r.Sent, r.Sending)
		}
		if r.Committed != r.Sent || r.NotCommitted != 0 || r.Refused != 0 {
			t.Fatalf("%s: sent %d, committed %d, not committed %d, refused %d", tr, r.Sent, r.Committed, r.NotCommitted, r.Refused)
		}
		t.Logf("%s: %d sent, %d retries, %d committed", tr, r.Sent, r.Retries, r.Committed)
	}

	r, err := Run(ctx, RunConfig{Node: nd.RPCAddress(), Transport: HTTP, Workload: Transfers, Seed: seed, Signers: 40, Connections: 4, Rate: 100, Time: 1, Broadcast: "sync", Drain: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.GaveUp == 0 || r.Sending.total() != r.Sent || r.NotCommitted < r.GaveUp {
		t.Fatalf("without time to retry: %d sent, answers %+v, %d not committed", r.Sent, r.Sending, r.NotCommitted)
	}
}
