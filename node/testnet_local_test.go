package node

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	"github.com/rs/zerolog"
)

// A local testnet's homes are for processes on one machine: every listener on
// 127.0.0.1 at a port no other node of the network has, and each node dials the
// validators at their own P2P ports there; a full node's state sync reads the
// validators' RPC there.
func TestTestnetLocal(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "net")
	res, err := Testnet(TestnetOptions{Output: out, Validators: 3, FullNodes: 1, HostPortPrefix: 27, Local: true, StateSync: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name                 string
		p2p, rpc, prom, webv int
	}{
		{"node0", 27656, 27657, 27660, 27680},
		{"node1", 27756, 27757, 27760, 27780},
		{"node2", 27856, 27857, 27860, 27880},
		{"full0", 27556, 27557, 27560, 27580},
	}
	if len(res.Nodes) != len(want) {
		t.Fatalf("%d nodes", len(res.Nodes))
	}
	seen := map[string]string{}
	listen := func(node, addr string) {
		host, port, err := net.SplitHostPort(strings.TrimPrefix(addr, "tcp://"))
		if err != nil || host != "127.0.0.1" {
			t.Errorf("%s listens at %q, not on 127.0.0.1 (%v)", node, addr, err)
		}
		if other, ok := seen[port]; ok {
			t.Errorf("%s and %s both listen at port %s", node, other, port)
		}
		seen[port] = node
	}
	validators := res.Nodes[:3]
	for i, n := range res.Nodes {
		w := want[i]
		if n.Name != w.name || n.IP != "127.0.0.1" || n.P2PPort != w.p2p || n.RPCPort != w.rpc ||
			n.HostRPCPort != w.rpc || n.HostPrometheusPort != w.prom || n.HostWebPort != w.webv {
			t.Errorf("node %d = %+v, want %+v", i, n, w)
		}
		cfg, err := readConfig(n.Home)
		if err != nil {
			t.Fatal(err)
		}
		app, err := LoadAppConfig(n.Home)
		if err != nil {
			t.Fatal(err)
		}
		addrs := []string{cfg.P2P.ListenAddress, cfg.RPC.ListenAddress, cfg.Instrumentation.PrometheusListenAddr, app.Web.Laddr}
		wantAddrs := []string{"tcp://127.0.0.1:" + strconv.Itoa(w.p2p), "tcp://127.0.0.1:" + strconv.Itoa(w.rpc), "127.0.0.1:" + strconv.Itoa(w.prom), "127.0.0.1:" + strconv.Itoa(w.webv)}
		if !slices.Equal(addrs, wantAddrs) {
			t.Errorf("%s listens at %v, want %v", n.Name, addrs, wantAddrs)
		}
		for _, a := range addrs {
			listen(n.Name, a)
		}
		if cfg.P2P.ExternalAddress != fmt.Sprintf("127.0.0.1:%d", w.p2p) || cfg.P2P.AddrBookStrict || !cfg.P2P.AllowDuplicateIP {
			t.Errorf("%s p2p: external %s, strict %t, duplicate IPs %t", n.Name, cfg.P2P.ExternalAddress, cfg.P2P.AddrBookStrict, cfg.P2P.AllowDuplicateIP)
		}
		var peers []string
		for j, v := range validators {
			if j != i {
				peers = append(peers, fmt.Sprintf("%s@127.0.0.1:%d", v.NodeID, want[j].p2p))
			}
		}
		got := strings.Split(cfg.P2P.PersistentPeers, ",")
		sort.Strings(got)
		sort.Strings(peers)
		if !slices.Equal(got, peers) {
			t.Errorf("%s persistent_peers = %s, want %s", n.Name, cfg.P2P.PersistentPeers, peers)
		}
		if !n.Validator {
			servers := []string{"http://127.0.0.1:27657", "http://127.0.0.1:27757", "http://127.0.0.1:27857"}
			if !cfg.StateSync.Enable || !slices.Equal(cfg.StateSync.RPCServers, servers) {
				t.Errorf("%s state sync %t from %v, want %v", n.Name, cfg.StateSync.Enable, cfg.StateSync.RPCServers, servers)
			}
		}
	}
	if _, err := Testnet(TestnetOptions{Output: t.TempDir(), Validators: 2, Local: true, SubnetBase: "10.0.0.2"}); err == nil {
		t.Error("a local testnet with a subnet base")
	}
}

// freeHostPortPrefix is a host port prefix P whose ports of a local network of n
// validators are free on 127.0.0.1, below the ephemeral range so that no connection
// the tests open takes one meanwhile.
func freeHostPortPrefix(t *testing.T, n int) int {
	t.Helper()
	for p := 28; p <= 31; p++ {
		free := true
		for i := range n {
			for _, off := range []int{TestnetLocalP2PPort, TestnetHostRPCPort, TestnetHostPrometheusPort, TestnetHostWebPort} {
				l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p*1000+TestnetHostPortStep*i+off))
				if err != nil {
					free = false
					continue
				}
				l.Close()
			}
		}
		if free {
			return p
		}
	}
	t.Skip("no free host port prefix from 28 to 31 on 127.0.0.1")
	return 0
}

// The homes of a local testnet start side by side as written, on one machine: two
// validators, each with half the power, make blocks together.
func TestTestnetLocalStarts(t *testing.T) {
	t.Parallel()
	res, err := Testnet(TestnetOptions{Output: t.TempDir(), Validators: 2, HostPortPrefix: freeHostPortPrefix(t, 2), Local: true})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []testNode
	for _, h := range res.Nodes {
		n, err := Start(StartOptions{Home: h.Home, Logger: NewLogger(io.Discard, true, zerolog.InfoLevel)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Stop() })
		if want := fmt.Sprintf("http://127.0.0.1:%d", h.RPCPort); n.RPCAddress() != want {
			t.Fatalf("%s serves RPC at %s, want %s", h.Name, n.RPCAddress(), want)
		}
		rpc, err := rpchttp.New(n.RPCAddress(), "/websocket")
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, testNode{Node: n, rpc: rpc})
	}
	for _, n := range nodes {
		n.waitHeight(t, 3)
	}
	a, b := nodes[0].appHashes(t, 2), nodes[1].appHashes(t, 2)
	if a[2] != b[2] {
		t.Fatalf("app hash at 2: %s and %s", a[2], b[2])
	}
	if st, err := nodes[0].rpc.Status(context.Background()); err != nil || st.ValidatorInfo.VotingPower != ValidatorPower {
		t.Fatalf("node0 status %+v, %v", st, err)
	}
}
