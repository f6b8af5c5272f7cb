package node

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cometbft/cometbft/config"
	"github.com/cometbft/cometbft/crypto"
	"github.com/cometbft/cometbft/p2p"
	"github.com/cometbft/cometbft/privval"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/protocol"
)

// DefaultChainID is the chain id Init uses when none is given.
const DefaultChainID = "ttld-local"

// DefaultDevBalance is the dev key's genesis balance when none is given: 1e15 credits.
const DefaultDevBalance uint64 = 1_000_000_000_000_000

// DevKeyName is the keyring name of the key Init funds in genesis.
const DevKeyName = "dev"

// Listen addresses Init writes into config.toml: loopback only.
const (
	DefaultRPCListen        = "tcp://127.0.0.1:26657"
	DefaultP2PListen        = "tcp://127.0.0.1:26656"
	DefaultPrometheusListen = "127.0.0.1:26660"
)

// ValidatorPower is the voting power of the single genesis validator Init writes.
const ValidatorPower = 10

// InitOptions configure Init.
type InitOptions struct {
	Home    string
	ChainID string // "" means DefaultChainID
	Moniker string // "" means CometBFT's default, the host name
	// DevBalance is the credits of the dev key's platform address in genesis; 0 means
	// DefaultDevBalance.
	DevBalance uint64
	// EpochLengthS is the chain's epoch length in seconds; 0 means
	// genesis.DefaultEpochLengthS.
	EpochLengthS uint64
	// ProtocolVersion is the version the chain starts on; 0 means protocol.Newest().
	// An earlier one moves on in place (docs/STATE.md, "Protocol upgrades").
	ProtocolVersion protocol.Version
	// LocalMinTTLSeconds lowers the minimum document ttl in genesis
	// (genesis.LocalLimits), on a local chain id only; 0: no lowering.
	LocalMinTTLSeconds uint64
	// Timeouts set the pace of the chain's blocks; zero ones keep the defaults.
	Timeouts Timeouts
	// Overwrite starts a new chain in a home that already has one: it rewrites the
	// configuration and genesis and deletes data/ (blocks, state, application DB and
	// the validator's last-sign state). Keys (node, validator, keyring) are kept.
	Overwrite bool
}

// InitResult says where Init put everything. Paths are absolute.
type InitResult struct {
	Home             string
	ConfigFile       string
	AppConfigFile    string
	GenesisFile      string
	KeyringDir       string
	NodeKeyFile      string
	ValidatorKeyFile string
	NodeID           string
	ChainID          string
	DevAddress       protocol.Address
	DevBalance       uint64
	// LocalMinTTL is the lowered minimum document ttl of the genesis (0: none).
	LocalMinTTL uint64
}

// Initialized reports whether home holds a configuration or a genesis file.
func Initialized(home string) bool {
	cfg := config.DefaultConfig()
	cfg.SetRoot(home)
	for _, f := range []string{ConfigFile(home), cfg.GenesisFile()} {
		if _, err := os.Stat(f); err == nil {
			return true
		}
	}
	return false
}

// ConfigFile is the path of config.toml in a home directory.
func ConfigFile(home string) string {
	return filepath.Join(home, config.DefaultConfigDir, config.DefaultConfigFileName)
}

// DefaultMempoolSize is the mempool's size in transactions that Init and Testnet write.
const DefaultMempoolSize = 50_000

// DefaultConfig is the CometBFT configuration Init writes for home.
func DefaultConfig(home, moniker string) *config.Config {
	cfg := config.DefaultConfig()
	cfg.SetRoot(home)
	if moniker != "" {
		cfg.Moniker = moniker
	}
	cfg.RPC.ListenAddress = DefaultRPCListen
	cfg.P2P.ListenAddress = DefaultP2PListen
	cfg.Instrumentation.Prometheus = true
	cfg.Instrumentation.PrometheusListenAddr = DefaultPrometheusListen
	cfg.Consensus.TimeoutCommit = DefaultTimeoutCommit
	// NB: the state after block H is proven against the app hash in header H+1, so a
	// chain that waits for transactions would leave the latest state unprovable.
	cfg.Consensus.CreateEmptyBlocks = true
	cfg.TxIndex.Indexer = "kv"
	// CometBFT's mempool of 5,000 transactions caps a block at 5,000, under what the
	// application commits a second (docs/BENCHMARKS.md, "Side by side"); its cache of
	// seen transactions must hold more than the mempool to refuse a resent one.
	cfg.Mempool.Size = DefaultMempoolSize
	cfg.Mempool.CacheSize = 2 * DefaultMempoolSize
	// Replay tooling reads the stored block results.
	cfg.Storage.DiscardABCIResponses = false
	return cfg
}

// Init writes a new home directory for a single-validator chain.
func Init(opts InitOptions) (InitResult, error) {
	home, err := filepath.Abs(opts.Home)
	if err != nil {
		return InitResult{}, err
	}
	if Initialized(home) && !opts.Overwrite {
		return InitResult{}, ErrAlreadyInitialized{home}
	}
	chainID := opts.ChainID
	if chainID == "" {
		chainID = DefaultChainID
	}
	if err := checkChainID(chainID); err != nil {
		return InitResult{}, err
	}
	if err := checkEpochLength(opts.EpochLengthS); err != nil {
		return InitResult{}, err
	}
	if err := opts.Timeouts.Validate(); err != nil {
		return InitResult{}, err
	}
	balance := opts.DevBalance
	if balance == 0 {
		balance = DefaultDevBalance
	}

	cfg := DefaultConfig(home, opts.Moniker)
	opts.Timeouts.Apply(cfg.Consensus)
	if opts.Overwrite {
		if err := os.RemoveAll(cfg.DBDir()); err != nil {
			return InitResult{}, fmt.Errorf("remove old chain data: %w", err)
		}
	}
	keys, err := writeHome(cfg, DefaultAppConfig())
	if err != nil {
		return InitResult{}, err
	}
	// The one-node chain's home is its client's too: the dev key lives beside the node.
	dev, err := loadOrAddKey(keyring.Open(home), DevKeyName)
	if err != nil {
		return InitResult{}, err
	}
	// The validator's rewards go to its payout identity, whose key is the home's too.
	payoutKey, err := loadOrAddKey(keyring.Open(home), PayoutKeyName("validator"))
	if err != nil {
		return InitResult{}, err
	}
	payout := protocol.PayoutIdentityID(keys.ValidatorPub.Address())
	version, err := startingVersion(opts.ProtocolVersion)
	if err != nil {
		return InitResult{}, err
	}
	state := genesis.AppState{
		ProtocolVersion:  version,
		EpochTimeLengthS: epochLength(opts.EpochLengthS),
		Addresses:        []genesis.Address{{Address: dev.Address().String(), Balance: balance}},
		Identities:       []genesis.Identity{{ID: payout.String(), Keys: []string{hex.EncodeToString(payoutKey.Pub)}}},
		Validators:       []genesis.Validator{{Address: keys.ValidatorPub.Address().String(), PayoutIdentity: payout.String()}},
	}
	if state.LocalLimits, err = localLimits(chainID, opts.LocalMinTTLSeconds); err != nil {
		return InitResult{}, err
	}
	if _, err := genesis.Decode(state.Encode()); err != nil {
		return InitResult{}, err
	}
	gen, err := newGenesisDoc(chainID, []cmttypes.GenesisValidator{keys.genesisValidator(cfg.Moniker)}, state)
	if err != nil {
		return InitResult{}, err
	}
	if err := gen.SaveAs(cfg.GenesisFile()); err != nil {
		return InitResult{}, fmt.Errorf("genesis: %w", err)
	}

	return InitResult{
		Home:             home,
		ConfigFile:       ConfigFile(home),
		AppConfigFile:    AppConfigFile(home),
		GenesisFile:      cfg.GenesisFile(),
		KeyringDir:       keyring.Open(home).Dir(),
		NodeKeyFile:      cfg.NodeKeyFile(),
		ValidatorKeyFile: cfg.PrivValidatorKeyFile(),
		NodeID:           string(keys.NodeID),
		ChainID:          chainID,
		DevAddress:       dev.Address(),
		DevBalance:       balance,
		LocalMinTTL:      opts.LocalMinTTLSeconds,
	}, nil
}

// localLimits are the genesis local limits of a lowered minimum ttl (0: none, nil),
// which only a local chain id may have.
func localLimits(chainID string, minTTLSeconds uint64) (*genesis.LocalLimits, error) {
	if minTTLSeconds == 0 {
		return nil, nil
	}
	if !protocol.LocalChainID(chainID) {
		return nil, fmt.Errorf("a lowered minimum ttl is for local chains only (a chain id ending in -local, -devnet, -test or -e2e), not %q", chainID)
	}
	return &genesis.LocalLimits{MinDocumentTTLSeconds: minTTLSeconds}, nil
}

// ErrProtocolVersion: a chain cannot start on a version this binary does not implement.
type ErrProtocolVersion struct{ Version protocol.Version }

func (e ErrProtocolVersion) Error() string {
	return fmt.Sprintf("protocol version %d is none this binary implements (%v)", e.Version, protocol.Supported())
}

// startingVersion is the version a chain starts on for an option: 0 means the newest
// this binary implements.
func startingVersion(v protocol.Version) (protocol.Version, error) {
	if v == 0 {
		return protocol.Newest(), nil
	}
	if !protocol.Known(v) {
		return 0, ErrProtocolVersion{v}
	}
	return v, nil
}

// epochLength is the genesis epoch length for an option: 0 means the default.
func epochLength(s uint64) uint64 {
	if s == 0 {
		return genesis.DefaultEpochLengthS
	}
	return s
}

// ErrEpochLength: an epoch length outside what genesis allows.
type ErrEpochLength struct{ Seconds uint64 }

func (e ErrEpochLength) Error() string {
	return fmt.Sprintf("epoch length %d s is outside %d s to %d s (a year)", e.Seconds, protocol.MinEpochLengthS, protocol.MaxEpochLengthS)
}

// checkEpochLength refuses, before anything is written, an epoch length genesis would
// refuse (0 stands for the default).
func checkEpochLength(s uint64) error {
	if s != 0 && (s < protocol.MinEpochLengthS || s > protocol.MaxEpochLengthS) {
		return ErrEpochLength{Seconds: s}
	}
	return nil
}

func checkChainID(chainID string) error {
	if len(chainID) > cmttypes.MaxChainIDLen {
		return fmt.Errorf("chain id %q is longer than %d bytes", chainID, cmttypes.MaxChainIDLen)
	}
	return nil
}

// homeKeys are the keys of one node home: its P2P identity and its validator's
// consensus key.
type homeKeys struct {
	NodeID       p2p.ID
	ValidatorPub crypto.PubKey
}

// genesisValidator is the home's validator as genesis lists it, with ValidatorPower.
func (k homeKeys) genesisValidator(name string) cmttypes.GenesisValidator {
	return cmttypes.GenesisValidator{Address: k.ValidatorPub.Address(), PubKey: k.ValidatorPub, Power: ValidatorPower, Name: name}
}

// writeHome creates the config and data folders of cfg's home, writes cfg as
// config.toml and app as app.toml, and returns the home's node and validator
// keys, each kept when the home has it already and created otherwise. It writes no
// genesis and no keyring.
func writeHome(cfg *config.Config, app AppConfig) (homeKeys, error) {
	if err := cfg.ValidateBasic(); err != nil {
		return homeKeys{}, fmt.Errorf("config: %w", err)
	}
	for _, dir := range []string{filepath.Join(cfg.RootDir, config.DefaultConfigDir), cfg.DBDir()} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return homeKeys{}, err
		}
	}
	config.WriteConfigFile(ConfigFile(cfg.RootDir), cfg)
	if err := SaveAppConfig(cfg.RootDir, app); err != nil {
		return homeKeys{}, err
	}

	nodeKey, err := p2p.LoadOrGenNodeKey(cfg.NodeKeyFile())
	if err != nil {
		return homeKeys{}, fmt.Errorf("node key: %w", err)
	}
	pv, err := loadOrGenPrivValidator(cfg)
	if err != nil {
		return homeKeys{}, err
	}
	pub, err := pv.GetPubKey()
	if err != nil {
		return homeKeys{}, fmt.Errorf("validator key: %w", err)
	}
	return homeKeys{NodeID: nodeKey.ID(), ValidatorPub: pub}, nil
}

// loadOrAddKey returns kr's key name, created when kr has none.
func loadOrAddKey(kr *keyring.Keyring, name string) (keyring.Key, error) {
	k, err := kr.Get(name)
	if errors.As(err, new(keyring.ErrNotFound)) {
		k, err = kr.Add(name)
	}
	return k, err
}

// newGenesisDoc is the genesis document of a chain that starts now with validators
// and state, validated (the app state as InitChain will read it).
func newGenesisDoc(chainID string, validators []cmttypes.GenesisValidator, state genesis.AppState) (*cmttypes.GenesisDoc, error) {
	raw := state.Encode()
	if _, err := genesis.Decode(raw); err != nil {
		return nil, err
	}
	gen := &cmttypes.GenesisDoc{
		GenesisTime:     time.Now().UTC(),
		ChainID:         chainID,
		InitialHeight:   1,
		ConsensusParams: cmttypes.DefaultConsensusParams(),
		Validators:      validators,
		AppState:        json.RawMessage(raw),
	}
	if err := gen.ValidateAndComplete(); err != nil {
		return nil, fmt.Errorf("genesis: %w", err)
	}
	// NB: the time is this machine's clock; one before 1970 would make a chain
	// InitChain refuses.
	if err := genesis.CheckTime(gen.GenesisTime); err != nil {
		return nil, err
	}
	return gen, nil
}

// loadOrGenPrivValidator keeps an existing validator key. NB: privval's own loaders
// exit the process on a missing state file, which Overwrite has just deleted, so the
// three cases are told apart here.
func loadOrGenPrivValidator(cfg *config.Config) (*privval.FilePV, error) {
	keyFile, stateFile := cfg.PrivValidatorKeyFile(), cfg.PrivValidatorStateFile()
	switch {
	case !exists(keyFile):
		pv := privval.GenFilePV(keyFile, stateFile)
		pv.Save()
		return pv, nil
	case !exists(stateFile):
		pv := privval.LoadFilePVEmptyState(keyFile, stateFile)
		pv.Save()
		return pv, nil
	default:
		return privval.LoadFilePV(keyFile, stateFile), nil
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
