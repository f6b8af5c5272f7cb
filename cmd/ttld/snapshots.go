package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"

	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/node"
)

// snapshotOutput is one snapshot as the snapshot commands print it.
type snapshotOutput struct {
	Height  int64  `json:"height"`
	Format  uint32 `json:"format"`
	Chunks  int    `json:"chunks"`
	Bytes   int64  `json:"bytes"`
	AppHash string `json:"app_hash"`
	Hash    string `json:"hash"`
}

func newSnapshotOutput(s node.SnapshotInfo) snapshotOutput {
	m := s.Manifest
	return snapshotOutput{Height: m.Height, Format: m.Format, Chunks: len(m.Chunks), Bytes: s.Bytes,
		AppHash: strings.ToUpper(hex.EncodeToString(m.Root)), Hash: strings.ToUpper(hex.EncodeToString(m.Hash()))}
}

func (s snapshotOutput) text(w io.Writer) {
	fmt.Fprintf(w, "height %d  format %d  %d chunks  %.1f MiB  app hash %s  snapshot %s\n",
		s.Height, s.Format, s.Chunks, float64(s.Bytes)/(1<<20), s.AppHash, s.Hash)
}

func newSnapshotsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshots",
		Short: "List, take and restore the state snapshots of --home (docs/STATE.md, Snapshots)",
		Long: `A node keeps snapshots of its state in --home's data/snapshots: those it takes every
snapshot_interval blocks (app.toml) and those ttld snapshots export writes. It offers
them to the nodes that join by state sync.

list reads data/snapshots alone and works on a running node (a snapshot the node is
still writing is left out). export and restore open the node's state, whose database a
running node holds locked: stop the node first (they fail while it runs), and restore
only into a new home, with no state yet.`,
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the snapshots --home keeps, newest first (works on a running node)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			infos, dir, err := node.Snapshots(globalFlags(cmd).Home)
			if err != nil {
				return err
			}
			out := struct {
				Dir       string           `json:"dir"`
				Snapshots []snapshotOutput `json:"snapshots"`
			}{Dir: dir, Snapshots: []snapshotOutput{}}
			for _, s := range infos {
				out.Snapshots = append(out.Snapshots, newSnapshotOutput(s))
			}
			return printResult(cmd, func(w io.Writer) {
				fmt.Fprintf(w, "%d snapshots in %s\n", len(out.Snapshots), dir)
				for _, s := range out.Snapshots {
					s.text(w)
				}
			}, out)
		},
	}
	export := &cobra.Command{
		Use:   "export [--height H]",
		Short: "Take a snapshot of the node's state at a height it keeps (default: its last; the node stopped)",
		Long: `export writes a snapshot of --home's state after block --height (default: the last the
node saved; any height within keep_recent) into its data/snapshots, where the node offers
it to peers once started, and where ttld snapshots restore finds it when the folder is
copied into another home.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			height, _ := cmd.Flags().GetInt64("height")
			if height < 0 {
				return errUsage{"height", fmt.Sprint(height), "a height, or 0 for the last"}
			}
			info, err := node.ExportSnapshot(globalFlags(cmd).Home, height)
			if err != nil {
				return err
			}
			out := newSnapshotOutput(info)
			return printResult(cmd, func(w io.Writer) {
				fmt.Fprint(w, "snapshot taken: ")
				out.text(w)
			}, out)
		},
	}
	export.Flags().Int64("height", 0, "height of the state to export (0: the last saved)")
	restore := &cobra.Command{
		Use:   "restore [--height H]",
		Short: "Restore a new node's state from a snapshot in its data/snapshots, checked by its light client (the node stopped)",
		Long: `restore imports the snapshot at --height (default: the newest) from --home's
data/snapshots (a snapshot folder copied there from another node's) into the state of a
node that has none, then bootstraps CometBFT's state at that height: the light client
configured by [statesync] in config.toml (ttld statesync-config) must find the
snapshot's root as the app hash of the next header, or nothing of the restore is kept;
it reads the two headers after the snapshot's height, so the network must have made
them. ttld start then follows the chain from the snapshot's height, as after a state
sync.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			height, _ := cmd.Flags().GetInt64("height")
			if height < 0 {
				return errUsage{"height", fmt.Sprint(height), "a height, or 0 for the newest"}
			}
			bar := progress(cmd.ErrOrStderr(), "restore", "chunks")
			info, err := node.RestoreSnapshot(cmd.Context(), globalFlags(cmd).Home, height, func(done, total int) { bar(int64(done), int64(total)) })
			if err != nil {
				return err
			}
			out := newSnapshotOutput(info)
			return printResult(cmd, func(w io.Writer) {
				fmt.Fprint(w, "restored: ")
				out.text(w)
				fmt.Fprintln(w, "start the node (ttld start): it follows the chain from there")
			}, out)
		},
	}
	restore.Flags().Int64("height", 0, "height of the snapshot to restore (0: the newest)")
	cmd.AddCommand(list, export, restore)
	return cmd
}

// stateSyncOutput is what statesync-config wrote.
type stateSyncOutput struct {
	Config      string   `json:"config"`
	TrustHeight int64    `json:"trust_height"`
	TrustHash   string   `json:"trust_hash"`
	RPCServers  []string `json:"rpc_servers"`
}

func newStateSyncConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "statesync-config --node URL [--trust-height H] [--rpc-servers A,B] [--wait D]",
		Short: "Turn state sync on in --home's config.toml, trusting a header read from --node",
		Long: `statesync-config prepares a new node to join a running network by state sync: it reads
from the node at --node, one of the network that you trust, the hash of the header at
--trust-height (default: its latest), and writes into --home's config.toml [statesync]
enable = true, trust_height and trust_hash, and rpc_servers (--rpc-servers, or the
ones config.toml has, or --node twice). At start the node's light client verifies
every header it needs from that one on, the snapshot it restores must have the root
the verified header after it carries, and the node then follows the chain
(README, "Joining a network by state sync").

The chain id of --node must be the one of --home's genesis. --wait waits, up to the
duration given, for --node to answer with a block.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			g := globalFlags(cmd)
			f := cmd.Flags()
			height, _ := f.GetInt64("trust-height")
			servers, _ := f.GetStringSlice("rpc-servers")
			wait, _ := f.GetDuration("wait")
			if height < 0 {
				return errUsage{"trust-height", fmt.Sprint(height), "a height, or 0 for the node's latest"}
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			trust, err := readTrust(ctx, g.Node, g.Home, height, wait)
			if err != nil {
				return err
			}
			trust.RPCServers, trust.Node = servers, g.Node
			cfg, err := node.SetStateSync(g.Home, trust)
			if err != nil {
				return err
			}
			out := stateSyncOutput{Config: node.ConfigFile(cfg.RootDir), TrustHeight: trust.Height,
				TrustHash: cfg.StateSync.TrustHash, RPCServers: cfg.StateSync.RPCServers}
			return printResult(cmd, func(w io.Writer) {
				fmt.Fprintf(w, "state sync on in %s: trust height %d, hash %s, rpc servers %s\n",
					out.Config, out.TrustHeight, out.TrustHash, strings.Join(out.RPCServers, ","))
				fmt.Fprintln(w, "start the node (ttld start): it restores a snapshot its peers offer, then follows the chain")
			}, out)
		},
	}
	f := cmd.Flags()
	f.Int64("trust-height", 0, "height of the header to trust (0: the node's latest)")
	f.StringSlice("rpc-servers", nil, "the light client's RPC servers, two at least (default: config.toml's, or --node twice)")
	f.Duration("wait", 0, "wait up to this long for --node to answer with a block")
	return cmd
}

// readTrust reads from the node at url the hash of the header at height (0: its
// latest), checking that it runs home's chain; with wait > 0 it waits that long at
// most for the node to answer with a block.
func readTrust(ctx context.Context, url, home string, height int64, wait time.Duration) (node.StateSyncTrust, error) {
	gen, err := node.LoadGenesis(home)
	if err != nil {
		return node.StateSyncTrust{}, err
	}
	rpc, err := rpchttp.New(url, "/websocket")
	if err != nil {
		return node.StateSyncTrust{}, err
	}
	deadline := time.Now().Add(wait)
	for {
		st, err := rpc.Status(ctx)
		switch {
		case err == nil && st.NodeInfo.Network != gen.ChainID:
			return node.StateSyncTrust{}, fmt.Errorf("%s runs chain %q, %s's genesis chain %q", url, st.NodeInfo.Network, home, gen.ChainID)
		case err == nil && st.SyncInfo.LatestBlockHeight > 0:
			h := height
			if h == 0 {
				h = st.SyncInfo.LatestBlockHeight
			}
			hdr, err := rpc.Header(ctx, &h)
			if err != nil {
				return node.StateSyncTrust{}, fmt.Errorf("header %d of %s: %w", h, url, err)
			}
			return node.StateSyncTrust{Height: h, Hash: hdr.Header.Hash()}, nil
		case time.Now().After(deadline):
			if err == nil {
				err = fmt.Errorf("%s has no block yet", url)
			}
			return node.StateSyncTrust{}, err
		}
		select {
		case <-ctx.Done():
			return node.StateSyncTrust{}, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
