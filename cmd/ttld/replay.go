package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/replay"
)

// errDiverged: the replay found a block whose hashes differ from the node's headers.
type errDiverged struct{ Height int64 }

func (e errDiverged) Error() string { return fmt.Sprintf("replay diverged at height %d", e.Height) }

func newReplayCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Re-execute the node's block store from genesis (or its snapshot) and compare every app hash",
		Long: `replay reads the CometBFT block store of --home (stop the node first, or replay a
copy of its data), re-executes every block from genesis into a fresh state in a
temporary directory, and compares the app hash after each block with the AppHash of the
next header, and the block's results with its LastResultsHash; the last block, which
has no next header, is compared with the app hash and results hash CometBFT saved in its
state database. On the first mismatch it
stops and prints the height, both hashes, the block's state changes and where the
node's own state differs. Nothing is written into --home.

A node that joined by state sync holds no block before its snapshot: the replay then
starts from the node's own state at the snapshot's height (which must still be kept,
keep_recent in app.toml), checked against the first stored header, and says so.

--from skips the comparisons below it (the state is still rebuilt from genesis); --to
stops early; a range that selects no block (--from after --to, or past the last block)
is an error. The exit code is 0 when every compared block matches, 1 otherwise,
including a block store that cannot be read (the error names the file and height).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			g := globalFlags(cmd)
			from, _ := cmd.Flags().GetInt64("from")
			to, _ := cmd.Flags().GetInt64("to")
			opts := replay.Options{Home: g.Home, From: from, To: to, Logger: zerolog.Nop()}
			opts.Progress = progress(cmd.ErrOrStderr(), "replay", "blocks")
			sum, err := replay.Run(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if err := printResult(cmd, func(w io.Writer) { printReplay(w, sum) }, sum); err != nil {
				return err
			}
			if sum.Mismatch != nil {
				return errDiverged{Height: sum.Mismatch.Height}
			}
			return nil
		},
	}
	cmd.Flags().Int64("from", 0, "first height whose hashes are compared (default: the first block)")
	cmd.Flags().Int64("to", 0, "last height replayed (default: the last stored block)")
	return cmd
}

// progress draws a bar on a terminal and logs a line every 5 s otherwise, of work
// (such as "replay") counted in units (such as "blocks").
func progress(w io.Writer, work, units string) func(done, total int64) {
	if f, ok := w.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		var bar *progressbar.ProgressBar
		return func(done, total int64) {
			if bar == nil {
				bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w),
					progressbar.OptionSetDescription(work), progressbar.OptionShowCount(),
					progressbar.OptionShowIts(), progressbar.OptionSetItsString(units),
					progressbar.OptionClearOnFinish())
			}
			_ = bar.Set64(done)
		}
	}
	var last time.Time
	start := time.Now()
	return func(done, total int64) {
		if time.Since(last) < 5*time.Second && done != total {
			return
		}
		last = time.Now()
		rate := float64(done) / time.Since(start).Seconds()
		fmt.Fprintf(w, "%s: %d/%d %s, %.0f %s/s\n", work, done, total, units, rate, units)
	}
}

func printReplay(w io.Writer, s replay.Summary) {
	fmt.Fprintf(w, "chain %s: replayed %d blocks (%d to %d) in %.2fs, %.0f blocks/s\n", s.ChainID, s.Blocks, s.From, s.To, s.Seconds, s.BlocksPerSecond)
	if s.Restored > 0 {
		fmt.Fprintf(w, "the node joined by state sync: replayed from its state at height %d, the snapshot it restored (its root is the app hash of header %d)\n", s.Restored, s.Restored+1)
	}
	if s.Mismatch == nil {
		fmt.Fprintf(w, "MATCH: %d blocks checked against the next header", s.Checked)
		if s.LastFromState {
			fmt.Fprintf(w, ", the last (%d) against CometBFT's saved state", s.To)
		}
		if s.Unchecked > 0 {
			fmt.Fprintf(w, "; height %d was stored but never executed by the node: unchecked", s.Unchecked)
		}
		fmt.Fprintln(w)
		return
	}
	m := s.Mismatch
	fmt.Fprintf(w, "MISMATCH at height %d (%s)\n  node:     %s\n  replayed: %s\n", m.Height, m.What, m.Header, m.Replayed)
	fmt.Fprintf(w, "state changes of block %d in the replay (%d):\n", m.Height, len(m.Changes))
	printChanges(w, m.Changes)
	if m.NodeDiffNote != "" {
		fmt.Fprintf(w, "node's state: %s\n", m.NodeDiffNote)
		return
	}
	fmt.Fprintf(w, "keys where the node's state at %d differs from the replay (%d; old = node, new = replay):\n", m.Height, len(m.NodeDiff))
	printChanges(w, m.NodeDiff)
}

func printChanges(w io.Writer, cs []replay.Change) {
	for _, c := range cs {
		fmt.Fprintf(w, "  %-7s %s", c.Kind, c.Key)
		if c.Old != nil {
			fmt.Fprintf(w, " old=%s", c.Old)
		}
		if c.New != nil {
			fmt.Fprintf(w, " new=%s", c.New)
		}
		fmt.Fprintln(w)
	}
}
