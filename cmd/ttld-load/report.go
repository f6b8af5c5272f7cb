package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/load"
)

func newReportCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report --summary F --cpu F",
		Short: "Print, from the summary and CPU files runs appended, every ttld run beside the kvstore run of the same client, indexer and workload, with the ratio",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			summaryPath, _ := cmd.Flags().GetString("summary")
			cpuPath, _ := cmd.Flags().GetString("cpu")
			summary, err := os.Open(summaryPath)
			if err != nil {
				return fmt.Errorf("--summary: %w", err)
			}
			defer summary.Close()
			cpu, err := os.Open(cpuPath)
			if err != nil {
				return fmt.Errorf("--cpu: %w", err)
			}
			defer cpu.Close()
			cs, err := load.Compare(summary, cpu)
			if err != nil {
				return err
			}
			if len(cs) == 0 {
				return errors.New("no run in " + summaryPath)
			}
			return load.WriteComparison(cmd.OutOrStdout(), cs)
		},
	}
	cmd.Flags().String("summary", "", "the runs' summary file (run --summary-csv)")
	cmd.Flags().String("cpu", "", "the runs' CPU file (run --cpu-csv)")
	return cmd
}
