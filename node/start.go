package node

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cometbft/cometbft/config"
	cmtlog "github.com/cometbft/cometbft/libs/log"
	cmtnode "github.com/cometbft/cometbft/node"
	"github.com/cometbft/cometbft/p2p"
	"github.com/cometbft/cometbft/privval"
	cmtlocal "github.com/cometbft/cometbft/rpc/client/local"
	cmttypes "github.com/cometbft/cometbft/types"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"

	"github.com/ttld-dev/ttld/abci"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/snapshot"
	"github.com/ttld-dev/ttld/web"
)

// ApplicationDBName is the name of the state tree's goleveldb database in data/.
const ApplicationDBName = "application"

// The state database's goleveldb write buffer (memtable, of which a second is kept while
// the first is written out), table size and level-1 size, in MiB; goleveldb's defaults
// are 4, 2 and 10. A restore (docs/STATE.md, "Snapshots") writes the tree's nodes in
// an order unrelated to their keys (IAVL keys a node by the version that wrote it and a
// counter), so every table it flushes overlaps all of level 1, and with the defaults
// goleveldb held the import's writes back, compacting, for 84 s of a 106 s restore of a
// million documents; with these, 0.07 s of 18 s.
const (
	ApplicationDBWriteBufferMiB = 64
	ApplicationDBTableMiB       = 16
	ApplicationDBLevel1MiB      = 256
)

// SnapshotDir is where a node keeps its snapshots: data/snapshots.
func SnapshotDir(cfg *config.Config) string { return filepath.Join(cfg.DBDir(), snapshot.DirName) }

// StartOptions configure Start.
type StartOptions struct {
	Home   string
	Logger zerolog.Logger
	// Overrides of config.toml, in its forms ("tcp://127.0.0.1:26657" for RPC and
	// P2P, "127.0.0.1:26660" for Prometheus); "" keeps the config's value.
	RPCListen, P2PListen, PrometheusListen string
	// WebListen overrides app.toml's [web] laddr (host:port); "" keeps it, WebOff
	// turns the web view off.
	WebListen string
	// CheckInvariants halts the node on a block after which the running total of
	// credits differs from the supply (--check-invariants).
	CheckInvariants bool
	// SignalVersion overrides app.toml's signal_version when not nil (ttld start
	// --signal-version).
	SignalVersion *uint32
	// AppConfig is home's app.toml as the caller read it (LoadAppConfig), so that the
	// caller and the node run on the same settings; nil: Start reads it.
	AppConfig *AppConfig
}

// WebOff as StartOptions.WebListen starts no web view.
const WebOff = "off"

// Node is a running chain: CometBFT in process around the ttld application.
type Node struct {
	cfg     *config.Config
	comet   *cmtnode.Node
	app     *abci.Application // nil until CometBFT's node is made
	web     *web.Listener
	store   *drive.Store
	db      dbm.DB
	cometDB *cometDBs
	chainID string

	// stopping is set once Stop begins, so that the listeners' closing is not
	// logged as an error (nodeCometLogger).
	stopping atomic.Bool
	// halted is set once the application halts the node (Halted).
	halted   atomic.Bool
	stopOnce sync.Once
	stopErr  error
}

// LoadConfig reads home's config.toml over CometBFT's defaults, as CometBFT's own
// command does, and validates it.
func LoadConfig(home string) (*config.Config, error) {
	cfg, err := readConfig(home)
	if err != nil {
		return nil, err
	}
	if s := cfg.StateSync; s.Enable && (s.TrustHeight <= 0 || s.TrustHash == "") {
		return nil, ErrStateSyncTrust{Home: cfg.RootDir}
	}
	if err := cfg.ValidateBasic(); err != nil {
		return nil, fmt.Errorf("%s: %w", ConfigFile(cfg.RootDir), err)
	}
	return cfg, nil
}

// readConfig reads home's config.toml over CometBFT's defaults, without validating it.
func readConfig(home string) (*config.Config, error) {
	home, err := filepath.Abs(home)
	if err != nil {
		return nil, err
	}
	if !Initialized(home) {
		return nil, ErrNotInitialized{home}
	}
	v := viper.New()
	v.SetConfigFile(ConfigFile(home))
	if err := v.ReadInConfig(); err != nil {
		return nil, fmt.Errorf("read %s: %w", ConfigFile(home), err)
	}
	cfg := config.DefaultConfig()
	if err := v.Unmarshal(cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", ConfigFile(home), err)
	}
	cfg.SetRoot(home)
	return cfg, nil
}

// openApplication opens the home's application database and the state tree in it.
func openApplication(cfg *config.Config, appCfg AppConfig, gen *cmttypes.GenesisDoc) (*drive.Store, dbm.DB, error) {
	db, err := dbm.NewGoLevelDBWithOpts(ApplicationDBName, cfg.DBDir(), &opt.Options{
		Filter:              filter.NewBloomFilter(10), // what cosmos-db's NewGoLevelDB sets
		BlockCacheCapacity:  appCfg.LevelDBBlockCacheMiB * opt.MiB,
		WriteBuffer:         ApplicationDBWriteBufferMiB * opt.MiB,
		CompactionTableSize: ApplicationDBTableMiB * opt.MiB,
		CompactionTotalSize: ApplicationDBLevel1MiB * opt.MiB,
	})
	if err != nil {
		return nil, nil, CorruptOnOpen(filepath.Join(cfg.DBDir(), ApplicationDBName+".db"), fmt.Errorf("open application db: %w", err))
	}
	store, err := drive.NewStore(db, drive.Options{
		InitialVersion: uint64(max(gen.InitialHeight, 1)),
		KeepRecent:     appCfg.KeepRecent,
		CacheSize:      appCfg.IAVLCacheSize,
	})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return store, db, nil
}

// promMu serialises the swap of Prometheus' default registry in Start.
var promMu sync.Mutex

// Start opens home's databases and starts CometBFT with the application; it returns
// once CometBFT is started. The caller must Stop the node.
func Start(opts StartOptions) (*Node, error) {
	cfg, err := LoadConfig(opts.Home)
	if err != nil {
		return nil, err
	}
	if opts.RPCListen != "" {
		cfg.RPC.ListenAddress = opts.RPCListen
	}
	if opts.P2PListen != "" {
		cfg.P2P.ListenAddress = opts.P2PListen
	}
	if opts.PrometheusListen != "" {
		cfg.Instrumentation.PrometheusListenAddr = opts.PrometheusListen
	}
	appCfg, err := startAppConfig(cfg.RootDir, opts.AppConfig)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(os.TempDir()); err != nil && cfg.StateSync.Enable {
		// NB: CometBFT v0.38's state sync reactor never reads [statesync] temp_dir: the
		// chunks it fetches wait in os.TempDir(), which the devnet's image (FROM
		// scratch) has not. A node about to state-sync without one keeps them in data/.
		if err := os.Setenv("TMPDIR", cfg.DBDir()); err != nil {
			return nil, err
		}
	}
	if opts.SignalVersion != nil {
		if err := CheckSignalVersion(*opts.SignalVersion); err != nil {
			return nil, err
		}
		appCfg.SignalVersion = *opts.SignalVersion
	}
	gen, err := LoadGenesis(cfg.RootDir)
	if err != nil {
		return nil, err
	}
	warnIgnoredLogSettings(cfg, opts.Logger)
	nodeKey, err := p2p.LoadNodeKey(cfg.NodeKeyFile())
	if err != nil {
		return nil, fmt.Errorf("node key: %w", err)
	}
	pv, err := loadOrGenPrivValidator(cfg)
	if err != nil {
		return nil, err
	}

	store, db, err := openApplication(cfg, appCfg, gen)
	if err != nil {
		return nil, err
	}
	if err := checkStores(cfg.DBDir(), cfg.GenesisFile(), gen, store, cfg.StateSync.Enable); err != nil {
		return nil, errors.Join(err, store.Close(), db.Close())
	}
	n := &Node{cfg: cfg, store: store, db: db, cometDB: &cometDBs{}, chainID: gen.ChainID}
	// NB: CometBFT panics inside NewNode on records it cannot decode (the last
	// commit, blocks the handshake replays): recovered here into one error.
	panicked := RecoverCorrupt(cfg.DBDir(), 0, func() {
		n.comet, n.app, err = newComet(cfg, gen.ChainID, opts.Logger, nodeCometLogger(opts.Logger, &n.stopping, &n.halted), store, pv, nodeKey, n.cometDB, opts.CheckInvariants, appCfg, &n.halted)
	})
	var corrupt ErrCorruptStore
	if errors.As(panicked, &corrupt) {
		err = ErrCometRefused{Dir: cfg.DBDir(), Err: corrupt.Err}
	}
	if err != nil && n.app != nil && n.app.HaltErr() != nil {
		// NB: CometBFT's handshake replayed a block that moves the chain past this
		// binary; its error wraps the application's in text alone.
		err = n.app.HaltErr()
	}
	if err != nil {
		return nil, errors.Join(err, n.closeStorage())
	}
	laddr := appCfg.Web.Listen()
	switch opts.WebListen {
	case "":
	case WebOff:
		laddr = ""
	default:
		laddr = opts.WebListen
	}
	if laddr != "" {
		if err := n.startWeb(laddr, appCfg.Web.CORSAllowedOrigins, opts.Logger); err != nil {
			return nil, errors.Join(err, n.Stop())
		}
	}
	opts.Logger.Info().Str("chain_id", n.chainID).Str("rpc", n.RPCAddress()).Str("web", n.WebAddress()).Str("home", cfg.RootDir).Msg("node started")
	return n, nil
}

// startAppConfig is given, checked as LoadAppConfig checks app.toml, or else home's
// app.toml.
func startAppConfig(home string, given *AppConfig) (AppConfig, error) {
	if given == nil {
		return LoadAppConfig(home)
	}
	if err := given.Validate(); err != nil {
		return *given, fmt.Errorf("%s: %w", AppConfigFile(home), err)
	}
	return *given, nil
}

// startWeb serves the web view on laddr, reading the node in process, its JSON API
// readable by the pages of origins.
func (n *Node) startWeb(laddr string, origins []string, log zerolog.Logger) error {
	vals, _, err := GenesisValidators(n.cfg.RootDir)
	if err != nil {
		return err
	}
	gen, err := LoadGenesis(n.cfg.RootDir)
	if err != nil {
		return err
	}
	s, err := web.New(cmtlocal.New(n.comet), web.Options{Trusted: vals, InitialHeight: gen.InitialHeight, CORSOrigins: origins,
		Logger: log.With().Str("module", "web").Logger()})
	if err != nil {
		return err
	}
	n.web, err = web.Listen(s, laddr)
	return err
}

// WebAddress is the web view's URL, such as "http://127.0.0.1:26680/"; "" when it is off.
func (n *Node) WebAddress() string {
	if n.web == nil {
		return ""
	}
	return "http://" + n.web.Addr().String() + "/"
}

// warnIgnoredLogSettings says so when config.toml sets a log_level or log_format of
// its own: app.toml's log_level and log_format (or the flags) are the only log
// settings, and CometBFT logs through the same logger.
func warnIgnoredLogSettings(cfg *config.Config, log zerolog.Logger) {
	def := config.DefaultBaseConfig()
	if cfg.LogLevel != def.LogLevel || cfg.LogFormat != def.LogFormat {
		log.Warn().Str("log_level", cfg.LogLevel).Str("log_format", cfg.LogFormat).
			Msg("config.toml's log_level and log_format are not used: set log_level and log_format in app.toml")
	}
}

// newComet builds and starts CometBFT around a new application on store, whose
// metrics carry chainID as CometBFT's do.
//
// NB: CometBFT registers its metrics on prometheus.DefaultRegisterer (through go-kit,
// which panics on a second registration) and its endpoint serves
// prometheus.DefaultGatherer. Each node therefore installs a fresh registry as the
// default before it is built and started, so that a process can start a node again
// after stopping one, and registers the application's metrics there too, so that one
// endpoint serves both.
func newComet(cfg *config.Config, chainID string, log zerolog.Logger, cometLog cmtlog.Logger, store *drive.Store, pv *privval.FilePV, nodeKey *p2p.NodeKey, dbs *cometDBs, checkInvariants bool, appCfg AppConfig, halted *atomic.Bool) (*cmtnode.Node, *abci.Application, error) {
	promMu.Lock()
	defer promMu.Unlock()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	prometheus.DefaultRegisterer, prometheus.DefaultGatherer = reg, reg

	metrics, err := abci.NewMetrics(reg, chainID)
	if err != nil {
		return nil, nil, err
	}
	app, err := abci.New(store, log.With().Str("module", "app").Logger(), metrics)
	if err != nil {
		return nil, nil, err
	}
	if checkInvariants {
		app.CheckInvariants()
	}
	app.ReadAhead(appCfg.ReadAhead)
	app.SignalVersion(Signal(appCfg.SignalVersion))
	gen, err := cmttypes.GenesisDocFromFile(cfg.GenesisFile())
	if err != nil {
		return nil, app, err
	}
	vals, err := abci.GenesisValidatorsOf(gen)
	if err != nil {
		return nil, app, err
	}
	app.SetGenesisValidators(vals)
	app.OnHalt(func() { halted.Store(true) })
	files, err := snapshot.OpenFiles(SnapshotDir(cfg))
	if err != nil {
		return nil, app, err
	}
	app.ServeSnapshots(files, appCfg.SnapshotInterval, appCfg.SnapshotKeepRecent)
	if cometLog, err = prepareStateSync(cfg, chainID, store, app, cometLog); err != nil {
		return nil, app, err
	}
	if err := app.SetMempool(mempoolConfig(cfg)); err != nil {
		return nil, app, err
	}
	comet, err := cmtnode.NewNode(cfg, pv, nodeKey,
		// Each connection (consensus, mempool, query, snapshot) has its own lock, so a
		// slow query does not stall consensus; CheckTx takes none of them: the
		// application checks the mempool's transactions concurrently. Every call passes
		// the gate that Stop closes before the application's store (gate).
		gatedClients{ClientCreator: app.ClientCreator(), g: &dbs.gate},
		cmtnode.DefaultGenesisDocProviderFunc(cfg),
		dbs.provider,
		cmtnode.DefaultMetricsProvider(cfg.Instrumentation),
		cometLog,
	)
	if err != nil {
		return nil, app, fmt.Errorf("create cometbft node: %w", err)
	}
	app.HoldHalted()
	// CheckTx refuses new transactions while CometBFT's block sync or state sync runs:
	// the state is behind the chain's (docs/TX.md, "What accepted means").
	app.SetCatchingUp(comet.ConsensusReactor().WaitSync)
	if err := comet.Start(); err != nil {
		return nil, app, fmt.Errorf("start cometbft: %w", err)
	}
	return comet, app, nil
}

// mempoolConfig is what CheckTx needs to know of CometBFT's mempool and block times
// (docs/TX.md, "What accepted means"): the mempool's room, whether it rechecks, and the
// margin deadlines are judged with, the time the block that includes a transaction may
// take to come: a proposal's timeout and two commits' (the transaction may miss the
// next block and go into the one after).
func mempoolConfig(cfg *config.Config) abci.MempoolConfig {
	margin := cfg.Consensus.TimeoutPropose + 2*cfg.Consensus.TimeoutCommit
	return abci.MempoolConfig{
		Limits:    abci.MempoolLimits{Size: cfg.Mempool.Size, MaxTxsBytes: cfg.Mempool.MaxTxsBytes},
		NoRecheck: !cfg.Mempool.Recheck,
		MarginMs:  uint64(max(margin, 0) / time.Millisecond),
	}
}

// RPCAddress is the URL a client on this machine reaches the RPC at, such as
// "http://127.0.0.1:26657"; an unspecified listen host becomes 127.0.0.1.
func (n *Node) RPCAddress() string { return rpcURL(n.cfg.RPC.ListenAddress) }

func rpcURL(listen string) string {
	scheme, hostport, ok := strings.Cut(listen, "://")
	if !ok {
		scheme, hostport = "tcp", listen
	}
	if scheme != "tcp" && scheme != "http" {
		return listen
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Halted is closed once the application has halted the node for good: the chain moved
// to a protocol version this binary does not implement, or a state sync cannot end
// (HaltErr says which). The caller then stops the node; its stores are as the last
// block left them, for a newer binary to continue from.
func (n *Node) Halted() <-chan struct{} { return n.app.Halted() }

// HaltErr is why the node halted (an app.ErrUpgradeNeeded, or a state sync's
// ErrStateSyncExhausted or ErrStateSyncFailed), nil while it has not.
func (n *Node) HaltErr() error { return n.app.HaltErr() }

// HaltedStopWait bounds StopHalted's wait for CometBFT.
const HaltedStopWait = 10 * time.Second

// StopHalted stops a node that has halted (Halted) as Stop does, but gives up waiting
// after HaltedStopWait: when CometBFT executes the block the node halted at, the
// application holds that call (abci.Application.HoldHalted), and CometBFT's stop waits
// for it. Nothing is lost then: the application saved its last block and stages
// nothing, and CometBFT saved the held block before executing it, so the binary that
// implements its version executes it at start. It reports whether the node stopped in
// time, and Stop's error.
func (n *Node) StopHalted() (bool, error) {
	done := make(chan error, 1)
	go func() { done <- n.Stop() }()
	select {
	case err := <-done:
		return true, err
	case <-time.After(HaltedStopWait):
		return false, nil
	}
}

// ChainID is the chain id of the genesis the node runs.
func (n *Node) ChainID() string { return n.chainID }

// Home is the node's home directory, absolute.
func (n *Node) Home() string { return n.cfg.RootDir }

// Stop stops CometBFT, waits for it, then closes the storage: CometBFT's databases once
// the operations in flight on them and the calls in flight to the application have
// finished, then the state store and its database. An operation or call of CometBFT's
// that comes later never reaches them (gate): one that serves an RPC request fails, any
// other waits for good.
// Later calls return the first call's result.
//
// NB: with peer exchange on, CometBFT saves config/addrbook.json from a goroutine of
// its own once it has stopped, and v0.38 gives no handle to wait for it: the file may
// still be written shortly after Stop returns.
func (n *Node) Stop() error {
	n.stopOnce.Do(func() {
		n.stopping.Store(true)
		var errs []error
		if n.web != nil {
			if err := n.web.Close(); err != nil {
				errs = append(errs, fmt.Errorf("stop web view: %w", err))
			}
		}
		if n.comet.IsRunning() {
			if err := n.comet.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("stop cometbft: %w", err))
			}
			n.comet.Wait()
		}
		errs = append(errs, n.closeStorage())
		n.stopErr = errors.Join(errs...)
	})
	return n.stopErr
}

// closeStorage closes the gate to CometBFT's databases and the application, then the
// application's own goroutines and store.
func (n *Node) closeStorage() error {
	errs := []error{n.cometDB.closeRest()}
	if n.app != nil {
		n.app.ReadAhead(false) // no read of the store outlives it
		n.app.CloseSnapshots()
	}
	if err := n.store.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close store: %w", err))
	}
	if err := n.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close application db: %w", err))
	}
	return errors.Join(errs...)
}

// MetricsAddress is the URL of the Prometheus endpoint, such as
// "http://127.0.0.1:26660/metrics"; "" when Prometheus is off.
func (n *Node) MetricsAddress() string {
	if !n.cfg.Instrumentation.IsPrometheusEnabled() {
		return ""
	}
	return rpcURL(n.cfg.Instrumentation.PrometheusListenAddr) + "/metrics"
}
