package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"time"

	rpcclient "github.com/cometbft/cometbft/rpc/client"
	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/abci"
	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/proofs"
)

// statusOutput is what status prints (-o json: this object), from the node's RPC
// `status` and `net_info`.
type statusOutput struct {
	Node        string    `json:"node"` // the RPC URL asked
	ChainID     string    `json:"chain_id"`
	NodeID      string    `json:"node_id"`
	Moniker     string    `json:"moniker"`
	Height      int64     `json:"height"`
	BlockTime   time.Time `json:"block_time"`
	AppHash     string    `json:"app_hash"`
	CatchingUp  bool      `json:"catching_up"`
	VotingPower int64     `json:"voting_power"` // 0: a full node, not a validator
	// ValidatorAddress and ValidatorPubKey are the node's consensus key (its
	// priv_validator_key.json), which a proposal to add it names (ttld tx validator
	// propose add --pubkey), whether it is a validator or not.
	ValidatorAddress string       `json:"validator_address"`
	ValidatorPubKey  string       `json:"validator_pub_key"`
	Peers            []peerOutput `json:"peers"`
	// Protocol is the protocol version and the upgrade in place under way at the
	// node's last saved height (ttld query protocol; unproven here).
	Protocol protocolJSON `json:"protocol"`
	// Restore is the node's state sync (the /restore query, unproven): the snapshot it
	// is restoring, the height it restored from, what it refused; absent when it never
	// state-synced.
	Restore *abci.RestoreStatus `json:"restore,omitempty"`
}

type peerOutput struct {
	ID       string `json:"id"`
	Moniker  string `json:"moniker"`
	RemoteIP string `json:"remote_ip"`
	Outbound bool   `json:"outbound"`
}

// errCatchingUp: --fail-catching-up, and the node is still catching up.
type errCatchingUp struct{ Height int64 }

func (e errCatchingUp) Error() string {
	return fmt.Sprintf("the node is catching up (at height %d)", e.Height)
}

// nodeStatus asks the node at url for its status and its peers.
func nodeStatus(ctx context.Context, url string) (statusOutput, error) {
	rpc, err := rpchttp.New(url, "/websocket")
	if err != nil {
		return statusOutput{}, err
	}
	st, err := rpc.Status(ctx)
	if err != nil {
		return statusOutput{}, fmt.Errorf("status of %s: %w", url, err)
	}
	ni, err := rpc.NetInfo(ctx)
	if err != nil {
		return statusOutput{}, fmt.Errorf("net_info of %s: %w", url, err)
	}
	out := statusOutput{
		Node:        url,
		ChainID:     st.NodeInfo.Network,
		NodeID:      string(st.NodeInfo.ID()),
		Moniker:     st.NodeInfo.Moniker,
		Height:      st.SyncInfo.LatestBlockHeight,
		BlockTime:   st.SyncInfo.LatestBlockTime,
		AppHash:     st.SyncInfo.LatestAppHash.String(),
		CatchingUp:  st.SyncInfo.CatchingUp,
		VotingPower: st.ValidatorInfo.VotingPower,
		Peers:       []peerOutput{},
	}
	if pk := st.ValidatorInfo.PubKey; pk != nil {
		out.ValidatorAddress, out.ValidatorPubKey = st.ValidatorInfo.Address.String(), hex.EncodeToString(pk.Bytes())
	}
	for _, p := range ni.Peers {
		out.Peers = append(out.Peers, peerOutput{ID: string(p.NodeInfo.ID()), Moniker: p.NodeInfo.Moniker, RemoteIP: p.RemoteIP, Outbound: p.IsOutbound})
	}
	if out.Restore, err = nodeRestore(ctx, rpc); err != nil {
		return statusOutput{}, fmt.Errorf("restore of %s: %w", url, err)
	}
	if out.Height > 0 {
		p, err := client.New(rpc, client.Options{MaxAge: -1}).Protocol(ctx, 0, false)
		if err != nil {
			return statusOutput{}, fmt.Errorf("protocol of %s: %w", url, err)
		}
		out.Protocol = protocolOutput(p)
	}
	return out, nil
}

// nodeRestore asks the node for its state sync (proofs.PathRestore); nil when it never
// state-synced, or answers no such path.
func nodeRestore(ctx context.Context, rpc rpcclient.ABCIClient) (*abci.RestoreStatus, error) {
	res, err := rpc.ABCIQuery(ctx, proofs.PathRestore, nil)
	if err != nil {
		return nil, err
	}
	if res.Response.Code != 0 {
		return nil, nil
	}
	var st abci.RestoreStatus
	if err := json.Unmarshal(res.Response.Value, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", proofs.PathRestore, err)
	}
	if st == (abci.RestoreStatus{}) {
		return nil, nil
	}
	return &st, nil
}

func (o statusOutput) text(w io.Writer) {
	role := "full node (no voting power)"
	if o.VotingPower > 0 {
		role = fmt.Sprintf("validator, power %d", o.VotingPower)
	}
	fmt.Fprintf(w, "node:         %s (%s, id %s)\n", o.Node, o.Moniker, o.NodeID)
	fmt.Fprintf(w, "chain id:     %s\n", o.ChainID)
	fmt.Fprintf(w, "height:       %d (block time %s)\n", o.Height, o.BlockTime.UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(w, "app hash:     %s\n", o.AppHash)
	fmt.Fprintf(w, "catching up:  %t\n", o.CatchingUp)
	if r := o.Restore; r != nil {
		if r.Height != 0 {
			fmt.Fprintf(w, "restoring:    the snapshot at height %d: %d of %d chunks applied, %.1f MiB\n", r.Height, r.ChunksApplied, r.Chunks, float64(r.BytesApplied)/(1<<20))
		}
		if r.Restored != 0 {
			fmt.Fprintf(w, "restored:     from the snapshot at height %d\n", r.Restored)
		}
		fmt.Fprintf(w, "state sync:   %d snapshots offered, %d refused, %d chunks refused\n", r.Offered, r.Refused, r.ChunksRefused)
	}
	fmt.Fprintf(w, "role:         %s\n", role)
	if o.ValidatorPubKey != "" {
		fmt.Fprintf(w, "consensus key: %s (address %s)\n", o.ValidatorPubKey, o.ValidatorAddress)
	}
	if p := o.Protocol; p.Version != 0 {
		fmt.Fprintf(w, "protocol:     %d (this binary implements up to %d)\n", p.Version, p.NewestSupported)
		switch {
		case p.Next != 0:
			fmt.Fprintf(w, "next version: %d, at the next epoch change\n", p.Next)
		case p.Current != nil:
			fmt.Fprintf(w, "signals:      %d of the epoch's %d blocks so far signalled %d or later (threshold %d%%)\n", p.Current.Toward, p.Current.Blocks, p.Version+1, p.ThresholdPercent)
		}
	}
	fmt.Fprintf(w, "peers:        %d\n", len(o.Peers))
	for _, p := range o.Peers {
		dir := "inbound"
		if p.Outbound {
			dir = "outbound"
		}
		fmt.Fprintf(w, "  %-40s %-15s %-12s %s\n", p.ID, p.RemoteIP, p.Moniker, dir)
	}
}

func newStatusCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status [--node URL] [--timeout D] [--fail-catching-up]",
		Short: "Print the node's height, app hash, sync state, protocol version and peers; exit 1 if it does not answer",
		Long: `status asks the node at --node (CometBFT's RPC status and net_info) for its latest
height, block time and app hash, whether it is catching up, its voting power and its
peers, and (through abci_query, unproven) the protocol version in force with the
upgrade in place under way: the next version once decided, else the current epoch's
signals for the next one (ttld query protocol --prove checks them), and, on a node
that state-syncs, the snapshot it is restoring (its height, chunks applied of all,
bytes), the height it restored from and the snapshots and chunks it refused. It exits
non-zero when the node does not answer within --timeout, and, with --fail-catching-up,
when the node is still catching up. It needs no home, so it serves as the devnet's
container health check.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			timeout, _ := cmd.Flags().GetDuration("timeout")
			failCatchingUp, _ := cmd.Flags().GetBool("fail-catching-up")
			if timeout <= 0 {
				return errUsage{"timeout", timeout.String(), "a positive duration"}
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			out, err := nodeStatus(ctx, globalFlags(cmd).Node)
			if err != nil {
				return err
			}
			if err := printResult(cmd, out.text, out); err != nil {
				return err
			}
			if failCatchingUp && out.CatchingUp {
				return errCatchingUp{out.Height}
			}
			return nil
		},
	}
	cmd.Flags().Duration("timeout", 5*time.Second, "how long the node has to answer both calls")
	cmd.Flags().Bool("fail-catching-up", false, "exit non-zero while the node is catching up")
	return cmd
}
