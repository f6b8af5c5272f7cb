package feeschedule

import (
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

func v14(t *testing.T) Schedule {
	t.Helper()
	s, err := For(protocol.V14)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFeeVersion2Pinned: protocol version 14 uses fee version 2, version 1 and the
// document_ttl group with the platform's figures; version 13 keeps version 1, which has
// no group.
func TestFeeVersion2Pinned(t *testing.T) {
	s13, _ := For(protocol.V13)
	s := v14(t)
	if s.Version != FeeVersion2 || s.Processing != s13.Processing || s.StoragePerByte != s13.StoragePerByte {
		t.Fatalf("protocol 14 uses %+v", s)
	}
	if s13.HasDocumentTTL() || !s.HasDocumentTTL() {
		t.Fatalf("HasDocumentTTL: version 1 %v, version 2 %v", s13.HasDocumentTTL(), s.HasDocumentTTL())
	}
	g := s.DocumentTTL
	want := []TTLTier{{3_600, 1}, {86_400, 4}, {172_800, 8}, {345_600, 15}, {604_800, 26}}
	if len(g.Tiers) != len(want) {
		t.Fatalf("tiers %+v", g.Tiers)
	}
	for i := range want {
		if g.Tiers[i] != want[i] {
			t.Errorf("tier %d: %+v, want %+v", i, g.Tiers[i], want[i])
		}
	}
	if g.PricingPeriodSeconds != 788_400 || g.PerPeriod != 34 ||
		g.CleanupBase != 1_200_000 || g.CleanupPerIndexLevel != 400_000 || g.CleanupPerDocumentByte != 420 {
		t.Errorf("document_ttl group %+v", g)
	}
	// 34 = 27,000 × 5% / 40, rounded up: the first era's share of the perpetual price,
	// per epoch.
	if share := (s.StoragePerByte*EraShares[0] + ShareDenominator*EpochsPerEra - 1) / (ShareDenominator * EpochsPerEra); share != g.PerPeriod {
		t.Errorf("the first era's share per epoch is %d, the group prices a period at %d", share, g.PerPeriod)
	}
	// The table's own order, which monotonicity rests on.
	for i := 1; i < len(g.Tiers); i++ {
		if g.Tiers[i].UpToSeconds <= g.Tiers[i-1].UpToSeconds || g.Tiers[i].PerByte < g.Tiers[i-1].PerByte {
			t.Errorf("tiers out of order at %d", i)
		}
	}
	if g.PerPeriod < g.Tiers[len(g.Tiers)-1].PerByte {
		t.Error("a period costs less than the last tier")
	}
}

// TestTTLStoragePerByte: Document Time To Live's table ("up to 1 hour 1, up to 1 day 4, up to 2
// days 8, up to 4 days 15, up to 7 days 26, longer 34 per 9.125 days spanned") at its
// boundaries, and "A one-year ttl pays 40 × 34 = 1,360 credits per byte". A partial
// second counts whole; a lifetime of 0 costs the first tier.
func TestTTLStoragePerByte(t *testing.T) {
	s := v14(t)
	const sec = 1000
	for _, c := range []struct{ ms, want uint64 }{
		{0, 1},
		{1, 1},
		{3_600 * sec, 1}, // a one-hour ttl pays 1 per byte
		{3_600*sec + 1, 4},
		{86_400 * sec, 4},
		{86_400*sec + 1, 8},
		{172_800 * sec, 8},
		{172_800*sec + 1, 15},
		{345_600 * sec, 15},
		{345_600*sec + 1, 26},
		{604_800 * sec, 26},
		{604_800*sec + 1, 34},
		{788_400 * sec, 34},
		{788_400*sec + 1, 68},
		{1_209_600 * sec, 68},     // Document Time To Live's note: two weeks span two periods
		{31_536_000 * sec, 1_360}, // one year: 40 periods exactly
		{31_536_000*sec + 1, 1_394},
		{math.MaxUint64, (math.MaxUint64/sec + 1 + 788_399) / 788_400 * 34},
	} {
		got, err := s.TTLStoragePerByte(c.ms)
		if err != nil || got != c.want {
			t.Errorf("TTLStoragePerByte(%d ms) = %d, %v; want %d", c.ms, got, err, c.want)
		}
	}
	if got, err := s.TTLStorageFee(250, 3_600*sec); err != nil || got != 250 {
		t.Errorf("250 bytes for an hour: %d, %v", got, err)
	}
	if got, err := s.TTLStorageFee(250, 31_536_000*sec); err != nil || got != 250*1_360 {
		t.Errorf("250 bytes for a year: %d, %v", got, err)
	}
	var o ErrOverflow
	if _, err := s.TTLStorageFee(math.MaxUint64/1_360+1, 31_536_000*sec); !errors.As(err, &o) {
		t.Errorf("an overflowing ttl storage fee gave %v", err)
	}
	huge := s
	huge.DocumentTTL.PerPeriod = math.MaxUint64
	if _, err := huge.TTLStoragePerByte(2 * 788_400 * sec); !errors.As(err, &o) {
		t.Errorf("an overflowing price per byte gave %v", err)
	}
	s13, _ := For(protocol.V13)
	var no ErrNoDocumentTTL
	if _, err := s13.TTLStorageFee(1, 1); !errors.As(err, &no) || no.Version != FeeVersion1 {
		t.Errorf("version 1 priced a ttl: %v", err)
	}
	if _, err := s13.DeletionPrepay(1, 1); !errors.As(err, &no) {
		t.Errorf("version 1 priced a deletion prepay: %v", err)
	}
}

// TestTTLPriceMonotone: Document Time To Live: "The price never decreases with the lifetime, so an
// estimate made at an earlier block time (check_tx) stays an upper bound of the
// execution". Random pairs of lifetimes, near the boundaries and anywhere.
func TestTTLPriceMonotone(t *testing.T) {
	s := v14(t)
	rng := rand.New(rand.NewSource(14))
	bounds := []uint64{0, 3_600_000, 86_400_000, 172_800_000, 345_600_000, 604_800_000, 788_400_000, 31_536_000_000}
	pick := func() uint64 {
		switch rng.Intn(3) {
		case 0: // within a second of a bound
			v := bounds[rng.Intn(len(bounds))] + uint64(rng.Intn(2001))
			return max(v, 1000) - 1000
		case 1:
			return uint64(rng.Int63n(40 * 31_536_000_000))
		}
		return rng.Uint64()
	}
	for i := 0; i < 100_000; i++ {
		a, b := pick(), pick()
		if a > b {
			a, b = b, a
		}
		bytes := uint64(rng.Intn(20_000))
		pa, errA := s.TTLStorageFee(bytes, a)
		pb, errB := s.TTLStorageFee(bytes, b)
		if errA != nil || errB != nil {
			t.Fatalf("%d bytes at %d, %d ms: %v, %v", bytes, a, b, errA, errB)
		}
		if pa > pb {
			t.Fatalf("%d bytes: %d ms cost %d, the longer %d ms %d", bytes, a, pa, b, pb)
		}
		if pa == 0 && bytes > 0 {
			t.Fatalf("%d bytes for %d ms are free", bytes, a)
		}
	}
}

// TestDeletionPrepay: Document Time To Live: "cleanup_base_processing_cost (1,200,000), plus
// cleanup_processing_cost_per_index_level (400,000) per index level of the type, ...
// plus cleanup_processing_cost_per_document_byte (420, what removing and reading a byte
// costs) per byte of the stored document". Deletes measured on the platform cost 1.53M,
// 1.94M and 2.39M credits at 1, 2 and 4 levels; the prepay covers each for a document
// of a few hundred bytes.
func TestDeletionPrepay(t *testing.T) {
	s := v14(t)
	for _, c := range []struct{ levels, bytes, want, measured uint64 }{
		{0, 0, 1_200_000, 0},
		{1, 0, 1_600_000, 0},
		{1, 300, 1_726_000, 1_530_000},
		{2, 300, 2_126_000, 1_940_000},
		{4, 300, 2_926_000, 2_390_000},
	} {
		got, err := s.DeletionPrepay(c.levels, c.bytes)
		if err != nil || got != c.want {
			t.Errorf("DeletionPrepay(%d levels, %d bytes) = %d, %v; want %d", c.levels, c.bytes, got, err, c.want)
		}
		if got < c.measured {
			t.Errorf("%d levels: prepay %d below the measured delete %d", c.levels, got, c.measured)
		}
	}
	if got, err := s.ChangeDeletionPrepay(50); err != nil || got != 50*420 {
		t.Errorf("ChangeDeletionPrepay(50) = %d, %v", got, err)
	}
	var o ErrOverflow
	for _, c := range []struct{ levels, bytes uint64 }{
		{math.MaxUint64/400_000 + 1, 0},
		{0, math.MaxUint64/420 + 1},
		{(math.MaxUint64-1_200_000)/400_000 + 1, 0}, // the sum, not a product, overflows
		{math.MaxUint64 / 400_000 / 2, math.MaxUint64 / 420 / 2},
	} {
		if _, err := s.DeletionPrepay(c.levels, c.bytes); !errors.As(err, &o) {
			t.Errorf("DeletionPrepay(%d, %d) gave %v", c.levels, c.bytes, err)
		}
	}
}

// TestLifetimeEpochs: Document Time To Live: "Drive counts the epochs its remaining lifetime spans,
// rounded up and at most one era (40 epochs), with the network's epoch length", and "A
// network with hour-long epochs therefore pays a year-long document out within 40
// hours."
func TestLifetimeEpochs(t *testing.T) {
	const mainnet, testnet = 788_400, 3_600
	for _, c := range []struct {
		ms, epoch uint64
		want      uint16
	}{
		{0, mainnet, 1},
		{1, mainnet, 1},
		{788_400_000, mainnet, 1},
		{788_400_001, mainnet, 2},
		{1_209_600_000, mainnet, 2},
		{31_536_000_000, mainnet, 40},
		{31_536_000_001, mainnet, 40},
		{3_600_000, testnet, 1},
		{7_200_001, testnet, 3},
		{31_536_000_000, testnet, 40},
		{math.MaxUint64, 1, 40},
		{math.MaxUint64, math.MaxUint64, 1},
		{1, 0, 40},
	} {
		if got := LifetimeEpochs(c.ms, c.epoch); got != c.want {
			t.Errorf("LifetimeEpochs(%d ms, %d s) = %d, want %d", c.ms, c.epoch, got, c.want)
		}
	}
}

// TestSpreadLifetimePool, worked by hand: pools {lifetime 2: 1001, lifetime 3: 30}
// spread at epoch 5 add +511 to epoch 5, +510 to epoch 6 from the first, +10 to each of
// epochs 5, 6, 7 from the second: the first pool gives 501 and 500, the second
// 10 to each, so epochs 5, 6 and 7 receive 511, 510 and 10. Document Time To Live: "spreads each
// pool of an earlier epoch evenly over its number of epochs from the new epoch on, the
// remainder of the division to the new epoch".
func TestSpreadLifetimePool(t *testing.T) {
	const newEpoch = 5
	got := map[uint32]uint64{}
	for _, p := range []struct {
		credits  uint64
		lifetime uint16
	}{{1001, 2}, {30, 3}} {
		each, rest := SpreadLifetimePool(p.credits, p.lifetime)
		for i := uint32(0); i < uint32(p.lifetime); i++ {
			got[newEpoch+i] += each
		}
		got[newEpoch] += rest
	}
	want := map[uint32]uint64{5: 511, 6: 510, 7: 10}
	for e, w := range want {
		if got[e] != w {
			t.Errorf("epoch %d receives %d, want %d", e, got[e], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("spread %v", got)
	}
	rng := rand.New(rand.NewSource(5))
	for i := 0; i < 10_000; i++ {
		credits, epochs := rng.Uint64(), uint16(rng.Intn(41))
		each, rest := SpreadLifetimePool(credits, epochs)
		if epochs == 0 {
			if each != 0 || rest != credits {
				t.Fatalf("0 epochs: %d, %d", each, rest)
			}
			continue
		}
		if rest >= uint64(epochs) || each*uint64(epochs)+rest != credits {
			t.Fatalf("SpreadLifetimePool(%d, %d) = %d, %d", credits, epochs, each, rest)
		}
	}
}

// TestEphemeralFee: bytes under a ttl'd time-range index bill 270 credits each from
// the version 14 table on (Time-Range Index TTL: "added bytes bill to processing at
// FeeStorageVersion::ttl_ephemeral_disk_usage_credit_per_byte (270 credits/byte, 1% of
// the storage rate"), nothing before; an overflow is an error, never a wrapped fee.
func TestEphemeralFee(t *testing.T) {
	v14, err := For(protocol.V14)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := v14.EphemeralFee(1000); err != nil || got != 270_000 || v14.TTLEphemeralPerByte*100 != v14.StoragePerByte {
		t.Fatalf("1,000 bytes: %d, %v (rate %d, storage %d)", got, err, v14.TTLEphemeralPerByte, v14.StoragePerByte)
	}
	if _, err := v14.EphemeralFee(math.MaxUint64 / 100); err == nil {
		t.Fatal("an overflowing fee was accepted")
	}
	v13, _ := For(protocol.V13)
	if got, _ := v13.EphemeralFee(1000); got != 0 {
		t.Fatalf("version 13 bills %d", got)
	}
}

// TestRenewalFeeAgainstReference checks RenewalFee (protocol version 15, docs/STATE.md
// "Renewal": per byte, the price of the new remaining lifetime less the price of the
// remaining lifetime it had) against a plain model of seed 000's table ("up to 1 hour
// 1, up to 1 day 4, up to 2 days 8, up to 4 days 15, up to 7 days 26, longer 34 per
// 9.125 days spanned") over random lifetimes up to a year, near the tiers' bounds and
// anywhere: never negative ("The price never decreases with the lifetime"), 0 for a
// renewal within one tier, and what a create pays for the new lifetime less what it
// paid for the old.
func TestRenewalFeeAgainstReference(t *testing.T) {
	s, err := For(protocol.V15)
	if err != nil {
		t.Fatal(err)
	}
	perByte := func(ms uint64) uint64 {
		secs := (ms + 999) / 1000
		for _, tier := range []struct{ upTo, price uint64 }{{3_600, 1}, {86_400, 4}, {172_800, 8}, {345_600, 15}, {604_800, 26}} {
			if secs <= tier.upTo {
				return tier.price
			}
		}
		const period = 9*86_400 + 3*3_600 // 9.125 days
		return (secs + period - 1) / period * 34
	}
	const year = 31_536_000_000
	bounds := []uint64{0, 3_600_000, 86_400_000, 172_800_000, 345_600_000, 604_800_000, 788_400_000, year}
	rng := rand.New(rand.NewSource(15))
	pick := func() uint64 {
		if rng.Intn(2) == 0 {
			return min(year, max(bounds[rng.Intn(len(bounds))]+uint64(rng.Intn(2001)), 1000)-1000)
		}
		return uint64(rng.Int63n(year + 1))
	}
	for i := 0; i < 100_000; i++ {
		from, to := pick(), pick()
		if from > to {
			from, to = to, from
		}
		bytes := uint64(rng.Intn(20_000))
		got, err := s.RenewalFee(bytes, from, to)
		want := bytes * (perByte(to) - perByte(from))
		if err != nil || got != want {
			t.Fatalf("%d bytes renewed from %d ms left to %d: %d, %v; the model says %d", bytes, from, to, got, err, want)
		}
		create, _ := s.TTLStorageFee(bytes, to)
		paid, _ := s.TTLStorageFee(bytes, from)
		if got != create-paid {
			t.Fatalf("%d bytes from %d to %d ms: renewal %d, a create's %d less the %d paid", bytes, from, to, got, create, paid)
		}
	}
	if got, err := s.RenewalFee(100, 86_400_000, 3_600_000); err != nil || got != 0 {
		t.Fatalf("a renewal to less than the lifetime left: %d, %v; want 0, no refund", got, err)
	}
	var o ErrOverflow
	if _, err := s.RenewalFee(math.MaxUint64, 0, year); !errors.As(err, &o) {
		t.Fatalf("an overflowing renewal fee gave %v", err)
	}
	s13, _ := For(protocol.V13)
	var no ErrNoDocumentTTL
	if _, err := s13.RenewalFee(1, 0, 1); !errors.As(err, &no) {
		t.Fatalf("version 1 priced a renewal: %v", err)
	}
}
