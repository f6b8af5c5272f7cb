package app

import (
	"testing"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/feeschedule"
	"github.com/ttld-dev/ttld/protocol"
)

// TestPayEpochRemainder: shares are the pool times blocks over all blocks, rounded down;
// the remainder goes to the proposer with the most blocks, the lowest address among
// equals; a proposer without a payout identity rolls its share on to the next epoch.
func TestPayEpochRemainder(t *testing.T) {
	cases := []struct {
		name   string
		pool   uint64
		blocks map[string]uint64 // proposer -> blocks; "x" has no payout identity
		want   map[string]uint64 // payout identity balances
		rolled uint64
	}{
		{"two to one", 100, map[string]uint64{"a": 2, "b": 1}, map[string]uint64{"a": 67, "b": 33}, 0},
		{"a tie goes to the lower address", 101, map[string]uint64{"a": 1, "b": 1}, map[string]uint64{"a": 51, "b": 50}, 0},
		{"no payout identity", 100, map[string]uint64{"a": 1, "b": 1, "x": 1}, map[string]uint64{"a": 33, "b": 33}, 34},
		{"nobody to pay", 100, map[string]uint64{"x": 3}, map[string]uint64{}, 100},
		{"no blocks", 100, map[string]uint64{}, map[string]uint64{}, 100},
	}
	for _, c := range cases {
		kv := drive.NewCache(drive.Empty())
		ids := map[string]protocol.IdentityID{"a": {1}, "b": {2}}
		for name, id := range ids {
			if err := drive.InsertIdentity(kv, drive.Identity{ID: id}); err != nil {
				t.Fatal(err)
			}
			if err := drive.SetPayoutIdentity(kv, []byte(name), id); err != nil {
				t.Fatal(err)
			}
		}
		for name, n := range c.blocks {
			if err := drive.SetU64(kv, drive.EpochProposerKey(4, []byte(name)), n); err != nil {
				t.Fatal(err)
			}
		}
		if err := drive.SetU64(kv, drive.EpochFeesKey(4), c.pool-10); err != nil {
			t.Fatal(err)
		}
		if err := drive.SetU64(kv, drive.EpochStorageKey(4), 10); err != nil {
			t.Fatal(err)
		}
		if _, err := payEpoch(kv, 4); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for name, id := range ids {
			if bal, _, _ := drive.GetIdentityBalance(kv, id); bal != c.want[name] {
				t.Errorf("%s: %s got %d, want %d", c.name, name, bal, c.want[name])
			}
		}
		if rolled, _ := drive.GetU64(kv, drive.EpochStorageKey(5)); rolled != c.rolled {
			t.Errorf("%s: %d rolled on, want %d", c.name, rolled, c.rolled)
		}
		if next, _ := drive.GetNextUnpaidEpoch(kv); next != 5 {
			t.Errorf("%s: next unpaid %d", c.name, next)
		}
	}
}

// TestTakeBackRefundsExact: several refunds of fees paid in one epoch, summed into one
// pending refund, take back exactly what their owners got, though the parts of the
// summed fee differ from the sum of each fee's parts by the flooring.
func TestTakeBackRefundsExact(t *testing.T) {
	kv := drive.NewCache(drive.Empty())
	fees := []uint64{27_000 * 3, 27_000*7 + 13, 999_999}
	var total uint64
	for _, f := range fees {
		total += f
	}
	// The epoch change into epoch 1 distributed the epoch-0 fees together.
	if err := drive.SetU64(kv, drive.StoragePoolKey(), total); err != nil {
		t.Fatal(err)
	}
	if _, err := distributeStoragePool(kv, 1); err != nil {
		t.Fatal(err)
	}
	before, err := drive.ScanCredits(kv)
	if err != nil {
		t.Fatal(err)
	}
	var refunded uint64
	for _, f := range fees {
		r := feeschedule.StorageRefund(f, 0, 5)
		refunded += r
		if err := drive.AddPendingRefund(kv, drive.PendingRefund{PaidIn: 0, From: 6, StorageFee: f, Refunded: r}); err != nil {
			t.Fatal(err)
		}
	}
	taken, err := takeBackRefunds(kv)
	if err != nil {
		t.Fatal(err)
	}
	after, err := drive.ScanCredits(kv)
	if err != nil {
		t.Fatal(err)
	}
	// ScanCredits counts a pending refund against the total: once taken back, the pools
	// hold exactly the refunded credits less.
	if taken != refunded || before-after != refunded {
		t.Fatalf("took %d back, refunded %d; the pools fell by %d", taken, refunded, before-after)
	}
	for e := uint32(1); e <= 5; e++ {
		share, _ := drive.GetU64(kv, drive.EpochStorageKey(e))
		if share != feeschedule.SplitStorageFee(total).Part(e-1) {
			t.Fatalf("epoch %d, before the removal, lost part of its share: %d", e, share)
		}
	}
	if left, _ := drive.PendingRefunds(kv); len(left) != 0 {
		t.Fatalf("pending refunds left: %+v", left)
	}
}
