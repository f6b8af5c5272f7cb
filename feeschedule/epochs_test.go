package feeschedule

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// referenceParts is the perpetual distribution written the plain way, with big
// integers: era k's amount is fee*share/100000 rounded down, each of its 40 epochs gets
// that amount over 40 rounded down, and the first epoch also gets what is left.
func referenceParts(fee uint64) []uint64 {
	parts := make([]uint64, PerpetualEpochs)
	paid := new(big.Int)
	for i := range parts {
		era := new(big.Int).Mul(new(big.Int).SetUint64(fee), new(big.Int).SetUint64(EraShares[i/EpochsPerEra]))
		era.Div(era, big.NewInt(ShareDenominator))
		era.Div(era, big.NewInt(EpochsPerEra))
		parts[i] = era.Uint64()
		paid.Add(paid, era)
	}
	parts[0] += fee - paid.Uint64()
	return parts
}

func TestEraSharesSum(t *testing.T) {
	var sum uint64
	for i, s := range EraShares {
		sum += s
		if i > 0 && s > EraShares[i-1] {
			t.Errorf("era %d's share %d is above era %d's", i, s, i-1)
		}
	}
	if sum != ShareDenominator {
		t.Fatalf("shares sum to %d, want %d", sum, ShareDenominator)
	}
}

// TestSplitAgainstReference: on random fees, the split pays every epoch what the
// reference does, the parts sum to the fee, and From is the sum of the parts from an
// offset on.
func TestSplitAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	fees := []uint64{0, 1, 39, 40, 99_999, 100_000, 27_000, math.MaxUint64, math.MaxUint64 - 1, 1 << 63}
	for i := 0; i < 200; i++ {
		fees = append(fees, rng.Uint64()>>uint(rng.Intn(64)))
	}
	for _, fee := range fees {
		s := SplitStorageFee(fee)
		ref := referenceParts(fee)
		var sum uint64
		for i := uint32(0); i < PerpetualEpochs; i++ {
			if s.Part(i) != ref[i] {
				t.Fatalf("fee %d, epoch offset %d: part %d, reference %d", fee, i, s.Part(i), ref[i])
			}
			sum += ref[i]
		}
		if sum != fee {
			t.Fatalf("fee %d: parts sum to %d", fee, sum)
		}
		for _, off := range []uint32{0, 1, 39, 40, 41, uint32(rng.Intn(PerpetualEpochs)), PerpetualEpochs - 1, PerpetualEpochs} {
			var want uint64
			for i := off; i < PerpetualEpochs; i++ {
				want += ref[i]
			}
			if got := s.From(off); got != want {
				t.Fatalf("fee %d: From(%d) = %d, the parts from there sum to %d", fee, off, got, want)
			}
		}
	}
}

// TestStorageRefund: the refund is what the epochs after the current one would still
// get; before the first payout epoch everything comes back, after the last nothing.
func TestStorageRefund(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 300; i++ {
		fee := rng.Uint64() >> uint(rng.Intn(64))
		paidIn := uint32(rng.Intn(5000))
		current := paidIn + uint32(rng.Intn(2100))
		ref := referenceParts(fee)
		var want uint64
		for off := 0; off < PerpetualEpochs; off++ {
			if epoch := uint64(paidIn) + 1 + uint64(off); epoch > uint64(current) {
				want += ref[off]
			}
		}
		if got := StorageRefund(fee, paidIn, current); got != want {
			t.Fatalf("fee %d paid in %d, removed in %d: refund %d, want %d", fee, paidIn, current, got, want)
		}
	}
	if got := StorageRefund(500, 7, 7); got != 500 {
		t.Fatalf("removed in the epoch it was paid in: refund %d, want all 500", got)
	}
	if got := StorageRefund(500, 7, 7+PerpetualEpochs); got != 0 {
		t.Fatalf("removed after the last payout epoch: refund %d, want 0", got)
	}
}

// TestPermanentByteAgainstOneYearTTL checks Document Time To Live's cross-check: "A one-year ttl pays
// 40 × 34 = 1,360 credits per byte, about what a permanent document deleted after a
// year keeps paying net of its refund." A year is 40 mainnet epochs: a 1,000-byte
// permanent document (27,000 credits a byte) deleted 40 epochs after it was paid for
// keeps the first era's payout, about 1,350 a byte.
func TestPermanentByteAgainstOneYearTTL(t *testing.T) {
	const bytes = 1000
	fee := uint64(27_000 * bytes)
	kept := fee - StorageRefund(fee, 0, EpochsPerEra)
	perByte := kept / bytes
	if perByte < 1340 || perByte > 1360 {
		t.Fatalf("a permanent byte kept %d credits after a year, want about 1,360 (a one-year ttl)", perByte)
	}
}
