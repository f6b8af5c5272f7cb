package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/node"
)

// testnetOutput is what testnet prints (-o json: this object).
type testnetOutput struct {
	Output     string              `json:"output"`
	ChainID    string              `json:"chain_id"`
	DevKey     string              `json:"dev_key"`
	DevBalance uint64              `json:"dev_balance"`
	Nodes      []testnetNodeOutput `json:"nodes"`
}

type testnetNodeOutput struct {
	Name             string `json:"name"`
	Home             string `json:"home"`
	IP               string `json:"ip"`
	NodeID           string `json:"node_id"`
	ValidatorAddress string `json:"validator_address"`
	DevAddress       string `json:"dev_address"`
	PayoutIdentity   string `json:"payout_identity"`
	// HostRPC and HostMetrics are where docker-compose.yml publishes the node.
	HostRPC     string `json:"host_rpc"`
	HostMetrics string `json:"host_metrics"`
}

func newTestnetOutput(r node.TestnetResult) testnetOutput {
	out := testnetOutput{Output: r.Output, ChainID: r.ChainID, DevKey: node.DevKeyName, DevBalance: r.DevBalance}
	for _, n := range r.Nodes {
		out.Nodes = append(out.Nodes, testnetNodeOutput{
			Name:             n.Name,
			Home:             n.Home,
			IP:               n.IP,
			NodeID:           n.NodeID,
			ValidatorAddress: n.ValidatorAddress.String(),
			DevAddress:       n.DevAddress.String(),
			PayoutIdentity:   n.PayoutIdentity.String(),
			HostRPC:          fmt.Sprintf("http://127.0.0.1:%d", n.HostRPCPort),
			HostMetrics:      fmt.Sprintf("http://127.0.0.1:%d/metrics", n.HostPrometheusPort),
		})
	}
	return out
}

func (o testnetOutput) text(w io.Writer) {
	fmt.Fprintf(w, "Wrote %d validator homes of chain %q in %s\n", len(o.Nodes), o.ChainID, o.Output)
	fmt.Fprintf(w, "%-7s %-15s %-23s %s\n", "node", "ip", "host rpc", "dev address (key \""+o.DevKey+"\")")
	for _, n := range o.Nodes {
		fmt.Fprintf(w, "%-7s %-15s %-23s %s\n", n.Name, n.IP, n.HostRPC, n.DevAddress)
	}
	fmt.Fprintf(w, "Each dev address holds %d credits in genesis; each validator has a payout identity.\n", o.DevBalance)
	fmt.Fprintf(w, "The host ports are docker-compose.yml's; start the network with: make devnet-up\n")
}

func newTestnetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "testnet --validators N --output DIR [--chain-id ID] [--subnet-base IP] [--force]",
		Short: "Write the homes of a validator network for docker-compose",
		Long: `testnet writes DIR/node0 .. DIR/node{N-1}: one home per validator, all sharing one
genesis in which every node's validator has equal power, every node's "dev" key is
funded, and every validator has a payout identity (its key: that node's dev key).

The homes are made for docker-compose.yml's private network: node i has the address
--subnet-base + i, dials the others by IP (persistent_peers), and listens on every
interface of its container (RPC 26657, P2P 26656, Prometheus 26660). The compose file
publishes node i's RPC on 127.0.0.1:26657+100i and its metrics on 127.0.0.1:26660+100i.

testnet refuses a DIR that exists and is not empty; --force deletes the node<N>
folders in it (chains, keys and all) and writes new ones.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			validators, _ := f.GetInt("validators")
			output, _ := f.GetString("output")
			chainID, _ := f.GetString("chain-id")
			base, _ := f.GetString("subnet-base")
			balance, _ := f.GetUint64("dev-balance")
			force, _ := f.GetBool("force")
			if output == "" {
				return errUsage{"output", output, "a directory"}
			}
			res, err := node.Testnet(node.TestnetOptions{
				Output: output, Validators: validators, ChainID: chainID,
				SubnetBase: base, DevBalance: balance, Force: force,
			})
			if errors.As(err, new(node.ErrOutputExists)) {
				return fmt.Errorf("%w; --force replaces the node homes in it", err)
			}
			if err != nil {
				return err
			}
			out := newTestnetOutput(res)
			return printResult(cmd, out.text, out)
		},
	}
	f := cmd.Flags()
	f.Int("validators", 4, "number of validators")
	// NB: not --output, which every command takes as the output format (-o json).
	f.String("output", "", "folder that receives the node homes (required)")
	f.String("chain-id", node.DefaultTestnetChainID, "chain id")
	f.String("subnet-base", node.DefaultSubnetBase, "node0's address in the private network; node i has the i-th after it")
	f.Uint64("dev-balance", node.DefaultDevBalance, "credits of each node's dev key in genesis")
	f.Bool("force", false, "replace the node homes of a DIR that is not empty")
	return cmd
}
