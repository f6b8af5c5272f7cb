package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// initOutput is what init prints (-o json: this object).
type initOutput struct {
	Home             string `json:"home"`
	ChainID          string `json:"chain_id"`
	ConfigFile       string `json:"config_file"`
	AppConfigFile    string `json:"app_config_file"`
	GenesisFile      string `json:"genesis_file"`
	KeyringDir       string `json:"keyring_dir"`
	NodeKeyFile      string `json:"node_key_file"`
	NodeID           string `json:"node_id"`
	ValidatorKeyFile string `json:"validator_key_file"`
	DevKey           string `json:"dev_key"`
	DevAddress       string `json:"dev_address"`
	DevBalance       uint64 `json:"dev_balance"`
	// LocalMinTTL is the lowered minimum document ttl (local chains), 0: none.
	LocalMinTTL uint64 `json:"local_min_ttl_seconds,omitempty"`
}

func newInitOutput(r node.InitResult) initOutput {
	return initOutput{
		Home:             r.Home,
		ChainID:          r.ChainID,
		ConfigFile:       r.ConfigFile,
		AppConfigFile:    r.AppConfigFile,
		GenesisFile:      r.GenesisFile,
		KeyringDir:       r.KeyringDir,
		NodeKeyFile:      r.NodeKeyFile,
		NodeID:           r.NodeID,
		ValidatorKeyFile: r.ValidatorKeyFile,
		DevKey:           node.DevKeyName,
		DevAddress:       r.DevAddress.String(),
		DevBalance:       r.DevBalance,
		LocalMinTTL:      r.LocalMinTTL,
	}
}

func (o initOutput) text(w io.Writer) {
	fmt.Fprintf(w, "Initialized chain %q in %s\n", o.ChainID, o.Home)
	fmt.Fprintf(w, "  config:         %s\n", o.ConfigFile)
	fmt.Fprintf(w, "  app config:     %s\n", o.AppConfigFile)
	fmt.Fprintf(w, "  genesis:        %s\n", o.GenesisFile)
	fmt.Fprintf(w, "  keyring:        %s (unencrypted test keyring)\n", o.KeyringDir)
	fmt.Fprintf(w, "  node key:       %s (node id %s)\n", o.NodeKeyFile, o.NodeID)
	fmt.Fprintf(w, "  validator key:  %s\n", o.ValidatorKeyFile)
	fmt.Fprintf(w, "  dev address:    %s (key %q, %d credits in genesis)\n", o.DevAddress, o.DevKey, o.DevBalance)
	warnLocalLimits(w, o.LocalMinTTL)
	fmt.Fprintf(w, "Start it with: ttld start --home %s\n", o.Home)
}

// warnLocalLimits says, loudly, that a new genesis lowers the minimum ttl (0: it does
// not, and nothing is said).
func warnLocalLimits(w io.Writer, minTTL uint64) {
	if minTTL > 0 {
		fmt.Fprintf(w, "WARNING: LOCAL CHAIN LIMITS: document types may declare a ttl from %d s (the protocol's minimum is 3,600 s). A proof of a create fetched after the document expired fails; never start a public network from this genesis.\n", minTTL)
	}
}

// localMinTTL is the --local-min-ttl of a new chain: its default lowers local chains
// only, so a public chain id needs it explicitly (and is then refused).
func localMinTTL(cmd *cobra.Command, chainID string) uint64 {
	n, _ := cmd.Flags().GetUint64("local-min-ttl")
	if !protocol.LocalChainID(chainID) && !cmd.Flags().Changed("local-min-ttl") {
		return 0
	}
	return n
}

// DefaultLocalMinTTLSeconds is the minimum document ttl `ttld init` gives a local chain
// unless told otherwise: a minute, so the README's walkthrough can watch documents
// expire.
const DefaultLocalMinTTLSeconds = 60

func newInitCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "init [--chain-id ID] [--dev-balance N] [--overwrite]",
		Short: "Write a new single-validator chain into --home",
		Long: `init writes CometBFT's config.toml, ttld's app.toml, a node key, a validator key
and genesis.json into --home, and creates the "dev" key in the home's keyring, funded
in genesis. --overwrite starts a new chain in an initialized home: it DELETES the
home's data/ directory (blocks, state, application DB) and keeps the keys.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			chainID, _ := cmd.Flags().GetString("chain-id")
			moniker, _ := cmd.Flags().GetString("moniker")
			balance, _ := cmd.Flags().GetUint64("dev-balance")
			overwrite, _ := cmd.Flags().GetBool("overwrite")
			epoch, _ := cmd.Flags().GetUint64("epoch-length")
			version, _ := cmd.Flags().GetUint32("protocol-version")
			res, err := node.Init(node.InitOptions{
				Home: globalFlags(cmd).Home, ChainID: chainID, Moniker: moniker,
				DevBalance: balance, EpochLengthS: epoch, Overwrite: overwrite, LocalMinTTLSeconds: localMinTTL(cmd, chainID),
				ProtocolVersion: protocol.Version(version), Timeouts: timeouts(cmd),
			})
			if errors.As(err, new(node.ErrAlreadyInitialized)) {
				return fmt.Errorf("%w; ttld init --overwrite starts a new chain there, deleting its data", err)
			}
			if err != nil {
				return err
			}
			out := newInitOutput(res)
			return printResult(cmd, out.text, out)
		},
	}
	initFlags(cmd)
	cmd.Flags().String("moniker", "", "the node's name (default: the host name)")
	cmd.Flags().Bool("overwrite", false, "start a new chain in an initialized home, deleting its chain data")
	protocolVersionFlag(cmd)
	return cmd
}

// timeoutFlags are --timeout-commit and --timeout-propose of the commands that write a
// new chain's config.toml (timeouts reads them).
func timeoutFlags(cmd *cobra.Command) {
	cmd.Flags().Duration("timeout-commit", node.DefaultTimeoutCommit, "consensus.timeout_commit: the wait after a block before the next; below a second for a fast local chain, such as 50ms")
	cmd.Flags().Duration("timeout-propose", 0, "consensus.timeout_propose: how long validators wait for a proposal (0: CometBFT's 3s)")
}

// timeouts are the consensus timeouts timeoutFlags give.
func timeouts(cmd *cobra.Command) node.Timeouts {
	commit, _ := cmd.Flags().GetDuration("timeout-commit")
	propose, _ := cmd.Flags().GetDuration("timeout-propose")
	return node.Timeouts{Propose: propose, Commit: commit}
}

// protocolVersionFlag is --protocol-version of the commands that write a genesis.
func protocolVersionFlag(cmd *cobra.Command) {
	cmd.Flags().Uint32("protocol-version", 0, fmt.Sprintf("protocol version the chain starts on, one of %v (0: the newest, %d); an earlier one moves on in place (docs/STATE.md, Protocol upgrades)", protocol.Supported(), protocol.Newest()))
}

// initFlags are the flags of a new chain that init and devnet share.
func initFlags(cmd *cobra.Command) {
	cmd.Flags().String("chain-id", node.DefaultChainID, "chain id")
	cmd.Flags().Uint64("dev-balance", node.DefaultDevBalance, "credits of the dev key's address in genesis")
	cmd.Flags().Uint64("epoch-length", genesis.DefaultEpochLengthS, "epoch length in seconds (60 to 31,536,000; mainnet 788,400)")
	localMinTTLFlag(cmd)
	timeoutFlags(cmd)
}

// localMinTTLFlag is --local-min-ttl of the commands that write a genesis (localMinTTL
// reads it).
func localMinTTLFlag(cmd *cobra.Command) {
	cmd.Flags().Uint64("local-min-ttl", DefaultLocalMinTTLSeconds, "on a local chain (id ending in -local, -devnet, -test or -e2e), lower the minimum document ttl to this many seconds, so documents can be watched expiring (0: keep the protocol's 3,600)")
}
