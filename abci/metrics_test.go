package abci

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
)

// Every application metric carries chain_id, as CometBFT's do, under its unchanged name.
func TestMetricsCarryChainID(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, "chain-7")
	if err != nil {
		t.Fatal(err)
	}
	m.BlockExecution.Observe(0.01)
	m.Commit.Observe(0.01)
	m.Txs.WithLabelValues("0").Inc()
	m.StateKeys.Set(3)
	m.Height.Set(4)
	m.FeesCollected.Add(5)
	m.ProposalsRejected.Inc()
	m.observeCleanup(app.Cleanup{Name: "address_balances", Stats: drive.DrainStats{Removed: 2, WeightUsed: 2, Backlog: 1, OldestOverdueMs: 1500}})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"ttld_app_block_execution_seconds": true, "ttld_app_commit_seconds": true, "ttld_app_txs_total": true,
		"ttld_app_state_keys": true, "ttld_app_height": true, "ttld_app_fees_collected_credits_total": true,
		"ttld_app_proposals_rejected_total": true, "ttld_app_cleanup_removed_total": true, "ttld_app_cleanup_weight_used_total": true,
		"ttld_app_cleanup_backlog": true, "ttld_app_cleanup_oldest_overdue_seconds": true,
	}
	for _, f := range families {
		if !want[f.GetName()] {
			t.Errorf("unexpected metric %s", f.GetName())
			continue
		}
		delete(want, f.GetName())
		for _, metric := range f.GetMetric() {
			chain := ""
			for _, l := range metric.GetLabel() {
				if l.GetName() == MetricsChainIDLabel {
					chain = l.GetValue()
				}
			}
			if chain != "chain-7" {
				t.Errorf("%s %v: chain_id %q", f.GetName(), metric.GetLabel(), chain)
			}
		}
	}
	// The cleanup figures are exported as they were observed.
	for _, f := range families {
		if f.GetName() == "ttld_app_cleanup_oldest_overdue_seconds" {
			if v := f.GetMetric()[0].GetGauge().GetValue(); v != 1.5 {
				t.Errorf("oldest overdue %v s, want 1.5", v)
			}
		}
	}
	for name := range want {
		t.Errorf("metric %s not gathered", name)
	}
}
