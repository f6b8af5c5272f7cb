package abci

import (
	"encoding/hex"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
	m.observeCleanup(app.Cleanup{Name: "address_balances", Stats: drive.DrainStats{Removed: 2, WeightUsed: 2, Backlog: 1, OldestOverdueMs: 1500}})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"ttld_app_block_execution_seconds": true, "ttld_app_commit_seconds": true, "ttld_app_txs_total": true,
		"ttld_app_state_keys": true, "ttld_app_height": true, "ttld_app_fees_collected_credits_total": true,
		"ttld_app_proposals_rejected_total": true, "ttld_app_cleanup_removed_total": true, "ttld_app_cleanup_orphans_total": true, "ttld_app_cleanup_weight_used_total": true,
		"ttld_app_cleanup_backlog": true, "ttld_app_cleanup_oldest_overdue_seconds": true,
		"ttld_app_epoch": true, "ttld_app_storage_pool_credits": true, "ttld_app_epoch_fees_credits": true,
		"ttld_app_pending_refunds_credits": true, "ttld_app_total_credits": true,
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
	h.addValidator("val-a", genesisIdentityID("va"), &st)
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
