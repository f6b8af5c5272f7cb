package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/cometbft/cometbft/config"
	cmtlog "github.com/cometbft/cometbft/libs/log"
	"github.com/cometbft/cometbft/light"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/abci"
	"github.com/ttld-dev/ttld/drive"
)

// twoChains starts two nodes of chains with the same chain id and different
// validators (the same network as far as a chain id tells), and returns the first's
// header hash at height trust, which both have passed, with a joining home whose
// [statesync] trusts it.
func twoChains(t *testing.T, trust int64) (honest, other testNode, hash []byte, joiner string) {
	t.Helper()
	const chainID = "statesync-check"
	var nodes [2]testNode
	for i := range nodes {
		home := t.TempDir()
		if _, err := Init(InitOptions{Home: home, ChainID: chainID, Timeouts: TestTimeouts}); err != nil {
			t.Fatal(err)
		}
		nodes[i] = startTest(t, home)
	}
	for _, n := range nodes {
		n.waitHeight(t, trust+3)
	}
	h := trust
	hdr, err := nodes[0].rpc.Header(context.Background(), &h)
	if err != nil {
		t.Fatal(err)
	}
	joiner = t.TempDir()
	if _, err := Init(InitOptions{Home: joiner, ChainID: chainID, Timeouts: TestTimeouts}); err != nil {
		t.Fatal(err)
	}
	return nodes[0], nodes[1], hdr.Header.Hash(), joiner
}

// joinerConfig sets joiner's [statesync] to trust hash at height, with servers.
func joinerConfig(t *testing.T, joiner string, height int64, hash []byte, servers ...string) *config.Config {
	t.Helper()
	cfg, err := SetStateSync(joiner, StateSyncTrust{Height: height, Hash: hash, RPCServers: servers})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// faults are the servers of err's ErrStateSyncServers, with their faults.
func faults(err error) map[string]ServerFault {
	out := map[string]ServerFault{}
	var joined interface{ Unwrap() []error }
	errs := []error{err}
	if errors.As(err, &joined) {
		errs = joined.Unwrap()
	}
	for _, e := range errs {
		var f ErrStateSyncServer
		if errors.As(e, &f) {
			out[f.Server] = f.Fault
		}
	}
	return out
}

// Before CometBFT starts, each server of [statesync] rpc_servers must answer the
// trusted header: a server of another chain with the same chain id, and one that does
// not answer, are named; a node that already has state is not checked.
func TestStateSyncServersChecked(t *testing.T) {
	t.Parallel()
	const trust = 2
	honest, other, hash, joiner := twoChains(t, trust)
	silent := "http://" + freeAddr(t)

	cfg := joinerConfig(t, joiner, trust, hash, honest.RPCAddress(), other.RPCAddress(), silent)
	err := checkStateSyncServers(context.Background(), cfg, other.ChainID())
	got := faults(err)
	if len(got) != 2 || got[other.RPCAddress()] != ServerOtherChain || got[silent] != ServerSilent {
		t.Fatalf("faults %v (%v)", got, err)
	}
	t.Log(err)
	var f ErrStateSyncServer
	if !errors.As(err, &f) || f.Server != other.RPCAddress() || f.Height != trust || !bytes.Equal(f.Want, hash) || bytes.Equal(f.Got, hash) || f.Config != ConfigFile(cfg.RootDir) {
		t.Fatalf("the other chain's server: %+v", f)
	}

	// prepareStateSync refuses to start the node on them.
	store, err := drive.NewStore(dbm.NewMemDB(), drive.Options{CacheSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	app, err := abci.New(store, zerolog.Nop(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prepareStateSync(cfg, other.ChainID(), store, app, cmtlog.NewNopLogger()); len(faults(err)) != 2 {
		t.Fatalf("prepareStateSync: %v", err)
	}
	cfg = joinerConfig(t, joiner, trust, hash, honest.RPCAddress(), honest.RPCAddress())
	if err := checkStateSyncServers(context.Background(), cfg, honest.ChainID()); err != nil {
		t.Fatalf("the honest server twice: %v", err)
	}
	l, err := prepareStateSync(cfg, honest.ChainID(), store, app, cmtlog.NewNopLogger())
	if _, ok := l.(watchingLogger); err != nil || !ok {
		t.Fatalf("prepareStateSync: %T %v", l, err)
	}
}

// lyingServer serves RPC as honest does, except the headers (commit) and validator sets
// above height trust, and the latest, which it takes from other: a server honest at the
// trust height whose later headers a light client cannot verify.
func lyingServer(t *testing.T, honest, other string, trust int64) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req struct {
			Method string `json:"method"`
			Params struct {
				Height *string `json:"height"`
			} `json:"params"`
		}
		to := honest
		if json.Unmarshal(body, &req) == nil && (req.Method == "commit" || req.Method == "validators") {
			if req.Params.Height == nil {
				to = other
			} else if h, err := strconv.ParseInt(*req.Params.Height, 10, 64); err == nil && h > trust {
				to = other
			}
		}
		res, err := http.Post(to, "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(res.StatusCode)
		io.Copy(w, res.Body)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// A state sync that fails when its light client has no witness left ("no witnesses
// connected", as CometBFT logs it) halts the node with an error that names the server
// whose headers do not verify from the trusted one; the honest server is not named.
func TestStateSyncFailureNamesServer(t *testing.T) {
	t.Parallel()
	const trust = 2
	honest, other, hash, joiner := twoChains(t, trust)
	liar := lyingServer(t, honest.RPCAddress(), other.RPCAddress(), trust)
	cfg := joinerConfig(t, joiner, trust, hash, honest.RPCAddress(), liar)
	if err := checkStateSyncServers(context.Background(), cfg, honest.ChainID()); err != nil {
		t.Fatalf("at the trust height the liar is honest: %v", err)
	}

	store, err := drive.NewStore(dbm.NewMemDB(), drive.Options{CacheSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	app, err := abci.New(store, zerolog.Nop(), nil)
	if err != nil {
		t.Fatal(err)
	}
	app.ServeSnapshots(nil, 0, 0)
	log := watchStateSync(cmtlog.NewNopLogger(), newStateSyncWatch(cfg, honest.ChainID(), app)).With("module", "statesync")
	log.Error(syncerFailed, "err", fmt.Errorf("snapshot restoration failed: %w", light.ErrNoWitnesses))
	<-app.Halted()
	var failed ErrStateSyncFailed
	if !errors.As(app.HaltErr(), &failed) || !errors.Is(failed, light.ErrNoWitnesses) || len(failed.Servers) != 1 ||
		failed.Servers[0].Server != liar || failed.Servers[0].Fault != ServerUnverified {
		t.Fatalf("halted with %v", app.HaltErr())
	}
	t.Log(app.HaltErr())
}
