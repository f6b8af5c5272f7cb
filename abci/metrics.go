package abci

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the application's own metrics, registered beside CometBFT's so one
// Prometheus endpoint serves both.
type Metrics struct {
	BlockExecution prometheus.Histogram
	Commit         prometheus.Histogram
	Txs            *prometheus.CounterVec
	StateKeys      prometheus.Gauge
	Height         prometheus.Gauge
	FeesCollected  prometheus.Counter
}

// MetricsChainIDLabel is the label every metric carries, as CometBFT's own metrics
// do, so that one Prometheus can watch several chains.
const MetricsChainIDLabel = "chain_id"

// NewMetrics creates the metrics, each labelled chain_id=chainID, and registers them
// with reg (nil: not registered, for tests and tools).
func NewMetrics(reg prometheus.Registerer, chainID string) (*Metrics, error) {
	chain := prometheus.Labels{MetricsChainIDLabel: chainID}
	m := &Metrics{
		BlockExecution: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "block_execution_seconds",
			Help:    "Time FinalizeBlock takes to execute a block.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
		Commit: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "commit_seconds",
			Help:    "Time Commit takes to save a version of the tree.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
		Txs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "txs_total",
			Help: "Transactions executed in blocks, by result code.",
		}, []string{"code"}),
		StateKeys: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "state_keys",
			Help: "Keys in the state tree after the last commit.",
		}),
		Height: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "height",
			Help: "Last committed height.",
		}),
		FeesCollected: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "fees_collected_credits_total",
			Help: "Processing fees collected by blocks this process executed, in credits.",
		}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.BlockExecution, m.Commit, m.Txs, m.StateKeys, m.Height, m.FeesCollected} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
