package node

import (
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cometbft/cometbft/config"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/protocol"
)

// DefaultTestnetChainID is the chain id Testnet uses when none is given.
const DefaultTestnetChainID = "ttld-devnet"

// DefaultSubnetBase is the address of node0 in docker-compose.yml's private network
// (172.28.0.0/24); node i has the i-th address after it.
const DefaultSubnetBase = "172.28.0.10"

// Ports inside a testnet node's container, where its listeners bind on every interface.
const (
	TestnetP2PPort        = 26656
	TestnetRPCPort        = 26657
	TestnetPrometheusPort = 26660
	TestnetWebPort        = 26680
)

// Host ports docker-compose.yml (and docker-compose.fullnodes.yml) publish on
// 127.0.0.1, after TTLD_DEVNET_PORTS, the leading digits P (26 by default): validator
// i's RPC at P*1000 + TestnetHostRPCPort + i*TestnetHostPortStep (26657, 26757, ...),
// its Prometheus endpoint at P*1000 + TestnetHostPrometheusPort + i*TestnetHostPortStep
// (26660, 26760, ...) and its web view at P*1000 + TestnetHostWebPort + i*TestnetHostPortStep
// (26680, 26780, ...); full node j's one step below the first validator's for each j
// (26557, 26560 and 26580 for full0, 26457 ...).
const (
	TestnetHostRPCPort        = 657
	TestnetHostPrometheusPort = 660
	TestnetHostWebPort        = 680
	TestnetHostPortStep       = 100
	// TestnetLocalP2PPort is a local testnet's P2P port beside the host ports
	// (TestnetOptions.Local): validator i's at P*1000 + 656 + i*TestnetHostPortStep.
	TestnetLocalP2PPort = 656
	// DefaultTestnetHostPortPrefix is P when none is given, TTLD_DEVNET_PORTS's default.
	DefaultTestnetHostPortPrefix = 26
)

// DefaultTestnetSnapshotInterval is a testnet's snapshot_interval: a snapshot every 100
// blocks, so that a full node can join by state sync a minute or two after the start.
const DefaultTestnetSnapshotInterval = 100

// MaxTestnetValidators bounds --validators: the node addresses stay inside the /24 of
// the subnet base and the host ports below 65536.
const MaxTestnetValidators = 64

// MaxTestnetFullNodes bounds --full-nodes: full node j's host ports, P*1000 + 557 -
// 100*j, keep the digits P.
const MaxTestnetFullNodes = 6

// TestnetClientDir is the folder in Testnet's output that holds the client home: the
// keyring with the funded dev key and the payout keys, and a copy of the genesis.
const TestnetClientDir = "client"

// PayoutKeyName is the client keyring's name of the key of validator name's payout
// identity, such as "node0-payout".
func PayoutKeyName(validator string) string { return validator + "-payout" }

// TestnetOptions configure Testnet.
type TestnetOptions struct {
	// Output is the folder that receives node0 .. node{Validators-1}, full0 ..
	// full{FullNodes-1} and the client home (TestnetClientDir).
	Output string
	// Validators is the number of validators, of equal power (1 to
	// MaxTestnetValidators).
	Validators int
	// FullNodes is the number of full nodes (0 to MaxTestnetFullNodes): nodes that
	// follow the chain, peered with every validator, without a vote.
	FullNodes int
	ChainID   string // "" means DefaultTestnetChainID
	// SubnetBase is node0's IPv4 address; the validators have the next ones, then the
	// full nodes, all in the same /24. "" means DefaultSubnetBase.
	SubnetBase string
	// HostPortPrefix is TTLD_DEVNET_PORTS, the leading digits of the host ports;
	// 0 means DefaultTestnetHostPortPrefix.
	HostPortPrefix int
	// DevBalance is the credits of the client's dev key in genesis; 0 means
	// DefaultDevBalance.
	DevBalance uint64
	// EpochLengthS is the chain's epoch length in seconds; 0 means
	// genesis.DefaultEpochLengthS.
	EpochLengthS uint64
	// ProtocolVersion is the version the chain starts on; 0 means protocol.Newest().
	// An earlier one moves on in place (docs/STATE.md, "Protocol upgrades").
	ProtocolVersion protocol.Version
	// SignalVersion is every node's app.toml signal_version (0: the newest its
	// binary implements).
	SignalVersion uint32
	// Upgrade, when set, is the protocol upgrade genesis schedules (genesis
	// protocol_upgrade): a switch to its version at its height, without signals.
	Upgrade *genesis.Upgrade
	// LocalMinTTLSeconds lowers the minimum document ttl in genesis
	// (genesis.LocalLimits), on a local chain id only; 0: no lowering.
	LocalMinTTLSeconds uint64
	// Timeouts set the pace of the chain's blocks on every node; zero ones keep the
	// defaults.
	Timeouts Timeouts
	// SnapshotInterval is every node's app.toml snapshot_interval; 0 means
	// DefaultTestnetSnapshotInterval, a negative one takes no snapshots.
	SnapshotInterval int64
	// StateSync: the full nodes join by state sync from the validators (their
	// config.toml's [statesync], RPC servers written; the trust height and hash are
	// written from the running network by StateSyncConfig before they start).
	StateSync bool
	// Local writes the homes for processes side by side on this machine instead of
	// docker-compose.yml's network: every node listens on 127.0.0.1 only, its RPC,
	// Prometheus endpoint and web view at its host ports (HostPortPrefix), its P2P at
	// TestnetLocalP2PPort beside them, and dials the validators there. SubnetBase must
	// be "".
	Local bool
	// Force replaces the homes of an Output folder that is not empty. Only its
	// node<N>, full<N> and client folders are deleted; anything else is left alone.
	Force bool
}

// TestnetNode is one node home Testnet wrote. No node home holds a keyring: the keys
// that own credits are in the client home.
type TestnetNode struct {
	Name string // node<i> or full<j>, also its moniker and its folder in Output
	Home string // absolute
	IP   string // its address in the private network, 127.0.0.1 on a local one
	// NodeID is the P2P id; peers dial NodeID@IP:P2PPort.
	NodeID string
	// P2PPort and RPCPort are where the node listens for peers and serves RPC at IP:
	// TestnetP2PPort and TestnetRPCPort in its container; on a local network, its own
	// P2P port and HostRPCPort.
	P2PPort, RPCPort int
	// Validator: a genesis validator; otherwise a full node, whose validator key is in
	// no genesis and which never votes.
	Validator bool
	// ValidatorAddress is the address of the node's consensus key, a genesis
	// validator's only when Validator.
	ValidatorAddress cmttypes.Address
	// PayoutIdentity is a validator's payout identity, keyed by the client home's
	// PayoutKeyName(Name); zero for a full node.
	PayoutIdentity protocol.IdentityID
	// HostRPCPort, HostPrometheusPort and HostWebPort are where the compose files
	// publish the node's RPC, metrics and web view on 127.0.0.1, where a local node
	// listens itself.
	HostRPCPort        int
	HostPrometheusPort int
	HostWebPort        int
}

// TestnetResult is what Testnet wrote.
type TestnetResult struct {
	Output         string // absolute
	ChainID        string
	HostPortPrefix int
	Local          bool // TestnetOptions.Local
	// ClientHome holds the keyring (the dev key, funded with DevBalance, and the
	// validators' payout keys) and a copy of the genesis, for the CLI's --home.
	ClientHome string // absolute
	DevAddress protocol.Address
	DevBalance uint64
	Nodes      []TestnetNode // the validators, then the full nodes
}

// ErrOutputExists: Testnet's output folder holds something and Force is off.
type ErrOutputExists struct{ Dir string }

func (e ErrOutputExists) Error() string {
	return fmt.Sprintf("%s exists and is not empty", e.Dir)
}

var testnetDirName = regexp.MustCompile(`^(node[0-9]+|full[0-9]+|` + TestnetClientDir + `)$`)

// Testnet writes the homes of a network for docker-compose.yml, or for processes on
// this machine (Local): one genesis shared by all, with every validator at
// ValidatorPower, a payout identity per validator (PayoutIdentityID, balance 0), and
// one funded address, the client home's dev key. The keys that own credits (the dev
// key, the payout identities' keys) are written to the client home only, never to a
// node home, which a container mounts. Each node listens on every interface of its
// container and dials the validators by IP, as hostnames that do not resolve when
// CometBFT starts are dropped from persistent_peers for good; a local node listens on
// 127.0.0.1 at ports of its own and dials the validators there.
func Testnet(opts TestnetOptions) (TestnetResult, error) {
	if opts.Validators < 1 || opts.Validators > MaxTestnetValidators {
		return TestnetResult{}, fmt.Errorf("validators must be 1 to %d, not %d", MaxTestnetValidators, opts.Validators)
	}
	if opts.FullNodes < 0 || opts.FullNodes > MaxTestnetFullNodes {
		return TestnetResult{}, fmt.Errorf("full nodes must be 0 to %d, not %d", MaxTestnetFullNodes, opts.FullNodes)
	}
	prefix := opts.HostPortPrefix
	if prefix == 0 {
		prefix = DefaultTestnetHostPortPrefix
	}
	if err := checkHostPorts(prefix, opts.Validators, opts.FullNodes, opts.Local); err != nil {
		return TestnetResult{}, err
	}
	chainID := opts.ChainID
	if chainID == "" {
		chainID = DefaultTestnetChainID
	}
	if err := checkChainID(chainID); err != nil {
		return TestnetResult{}, err
	}
	if err := checkEpochLength(opts.EpochLengthS); err != nil {
		return TestnetResult{}, err
	}
	if err := opts.Timeouts.Validate(); err != nil {
		return TestnetResult{}, err
	}
	version, err := startingVersion(opts.ProtocolVersion)
	if err != nil {
		return TestnetResult{}, err
	}
	if err := CheckSignalVersion(opts.SignalVersion); err != nil {
		return TestnetResult{}, err
	}
	local, err := localLimits(chainID, opts.LocalMinTTLSeconds)
	if err != nil {
		return TestnetResult{}, err
	}
	ips, err := testnetAddresses(opts)
	if err != nil {
		return TestnetResult{}, err
	}
	balance := opts.DevBalance
	if balance == 0 {
		balance = DefaultDevBalance
	}
	out, err := filepath.Abs(opts.Output)
	if err != nil {
		return TestnetResult{}, err
	}
	if err := clearOutput(out, opts.Force); err != nil {
		return TestnetResult{}, err
	}

	res := TestnetResult{Output: out, ChainID: chainID, HostPortPrefix: prefix, Local: opts.Local, DevBalance: balance,
		ClientHome: filepath.Join(out, TestnetClientDir)}
	client := keyring.Open(res.ClientHome)
	dev, err := client.Add(DevKeyName)
	if err != nil {
		return TestnetResult{}, fmt.Errorf("client home: %w", err)
	}
	res.DevAddress = dev.Address()
	var vals []cmttypes.GenesisValidator
	state := genesis.AppState{
		ProtocolVersion:  version,
		EpochTimeLengthS: epochLength(opts.EpochLengthS),
		Addresses:        []genesis.Address{{Address: dev.Address().String(), Balance: balance}},
		Identities:       []genesis.Identity{},
		LocalLimits:      local,
		Upgrade:          opts.Upgrade,
	}
	for i := range opts.Validators + opts.FullNodes {
		n := TestnetNode{Name: fmt.Sprintf("node%d", i), IP: ips[i], Validator: i < opts.Validators}
		port := prefix*1000 + TestnetHostPortStep*i
		if !n.Validator {
			j := i - opts.Validators
			n.Name = fmt.Sprintf("full%d", j)
			port = prefix*1000 - TestnetHostPortStep*(j+1)
		}
		n.HostRPCPort, n.HostPrometheusPort, n.HostWebPort = port+TestnetHostRPCPort, port+TestnetHostPrometheusPort, port+TestnetHostWebPort
		n.P2PPort, n.RPCPort = TestnetP2PPort, TestnetRPCPort
		if opts.Local {
			n.P2PPort, n.RPCPort = port+TestnetLocalP2PPort, n.HostRPCPort
		}
		cfg := testnetConfig(filepath.Join(out, n.Name), n, opts)
		app := DefaultAppConfig()
		app.Web.Laddr = "0.0.0.0:" + strconv.Itoa(TestnetWebPort) // the container's every interface, published on the host's loopback
		if opts.Local {
			app.Web.Laddr = net.JoinHostPort(n.IP, strconv.Itoa(n.HostWebPort))
		}
		app.SignalVersion = opts.SignalVersion
		app.SnapshotInterval = max(0, cmp.Or(opts.SnapshotInterval, DefaultTestnetSnapshotInterval))
		keys, err := writeHome(cfg, app)
		if err != nil {
			return TestnetResult{}, fmt.Errorf("%s: %w", n.Name, err)
		}
		n.Home, n.NodeID, n.ValidatorAddress = cfg.RootDir, string(keys.NodeID), keys.ValidatorPub.Address()
		if n.Validator {
			vals = append(vals, keys.genesisValidator(n.Name))
			payoutKey, err := client.Add(PayoutKeyName(n.Name))
			if err != nil {
				return TestnetResult{}, fmt.Errorf("client home: %w", err)
			}
			n.PayoutIdentity = protocol.PayoutIdentityID(n.ValidatorAddress)
			state.Identities = append(state.Identities, genesis.Identity{ID: n.PayoutIdentity.String(), Keys: []string{hex.EncodeToString(payoutKey.Pub)}})
			state.Validators = append(state.Validators, genesis.Validator{Address: n.ValidatorAddress.String(), PayoutIdentity: n.PayoutIdentity.String()})
		}
		res.Nodes = append(res.Nodes, n)
	}
	gen, err := newGenesisDoc(chainID, vals, state)
	if err != nil {
		return TestnetResult{}, err
	}
	validators := res.Nodes[:opts.Validators]
	for i, n := range res.Nodes {
		cfg := testnetConfig(n.Home, n, opts)
		cfg.P2P.PersistentPeers = testnetPeers(validators, i)
		if err := cfg.ValidateBasic(); err != nil {
			return TestnetResult{}, fmt.Errorf("%s config: %w", n.Name, err)
		}
		if opts.StateSync && !n.Validator {
			cfg.StateSync.Enable = true
			cfg.StateSync.RPCServers = testnetRPCServers(validators)
		}
		// NB: the node ids are only known once every home has its node key, so the
		// config is written a second time, now with the peers.
		config.WriteConfigFile(ConfigFile(cfg.RootDir), cfg)
		if err := gen.SaveAs(cfg.GenesisFile()); err != nil {
			return TestnetResult{}, fmt.Errorf("%s genesis: %w", n.Name, err)
		}
	}
	// The client home's genesis names the chain and its validators, the trusted set
	// of query --prove.
	if err := os.MkdirAll(filepath.Dir(GenesisFile(res.ClientHome)), 0o700); err != nil {
		return TestnetResult{}, err
	}
	if err := gen.SaveAs(GenesisFile(res.ClientHome)); err != nil {
		return TestnetResult{}, fmt.Errorf("client genesis: %w", err)
	}
	return res, nil
}

// checkHostPorts: every host port of the network, with prefix P, keeps P's digits and
// is a port a user may bind (1024 to 65535); a local network's P2P ports too.
func checkHostPorts(prefix, validators, fullNodes int, local bool) error {
	first := TestnetHostRPCPort
	if local {
		first = TestnetLocalP2PPort
	}
	low := prefix*1000 - TestnetHostPortStep*fullNodes + first
	high := prefix*1000 + TestnetHostPortStep*(validators-1) + TestnetHostWebPort
	if fullNodes == 0 {
		low = prefix*1000 + first
	}
	if prefix < 1 || low < 1024 || high > 65535 {
		return fmt.Errorf("host port prefix %d gives ports %d to %d, outside 1024..65535", prefix, low, high)
	}
	return nil
}

// testnetConfig is DefaultConfig with the network's timeouts, the listeners on every
// interface of the node's container, or on 127.0.0.1 at the node's own ports when
// local, and the P2P settings of a private network.
func testnetConfig(home string, n TestnetNode, opts TestnetOptions) *config.Config {
	cfg := DefaultConfig(home, n.Name)
	opts.Timeouts.Apply(cfg.Consensus)
	host, prometheus := "0.0.0.0", TestnetPrometheusPort
	if opts.Local {
		host, prometheus = n.IP, n.HostPrometheusPort
	}
	cfg.RPC.ListenAddress = "tcp://" + net.JoinHostPort(host, strconv.Itoa(n.RPCPort))
	cfg.P2P.ListenAddress = "tcp://" + net.JoinHostPort(host, strconv.Itoa(n.P2PPort))
	cfg.Instrumentation.PrometheusListenAddr = net.JoinHostPort(host, strconv.Itoa(prometheus))
	// Peers advertise the address the others can dial, not 0.0.0.0.
	cfg.P2P.ExternalAddress = net.JoinHostPort(n.IP, strconv.Itoa(n.P2PPort))
	// Private addresses are the only ones there are, docker's port publishing can
	// make peers appear from one address, and a local network's nodes all have one.
	cfg.P2P.AddrBookStrict = false
	cfg.P2P.AllowDuplicateIP = true
	return cfg
}

// testnetPeers is persistent_peers for node self (an index in the network's nodes):
// every validator but itself, by id and IP. Full nodes dial the validators; nobody
// dials a full node.
func testnetPeers(validators []TestnetNode, self int) string {
	var peers []string
	for i, n := range validators {
		if i != self {
			peers = append(peers, n.NodeID+"@"+net.JoinHostPort(n.IP, strconv.Itoa(n.P2PPort)))
		}
	}
	return strings.Join(peers, ",")
}

// testnetRPCServers are the validators' RPC addresses in the network, the
// light client's primary and witnesses of a state sync (CometBFT wants two at least:
// a lone validator is named twice).
func testnetRPCServers(validators []TestnetNode) []string {
	var servers []string
	for _, n := range validators {
		servers = append(servers, "http://"+net.JoinHostPort(n.IP, strconv.Itoa(n.RPCPort)))
	}
	if len(servers) == 1 {
		servers = append(servers, servers[0])
	}
	return servers
}

// testnetAddresses are the nodes' addresses: 127.0.0.1 for every node of a local
// network, consecutive ones from the subnet base otherwise.
func testnetAddresses(opts TestnetOptions) ([]string, error) {
	n := opts.Validators + opts.FullNodes
	if opts.Local {
		if opts.SubnetBase != "" {
			return nil, fmt.Errorf("a local testnet runs on 127.0.0.1: subnet base %s is for docker's network", opts.SubnetBase)
		}
		return slices.Repeat([]string{"127.0.0.1"}, n), nil
	}
	return testnetIPs(cmp.Or(opts.SubnetBase, DefaultSubnetBase), n)
}

// testnetIPs are n consecutive IPv4 addresses from base, all in base's /24 and none
// its network (.0) or broadcast (.255) address.
func testnetIPs(base string, n int) ([]string, error) {
	ip := net.ParseIP(base).To4()
	if ip == nil {
		return nil, fmt.Errorf("subnet base %q is not an IPv4 address", base)
	}
	if !ip.IsPrivate() {
		return nil, fmt.Errorf("subnet base %s is not in a private range (10/8, 172.16/12, 192.168/16)", base)
	}
	first := int(ip[3])
	if first == 0 || first+n-1 > 254 {
		return nil, fmt.Errorf("%d addresses from %s leave its /24 (last usable .254)", n, base)
	}
	ips := make([]string, n)
	for i := range ips {
		ips[i] = net.IPv4(ip[0], ip[1], ip[2], byte(first+i)).String()
	}
	return ips, nil
}

// clearOutput makes dir ready for new homes: it creates it when missing, and refuses
// a folder with anything in it unless force, which deletes its node<N>, full<N> and
// client folders.
func clearOutput(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	if !force {
		return ErrOutputExists{dir}
	}
	for _, e := range entries {
		if e.IsDir() && testnetDirName.MatchString(e.Name()) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("remove old %s: %w", e.Name(), err)
			}
		}
	}
	return nil
}
