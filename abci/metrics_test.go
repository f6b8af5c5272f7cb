package abci

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
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
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"ttld_app_block_execution_seconds": true, "ttld_app_commit_seconds": true, "ttld_app_txs_total": true,
		"ttld_app_state_keys": true, "ttld_app_height": true, "ttld_app_fees_collected_credits_total": true,
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
	for name := range want {
		t.Errorf("metric %s not gathered", name)
	}
}
