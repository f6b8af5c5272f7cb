package feeschedule

import (
	"fmt"
	"math/bits"
)

// The perpetual storage distribution: a storage fee is paid out to the epochs' pools
// over Eras eras of EpochsPerEra epochs each, from the epoch after the one it was paid
// in.
const (
	EpochsPerEra = 40
	Eras         = 50
	// PerpetualEpochs is how many epochs a perpetual storage fee is spread over.
	PerpetualEpochs = EpochsPerEra * Eras
	// ShareDenominator is the unit of EraShares: shares are in 1/100,000.
	ShareDenominator = 100_000
)

// EraShares is the share of a perpetual storage fee paid out in each era, era 0 first,
// in units of 1/ShareDenominator; they sum to ShareDenominator.
var EraShares = [Eras]uint64{
	5000, 4800, 4600, 4400, 4200, 4000, 3850, 3700, 3550, 3400,
	3250, 3100, 2950, 2850, 2750, 2650, 2550, 2450, 2350, 2250,
	2150, 2050, 1950, 1875, 1800, 1725, 1650, 1575, 1500, 1425,
	1350, 1275, 1200, 1125, 1050, 975, 900, 825, 750, 675,
	600, 525, 475, 425, 375, 325, 275, 225, 175, 125,
}

// StorageSplit is how a perpetual storage fee is paid out: PerEpoch[k] to each of the
// EpochsPerEra epochs of era k, and Leftover (what the flooring leaves) to the first
// epoch on top of its part. Integer arithmetic only; the parts sum to the fee.
type StorageSplit struct {
	Fee      uint64
	PerEpoch [Eras]uint64
	Leftover uint64
}

// SplitStorageFee splits fee: era k gets floor(fee * EraShares[k] / ShareDenominator),
// each of its epochs floor of that over EpochsPerEra.
func SplitStorageFee(fee uint64) StorageSplit {
	s := StorageSplit{Fee: fee}
	var paid uint64
	for k, share := range EraShares {
		hi, lo := bits.Mul64(fee, share)
		era, _ := bits.Div64(hi, lo, ShareDenominator) // < fee: cannot overflow
		s.PerEpoch[k] = era / EpochsPerEra
		paid += s.PerEpoch[k] * EpochsPerEra
	}
	s.Leftover = fee - paid
	return s
}

// Part is what the fee pays the epoch at offset i from the first one (0 <= i <
// PerpetualEpochs): its era's per-epoch part, plus the leftover at offset 0.
func (s StorageSplit) Part(i uint32) uint64 {
	if i >= PerpetualEpochs {
		return 0
	}
	p := s.PerEpoch[i/EpochsPerEra]
	if i == 0 {
		p += s.Leftover
	}
	return p
}

// From is what the fee pays the epochs at offsets i and later: the part of it not yet
// paid out when offset i begins.
func (s StorageSplit) From(i uint32) uint64 {
	if i == 0 {
		return s.Fee
	}
	if i >= PerpetualEpochs {
		return 0
	}
	era := i / EpochsPerEra
	sum := s.PerEpoch[era] * uint64(EpochsPerEra-i%EpochsPerEra)
	for k := era + 1; k < Eras; k++ {
		sum += s.PerEpoch[k] * EpochsPerEra
	}
	return sum
}

// StorageRefund is what an owner gets back for a perpetual storage fee paid in epoch
// paidIn (so paid out from epoch paidIn+1 on) when the item is removed in epoch
// current: what the fee has not paid out to the epochs after current. The current
// epoch keeps its part.
func StorageRefund(fee uint64, paidIn, current uint32) uint64 {
	first := uint64(paidIn) + 1
	next := uint64(current) + 1
	if next <= first {
		return fee
	}
	if next-first >= PerpetualEpochs {
		return 0
	}
	return SplitStorageFee(fee).From(uint32(next - first))
}

// ErrEpochOverflow: an epoch index passes the largest u32.
type ErrEpochOverflow struct{ Epoch uint64 }

func (e ErrEpochOverflow) Error() string {
	return fmt.Sprintf("feeschedule: epoch %d is past the largest epoch index", e.Epoch)
}
