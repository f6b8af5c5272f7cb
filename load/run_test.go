package load

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sirupsen/logrus"

	"github.com/ttld-dev/ttld/node"
)

// startLoadNode starts, in process on loopback ports, a chain whose genesis funds n
// signers of seed, configured with DefaultSettings; it stops when the test ends.
func startLoadNode(t *testing.T, seed []byte, n int) *node.Node {
	t.Helper()
	home := initHome(t)
	if err := AddSigners(home, seed, n, DefaultSignerBalance); err != nil {
		t.Fatal(err)
	}
	if err := Configure(home, DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	addrs := freeAddrs(t, 3)
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

// freeAddrs returns n loopback addresses whose ports were free a moment ago: all are
// held open together, so they differ, then released for the node to bind.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

// TestRunAgainstANode: a short load of transfers, then one of document creates with a
// ttl on the same chain (its contract registered by the run, its nonces read from the
// node after the first run), each committed in full, with latencies and throughput
// from the node's blocks.
func TestRunAgainstANode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node and loads it for a few seconds")
	}
	logrus.SetLevel(logrus.WarnLevel) // tm-load-test's progress, a line a second
	seed := []byte("run-test")
	nd := startLoadNode(t, seed, 20)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, w := range []Workload{Transfers, DocumentsTTL} {
		r, err := Run(ctx, RunConfig{Node: nd.RPCAddress(), Workload: w, Seed: seed, Signers: 20, Connections: 2, Rate: 30, Time: 2, Broadcast: "sync", Drain: 10 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		if r.Sent < 30 || r.Committed != r.Sent || r.Refused != 0 || r.NotCommitted != 0 || r.Left != 0 {
			t.Fatalf("%s: sent %d, committed %d, refused %d, not committed %d, left %d", w, r.Sent, r.Committed, r.Refused, r.NotCommitted, r.Left)
		}
		if r.TxPerS <= 0 || r.Latency.Min <= 0 || r.Latency.P50 < r.Latency.Min || r.Latency.P99 < r.Latency.P50 || r.Latency.Max < r.Latency.P99 || r.Latency.Max > 10*time.Second {
			t.Fatalf("%s: %.1f tx/s, latency %+v", w, r.TxPerS, r.Latency)
		}
		if (w == DocumentsTTL) != (r.Contract != nil) || len(ThroughputRows(r)) != int(r.Last-r.First+1) {
			t.Fatalf("%s: contract %v, %d throughput rows for blocks %d to %d", w, r.Contract, len(ThroughputRows(r)), r.First, r.Last)
		}
	}
}
