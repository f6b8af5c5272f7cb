package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/load"
	"github.com/ttld-dev/ttld/protocol"
)

// runMargin bounds, on top of the sending, the retries and the drain, how long a run may take to
// set up (register a contract, read the nonces) and to read the blocks afterwards.
const runMargin = 3 * time.Minute

func newRunCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run --workload W [--node URL] [--connections C --rate R --time T]",
		Short: "Send a workload over websockets or HTTP, then print the committed tx/s and the commit latency",
		Long: `run sends a workload to the node (one signer set per connection) over --client:
ws, websockets each carrying many requests at once, or http, keep-alive HTTP
connections each sending one JSON-RPC POST after the answer to the one before (a crowd
of users). A transaction the node refuses because its mempool is full is sent again
after a backoff (100 ms doubling to 2 s) until it is taken or --drain after the
sending time has passed. Then run waits for the mempool to drain (--drain), reads the
blocks that hold the run's transactions, and prints the committed transactions per
second (over the block time of those blocks), the commit latency from CometBFT's
loadtime report (from the first send to the time of the block after the including
one), how the node answered the broadcasts and how many sent transactions no block
included. --csv appends one row per block, --summary-csv one row per run, --cpu-csv
the CPU time of the node (--node-pid) and of this tool over the load and the drain;
every row starts with the client, the node's tx_index (on or off) and the signers.

Workloads: transfers (identity credit transfers), address-transfers, documents,
documents-ttl, and kvstore (CometBFT's kvstore application, at the transaction size of
--like).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, out, err := runConfig(cmd)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			ctx, cancel := context.WithTimeout(ctx, time.Duration(cfg.Time)*time.Second+2*cfg.Drain+runMargin)
			defer cancel()
			res, err := load.Run(ctx, cfg)
			if err != nil {
				return err
			}
			printRun(cmd.OutOrStdout(), res)
			return writeCSVs(res, out)
		},
	}
	f := cmd.Flags()
	f.String("node", DefaultNode, "the node's RPC URL")
	f.String("workload", string(load.Transfers), "transfers, address-transfers, documents, documents-ttl or kvstore")
	f.String("like", string(load.Transfers), "kvstore: the ttld workload whose transaction size to send, and whose name the results carry")
	f.Int("size", 0, "kvstore: the transaction size in bytes (default: --like's)")
	signerFlags(cmd)
	f.String("contract", "", "documents: the contract to create in (ttld-load setup); default: register a new one")
	f.String("client", string(load.WebSocket), "ws (websockets) or http (keep-alive HTTP connections, one request in flight each)")
	f.Int("connections", 1, "connections to the node, each with its own signers")
	f.Int("rate", 1000, "broadcasts per second per connection, retries included")
	f.Int("time", 30, "seconds of sending")
	f.Int("count", 0, "the most transactions each connection sends (default: rate × time)")
	f.String("broadcast", "sync", "broadcast_tx method: sync or async")
	f.Duration("drain", 30*time.Second, "how long to keep sending again what a full mempool refused after the sending time, then how long to wait for the mempool to empty")
	f.Int("node-pid", 0, "the node's process id, to report its CPU use over the run (Linux /proc)")
	f.String("csv", "", "append the per-block throughput to this CSV file")
	f.String("summary-csv", "", "append the run's summary to this CSV file")
	f.String("cpu-csv", "", "append the CPU use of the node and of this tool to this CSV file")
	return cmd
}

// csvFiles are where a run's rows go ("": nowhere).
type csvFiles struct{ throughput, summary, cpu string }

func runConfig(cmd *cobra.Command) (load.RunConfig, csvFiles, error) {
	f := cmd.Flags()
	str := func(name string) string { v, _ := f.GetString(name); return v }
	num := func(name string) int { v, _ := f.GetInt(name); return v }
	w, err := load.ParseWorkload(str("workload"))
	if err != nil {
		return load.RunConfig{}, csvFiles{}, err
	}
	tr, err := load.ParseTransport(str("client"))
	if err != nil {
		return load.RunConfig{}, csvFiles{}, err
	}
	like, err := load.ParseWorkload(str("like"))
	if err != nil || like == load.KVStore {
		return load.RunConfig{}, csvFiles{}, fmt.Errorf("--like %q: want a ttld workload", str("like"))
	}
	drain, _ := f.GetDuration("drain")
	cfg := load.RunConfig{
		Node: str("node"), Workload: w, Like: like, Size: num("size"),
		Seed: []byte(str("seed")), Signers: num("signers"),
		Transport: tr, Connections: num("connections"), Rate: num("rate"), Time: num("time"), Count: num("count"),
		Broadcast: str("broadcast"), Drain: drain, NodePID: num("node-pid"), Log: cmd.ErrOrStderr(),
	}
	if s := str("contract"); s != "" {
		id, err := protocol.ParseContractID(s)
		if err != nil {
			return load.RunConfig{}, csvFiles{}, fmt.Errorf("--contract: %w", err)
		}
		cfg.Contract = &id
	}
	return cfg, csvFiles{throughput: str("csv"), summary: str("summary-csv"), cpu: str("cpu-csv")}, nil
}

// printRun writes what a run measured, for people.
func printRun(w io.Writer, r load.Result) {
	what := string(r.Workload)
	if r.System == "kvstore" {
		what = "kvstore at the size of " + what
	}
	fmt.Fprintf(w, "run %s: %s %s, %d-byte transactions, %s client, %d connections × %d tx/s, broadcast_tx_%s, tx_index %s\n", r.Run, r.System, what, r.TxSize, r.Transport, r.Connections, r.Rate, r.Broadcast, r.TxIndex)
	if r.Contract != nil {
		fmt.Fprintf(w, "  contract:   %s\n", r.Contract)
	}
	s := r.Sending
	fmt.Fprintf(w, "  answers:    %d accepted, %d refused by CheckTx, %d sent again after a full mempool, %d given up with the mempool full, %d failed\n",
		s.Accepted, s.RefusedAtCheck, s.Retries, s.GaveUp, s.Failed)
	fmt.Fprintf(w, "  sent:       %d; committed with code 0: %d; refused in a block: %d; not committed: %d (%d left in the mempool)\n",
		r.Sent, r.Committed, r.Refused, r.NotCommitted, r.Left)
	fmt.Fprintf(w, "  throughput: %.1f tx/s (%d transactions in blocks %d to %d, %.3f s of block time)\n", r.TxPerS, r.Committed, r.First, r.Last, r.Span.Seconds())
	l := r.Latency
	fmt.Fprintf(w, "  latency:    p50 %s, p99 %s (min %s, avg %s, max %s)\n", ms(l.P50), ms(l.P99), ms(l.Min), ms(l.Avg), ms(l.Max))
	if l.Negative > 0 {
		fmt.Fprintf(w, "  WARNING: %d transactions are dated before they were sent: the node's clock and this one's disagree\n", l.Negative)
	}
	cpu := fmt.Sprintf("load tool %.2f cores (%.1f s)", r.ToolCPU.Seconds()/r.Wall.Seconds(), r.ToolCPU.Seconds())
	if r.NodeMeasured {
		cpu = fmt.Sprintf("node %.2f cores (%.1f s), ", r.NodeCPU.Seconds()/r.Wall.Seconds(), r.NodeCPU.Seconds()) + cpu
	}
	fmt.Fprintf(w, "  cpu:        over %.1f s of load, retries and drain: %s\n", r.Wall.Seconds(), cpu)
	if r.NodeMeasured && r.Committed > 0 {
		fmt.Fprintf(w, "  node:       %.0f µs of CPU per committed transaction; peak resident set %d MiB\n",
			float64(r.NodeCPU.Microseconds())/float64(r.Committed), r.NodePeakRSS>>20)
	}
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

func writeCSVs(r load.Result, out csvFiles) error {
	for _, f := range []struct {
		path   string
		header []string
		rows   [][]string
	}{
		{out.throughput, load.ThroughputHeader, load.ThroughputRows(r)},
		{out.summary, load.SummaryHeader, [][]string{load.SummaryRow(r)}},
		{out.cpu, load.CPUHeader, load.CPURows(r)},
	} {
		if f.path == "" {
			continue
		}
		if err := load.AppendCSV(f.path, f.header, f.rows); err != nil {
			return err
		}
	}
	return nil
}
