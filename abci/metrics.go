package abci

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
)

// Metrics are the application's own metrics, registered beside CometBFT's so one
// Prometheus endpoint serves both.
type Metrics struct {
	BlockExecution prometheus.Histogram
	Commit         prometheus.Histogram
	Txs            *prometheus.CounterVec
	StateKeys      prometheus.Gauge
	Height         prometheus.Gauge
	FeesCollected  prometheus.Counter
	// ProposalsRejected counts the proposals ProcessProposal rejected.
	ProposalsRejected prometheus.Counter
	// SignatureChecks counts the signature checks of CheckTx, the proposal checks and
	// FinalizeBlock by how they were answered: remembered (passed before), verified,
	// invalid.
	SignatureChecks *prometheus.CounterVec
	// The budgeted cleanups of each block, labelled by cleanup name.
	CleanupRemoved       *prometheus.CounterVec
	CleanupOrphans       *prometheus.CounterVec
	CleanupWeight        *prometheus.CounterVec
	CleanupBacklog       *prometheus.GaugeVec
	CleanupOldestOverdue *prometheus.GaugeVec
	// TimeRangeExpired counts the keys standing in expired windows of ttl'd time-range
	// grids, per grid (the first TimeRangeBacklogGrids registered, each counted up to
	// TimeRangeBacklogCap), after each epoch change's sweep.
	TimeRangeExpired *prometheus.GaugeVec
	// The pools after the last commit (observePools).
	Epoch          prometheus.Gauge
	StoragePool    prometheus.Gauge
	EpochFees      prometheus.Gauge
	PendingRefunds prometheus.Gauge
	TotalCredits   prometheus.Gauge
}

// observeCleanup records what one cleanup of a block did and left.
func (m *Metrics) observeCleanup(c app.Cleanup) {
	m.CleanupRemoved.WithLabelValues(c.Name).Add(float64(c.Stats.Removed))
	m.CleanupOrphans.WithLabelValues(c.Name).Add(float64(c.Orphans))
	m.CleanupWeight.WithLabelValues(c.Name).Add(float64(c.Stats.WeightUsed))
	m.CleanupBacklog.WithLabelValues(c.Name).Set(float64(c.Stats.Backlog))
	m.CleanupOldestOverdue.WithLabelValues(c.Name).Set(float64(c.Stats.OldestOverdueMs) / 1000)
}

// observePools sets the pool gauges from a saved state: a few single-key reads and the
// pending refunds, a range that every epoch change empties.
func (m *Metrics) observePools(kv drive.KV) error {
	cur, _, err := drive.GetCurrentEpoch(kv)
	if err != nil {
		return err
	}
	pool, err := drive.GetU64(kv, drive.StoragePoolKey())
	if err != nil {
		return err
	}
	fees, err := drive.GetU64(kv, drive.EpochFeesKey(cur.Index))
	if err != nil {
		return err
	}
	refunds, err := drive.PendingRefunds(kv)
	if err != nil {
		return err
	}
	var refunded float64
	for _, r := range refunds {
		refunded += float64(r.Refunded)
	}
	total, err := drive.GetU64(kv, drive.TotalCreditsKey())
	if err != nil {
		return err
	}
	m.Epoch.Set(float64(cur.Index))
	m.StoragePool.Set(float64(pool))
	m.EpochFees.Set(float64(fees))
	m.PendingRefunds.Set(refunded)
	m.TotalCredits.Set(float64(total))
	return nil
}

// The bounds of the time-range backlog metric: how many grids it labels and how far it
// counts each.
const (
	TimeRangeBacklogGrids = 100
	TimeRangeBacklogCap   = 100_000
)

// observeTimeRanges sets the time-range backlog gauge from a saved state at block time
// nowMs.
func (m *Metrics) observeTimeRanges(kv drive.KV, nowMs uint64) error {
	grids, err := drive.ExpiredBacklog(kv, nowMs, TimeRangeBacklogGrids, TimeRangeBacklogCap)
	if err != nil {
		return err
	}
	m.TimeRangeExpired.Reset()
	for _, g := range grids {
		grid := fmt.Sprintf("%s/%d/%d/%d", g.Grid.On, g.Grid.Range, g.Grid.Step, g.Grid.Phase)
		m.TimeRangeExpired.WithLabelValues(g.Contract.String(), g.Type, grid).Set(float64(g.Keys))
	}
	return nil
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
			Help: "Fees charged by blocks this process executed, in credits.",
		}),
		ProposalsRejected: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "proposals_rejected_total",
			Help: "Proposals rejected because a transaction failed the checks its bytes decide alone.",
		}),
		SignatureChecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "signature_checks_total",
			Help: "Signature checks by how they were answered: remembered (an ed25519 verification that passed before: CheckTx, its rechecks, the proposal checks and FinalizeBlock verify a transaction once), verified, invalid.",
		}, []string{"result"}),
		CleanupRemoved: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "cleanup_removed_total",
			Help: "Expired entries removed by the per-block cleanups.",
		}, []string{"cleanup"}),
		CleanupOrphans: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "cleanup_orphans_total",
			Help: "Expired entries removed by the per-block cleanups that had nothing to delete (documents: an expirations entry without its document).",
		}, []string{"cleanup"}),
		CleanupWeight: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "cleanup_weight_used_total",
			Help: "Weight of the budget the per-block cleanups used.",
		}, []string{"cleanup"}),
		CleanupBacklog: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "cleanup_backlog",
			Help: "Expired entries the last block's cleanup left for later blocks (counted up to 10,000).",
		}, []string{"cleanup"}),
		CleanupOldestOverdue: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "cleanup_oldest_overdue_seconds",
			Help: "How long the oldest expired entry left by the last block's cleanup has been due, in block time.",
		}, []string{"cleanup"}),
		TimeRangeExpired: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "time_range_expired_keys",
			Help: "Keys standing in expired windows of a ttl'd time-range grid after the last epoch change's sweep (the first 100 grids, each counted up to 100,000).",
		}, []string{"contract", "type", "grid"}),
		Epoch: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "epoch",
			Help: "Current epoch index after the last commit.",
		}),
		StoragePool: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "storage_pool_credits",
			Help: "Storage distribution pool: perpetual storage fees collected since the last epoch change, in credits.",
		}),
		EpochFees: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "epoch_fees_credits",
			Help: "Processing fees collected in the current epoch, in credits.",
		}),
		PendingRefunds: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "pending_refunds_credits",
			Help: "Storage refunds paid to owners that the next epoch change takes back from the epochs' pools, in credits.",
		}),
		TotalCredits: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "ttld", Subsystem: "app", ConstLabels: chain, Name: "total_credits",
			Help: "Running total of credits in state (balances and pools, less pending refunds); equals the genesis supply.",
		}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.BlockExecution, m.Commit, m.Txs, m.StateKeys, m.Height, m.FeesCollected,
			m.ProposalsRejected, m.SignatureChecks, m.CleanupRemoved, m.CleanupOrphans, m.CleanupWeight, m.CleanupBacklog, m.CleanupOldestOverdue,
			m.TimeRangeExpired, m.Epoch, m.StoragePool, m.EpochFees, m.PendingRefunds, m.TotalCredits} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
