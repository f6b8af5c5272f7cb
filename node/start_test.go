package node

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cometbft/cometbft/config"
	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/e2e/ports"
	"github.com/ttld-dev/ttld/proofs"
)

// freeAddr picks a free loopback port.
func freeAddr(t *testing.T) string { return ports.Addr(t) }

type testNode struct {
	*Node
	rpc  *rpchttp.HTTP
	prom string
}

// startTest starts home's node on free loopback ports, with peer exchange off: it has
// no peers to exchange, and CometBFT saves the address book of peer exchange from a
// goroutine of its own after the node has stopped, which would race the removal of the
// test's home.
func startTest(t *testing.T, home string) testNode {
	t.Helper()
	cfg, err := readConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	cfg.P2P.PexReactor = false
	config.WriteConfigFile(ConfigFile(home), cfg)
	prom := freeAddr(t)
	n, err := Start(StartOptions{
		Home:             home,
		Logger:           NewLogger(io.Discard, true, zerolog.InfoLevel),
		RPCListen:        "tcp://" + freeAddr(t),
		P2PListen:        "tcp://" + freeAddr(t),
		PrometheusListen: prom,
		WebListen:        freeAddr(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Stop() })
	rpc, err := rpchttp.New(n.RPCAddress(), "/websocket")
	if err != nil {
		t.Fatal(err)
	}
	return testNode{n, rpc, prom}
}

// waitHeight waits until the latest block height reaches h, and returns it.
func (n testNode) waitHeight(t *testing.T, h int64) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	latest, err := client.New(n.rpc, client.Options{}).WaitForHeight(ctx, h)
	if err != nil {
		t.Fatalf("height %d not reached in 20s: %v", h, err)
	}
	return latest
}

func (n testNode) appHashes(t *testing.T, heights ...int64) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	for _, h := range heights {
		c, err := n.rpc.Commit(context.Background(), &h)
		if err != nil {
			t.Fatal(err)
		}
		b, err := n.rpc.Block(context.Background(), &h)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c.AppHash, b.Block.AppHash) {
			t.Fatalf("height %d: commit app hash %X, block app hash %X", h, c.AppHash, b.Block.AppHash)
		}
		out[h] = fmt.Sprintf("%X", c.AppHash)
	}
	return out
}

// devBalance reads the dev address' balance through abci_query at the latest version.
func (n testNode) devBalance(t *testing.T, res InitResult) uint64 {
	t.Helper()
	q, err := n.rpc.ABCIQuery(context.Background(), proofs.PathAddress, res.DevAddress[:])
	if err != nil {
		t.Fatal(err)
	}
	if q.Response.Code != 0 {
		t.Fatalf("query dev address: code %d, %s", q.Response.Code, q.Response.Log)
	}
	st, err := drive.DecodeAddressState(q.Response.Value)
	if err != nil {
		t.Fatal(err)
	}
	return st.Balance
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStartProducesBlocksAndMetrics(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	res, err := Init(InitOptions{Home: home, ChainID: "start-test", DevBalance: 777, Timeouts: TestTimeouts})
	if err != nil {
		t.Fatal(err)
	}
	n := startTest(t, home)
	if n.ChainID() != "start-test" || !strings.HasPrefix(n.RPCAddress(), "http://127.0.0.1:") {
		t.Fatalf("chain %s, rpc %s", n.ChainID(), n.RPCAddress())
	}
	n.waitHeight(t, 3)
	st, err := n.rpc.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.NodeInfo.Network != "start-test" || st.SyncInfo.EarliestBlockHeight != 1 {
		t.Fatalf("status: network %s, earliest %d", st.NodeInfo.Network, st.SyncInfo.EarliestBlockHeight)
	}
	if got := n.devBalance(t, res); got != 777 {
		t.Fatalf("dev balance = %d, want the genesis 777", got)
	}

	metrics := scrape(t, n.prom)
	for _, name := range []string{`ttld_app_height{chain_id="start-test"} `, `ttld_app_block_execution_seconds_count{chain_id="start-test"}`, `cometbft_consensus_height{chain_id="start-test"}`, "go_goroutines"} {
		if !strings.Contains(metrics, name) {
			t.Errorf("metrics endpoint lacks %s", name)
		}
	}
	var appHeight int64
	for _, line := range strings.Split(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, `ttld_app_height{chain_id="start-test"} `); ok {
			fmt.Sscan(v, &appHeight)
		}
	}
	if appHeight < 2 {
		t.Fatalf("ttld_app_height = %d after height 3", appHeight)
	}

	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := n.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if _, err := n.rpc.Status(context.Background()); err == nil {
		t.Fatal("RPC still answers after Stop")
	}
}

func TestRestartContinuesFromSavedHeight(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	res, err := Init(InitOptions{Home: home, Timeouts: TestTimeouts})
	if err != nil {
		t.Fatal(err)
	}
	first := startTest(t, home)
	last := first.waitHeight(t, 3)
	heights := []int64{1, 2, 3, last}
	before := first.appHashes(t, heights...)
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}

	second := startTest(t, home)
	info, err := second.rpc.ABCIInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Response.LastBlockHeight < last {
		t.Fatalf("after restart the app reports height %d, want >= %d (the handshake lost state)", info.Response.LastBlockHeight, last)
	}
	second.waitHeight(t, last+2)
	after := second.appHashes(t, heights...)
	for _, h := range heights {
		if after[h] != before[h] {
			t.Errorf("height %d: app hash %s before the restart, %s after", h, before[h], after[h])
		}
	}
	if got := second.devBalance(t, res); got != DefaultDevBalance {
		t.Fatalf("dev balance after restart = %d, want %d", got, DefaultDevBalance)
	}
}

func TestStartFailsOnBusyPortAndReleasesHome(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if _, err := Init(InitOptions{Home: home, Timeouts: TestTimeouts}); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, err = Start(StartOptions{
		Home: home, Logger: zerolog.Nop(),
		RPCListen: "tcp://" + busy.Addr().String(), P2PListen: "tcp://" + freeAddr(t), PrometheusListen: freeAddr(t), WebListen: WebOff,
	})
	if err == nil {
		t.Fatal("Start on a busy RPC port succeeded")
	}
	// The failed start released the databases: the home starts now.
	n := startTest(t, home)
	n.waitHeight(t, 1)
}

// TestMempoolConfig: CheckTx knows the mempool's room and recheck from config.toml, and
// judges deadlines a proposal's timeout and two commits' ahead: 5 s with ttld's
// defaults (docs/TX.md, "What accepted means").
func TestMempoolConfig(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig(t.TempDir(), "")
	got := mempoolConfig(cfg)
	if got.Limits.Size != DefaultMempoolSize || got.Limits.MaxTxsBytes != cfg.Mempool.MaxTxsBytes || got.NoRecheck || got.MarginMs != 5000 {
		t.Fatalf("mempool config %+v", got)
	}
	cfg.Mempool.Recheck = false
	if !mempoolConfig(cfg).NoRecheck {
		t.Fatal("recheck = false not passed on")
	}
}
