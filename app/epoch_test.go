package app

import (
	"math/big"
	"math/rand"
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

// TestShareEpochRandom checks shareEpoch against a reference in big integers: each
// payee gets pool*blocks/all rounded down, the payee with the most blocks (the lowest
// address among equals) also the payees' share of the pool less those shares, and the
// rest rolls over.
func TestShareEpochRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for n := 0; n < 2000; n++ {
		pool := rng.Uint64() >> rng.Intn(64)
		var proposers []epochProposer
		all, payable := new(big.Int), new(big.Int)
		for i := range rng.Intn(6) {
			pr := epochProposer{ProposerBlocks: drive.ProposerBlocks{Proposer: []byte{byte(i)}, Blocks: 1 + uint64(rng.Intn(3))*uint64(rng.Intn(1000))}}
			all.Add(all, new(big.Int).SetUint64(pr.Blocks))
			if rng.Intn(4) > 0 {
				pr.payout = &protocol.IdentityID{byte(i)}
				payable.Add(payable, new(big.Int).SetUint64(pr.Blocks))
			}
			proposers = append(proposers, pr)
		}
		s := shareEpoch(pool, proposers)
		var due uint64
		if payable.Sign() > 0 {
			due = new(big.Int).Div(new(big.Int).Mul(new(big.Int).SetUint64(pool), payable), all).Uint64()
		}
		if s.paid != due || s.rolledOver != pool-due {
			t.Fatalf("pool %d, %v: paid %d and rolled over %d, want %d and %d", pool, proposers, s.paid, s.rolledOver, due, pool-due)
		}
		top, sum := -1, uint64(0)
		for i, pe := range s.payees {
			if top < 0 || pe.Blocks > s.payees[top].Blocks {
				top = i // proposers come in address order: the first of equals is the lowest
			}
			sum += pe.credits
		}
		if sum != s.paid {
			t.Fatalf("pool %d, %v: credits sum to %d, paid %d", pool, proposers, sum, s.paid)
		}
		var floors uint64
		for _, pe := range s.payees {
			floors += new(big.Int).Div(new(big.Int).Mul(new(big.Int).SetUint64(pool), new(big.Int).SetUint64(pe.Blocks)), all).Uint64()
		}
		for i, pe := range s.payees {
			want := new(big.Int).Div(new(big.Int).Mul(new(big.Int).SetUint64(pool), new(big.Int).SetUint64(pe.Blocks)), all).Uint64()
			if i == top {
				want += due - floors
			}
			if pe.credits != want {
				t.Fatalf("pool %d, %v: payee %d got %d, want %d", pool, proposers, i, pe.credits, want)
			}
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

// TestTakeBackRefundsRandom: fees paid over several epochs are distributed at each
// change; refunds of random parts of them, removed in random later epochs, are taken
// back at the next change: exactly the refunded credits leave the epochs' shares, and
// no epoch before a refund's From loses anything.
func TestTakeBackRefundsRandom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(3))
	for run := 0; run < 50; run++ {
		kv := drive.NewCache(drive.Empty())
		type paid struct {
			epoch uint32
			fee   uint64
		}
		var fees []paid
		// Epochs 0..9 each pay some fees, distributed at the change into the next.
		for e := uint32(0); e < 10; e++ {
			var sum uint64
			for i := 0; i < 1+rng.Intn(4); i++ {
				f := uint64(rng.Int63n(50_000_000))
				fees = append(fees, paid{e, f})
				sum += f
			}
			if err := drive.SetU64(kv, drive.StoragePoolKey(), sum); err != nil {
				t.Fatal(err)
			}
			if _, err := distributeStoragePool(kv, e+1); err != nil {
				t.Fatal(err)
			}
		}
		// In epoch 10, some of them are removed (each refund is what the fee pays
		// after epoch 10).
		var refunded uint64
		for _, f := range fees {
			if rng.Intn(2) == 0 {
				continue
			}
			part := uint64(rng.Int63n(int64(f.fee) + 1))
			r := feeschedule.StorageRefund(part, f.epoch, 10)
			refunded += r
			if err := drive.AddPendingRefund(kv, drive.PendingRefund{PaidIn: f.epoch, From: 11, StorageFee: part, Refunded: r}); err != nil {
				t.Fatal(err)
			}
		}
		before := map[uint32]uint64{}
		for e := uint32(0); e <= 11; e++ {
			before[e], _ = drive.GetU64(kv, drive.EpochStorageKey(e))
		}
		scanned, _ := drive.ScanCredits(kv)
		taken, err := takeBackRefunds(kv)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		// The pending refunds counted against the total before; the pools hold that
		// much less after: the total does not move.
		after, _ := drive.ScanCredits(kv)
		if taken != refunded || after != scanned {
			t.Fatalf("run %d: took %d back, refunded %d; credits in state %d before, %d after", run, taken, refunded, scanned, after)
		}
		for e := uint32(0); e <= 10; e++ {
			if now, _ := drive.GetU64(kv, drive.EpochStorageKey(e)); now != before[e] {
				t.Fatalf("run %d: epoch %d, before the refunds' From, went from %d to %d", run, e, before[e], now)
			}
		}
	}
}

// The spread of the lifetime storage fee pools, worked by hand: pools {lifetime 2: 1001,
// lifetime 3: 30} spread at epoch 5 add +511 to epoch 5, +510 to epoch 6 from the
// first, +10 to each of epochs 5, 6, 7 from the second; the pools are removed (Document
// Time To Live: "spreads each pool of an earlier epoch evenly over its number of epochs from the
// new epoch on, the remainder of the division to the new epoch, and removes it"), and a
// pool of the new epoch itself stays.
func TestSpreadLifetimePools(t *testing.T) {
	kv := drive.NewCache(drive.Empty())
	for _, p := range []drive.LifetimePool{{Epoch: 3, Lifetime: 2, Credits: 1001}, {Epoch: 4, Lifetime: 3, Credits: 30}, {Epoch: 5, Lifetime: 1, Credits: 7}} {
		if err := drive.SetU64(kv, drive.LifetimePoolKey(p.Epoch, p.Lifetime), p.Credits); err != nil {
			t.Fatal(err)
		}
	}
	spread, err := spreadLifetimePools(kv, 5)
	if err != nil || spread != 1031 {
		t.Fatalf("spread %d, %v", spread, err)
	}
	// 1001 over 2 epochs is 500 each and 1 to the new epoch; 30 over 3 is 10 each.
	for epoch, want := range map[uint32]uint64{5: 511, 6: 510, 7: 10, 8: 0} {
		if got, _ := drive.GetU64(kv, drive.EpochStorageKey(epoch)); got != want {
			t.Errorf("epoch %d holds %d, want %d", epoch, got, want)
		}
	}
	left, err := drive.LifetimePools(kv, 6)
	if err != nil || len(left) != 1 || left[0] != (drive.LifetimePool{Epoch: 5, Lifetime: 1, Credits: 7}) {
		t.Fatalf("pools left: %+v %v", left, err)
	}
}

// TestTimesLeaveRoomForTheSpread: the latest block time (protocol.MaxBlockTimeMs, a
// genesis at 1970 and the shortest epoch) is in an epoch far enough below
// protocol.MaxEpoch that a perpetual storage fee paid in it (spread over the
// PerpetualEpochs after it), a lifetime pool (over up to MaxLifetimeEpochs) and the
// epoch after it are all epoch indexes: epochAt never refuses what a block time
// reaches (docs/STATE.md, "Block time").
func TestTimesLeaveRoomForTheSpread(t *testing.T) {
	last := uint64(protocol.EpochIndex(0, protocol.MinEpochLengthS, protocol.MaxBlockTimeMs))
	if need := last + 1 + feeschedule.PerpetualEpochs + feeschedule.MaxLifetimeEpochs; need > protocol.MaxEpoch {
		t.Fatalf("the last block time is in epoch %d; its spreads reach %d, past the largest epoch index %d", last, need, uint64(protocol.MaxEpoch))
	}
	if last >= protocol.MaxEpoch {
		t.Fatalf("the last block time's epoch %d is capped", last)
	}
}
