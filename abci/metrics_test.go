package abci

import (
	"encoding/hex"
	"reflect"
	"slices"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/feeschedule"
	"github.com/ttld-dev/ttld/genesis"
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
	m.FinalizeBlock.Observe(0.01)
	m.Optimistic.WithLabelValues(optimisticHit).Inc()
	m.observeCleanup(app.Cleanup{Name: "address_balances", Stats: drive.DrainStats{Removed: 2, WeightUsed: 2, Backlog: 1, OldestOverdueMs: 1500}})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"ttld_app_block_execution_seconds": true, "ttld_app_finalize_block_seconds": true, "ttld_app_optimistic_executions_total": true, "ttld_app_commit_seconds": true, "ttld_app_txs_total": true,
		"ttld_app_state_keys": true, "ttld_app_height": true, "ttld_app_fees_collected_credits_total": true,
		"ttld_app_proposals_rejected_total": true, "ttld_app_cleanup_removed_total": true, "ttld_app_cleanup_orphans_total": true, "ttld_app_cleanup_weight_used_total": true,
		"ttld_app_cleanup_backlog": true, "ttld_app_cleanup_oldest_overdue_seconds": true,
		"ttld_app_epoch": true, "ttld_app_storage_pool_credits": true, "ttld_app_epoch_fees_credits": true,
		"ttld_app_pending_refunds_credits": true, "ttld_app_total_credits": true,
		"ttld_app_protocol_version": true, "ttld_app_next_protocol_version": true, "ttld_app_newest_supported_protocol_version": true, "ttld_app_epoch_blocks": true,
		"ttld_app_snapshot_height": true, "ttld_app_snapshot_duration_seconds": true, "ttld_app_snapshot_bytes": true, "ttld_app_restore_chunks": true,
		"ttld_app_restore_chunks_applied": true, "ttld_app_restore_bytes_applied": true, "ttld_app_restored_height": true,
		"ttld_app_validators": true, "ttld_app_validator_power": true, "ttld_app_validator_proposals_pending": true, "ttld_app_validator_updates_total": true,
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

// poolGauges are the pool gauges as a comparable value.
type poolGauges struct{ epoch, storagePool, epochFees, pendingRefunds, totalCredits float64 }

func gauges(t *testing.T, m *Metrics) poolGauges {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.Epoch, m.StoragePool, m.EpochFees, m.PendingRefunds, m.TotalCredits)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]float64{}
	for _, f := range families {
		v[f.GetName()] = f.GetMetric()[0].GetGauge().GetValue()
	}
	return poolGauges{v["ttld_app_epoch"], v["ttld_app_storage_pool_credits"], v["ttld_app_epoch_fees_credits"],
		v["ttld_app_pending_refunds_credits"], v["ttld_app_total_credits"]}
}

// The pool gauges show the saved state after every commit, and after a restart before
// any block: the current epoch and its fees, the storage pool, the pending refunds.
func TestPoolMetricsFollowTheState(t *testing.T) {
	const supply = 100_000_000_000
	h := newHarness(t)
	st := genesis.AppState{EpochTimeLengthS: 3600, Addresses: []genesis.Address{{Address: addr("alice").String(), Balance: supply}}}
	st.Identities = []genesis.Identity{{ID: genesisIdentityID("va").String(), Keys: []string{hex.EncodeToString(pub("alice"))}}}
	h.addValidator("val-a", genesisIdentityID("va"), 10, &st)
	h.initChain(st)
	h.proposer = consensusAddress("val-a")

	res := h.block(genesisTime.Add(time.Second), [][]byte{h.tx("address-transfer from=alice nonce=1 to=bob amount=1000")})
	fee := float64(res.TxResults[0].GasUsed)
	if got, want := gauges(t, h.app.metrics), (poolGauges{0, 0, fee, 0, supply}); got != want {
		t.Fatalf("after block 1: %+v, want %+v", got, want)
	}

	// A storage fee into the storage pool, saved by the next block.
	h.moveCredits(func(kv drive.KV) error {
		a, _, err := drive.GetAddress(kv, addr("alice"))
		if err != nil {
			return err
		}
		a.Balance -= 27_000_000
		if err := drive.SetAddress(kv, addr("alice"), a); err != nil {
			return err
		}
		return drive.SetU64(kv, drive.StoragePoolKey(), 27_000_000)
	})
	h.block(genesisTime.Add(2*time.Second), nil)
	if got, want := gauges(t, h.app.metrics), (poolGauges{0, 27_000_000, fee, 0, supply}); got != want {
		t.Fatalf("after the storage fee: %+v, want %+v", got, want)
	}

	// Epoch 1: the storage pool goes out and epoch 0 is paid; a refund then waits.
	h.block(genesisTime.Add(time.Hour), nil)
	if got, want := gauges(t, h.app.metrics), (poolGauges{1, 0, 0, 0, supply}); got != want {
		t.Fatalf("after the epoch change: %+v, want %+v", got, want)
	}
	refunded := feeschedule.StorageRefund(27_000_000, 0, 1)
	h.moveCredits(func(kv drive.KV) error {
		bal, _, err := drive.GetIdentityBalance(kv, genesisIdentityID("va"))
		if err != nil {
			return err
		}
		if err := drive.SetIdentityBalance(kv, genesisIdentityID("va"), bal+refunded); err != nil {
			return err
		}
		return drive.AddPendingRefund(kv, drive.PendingRefund{PaidIn: 0, From: 2, StorageFee: 27_000_000, Refunded: refunded})
	})
	h.block(genesisTime.Add(time.Hour+time.Second), nil)
	want := poolGauges{1, 0, 0, float64(refunded), supply}
	if got := gauges(t, h.app.metrics); got != want {
		t.Fatalf("with a pending refund: %+v, want %+v", got, want)
	}

	// A restarted node shows the saved state before its first block.
	h.open()
	if got := gauges(t, h.app.metrics); got != want {
		t.Fatalf("after a restart: %+v, want %+v", got, want)
	}
}

// TestMetricsDeclared pins every metric /metrics exposes: its name, kind, help and
// labels, as Prometheus gathers them from the registry NewMetrics filled; and every
// field of Metrics is declared exactly once, so none is left nil.
func TestMetricsDeclared(t *testing.T) {
	pinned := []struct {
		name   string
		kind   string // the exposition's TYPE
		help   string
		labels []string
	}{
		{"ttld_app_block_execution_seconds", "HISTOGRAM", "Time a block's execution takes, in the call that runs it: PrepareProposal (the proposer's block), ProcessProposal (another's) or FinalizeBlock (a block not executed before its decision).", nil},
		{"ttld_app_finalize_block_seconds", "HISTOGRAM", "Time FinalizeBlock takes, from a block's decision to its app hash.", nil},
		{"ttld_app_optimistic_executions_total", "COUNTER", "FinalizeBlock calls by whether the block was executed before its decision: hit (by PrepareProposal or ProcessProposal, used as it was), miss (another block was: executed again), unprocessed (none was, as in a replay or while catching up: executed).", []string{"result"}},
		{"ttld_app_commit_seconds", "HISTOGRAM", "Time Commit takes to save a version of the tree.", nil},
		{"ttld_app_txs_total", "COUNTER", "Transactions executed in blocks, by result code.", []string{"code"}},
		{"ttld_app_state_keys", "GAUGE", "Keys in the state tree after the last commit.", nil},
		{"ttld_app_height", "GAUGE", "Last committed height.", nil},
		{"ttld_app_fees_collected_credits_total", "COUNTER", "Fees charged by blocks this process executed, in credits.", nil},
		{"ttld_app_proposals_rejected_total", "COUNTER", "Proposals ProcessProposal rejected because a transaction in them is refused unpaid, which the proposer could have left out.", nil},
		{"ttld_app_signature_checks_total", "COUNTER", "Signature checks by how they were answered: remembered (an ed25519 verification that passed before: CheckTx, its rechecks, the proposal checks and FinalizeBlock verify a transaction once), verified, invalid.", []string{"result"}},
		{"ttld_app_cleanup_removed_total", "COUNTER", "Expired entries removed by the per-block cleanups.", []string{"cleanup"}},
		{"ttld_app_cleanup_orphans_total", "COUNTER", "Expired entries removed by the per-block cleanups that had nothing to delete (documents: an expirations entry without its document).", []string{"cleanup"}},
		{"ttld_app_cleanup_weight_used_total", "COUNTER", "Weight of the budget the per-block cleanups used.", []string{"cleanup"}},
		{"ttld_app_cleanup_backlog", "GAUGE", "Expired entries the last block's cleanup left for later blocks (counted up to 10,000).", []string{"cleanup"}},
		{"ttld_app_cleanup_oldest_overdue_seconds", "GAUGE", "How long the oldest expired entry left by the last block's cleanup has been due, in block time.", []string{"cleanup"}},
		{"ttld_app_time_range_expired_keys", "GAUGE", "Keys standing in expired windows of a ttl'd time-range grid after the last epoch change's sweep (the first 100 grids, each counted up to 100,000).", []string{"contract", "grid", "type"}},
		{"ttld_app_epoch", "GAUGE", "Current epoch index after the last commit.", nil},
		{"ttld_app_storage_pool_credits", "GAUGE", "Storage distribution pool: perpetual storage fees collected since the last epoch change, in credits.", nil},
		{"ttld_app_epoch_fees_credits", "GAUGE", "Processing fees collected in the current epoch, in credits.", nil},
		{"ttld_app_pending_refunds_credits", "GAUGE", "Storage refunds paid to owners that the next epoch change takes back from the epochs' pools, in credits.", nil},
		{"ttld_app_total_credits", "GAUGE", "Running total of credits in state (balances and pools, less pending refunds); equals the genesis supply.", nil},
		{"ttld_app_protocol_version", "GAUGE", "Protocol version in force after the last commit.", nil},
		{"ttld_app_next_protocol_version", "GAUGE", "Protocol version the chain moves to at the next epoch change, as the last one decided; 0 when none is decided.", nil},
		{"ttld_app_newest_supported_protocol_version", "GAUGE", "Newest protocol version this binary implements: a next_protocol_version above it stops the node at the next epoch change.", nil},
		{"ttld_app_epoch_blocks", "GAUGE", "Blocks of the current epoch up to the last commit.", nil},
		{"ttld_app_upgrade_signals", "GAUGE", "Blocks of the current epoch whose proposer signalled each protocol version, up to the last commit.", []string{"version"}},
		{"ttld_app_snapshots_total", "COUNTER", "Snapshots of the state due by snapshot_interval, by result: taken, failed, skipped (the one before was still being taken).", []string{"result"}},
		{"ttld_app_snapshot_height", "GAUGE", "Height of the last snapshot taken.", nil},
		{"ttld_app_snapshot_duration_seconds", "GAUGE", "Time the last snapshot taken took, in the background.", nil},
		{"ttld_app_snapshot_bytes", "GAUGE", "Size of the last snapshot taken: its chunks, in bytes.", nil},
		{"ttld_app_restore_chunks", "GAUGE", "Chunks of the snapshot being restored by state sync (0: none is).", nil},
		{"ttld_app_restore_chunks_applied", "GAUGE", "Chunks of the snapshot being restored that are imported.", nil},
		{"ttld_app_restore_bytes_applied", "GAUGE", "Bytes of the snapshot being restored that are imported.", nil},
		{"ttld_app_restored_height", "GAUGE", "Height of the snapshot this process restored its state from by state sync (0: none).", nil},
		{"ttld_app_validators", "GAUGE", "Validators in the set the chain holds in state (protocol version 16 on; 0 before).", nil},
		{"ttld_app_validator_power", "GAUGE", "Total voting power of the set the chain holds in state.", nil},
		{"ttld_app_validator_proposals_pending", "GAUGE", "Validator set proposals pending (not yet applied, dropped or expired).", nil},
		{"ttld_app_validator_updates_total", "COUNTER", "Changes of the validator set blocks sent CometBFT (validator updates).", nil},
		{"ttld_app_misbehavior_total", "COUNTER", "Evidence of misbehaviour blocks carried, by kind (duplicate_vote, light_client_attack) and whether it removed the validator.", []string{"kind", "removed"}},
	}
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, "chain-7")
	if err != nil {
		t.Fatal(err)
	}
	declared := m.declare()
	if len(declared) != len(pinned) {
		t.Fatalf("%d metrics declared, %d pinned: pin the new ones", len(declared), len(pinned))
	}

	// Every field is declared once: the declared pointers are the fields' addresses.
	fields := map[uintptr]string{}
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		fields[v.Field(i).Addr().Pointer()] = v.Type().Field(i).Name
	}
	for _, d := range declared {
		p := reflect.ValueOf(d.field).Pointer()
		if _, ok := fields[p]; !ok {
			t.Errorf("metric %s: its field is declared twice, or is no field of Metrics", d.name)
		}
		delete(fields, p)
	}
	for _, name := range fields {
		t.Errorf("field Metrics.%s is declared by no metric", name)
	}

	// A vector is gathered once it has a child: give each one, labelled by its label
	// names.
	for _, d := range declared {
		switch f := d.field.(type) {
		case **prometheus.CounterVec:
			(*f).WithLabelValues(d.labels...).Inc()
		case **prometheus.GaugeVec:
			(*f).WithLabelValues(d.labels...).Set(1)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	gathered := map[string]int{}
	for i, f := range families {
		gathered[f.GetName()] = i
	}
	if len(gathered) != len(pinned) {
		t.Errorf("%d metrics gathered, %d pinned", len(gathered), len(pinned))
	}
	for _, p := range pinned {
		i, ok := gathered[p.name]
		if !ok {
			t.Errorf("metric %s not gathered", p.name)
			continue
		}
		f := families[i]
		if f.GetType().String() != p.kind || f.GetHelp() != p.help {
			t.Errorf("metric %s: %s %q, want %s %q", p.name, f.GetType(), f.GetHelp(), p.kind, p.help)
		}
		// Prometheus sorts a metric's labels by name.
		want := append([]string{MetricsChainIDLabel}, p.labels...)
		slices.Sort(want)
		var got []string
		for _, l := range f.GetMetric()[0].GetLabel() {
			got = append(got, l.GetName())
		}
		if !slices.Equal(got, want) {
			t.Errorf("metric %s: labels %v, want %v", p.name, got, want)
		}
	}
}

// The validator set's metrics show the set after every commit that changed it (and
// the process's first), and count the updates sent CometBFT and the evidence handled.
func TestValidatorMetricsFollowTheSet(t *testing.T) {
	h := newHarness(t)
	st := genesis.AppState{EpochTimeLengthS: 3600}
	for _, v := range []string{"va", "vb", "vc"} {
		st.Identities = append(st.Identities, genesis.Identity{ID: genesisIdentityID(v).String(), Keys: []string{hex.EncodeToString(pub(v))}})
		h.addValidator("val-"+v, genesisIdentityID(v), 10, &st)
	}
	h.initChain(st)
	h.proposer = consensusAddress("val-va")
	m := h.app.metrics
	h.block(genesisTime.Add(time.Second), nil)
	if got := testutil.ToFloat64(m.Validators); got != 3 || testutil.ToFloat64(m.ValidatorPower) != 30 {
		t.Fatalf("after block 1: %v validators of power %v", got, testutil.ToFloat64(m.ValidatorPower))
	}
	h.evidence = []abcitypes.Misbehavior{{Type: abcitypes.MisbehaviorType_DUPLICATE_VOTE, Validator: abcitypes.Validator{Address: consensusAddress("val-vc"), Power: 10}, Height: 1}}
	h.block(genesisTime.Add(2*time.Second), nil)
	h.evidence = nil
	if testutil.ToFloat64(m.Validators) != 2 || testutil.ToFloat64(m.ValidatorPower) != 20 || testutil.ToFloat64(m.ValidatorUpdates) != 1 ||
		testutil.ToFloat64(m.Misbehavior.WithLabelValues("duplicate_vote", "true")) != 1 {
		t.Fatalf("after the evidence: %v validators of power %v, %v updates", testutil.ToFloat64(m.Validators), testutil.ToFloat64(m.ValidatorPower), testutil.ToFloat64(m.ValidatorUpdates))
	}
}
