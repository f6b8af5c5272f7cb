package node

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/cometbft/cometbft/config"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/genesis"
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
)

// Host ports docker-compose.yml publishes on 127.0.0.1: node i's RPC at
// TestnetHostRPCPort + i*TestnetHostPortStep, its Prometheus endpoint at
// TestnetHostPrometheusPort + i*TestnetHostPortStep (26657, 26757, 26857, 26957).
const (
	TestnetHostRPCPort        = 26657
	TestnetHostPrometheusPort = 26660
	TestnetHostPortStep       = 100
)

// MaxTestnetValidators bounds --validators: the node addresses stay inside the /24 of
// the subnet base and the host ports below 65536.
const MaxTestnetValidators = 64

// PayoutIdentityDomain prefixes the hash that names a validator's payout identity.
const PayoutIdentityDomain = "ttld/validator-payout"

// PayoutIdentityID is the identity a validator's rewards are paid to:
// sha256(PayoutIdentityDomain || the validator's 20-byte consensus address).
func PayoutIdentityID(validator cmttypes.Address) protocol.IdentityID {
	h := sha256.New()
	h.Write([]byte(PayoutIdentityDomain))
	h.Write(validator)
	var id protocol.IdentityID
	copy(id[:], h.Sum(nil))
	return id
}

// TestnetOptions configure Testnet.
type TestnetOptions struct {
	// Output is the folder that receives node0 .. node{Validators-1}.
	Output string
	// Validators is the number of nodes, each a validator of equal power (1 to
	// MaxTestnetValidators).
	Validators int
	ChainID    string // "" means DefaultTestnetChainID
	// SubnetBase is node0's IPv4 address; node i has SubnetBase + i, in the same /24.
	// "" means DefaultSubnetBase.
	SubnetBase string
	// DevBalance is the credits of each node's dev key in genesis; 0 means
	// DefaultDevBalance.
	DevBalance uint64
	// Force replaces the node homes of an Output folder that is not empty. Only its
	// node<N> folders are deleted; anything else in it is left alone.
	Force bool
}

// TestnetNode is one home Testnet wrote.
type TestnetNode struct {
	Name string // node<i>, also its moniker and its folder in Output
	Home string // absolute
	IP   string // its address in the private network
	// NodeID is the P2P id; peers dial NodeID@IP:TestnetP2PPort.
	NodeID           string
	ValidatorAddress cmttypes.Address
	DevAddress       protocol.Address
	PayoutIdentity   protocol.IdentityID
	// HostRPCPort and HostPrometheusPort are where docker-compose.yml publishes the
	// node's RPC and metrics on 127.0.0.1.
	HostRPCPort        int
	HostPrometheusPort int
}

// TestnetResult is what Testnet wrote.
type TestnetResult struct {
	Output     string // absolute
	ChainID    string
	DevBalance uint64
	Nodes      []TestnetNode
}

// ErrOutputExists: Testnet's output folder holds something and Force is off.
type ErrOutputExists struct{ Dir string }

func (e ErrOutputExists) Error() string {
	return fmt.Sprintf("%s exists and is not empty", e.Dir)
}

var nodeDirName = regexp.MustCompile(`^node[0-9]+$`)

// Testnet writes the homes of a network of validators for docker-compose.yml: one
// genesis shared by all, with every node's validator at ValidatorPower, every node's
// dev key funded and a payout identity per validator (PayoutIdentityID, its one key the
// node's dev key, balance 0). Each node listens on every interface of its container
// and dials the others by IP, as hostnames that do not resolve when CometBFT starts
// are dropped from persistent_peers for good.
func Testnet(opts TestnetOptions) (TestnetResult, error) {
	if opts.Validators < 1 || opts.Validators > MaxTestnetValidators {
		return TestnetResult{}, fmt.Errorf("validators must be 1 to %d, not %d", MaxTestnetValidators, opts.Validators)
	}
	chainID := opts.ChainID
	if chainID == "" {
		chainID = DefaultTestnetChainID
	}
	if err := checkChainID(chainID); err != nil {
		return TestnetResult{}, err
	}
	base := opts.SubnetBase
	if base == "" {
		base = DefaultSubnetBase
	}
	ips, err := testnetIPs(base, opts.Validators)
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

	res := TestnetResult{Output: out, ChainID: chainID, DevBalance: balance}
	var vals []cmttypes.GenesisValidator
	state := genesis.AppState{ProtocolVersion: protocol.Latest, Addresses: []genesis.Address{}, Identities: []genesis.Identity{}}
	for i := range opts.Validators {
		name := fmt.Sprintf("node%d", i)
		cfg := testnetConfig(filepath.Join(out, name), name, ips[i])
		keys, err := writeHome(cfg)
		if err != nil {
			return TestnetResult{}, fmt.Errorf("%s: %w", name, err)
		}
		val := keys.genesisValidator(name)
		vals = append(vals, val)
		payout := PayoutIdentityID(val.Address)
		state.Addresses = append(state.Addresses, genesis.Address{Address: keys.Dev.Address().String(), Balance: balance})
		state.Identities = append(state.Identities, genesis.Identity{ID: payout.String(), Keys: []string{hex.EncodeToString(keys.Dev.Pub)}})
		res.Nodes = append(res.Nodes, TestnetNode{
			Name:               name,
			Home:               cfg.RootDir,
			IP:                 ips[i],
			NodeID:             string(keys.NodeID),
			ValidatorAddress:   val.Address,
			DevAddress:         keys.Dev.Address(),
			PayoutIdentity:     payout,
			HostRPCPort:        TestnetHostRPCPort + i*TestnetHostPortStep,
			HostPrometheusPort: TestnetHostPrometheusPort + i*TestnetHostPortStep,
		})
	}
	gen, err := newGenesisDoc(chainID, vals, state)
	if err != nil {
		return TestnetResult{}, err
	}
	for i, n := range res.Nodes {
		cfg := testnetConfig(n.Home, n.Name, n.IP)
		cfg.P2P.PersistentPeers = testnetPeers(res.Nodes, i)
		if err := cfg.ValidateBasic(); err != nil {
			return TestnetResult{}, fmt.Errorf("%s config: %w", n.Name, err)
		}
		// NB: the node ids are only known once every home has its node key, so the
		// config is written a second time, now with the peers.
		config.WriteConfigFile(configFile(cfg.RootDir), cfg)
		if err := gen.SaveAs(cfg.GenesisFile()); err != nil {
			return TestnetResult{}, fmt.Errorf("%s genesis: %w", n.Name, err)
		}
	}
	return res, nil
}

// testnetConfig is DefaultConfig with the listeners on every interface of the node's
// container and the P2P settings of a private network.
func testnetConfig(home, name, ip string) *config.Config {
	cfg := DefaultConfig(home, name)
	cfg.RPC.ListenAddress = "tcp://0.0.0.0:" + strconv.Itoa(TestnetRPCPort)
	cfg.P2P.ListenAddress = "tcp://0.0.0.0:" + strconv.Itoa(TestnetP2PPort)
	cfg.Instrumentation.PrometheusListenAddr = "0.0.0.0:" + strconv.Itoa(TestnetPrometheusPort)
	// Peers advertise the address the others can dial, not 0.0.0.0.
	cfg.P2P.ExternalAddress = net.JoinHostPort(ip, strconv.Itoa(TestnetP2PPort))
	// Private addresses are the only ones there are, and docker's port publishing can
	// make peers appear from one address.
	cfg.P2P.AddrBookStrict = false
	cfg.P2P.AllowDuplicateIP = true
	return cfg
}

// testnetPeers is persistent_peers for node self: every other node by id and IP.
func testnetPeers(nodes []TestnetNode, self int) string {
	var peers []string
	for i, n := range nodes {
		if i != self {
			peers = append(peers, n.NodeID+"@"+net.JoinHostPort(n.IP, strconv.Itoa(TestnetP2PPort)))
		}
	}
	return strings.Join(peers, ",")
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
// a folder with anything in it unless force, which deletes its node<N> folders.
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
		if e.IsDir() && nodeDirName.MatchString(e.Name()) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("remove old %s: %w", e.Name(), err)
			}
		}
	}
	return nil
}
