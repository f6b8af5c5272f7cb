package sim

import "math"

// BoundaryAmount picks an amount where balance arithmetic breaks if it is going to: 0, 1,
// the largest u64 and one below it, 2^63, and amounts at, just below, just above and
// half of balance (the balance of the payer or of the recipient). pick chooses which.
// The simulation's generator and the block-level fuzz target draw from it alike.
func BoundaryAmount(pick uint64, balance uint64) uint64 {
	switch pick % 9 {
	case 0:
		return 0
	case 1:
		return 1
	case 2:
		return math.MaxUint64
	case 3:
		return math.MaxUint64 - 1
	case 4:
		return 1 << 63
	case 5:
		return balance - 1 // wraps to the largest u64 at 0
	case 6:
		return balance
	case 7:
		return balance + 1 // wraps to 0 at the largest u64
	default:
		return balance / 2
	}
}
