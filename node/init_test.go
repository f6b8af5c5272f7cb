package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/protocol"
)

func TestInitWritesHome(t *testing.T) {
	home := t.TempDir()
	if Initialized(home) {
		t.Fatal("an empty directory reports initialized")
	}
	res, err := Init(InitOptions{Home: home, ChainID: "test-chain", Moniker: "m1", DevBalance: 12345})
	if err != nil {
		t.Fatal(err)
	}
	if !Initialized(home) {
		t.Fatal("Initialized is false after Init")
	}
	for _, f := range []string{res.ConfigFile, res.AppConfigFile, res.GenesisFile, res.NodeKeyFile, res.ValidatorKeyFile} {
		if !strings.HasPrefix(f, home) {
			t.Errorf("%s is outside the home %s", f, home)
		}
		if _, err := os.Stat(f); err != nil {
			t.Errorf("Init reported %s but: %v", f, err)
		}
	}
	if res.ChainID != "test-chain" || res.DevBalance != 12345 || res.NodeID == "" {
		t.Fatalf("result = %+v", res)
	}
	dev, err := keyring.Open(home).Get(DevKeyName)
	if err != nil {
		t.Fatal(err)
	}
	if dev.Address() != res.DevAddress || res.KeyringDir != keyring.Open(home).Dir() {
		t.Fatalf("dev key address %s, result says %s", dev.Address(), res.DevAddress)
	}

	gen, err := LoadGenesis(home)
	if err != nil {
		t.Fatal(err)
	}
	if gen.ChainID != "test-chain" || gen.InitialHeight != 1 || len(gen.Validators) != 1 || gen.Validators[0].Power != ValidatorPower {
		t.Fatalf("genesis = %+v", gen)
	}
	if age := time.Since(gen.GenesisTime); age < 0 || age > time.Minute || gen.GenesisTime.Location() != time.UTC {
		t.Fatalf("genesis time %v is not now in UTC", gen.GenesisTime)
	}
	state, err := genesis.Decode(gen.AppState)
	if err != nil {
		t.Fatal(err)
	}
	if state.ProtocolVersion != protocol.Latest || len(state.Addresses) != 1 ||
		state.Addresses[0] != (genesis.Address{Address: res.DevAddress.String(), Balance: 12345}) {
		t.Fatalf("app state = %+v", state)
	}

	set, chainID, err := GenesisValidators(home)
	if err != nil {
		t.Fatal(err)
	}
	if chainID != "test-chain" || set.Size() != 1 || set.TotalVotingPower() != ValidatorPower ||
		!set.Validators[0].PubKey.Equals(gen.Validators[0].PubKey) {
		t.Fatalf("validator set %v, chain %s", set, chainID)
	}

	cfg, err := LoadConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RPC.ListenAddress != DefaultRPCListen || cfg.P2P.ListenAddress != DefaultP2PListen ||
		cfg.Instrumentation.PrometheusListenAddr != DefaultPrometheusListen || !cfg.Instrumentation.Prometheus ||
		cfg.Consensus.TimeoutCommit != time.Second || !cfg.Consensus.CreateEmptyBlocks ||
		cfg.TxIndex.Indexer != "kv" || cfg.Storage.DiscardABCIResponses || cfg.Moniker != "m1" ||
		cfg.Mempool.Size != DefaultMempoolSize || cfg.Mempool.CacheSize <= cfg.Mempool.Size {
		t.Fatalf("config read back differs from what Init writes: %+v", cfg)
	}
	appCfg, err := LoadAppConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(appCfg, DefaultAppConfig()) || appCfg.KeepRecent != drive.DefaultKeepRecent {
		t.Fatalf("app config = %+v", appCfg)
	}
}

func TestInitDefaults(t *testing.T) {
	res, err := Init(InitOptions{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.ChainID != DefaultChainID || res.DevBalance != DefaultDevBalance || DefaultDevBalance != 1e15 {
		t.Fatalf("defaults: chain %s, balance %d", res.ChainID, res.DevBalance)
	}
}

func TestInitRefusesInitializedHome(t *testing.T) {
	home := t.TempDir()
	first, err := Init(InitOptions{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	genBefore, err := os.ReadFile(first.GenesisFile)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Init(InitOptions{Home: home, ChainID: "other"})
	var already ErrAlreadyInitialized
	if !errors.As(err, &already) || already.Home != home {
		t.Fatalf("second Init: err = %v, want ErrAlreadyInitialized{%s}", err, home)
	}
	genAfter, err := os.ReadFile(first.GenesisFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(genAfter) != string(genBefore) {
		t.Fatal("a refused Init changed genesis.json")
	}

	// Overwrite: new genesis, old keys, chain data gone.
	marker := filepath.Join(home, "data", "application.db", "marker")
	if err := os.MkdirAll(filepath.Dir(marker), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	second, err := Init(InitOptions{Home: home, ChainID: "other", Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if second.ChainID != "other" || second.DevAddress != first.DevAddress || second.NodeID != first.NodeID {
		t.Fatalf("overwrite: first %+v, second %+v", first, second)
	}
	gen, err := LoadGenesis(home)
	if err != nil {
		t.Fatal(err)
	}
	if gen.ChainID != "other" {
		t.Fatalf("overwrite kept chain id %s", gen.ChainID)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("overwrite kept old chain data: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, "data", "priv_validator_state.json")); err != nil {
		t.Fatalf("overwrite left no validator state: %v", err)
	}
}

func TestInitRejectsLongChainID(t *testing.T) {
	home := t.TempDir()
	if _, err := Init(InitOptions{Home: home, ChainID: strings.Repeat("c", 51)}); err == nil {
		t.Fatal("a 51-byte chain id was accepted")
	}
	if Initialized(home) {
		t.Fatal("a refused Init left a configuration behind")
	}
}

func TestAppConfigRoundTripAndValidation(t *testing.T) {
	home := t.TempDir()
	if c, err := LoadAppConfig(home); err != nil || !reflect.DeepEqual(c, DefaultAppConfig()) {
		t.Fatalf("missing app.toml: %+v, %v; want defaults", c, err)
	}
	if err := os.MkdirAll(filepath.Join(home, "config"), 0o700); err != nil {
		t.Fatal(err)
	}
	want := AppConfig{KeepRecent: 7, IAVLCacheSize: 5000, LevelDBBlockCacheMiB: 16, GCPercent: 300, SignalVersion: uint32(protocol.V13),
		SnapshotInterval: 250, SnapshotKeepRecent: 3, LogFormat: LogFormatJSON, LogLevel: "debug"}
	if err := SaveAppConfig(home, want); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(AppConfigFile(home))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"keep_recent", "iavl_cache_size", "leveldb_block_cache_mib", "gc_percent", "signal_version", "snapshot_interval", "snapshot_keep_recent", "log_format", "log_level"} {
		if !strings.Contains(string(raw), "\n# ") || !strings.Contains(string(raw), key+" = ") {
			t.Errorf("app.toml lacks a documented %s", key)
		}
	}
	got, err := LoadAppConfig(home)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("LoadAppConfig = %+v, %v; want %+v", got, err, want)
	}
	for name, body := range map[string]string{
		"unknown key":                "keep_recnt = 3\n",
		"bad format":                 "log_format = \"xml\"\n",
		"bad level":                  "log_level = \"loud\"\n",
		"negative":                   "keep_recent = -1\n",
		"no cache":                   "iavl_cache_size = 0\n",
		"no blocks":                  "leveldb_block_cache_mib = 0\n",
		"no gc":                      "gc_percent = 0\n",
		"negative snapshot interval": "snapshot_interval = -5\n",
		"no snapshot kept":           "snapshot_keep_recent = 0\n",
		// A binary cannot signal a version it does not implement.
		"signal past newest": fmt.Sprintf("signal_version = %d\n", protocol.Newest()+1),
		"not toml":           "keep_recent = [\n",
		"wrong type":         "keep_recent = \"many\"\n",
	} {
		if err := os.WriteFile(AppConfigFile(home), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if c, err := LoadAppConfig(home); err == nil {
			t.Errorf("%s: loaded %+v without error", name, c)
		}
	}
	if err := SaveAppConfig(home, AppConfig{LogFormat: "xml", LogLevel: "info"}); err == nil {
		t.Fatal("SaveAppConfig wrote an invalid config")
	}
	// [web] laddr: host:port, or "" or "off" (the README's words) for no web view.
	for body, want := range map[string]string{
		"[web]\nladdr = \"off\"\n":            "",
		"[web]\nladdr = \"\"\n":               "",
		"[web]\nladdr = \"127.0.0.1:9999\"\n": "127.0.0.1:9999",
	} {
		if err := os.WriteFile(AppConfigFile(home), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadAppConfig(home)
		if err != nil || c.Web.Listen() != want {
			t.Errorf("%q: listen %q (%v), want %q", body, c.Web.Listen(), err, want)
		}
	}
	// [web] cors_allowed_origins: none by default, origins or "*"; anything else is
	// refused.
	if err := SaveAppConfig(home, DefaultAppConfig()); err != nil {
		t.Fatal(err)
	}
	if c, err := LoadAppConfig(home); err != nil || len(c.Web.CORSAllowedOrigins) != 0 {
		t.Errorf("the default config allows origins %v (%v)", c.Web.CORSAllowedOrigins, err)
	}
	allowed := DefaultAppConfig()
	allowed.Web.CORSAllowedOrigins = []string{"https://dapp.example", "http://127.0.0.1:8080"}
	if err := SaveAppConfig(home, allowed); err != nil {
		t.Fatal(err)
	}
	if c, err := LoadAppConfig(home); err != nil || strings.Join(c.Web.CORSAllowedOrigins, " ") != "https://dapp.example http://127.0.0.1:8080" {
		t.Errorf("origins saved and loaded: %v (%v)", c.Web.CORSAllowedOrigins, err)
	}
	for _, body := range []string{
		"[web]\nladdr = \"of\"\n",
		"[web]\ncors_allowed_origins = [\"dapp.example\"]\n",
		"[web]\ncors_allowed_origins = [\"https://dapp.example/\"]\n",
		"[web]\ncors_allowed_origins = [\"ftp://dapp.example\"]\n",
	} {
		if err := os.WriteFile(AppConfigFile(home), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if c, err := LoadAppConfig(home); err == nil {
			t.Errorf("%q: loaded %+v without error", body, c)
		}
	}
}

func TestCometLoggerFields(t *testing.T) {
	var buf strings.Builder
	log := CometLogger(NewLogger(&buf, true, zerolog.DebugLevel)).With("module", "consensus")
	log.Info("entered", "height", int64(7), "hash", []byte{0xab, 0xcd}, "err", errors.New("boom"), "odd")
	log.Debug("details", "round", 2)
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", l, err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2: %s", len(lines), buf.String())
	}
	first := lines[0]
	if first["level"] != "info" || first["message"] != "entered" || first["module"] != "consensus" ||
		first["height"] != float64(7) || first["hash"] != "abcd" || first["err"] != "boom" || first["odd"] != "(MISSING)" {
		t.Fatalf("first line = %v", first)
	}
	if lines[1]["level"] != "debug" || lines[1]["round"] != float64(2) {
		t.Fatalf("second line = %v", lines[1])
	}

	var quiet strings.Builder
	CometLogger(NewLogger(&quiet, true, zerolog.WarnLevel)).Info("dropped")
	if quiet.Len() != 0 {
		t.Fatalf("info logged at level warn: %s", quiet.String())
	}
}

func TestNewLoggerConsole(t *testing.T) {
	var buf strings.Builder
	l := NewLogger(&buf, false, zerolog.InfoLevel)
	l.Info().Str("k", "v").Msg("hello")
	out := buf.String()
	if !strings.Contains(out, "hello") || !strings.Contains(out, "k=") || strings.HasPrefix(out, "{") {
		t.Fatalf("console output = %q", out)
	}
}

func TestRPCURL(t *testing.T) {
	for in, want := range map[string]string{
		"tcp://127.0.0.1:26657": "http://127.0.0.1:26657",
		"tcp://0.0.0.0:1234":    "http://127.0.0.1:1234",
		"tcp://:99":             "http://127.0.0.1:99",
		"tcp://[::]:5":          "http://127.0.0.1:5",
		"tcp://10.0.0.2:7":      "http://10.0.0.2:7",
		"unix:///tmp/s.sock":    "unix:///tmp/s.sock",
	} {
		if got := rpcURL(in); got != want {
			t.Errorf("rpcURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestInitAndTestnetRefuseEpochLengths: an epoch length genesis would refuse (under a
// minute, over a year) is refused before anything is written; the default and the
// bounds are accepted, and the genesis carries the length and the validator's payout
// identity.
func TestInitAndTestnetRefuseEpochLengths(t *testing.T) {
	for _, s := range []uint64{1, 59, protocol.MaxEpochLengthS + 1} {
		home := filepath.Join(t.TempDir(), "home")
		if _, err := Init(InitOptions{Home: home, EpochLengthS: s}); !errors.As(err, new(ErrEpochLength)) {
			t.Errorf("init with %d s: %v, want ErrEpochLength", s, err)
		}
		if _, err := os.Stat(home); !os.IsNotExist(err) {
			t.Errorf("init with %d s wrote %s", s, home)
		}
		out := filepath.Join(t.TempDir(), "net")
		if _, err := Testnet(TestnetOptions{Output: out, Validators: 1, EpochLengthS: s}); !errors.As(err, new(ErrEpochLength)) {
			t.Errorf("testnet with %d s: %v, want ErrEpochLength", s, err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("testnet with %d s wrote %s", s, out)
		}
	}
	home := filepath.Join(t.TempDir(), "home")
	res, err := Init(InitOptions{Home: home, EpochLengthS: protocol.MinEpochLengthS})
	if err != nil {
		t.Fatal(err)
	}
	gen, err := cmttypes.GenesisDocFromFile(res.GenesisFile)
	if err != nil {
		t.Fatal(err)
	}
	st, err := genesis.Decode(gen.AppState)
	if err != nil {
		t.Fatal(err)
	}
	val := gen.Validators[0].Address
	if st.EpochTimeLengthS != protocol.MinEpochLengthS || len(st.Validators) != 1 ||
		st.Validators[0].PayoutIdentity != protocol.PayoutIdentityID(val).String() {
		t.Fatalf("genesis app state %+v for validator %s", st, val)
	}
}

// TestInitAndTestnetProtocolVersion: a chain starts on the version asked (one this
// binary implements) or the newest, and testnet writes every node's signal version.
func TestInitAndTestnetProtocolVersion(t *testing.T) {
	if _, err := Init(InitOptions{Home: filepath.Join(t.TempDir(), "home"), ProtocolVersion: protocol.Newest() + 1}); !errors.As(err, new(ErrProtocolVersion)) {
		t.Fatalf("init on %d: %v, want ErrProtocolVersion", protocol.Newest()+1, err)
	}
	if _, err := Testnet(TestnetOptions{Output: filepath.Join(t.TempDir(), "net"), Validators: 1, SignalVersion: uint32(protocol.Newest()) + 1}); !errors.As(err, new(ErrSignalVersion)) {
		t.Fatalf("testnet signalling %d: %v, want ErrSignalVersion", protocol.Newest()+1, err)
	}
	res, err := Testnet(TestnetOptions{Output: filepath.Join(t.TempDir(), "net"), Validators: 2, FullNodes: 1, ProtocolVersion: protocol.V13, SignalVersion: uint32(protocol.V13)})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range res.Nodes {
		gen, err := cmttypes.GenesisDocFromFile(filepath.Join(n.Home, "config", "genesis.json"))
		if err != nil {
			t.Fatal(err)
		}
		st, err := genesis.Decode(gen.AppState)
		if err != nil || st.ProtocolVersion != protocol.V13 {
			t.Fatalf("%s: genesis on %d, %v", n.Name, st.ProtocolVersion, err)
		}
		cfg, err := LoadAppConfig(n.Home)
		if err != nil || Signal(cfg.SignalVersion) != protocol.V13 {
			t.Fatalf("%s: signal_version %d, %v", n.Name, cfg.SignalVersion, err)
		}
	}
	home := filepath.Join(t.TempDir(), "home")
	made, err := Init(InitOptions{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	gen, err := cmttypes.GenesisDocFromFile(made.GenesisFile)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := genesis.Decode(gen.AppState); err != nil || st.ProtocolVersion != protocol.Newest() {
		t.Fatalf("init's default genesis on %d, %v", st.ProtocolVersion, err)
	}
}
