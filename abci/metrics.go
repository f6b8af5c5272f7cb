package abci

import (
	"fmt"
	"math/big"
	"strconv"

	"github.com/dustin/go-humanize"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
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
	// FinalizeBlock times FinalizeBlock: from a block's decision to its app hash.
	FinalizeBlock prometheus.Histogram
	// Optimistic counts FinalizeBlock calls by whether the block had been executed
	// before its decision: optimisticHit, optimisticMiss, optimisticUnprocessed.
	Optimistic *prometheus.CounterVec
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
	// Protocol upgrades after the last commit (observeUpgrades).
	ProtocolVersion     prometheus.Gauge
	NextProtocolVersion prometheus.Gauge
	NewestSupported     prometheus.Gauge
	EpochBlocks         prometheus.Gauge
	UpgradeSignals      *prometheus.GaugeVec
	// The validator set after the last commit that changed it, its proposals or its
	// evidence (observeValidators), and what blocks did to it.
	Validators         prometheus.Gauge
	ValidatorPower     prometheus.Gauge
	ValidatorProposals prometheus.Gauge
	ValidatorUpdates   prometheus.Counter
	Misbehavior        *prometheus.CounterVec
	// Snapshots (snapshots.go): the last one taken, and every outcome.
	Snapshots        *prometheus.CounterVec
	SnapshotHeight   prometheus.Gauge
	SnapshotSeconds  prometheus.Gauge
	SnapshotBytes    prometheus.Gauge
	RestoreChunks    prometheus.Gauge
	RestoreApplied   prometheus.Gauge
	RestoreBytes     prometheus.Gauge
	RestoreSucceeded prometheus.Gauge
}

// The results of the Optimistic metric.
const (
	// optimisticHit: the block PrepareProposal built or ProcessProposal accepted, used
	// as it was executed.
	optimisticHit = "hit"
	// optimisticMiss: another block was executed before the decision; this one is
	// executed again.
	optimisticMiss = "miss"
	// optimisticUnprocessed: no block was executed before the decision (a replay, a
	// node catching up); this one is executed.
	optimisticUnprocessed = "unprocessed"
)

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
	if err := m.observeUpgrades(kv, cur); err != nil {
		return err
	}
	m.Epoch.Set(float64(cur.Index))
	m.StoragePool.Set(float64(pool))
	m.EpochFees.Set(float64(fees))
	m.PendingRefunds.Set(refunded)
	m.TotalCredits.Set(float64(total))
	return nil
}

// observeValidators sets the validator set's gauges from a saved state.
func (m *Metrics) observeValidators(kv drive.KV) error {
	set, err := drive.ReadValidatorSet(kv)
	if err != nil {
		return err
	}
	proposals, err := drive.ValidatorProposals(kv)
	if err != nil {
		return err
	}
	m.Validators.Set(float64(len(set.List)))
	m.ValidatorPower.Set(float64(set.Total))
	m.ValidatorProposals.Set(float64(len(proposals)))
	return nil
}

// observeUpgrades sets the protocol upgrade gauges from a saved state whose current
// epoch is cur.
func (m *Metrics) observeUpgrades(kv drive.KV, cur drive.CurrentEpoch) error {
	v, err := drive.GetProtocolVersion(kv)
	if err != nil {
		return err
	}
	next, _, err := drive.GetNextVersion(kv)
	if err != nil {
		return err
	}
	last, _, err := drive.GetLastBlock(kv)
	if err != nil {
		return err
	}
	signals, _, err := drive.GetEpochSignals(kv, cur.Index)
	if err != nil {
		return err
	}
	m.ProtocolVersion.Set(float64(v))
	m.NextProtocolVersion.Set(float64(next))
	m.NewestSupported.Set(float64(protocol.Newest()))
	if last.Height >= cur.FirstHeight && cur.FirstHeight > 0 {
		m.EpochBlocks.Set(float64(last.Height - cur.FirstHeight + 1))
	}
	m.UpgradeSignals.Reset()
	for _, c := range signals.Counts {
		m.UpgradeSignals.WithLabelValues(strconv.FormatUint(uint64(c.Version), 10)).Set(float64(c.Blocks))
	}
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

// The prefix of every metric's name: ttld_app_<name>.
const (
	metricsNamespace = "ttld"
	metricsSubsystem = "app"
)

// durationBuckets are the buckets of every timing histogram: 0.5 ms doubling up to 16 s.
var durationBuckets = prometheus.ExponentialBuckets(0.0005, 2, 16)

// metric declares one collector of Metrics. Its kind is the type of the field it fills:
// a Counter, Gauge or Histogram takes no labels, a CounterVec or GaugeVec at least one.
type metric struct {
	// field points to the field of Metrics that holds the collector.
	field any
	// name follows the prefix ttld_app_.
	name string
	// help is exposed as the metric's HELP; a figure that is a constant of the code is
	// formatted from that constant.
	help string
	// labels are the variable labels, beside chain_id.
	labels []string
}

// declare lists every metric of m, once: NewMetrics builds and registers what it lists,
// and TestMetricsDeclared pins each one's name, help and labels.
func (m *Metrics) declare() []metric {
	return []metric{
		{&m.BlockExecution, "block_execution_seconds", "Time a block's execution takes, in the call that runs it: PrepareProposal (the proposer's block), ProcessProposal (another's) or FinalizeBlock (a block not executed before its decision).", nil},
		{&m.FinalizeBlock, "finalize_block_seconds", "Time FinalizeBlock takes, from a block's decision to its app hash.", nil},
		{&m.Optimistic, "optimistic_executions_total", fmt.Sprintf("FinalizeBlock calls by whether the block was executed before its decision: %s (by PrepareProposal or ProcessProposal, used as it was), %s (another block was: executed again), %s (none was, as in a replay or while catching up: executed).",
			optimisticHit, optimisticMiss, optimisticUnprocessed), []string{"result"}},
		{&m.Commit, "commit_seconds", "Time Commit takes to save a version of the tree.", nil},
		{&m.Txs, "txs_total", "Transactions executed in blocks, by result code.", []string{"code"}},
		{&m.StateKeys, "state_keys", "Keys in the state tree after the last commit.", nil},
		{&m.Height, "height", "Last committed height.", nil},
		{&m.FeesCollected, "fees_collected_credits_total", "Fees charged by blocks this process executed, in credits.", nil},
		{&m.ProposalsRejected, "proposals_rejected_total", "Proposals ProcessProposal rejected because a transaction in them is refused unpaid, which the proposer could have left out.", nil},
		{&m.SignatureChecks, "signature_checks_total", "Signature checks by how they were answered: remembered (an ed25519 verification that passed before: CheckTx, its rechecks, the proposal checks and FinalizeBlock verify a transaction once), verified, invalid.", []string{"result"}},
		{&m.CleanupRemoved, "cleanup_removed_total", "Expired entries removed by the per-block cleanups.", []string{"cleanup"}},
		{&m.CleanupOrphans, "cleanup_orphans_total", "Expired entries removed by the per-block cleanups that had nothing to delete (documents: an expirations entry without its document).", []string{"cleanup"}},
		{&m.CleanupWeight, "cleanup_weight_used_total", "Weight of the budget the per-block cleanups used.", []string{"cleanup"}},
		{&m.CleanupBacklog, "cleanup_backlog", fmt.Sprintf("Expired entries the last block's cleanup left for later blocks (counted up to %s).",
			thousands(drive.BacklogCountLimit)), []string{"cleanup"}},
		{&m.CleanupOldestOverdue, "cleanup_oldest_overdue_seconds", "How long the oldest expired entry left by the last block's cleanup has been due, in block time.", []string{"cleanup"}},
		{&m.TimeRangeExpired, "time_range_expired_keys", fmt.Sprintf("Keys standing in expired windows of a ttl'd time-range grid after the last epoch change's sweep (the first %s grids, each counted up to %s).",
			thousands(TimeRangeBacklogGrids), thousands(TimeRangeBacklogCap)), []string{"contract", "type", "grid"}},
		{&m.Epoch, "epoch", "Current epoch index after the last commit.", nil},
		{&m.StoragePool, "storage_pool_credits", "Storage distribution pool: perpetual storage fees collected since the last epoch change, in credits.", nil},
		{&m.EpochFees, "epoch_fees_credits", "Processing fees collected in the current epoch, in credits.", nil},
		{&m.PendingRefunds, "pending_refunds_credits", "Storage refunds paid to owners that the next epoch change takes back from the epochs' pools, in credits.", nil},
		{&m.TotalCredits, "total_credits", "Running total of credits in state (balances and pools, less pending refunds); equals the genesis supply.", nil},
		{&m.ProtocolVersion, "protocol_version", "Protocol version in force after the last commit.", nil},
		{&m.NextProtocolVersion, "next_protocol_version", "Protocol version the chain moves to at the next epoch change, as the last one decided; 0 when none is decided.", nil},
		{&m.NewestSupported, "newest_supported_protocol_version", "Newest protocol version this binary implements: a next_protocol_version above it stops the node at the next epoch change.", nil},
		{&m.EpochBlocks, "epoch_blocks", "Blocks of the current epoch up to the last commit.", nil},
		{&m.UpgradeSignals, "upgrade_signals", "Blocks of the current epoch whose proposer signalled each protocol version, up to the last commit.", []string{"version"}},
		{&m.Validators, "validators", "Validators in the set the chain holds in state (protocol version 16 on; 0 before).", nil},
		{&m.ValidatorPower, "validator_power", "Total voting power of the set the chain holds in state.", nil},
		{&m.ValidatorProposals, "validator_proposals_pending", "Validator set proposals pending (not yet applied, dropped or expired).", nil},
		{&m.ValidatorUpdates, "validator_updates_total", "Changes of the validator set blocks sent CometBFT (validator updates).", nil},
		{&m.Misbehavior, "misbehavior_total", "Evidence of misbehaviour blocks carried, by kind (duplicate_vote, light_client_attack) and whether it removed the validator.", []string{"kind", "removed"}},
		{&m.Snapshots, "snapshots_total", fmt.Sprintf("Snapshots of the state due by snapshot_interval, by result: %s, %s, %s (the one before was still being taken).", snapshotTaken, snapshotFailed, snapshotSkipped), []string{"result"}},
		{&m.SnapshotHeight, "snapshot_height", "Height of the last snapshot taken.", nil},
		{&m.SnapshotSeconds, "snapshot_duration_seconds", "Time the last snapshot taken took, in the background.", nil},
		{&m.SnapshotBytes, "snapshot_bytes", "Size of the last snapshot taken: its chunks, in bytes.", nil},
		{&m.RestoreChunks, "restore_chunks", "Chunks of the snapshot being restored by state sync (0: none is).", nil},
		{&m.RestoreApplied, "restore_chunks_applied", "Chunks of the snapshot being restored that are imported.", nil},
		{&m.RestoreBytes, "restore_bytes_applied", "Bytes of the snapshot being restored that are imported.", nil},
		{&m.RestoreSucceeded, "restored_height", "Height of the snapshot this process restored its state from by state sync (0: none).", nil},
	}
}

// NewMetrics creates the metrics, each labelled chain_id=chainID, and registers them
// with reg (nil: not registered, for tests and tools).
func NewMetrics(reg prometheus.Registerer, chainID string) (*Metrics, error) {
	m := &Metrics{}
	chain := prometheus.Labels{MetricsChainIDLabel: chainID}
	for _, d := range m.declare() {
		c, err := d.build(chain)
		if err != nil {
			return nil, err
		}
		if reg != nil {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// build creates d's collector with the const labels chain, stores it in d's field and
// returns it.
func (d metric) build(chain prometheus.Labels) (prometheus.Collector, error) {
	opts := prometheus.Opts{Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: d.name, Help: d.help, ConstLabels: chain}
	vec := false
	var c prometheus.Collector
	switch f := d.field.(type) {
	case *prometheus.Counter:
		*f = prometheus.NewCounter(prometheus.CounterOpts(opts))
		c = *f
	case *prometheus.Gauge:
		*f = prometheus.NewGauge(prometheus.GaugeOpts(opts))
		c = *f
	case *prometheus.Histogram:
		*f = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: opts.Namespace, Subsystem: opts.Subsystem,
			Name: opts.Name, Help: opts.Help, ConstLabels: opts.ConstLabels, Buckets: durationBuckets})
		c = *f
	case **prometheus.CounterVec:
		*f = prometheus.NewCounterVec(prometheus.CounterOpts(opts), d.labels)
		c, vec = *f, true
	case **prometheus.GaugeVec:
		*f = prometheus.NewGaugeVec(prometheus.GaugeOpts(opts), d.labels)
		c, vec = *f, true
	default:
		return nil, fmt.Errorf("abci: metric %s: a field of type %T is no collector kind NewMetrics builds", d.name, d.field)
	}
	if vec != (len(d.labels) > 0) {
		return nil, fmt.Errorf("abci: metric %s: labels %q do not fit a field of type %T", d.name, d.labels, d.field)
	}
	return c, nil
}

// thousands writes n with commas between groups of three digits, as the help texts
// write their figures: 100,000.
func thousands(n uint64) string { return humanize.BigComma(new(big.Int).SetUint64(n)) }
