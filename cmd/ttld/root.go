package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/node"
)

// Global flags, accepted by every command.
const (
	flagHome      = "home"
	flagNode      = "node"
	flagOutput    = "output-format"
	flagLogFormat = "log-format"
	flagLogLevel  = "log-level"
)

// Values of --output.
const (
	outputText = "text"
	outputJSON = "json"
)

// DefaultNode is the RPC URL commands talk to unless --node says otherwise.
const DefaultNode = "http://127.0.0.1:26657"

// globals are the values of the global flags.
type globals struct {
	Home   string // home directory: config, data, keyring
	Node   string // CometBFT RPC URL
	Output string // outputText or outputJSON
	// LogFormat and LogLevel override app.toml when not empty.
	LogFormat string
	LogLevel  string
}

// errUsage: a flag has a value the command does not accept.
type errUsage struct{ Flag, Value, Want string }

func (e errUsage) Error() string {
	return fmt.Sprintf("--%s %q: want %s", e.Flag, e.Value, e.Want)
}

// Exit codes besides 0 (success) and 1 (any other error).
const (
	// ExitUpgradeNeeded: ttld start stopped because the chain moved to a protocol
	// version this binary does not implement (app.ErrUpgradeNeeded), which the node
	// logged in one line.
	ExitUpgradeNeeded = 3
)

// Execute runs the command line args and returns the process exit code.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	if errors.As(err, new(app.ErrUpgradeNeeded)) {
		// NB: the node logged it, in one line, when it halted.
		return ExitUpgradeNeeded
	}
	root.PrintErrln(root.ErrPrefix(), err.Error())
	return 1
}

func defaultHome() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return ".ttld"
	}
	return filepath.Join(h, ".ttld")
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "ttld",
		Short: "A document platform chain with time to live, on CometBFT",
		Long: `ttld runs a CometBFT chain whose state is one IAVL tree, and talks to it.

  ttld init && ttld start     a single-validator chain in --home
  ttld devnet                 the same in one command, with a short guide
  ttld keys add NAME          a key in the home's (unencrypted, test) keyring
  ttld tx ... / ttld query    transitions and reads through the node's RPC
  ttld replay                 re-execute the block store and compare every app hash
  ttld testnet                homes for a multi-validator network (make devnet-up)
  ttld status                 a node's height, app hash, sync state and peers
  ttld statesync-config       prepare a new node to join a running network by state sync
  ttld snapshots              list, export and restore state snapshots, offline
  ttld version                version, commit, Go and protocol versions`,
		SilenceUsage: true,
		// Execute prints the error, but one the node has logged already.
		SilenceErrors:     true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return checkGlobals(globalFlags(cmd)) },
	}
	f := root.PersistentFlags()
	f.String(flagHome, defaultHome(), "home directory: config, chain data and keyring")
	f.String(flagNode, DefaultNode, "CometBFT RPC URL of the node to talk to")
	f.StringP(flagOutput, "o", outputText, "output format: text or json (-o json for scripts)")
	f.String(flagLogFormat, "", "node log format: console or json (default: app.toml's log_format)")
	f.String(flagLogLevel, "", "node log level: trace, debug, info, warn or error (default: app.toml's log_level)")
	root.AddCommand(newInitCmd(), newStartCmd(), newDevnetCmd(), newKeysCmd(), newTxCmd(), newQueryCmd(), newReplayCmd(), newTestnetCmd(), newVersionCmd(), newStatusCmd(), newCheckProofCmd(), newSnapshotsCmd(), newStateSyncConfigCmd())
	refuseBareParents(root)
	return root
}

// globalFlags reads the global flags as cmd sees them.
func globalFlags(cmd *cobra.Command) globals {
	get := func(name string) string {
		if f := cmd.Flag(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	return globals{
		Home:      get(flagHome),
		Node:      get(flagNode),
		Output:    get(flagOutput),
		LogFormat: get(flagLogFormat),
		LogLevel:  get(flagLogLevel),
	}
}

func checkGlobals(g globals) error {
	if g.Output != outputText && g.Output != outputJSON {
		return errUsage{flagOutput, g.Output, "text or json"}
	}
	if g.LogFormat != "" && g.LogFormat != node.LogFormatConsole && g.LogFormat != node.LogFormatJSON {
		return errUsage{flagLogFormat, g.LogFormat, "console or json"}
	}
	if g.LogLevel != "" {
		if _, err := node.ParseLogLevel(g.LogLevel); err != nil {
			return errUsage{flagLogLevel, g.LogLevel, "trace, debug, info, warn or error"}
		}
	}
	if g.Home == "" {
		return errUsage{flagHome, g.Home, "a directory"}
	}
	return nil
}

// printResult writes a command's result to its output: textFn for people, or
// jsonValue as indented JSON with -o json.
func printResult(cmd *cobra.Command, textFn func(io.Writer), jsonValue any) error {
	switch out := globalFlags(cmd).Output; out {
	case outputText:
		textFn(cmd.OutOrStdout())
		return nil
	case outputJSON:
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(jsonValue)
	default:
		return errUsage{flagOutput, out, "text or json"}
	}
}
