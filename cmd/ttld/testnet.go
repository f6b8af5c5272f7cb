package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// hostPortsEnv is the compose files' variable for the leading digits of the host
// ports; testnet's --host-ports defaults to it.
const hostPortsEnv = "TTLD_DEVNET_PORTS"

// testnetOutput is what testnet prints (-o json: this object).
type testnetOutput struct {
	Output    string `json:"output"`
	ChainID   string `json:"chain_id"`
	HostPorts int    `json:"host_ports"` // TTLD_DEVNET_PORTS the ports are for
	// Local: the homes are for processes on this machine (--local), each node
	// listening on 127.0.0.1 at its ports; otherwise for docker-compose.yml.
	Local bool `json:"local"`
	// StateSync: the full nodes join by state sync (--state-sync).
	StateSync  bool   `json:"state_sync"`
	ClientHome string `json:"client_home"`
	DevKey     string `json:"dev_key"`
	DevAddress string `json:"dev_address"`
	DevBalance uint64 `json:"dev_balance"`
	// PayoutKeys are the client keyring's names of the validators' payout keys.
	PayoutKeys []string            `json:"payout_keys"`
	Nodes      []testnetNodeOutput `json:"nodes"`
}

type testnetNodeOutput struct {
	Name             string `json:"name"`
	Role             string `json:"role"` // roleValidator or roleFullNode
	Home             string `json:"home"`
	IP               string `json:"ip"`
	P2P              string `json:"p2p"` // where the other nodes dial it: IP and port
	NodeID           string `json:"node_id"`
	ValidatorAddress string `json:"validator_address,omitempty"`
	PayoutIdentity   string `json:"payout_identity,omitempty"`
	// HostRPC, HostMetrics and HostWeb are where the compose files publish the node,
	// and where a local node listens.
	HostRPC     string `json:"host_rpc"`
	HostMetrics string `json:"host_metrics"`
	HostWeb     string `json:"host_web"`
}

// Values of testnetNodeOutput.Role.
const (
	roleValidator = "validator"
	roleFullNode  = "full node"
)

func newTestnetOutput(r node.TestnetResult, stateSync bool) testnetOutput {
	out := testnetOutput{Output: r.Output, ChainID: r.ChainID, HostPorts: r.HostPortPrefix, Local: r.Local, StateSync: stateSync, ClientHome: r.ClientHome,
		DevKey: node.DevKeyName, DevAddress: r.DevAddress.String(), DevBalance: r.DevBalance, PayoutKeys: []string{}}
	for _, n := range r.Nodes {
		o := testnetNodeOutput{
			Name:        n.Name,
			Role:        roleFullNode,
			Home:        n.Home,
			IP:          n.IP,
			P2P:         net.JoinHostPort(n.IP, strconv.Itoa(n.P2PPort)),
			NodeID:      n.NodeID,
			HostRPC:     fmt.Sprintf("http://127.0.0.1:%d", n.HostRPCPort),
			HostMetrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", n.HostPrometheusPort),
			HostWeb:     fmt.Sprintf("http://127.0.0.1:%d/", n.HostWebPort),
		}
		if n.Validator {
			o.Role, o.ValidatorAddress, o.PayoutIdentity = roleValidator, n.ValidatorAddress.String(), n.PayoutIdentity.String()
			out.PayoutKeys = append(out.PayoutKeys, node.PayoutKeyName(n.Name))
		}
		out.Nodes = append(out.Nodes, o)
	}
	return out
}

// relative is path relative to the working directory when it lies under it, for the
// lines people paste; path otherwise.
func relative(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return rel
}

func (o testnetOutput) text(w io.Writer) {
	validators := 0
	for _, n := range o.Nodes {
		if n.Role == roleValidator {
			validators++
		}
	}
	if o.Local {
		fmt.Fprintf(w, "Wrote %d validator and %d full node homes of chain %q in %s, for processes on this machine\n", validators, len(o.Nodes)-validators, o.ChainID, o.Output)
		fmt.Fprintf(w, "%-7s %-10s %-16s %-23s %-38s %s\n", "node", "role", "p2p", "rpc", "metrics", "web view")
		for _, n := range o.Nodes {
			fmt.Fprintf(w, "%-7s %-10s %-16s %-23s %-38s %s\n", n.Name, n.Role, n.P2P, n.HostRPC, n.HostMetrics, n.HostWeb)
		}
	} else {
		fmt.Fprintf(w, "Wrote %d validator and %d full node homes of chain %q in %s\n", validators, len(o.Nodes)-validators, o.ChainID, o.Output)
		fmt.Fprintf(w, "%-7s %-10s %-15s %-23s %-38s %s\n", "node", "role", "ip", "host rpc", "host metrics", "web view")
		for _, n := range o.Nodes {
			fmt.Fprintf(w, "%-7s %-10s %-15s %-23s %-38s %s\n", n.Name, n.Role, n.IP, n.HostRPC, n.HostMetrics, n.HostWeb)
		}
	}
	client := relative(o.ClientHome)
	if o.Local {
		fmt.Fprintf(w, "Every node listens on 127.0.0.1 only, at the ports above (--host-ports %d).\n", o.HostPorts)
	} else {
		fmt.Fprintf(w, "The host ports are the compose files' with %s=%d.\n", hostPortsEnv, o.HostPorts)
	}
	fmt.Fprintf(w, "Client home %s (the CLI's --home); no node home holds a key that owns credits:\n", client)
	fmt.Fprintf(w, "  key %q, address %s, holds %d credits in genesis\n", o.DevKey, o.DevAddress, o.DevBalance)
	fmt.Fprintf(w, "  keys %s own the validators' payout identities\n", strings.Join(o.PayoutKeys, ", "))
	if o.Local {
		o.localStart(w)
	} else {
		fmt.Fprintf(w, "Start the network with: make devnet-up (full nodes: make devnet-up FULL_NODES=1); then try:\n")
	}
	if len(o.Nodes) > 0 {
		last := o.Nodes[len(o.Nodes)-1]
		fmt.Fprintf(w, "  %s --node %s status\n", repoBinary, o.Nodes[0].HostRPC)
		fmt.Fprintf(w, "  %s --home %s --node %s tx address transfer --from %s --to 0000000000000000000000000000000000000002 --amount 5 --commit\n", repoBinary, client, o.Nodes[0].HostRPC, o.DevKey)
		fmt.Fprintf(w, "  %s --home %s --node %s query address 0000000000000000000000000000000000000002 --prove\n", repoBinary, client, last.HostRPC)
	}
}

// localStart prints the commands that start a local network's nodes, one process
// each.
func (o testnetOutput) localStart(w io.Writer) {
	fmt.Fprintln(w, "Start each node in a terminal of its own (blocks come once the validators of more than 2/3 of the power run):")
	for _, n := range o.Nodes {
		if n.Role == roleFullNode && o.StateSync {
			fmt.Fprintf(w, "  %s statesync-config --home %s --node %s   (once the validators have made a snapshot)\n", repoBinary, relative(n.Home), o.Nodes[0].HostRPC)
		}
		fmt.Fprintf(w, "  %s start --home %s\n", repoBinary, relative(n.Home))
	}
	fmt.Fprintln(w, "then try:")
}

func newTestnetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "testnet --validators N [--full-nodes M [--state-sync]] --output DIR [--chain-id ID] [--local | --subnet-base IP] [--host-ports P] [--force]",
		Short: "Write the homes of a validator network for docker-compose, or for processes on this machine (--local)",
		Long: `testnet writes DIR/node0 .. DIR/node{N-1}, one home per validator, DIR/full0 ..
DIR/full{M-1}, one home per full node, and DIR/client, the client home. All share one
genesis in which every validator has equal power and a payout identity; the full
nodes' keys are in no genesis, so they follow the chain without voting.

The keys that own credits live in the client home only: its keyring holds the "dev"
key, funded in genesis, and node<i>-payout, the key of validator i's payout identity.
No node home (which a container mounts) holds one. Use the client home with the CLI:
  ./bin/ttld --home DIR/client --node http://127.0.0.1:26657 tx address transfer --from dev ...

The homes are made for docker-compose.yml's private network: validator i has the
address --subnet-base + i, the full nodes the addresses after the validators; every
node dials the validators by IP (persistent_peers), and listens on every interface of
its container (RPC 26657, P2P 26656, Prometheus 26660, web view 26680). With
--host-ports P (the compose files' TTLD_DEVNET_PORTS), validator i's RPC is published on
127.0.0.1 at P*1000+657+100i, its metrics at P*1000+660+100i and its web view at
P*1000+680+100i; full node j's at P*1000+557-100j, P*1000+560-100j and P*1000+580-100j
(P=26: 26657, 26757, ...; full0 26557).

With --local the homes are for processes side by side on this machine instead (ttld
start --home DIR/node<i> each): every node listens on 127.0.0.1 only, at the ports
above, and for P2P one below its RPC port (P*1000+656+100i; full node j
P*1000+556-100j); it dials the validators there.

Every node takes a snapshot of the state every --snapshot-interval blocks. With
--state-sync the full nodes join by state sync instead of executing every block since
genesis: before one starts, ttld statesync-config --home DIR/full<j> --node URL writes
the header it trusts, read from a running validator.

testnet refuses a DIR that exists and is not empty; --force deletes the node<N>,
full<N> and client folders in it (chains, keys and all) and writes new ones.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			validators, _ := f.GetInt("validators")
			fullNodes, _ := f.GetInt("full-nodes")
			output, _ := f.GetString("output")
			chainID, _ := f.GetString("chain-id")
			base, _ := f.GetString("subnet-base")
			ports, _ := f.GetInt("host-ports")
			balance, _ := f.GetUint64("dev-balance")
			force, _ := f.GetBool("force")
			epochLength, _ := f.GetUint64("epoch-length")
			version, _ := f.GetUint32("protocol-version")
			signal, _ := f.GetUint32(flagSignalVersion)
			upgrade, err := upgradeArg(f)
			if err != nil {
				return err
			}
			stateSync, _ := f.GetBool("state-sync")
			interval, _ := f.GetInt64("snapshot-interval")
			local, _ := f.GetBool("local")
			if local && f.Changed("subnet-base") {
				return errUsage{"subnet-base", base, "no subnet with --local: every node runs on 127.0.0.1"}
			}
			if local {
				base = ""
			}
			if interval < 0 {
				return errUsage{"snapshot-interval", strconv.FormatInt(interval, 10), "a number of blocks, or 0 for none"}
			}
			if interval == 0 {
				interval = -1 // none; node.TestnetOptions reads 0 as its default
			}
			if stateSync && fullNodes == 0 {
				return errUsage{"state-sync", "without --full-nodes", "full nodes to join by state sync (--full-nodes M)"}
			}
			if output == "" {
				return errUsage{"output", output, "a directory"}
			}
			if env := os.Getenv(hostPortsEnv); env != "" && !f.Changed("host-ports") {
				p, err := strconv.Atoi(env)
				if err != nil {
					return errUsage{"host-ports", hostPortsEnv + "=" + env, "a number such as 26"}
				}
				ports = p
			}
			if ports <= 0 {
				return errUsage{"host-ports", strconv.Itoa(ports), "a positive number such as 26"}
			}
			res, err := node.Testnet(node.TestnetOptions{
				Output: output, Validators: validators, FullNodes: fullNodes, ChainID: chainID,
				SubnetBase: base, HostPortPrefix: ports, DevBalance: balance, Force: force, EpochLengthS: epochLength,
				ProtocolVersion: protocol.Version(version), SignalVersion: signal, LocalMinTTLSeconds: localMinTTL(cmd, chainID),
				SnapshotInterval: interval, StateSync: stateSync, Local: local, Timeouts: timeouts(cmd), Upgrade: upgrade,
			})
			if errors.As(err, new(node.ErrOutputExists)) {
				return fmt.Errorf("%w; --force replaces the homes in it", err)
			}
			if err != nil {
				return err
			}
			out := newTestnetOutput(res, stateSync)
			return printResult(cmd, out.text, out)
		},
	}
	f := cmd.Flags()
	f.Int("validators", 4, "number of validators")
	f.Int("full-nodes", 0, fmt.Sprintf("number of full nodes, which follow the chain without voting (0 to %d)", node.MaxTestnetFullNodes))
	// NB: not --output, which every command takes as the output format (-o json).
	f.String("output", "", "folder that receives the homes (required)")
	f.String("chain-id", node.DefaultTestnetChainID, "chain id")
	f.String("subnet-base", node.DefaultSubnetBase, "node0's address in the private network; node i has the i-th after it")
	f.Int("host-ports", node.DefaultTestnetHostPortPrefix, "leading digits of the host ports the compose files publish (default $"+hostPortsEnv+" when set)")
	f.Uint64("dev-balance", node.DefaultDevBalance, "credits of the client home's dev key in genesis")
	f.Uint64("epoch-length", genesis.DefaultEpochLengthS, "epoch length in seconds (60 to 31,536,000; mainnet 788,400)")
	localMinTTLFlag(cmd)
	protocolVersionFlag(cmd)
	timeoutFlags(cmd)
	f.Uint32(flagSignalVersion, 0, "every node's app.toml signal_version: the protocol version its proposals signal (0: the newest its binary implements; docs/STATE.md, Protocol upgrades)")
	f.String("protocol-upgrade", "", "VERSION@HEIGHT: genesis schedules the switch to that protocol version at that height, without signals (docs/STATE.md, Protocol upgrades)")
	f.Int64("snapshot-interval", node.DefaultTestnetSnapshotInterval, "every node's app.toml snapshot_interval: a snapshot of the state every this many blocks, offered to nodes joining by state sync (0: none)")
	f.Bool("state-sync", false, "the full nodes join by state sync from the validators: [statesync] on with the validators' RPC servers; ttld statesync-config --home DIR/full<j> --node URL writes the header to trust once the network runs (make devnet-up does)")
	f.Bool("local", false, "homes for processes on this machine: every node on 127.0.0.1 at ports of its own (from --host-ports), not docker's network")
	f.Bool("force", false, "replace the homes of a DIR that is not empty")
	return cmd
}

// upgradeArg reads --protocol-upgrade VERSION@HEIGHT (empty: none).
func upgradeArg(f *pflag.FlagSet) (*genesis.Upgrade, error) {
	s, err := f.GetString("protocol-upgrade")
	if err != nil || s == "" {
		return nil, err
	}
	v, h, ok := strings.Cut(s, "@")
	version, verr := strconv.ParseUint(v, 10, 32)
	height, herr := strconv.ParseUint(h, 10, 64)
	if !ok || verr != nil || herr != nil || !protocol.Known(protocol.Version(version)) {
		return nil, errUsage{"protocol-upgrade", s, fmt.Sprintf("VERSION@HEIGHT, a version this binary implements (%v) and a height", protocol.Supported())}
	}
	return &genesis.Upgrade{Version: protocol.Version(version), Height: height}, nil
}
