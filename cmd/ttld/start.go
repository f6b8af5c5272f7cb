package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

func newStartCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Run the chain in --home until SIGINT or SIGTERM",
		Long: fmt.Sprintf(`Run the chain in --home until SIGINT or SIGTERM.

The node's proposals signal the newest protocol version this binary implements (%d),
or --signal-version (app.toml's signal_version) to hold it back; the chain moves to a
version one epoch change after an epoch in which enough blocks signalled it
(docs/STATE.md, "Protocol upgrades"). When the chain moves to a version this binary
does not implement, the node stops before that block with one line naming the version
and the height, and exits with code %d, its stores intact: start a binary that
implements the version on the same --home and it continues from there.`, protocol.Newest(), ExitUpgradeNeeded),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runNode(cmd, nil)
		},
	}
	listenFlags(cmd)
	return cmd
}

// listenFlags override config.toml's listen addresses.
func listenFlags(cmd *cobra.Command) {
	cmd.Flags().String("rpc-laddr", "", "RPC listen address, such as tcp://127.0.0.1:26657 (default: config.toml)")
	cmd.Flags().String("p2p-laddr", "", "P2P listen address, such as tcp://127.0.0.1:26656 (default: config.toml)")
	cmd.Flags().String("prometheus-laddr", "", "Prometheus listen address, such as 127.0.0.1:26660 (default: config.toml)")
	cmd.Flags().String("web-laddr", "", `web view listen address, such as 127.0.0.1:26680, or "off" (default: app.toml's [web] laddr)`)
	cmd.Flags().Bool("check-invariants", false, "after every block, check that the running total of credits equals the genesis supply, and halt on a mismatch")
	cmd.Flags().Uint32(flagSignalVersion, 0, fmt.Sprintf("protocol version this node's proposals signal, to hold back from the newest this binary implements (%d); 0 or unset: app.toml's signal_version", protocol.Newest()))
}

// flagSignalVersion names ttld start's --signal-version.
const flagSignalVersion = "signal-version"

// runNode starts the node of --home, calls started once it runs, and stops it cleanly
// on SIGINT, SIGTERM or the end of the command's context. It reads app.toml once, for
// the logger, the garbage collector and the node.
func runNode(cmd *cobra.Command, started func(*node.Node) error) error {
	home := globalFlags(cmd).Home
	cfg, err := node.LoadAppConfig(home)
	if err != nil {
		return err
	}
	log, err := nodeLogger(cmd, cfg)
	if err != nil {
		return err
	}
	setGCPercent(log, cfg.GCPercent)
	parent := cmd.Context()
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()

	rpc, _ := cmd.Flags().GetString("rpc-laddr")
	p2p, _ := cmd.Flags().GetString("p2p-laddr")
	prom, _ := cmd.Flags().GetString("prometheus-laddr")
	webAddr, _ := cmd.Flags().GetString("web-laddr")
	check, _ := cmd.Flags().GetBool("check-invariants")
	opts := node.StartOptions{Home: home, Logger: log, RPCListen: rpc, P2PListen: p2p, PrometheusListen: prom, WebListen: webAddr, CheckInvariants: check, AppConfig: &cfg}
	if f := cmd.Flags().Lookup(flagSignalVersion); f != nil && f.Changed {
		v, _ := cmd.Flags().GetUint32(flagSignalVersion)
		opts.SignalVersion = &v
	}
	n, err := node.Start(opts)
	if err != nil {
		return err
	}
	if started != nil {
		if err := started(n); err != nil {
			n.Stop()
			return err
		}
	}
	select {
	case <-ctx.Done():
	case <-n.Halted():
		upgrade := errors.As(n.HaltErr(), new(app.ErrUpgradeNeeded))
		if upgrade {
			log.Info().Msg("stopping: the chain moved past this binary")
		} else {
			log.Info().Err(n.HaltErr()).Msg("stopping: the state sync cannot end")
		}
		stopped, err := n.StopHalted()
		if !stopped && upgrade {
			log.Info().Msg("CometBFT waits for the block the node halted at; exiting without it (nothing is lost: that block is saved, not executed)")
		}
		return errors.Join(n.HaltErr(), err)
	}
	log.Info().Msg("stopping")
	if err := n.Stop(); err != nil {
		return err
	}
	log.Info().Msg("stopped")
	return nil
}

// setGCPercent sets the garbage collector's target to app.toml's gc_percent, unless
// the GOGC environment variable set it for this process.
func setGCPercent(log zerolog.Logger, percent int) {
	if v, ok := os.LookupEnv("GOGC"); ok {
		log.Info().Str("GOGC", v).Msg("garbage collector target from the environment; app.toml's gc_percent not applied")
		return
	}
	debug.SetGCPercent(percent)
}

// nodeLogger logs to the command's error stream in app.toml's format and level,
// overridden by --log-format and --log-level.
func nodeLogger(cmd *cobra.Command, cfg node.AppConfig) (zerolog.Logger, error) {
	g := globalFlags(cmd)
	if g.LogFormat != "" {
		cfg.LogFormat = g.LogFormat
	}
	if g.LogLevel != "" {
		cfg.LogLevel = g.LogLevel
	}
	level, err := node.ParseLogLevel(cfg.LogLevel)
	if err != nil {
		return zerolog.Nop(), err
	}
	return node.NewLogger(cmd.ErrOrStderr(), cfg.LogFormat == node.LogFormatJSON, level), nil
}
