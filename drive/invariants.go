package drive

// ScanCredits counts every credit in state the long way: every balance and pool, less
// pending refunds. It reads every key of the roots that hold credits: an invariant check
// for tests, simulations and an occasional runtime check, not for every block.
func ScanCredits(kv KV) (uint64, error) {
	var sum signed
	for _, root := range []byte{RootIdentities, RootPools, RootAddresses} {
		err := kv.Iterate([]byte{root}, []byte{root + 1}, func(k, v []byte) (bool, error) {
			if n, negative, ok := creditsHeld(k, v); ok {
				if negative {
					sum = sum.sub(n)
				} else {
					sum = sum.add(n)
				}
			}
			return false, nil
		})
		if err != nil {
			return 0, err
		}
	}
	total, ok := sum.u64()
	if !ok {
		return 0, ErrCreditsNotConserved{What: "scanned credits", Total: sum.String(), Want: "a value in 0..2^64-1"}
	}
	return total, nil
}

// CheckTotal checks the running total (TotalCreditsKey) against the genesis supply: the
// check of every block, which costs two reads.
func CheckTotal(kv KV, height uint64) error {
	supply, err := GetSupply(kv)
	if err != nil {
		return err
	}
	total, err := GetU64(kv, TotalCreditsKey())
	if err != nil {
		return err
	}
	if total != supply {
		return ErrCreditsNotConserved{Height: height, What: "running total", Total: u64s(total), Want: u64s(supply) + " (the supply)"}
	}
	return nil
}

// CheckCredits counts every credit in state (ScanCredits) and checks that the count
// equals both the running total and the genesis supply.
func CheckCredits(kv KV) error {
	scanned, err := ScanCredits(kv)
	if err != nil {
		return err
	}
	if err := CheckTotal(kv, 0); err != nil {
		return err
	}
	total, err := GetU64(kv, TotalCreditsKey())
	if err != nil {
		return err
	}
	if scanned != total {
		return ErrCreditsNotConserved{What: "scanned credits", Total: u64s(scanned), Want: u64s(total) + " (the running total)"}
	}
	return nil
}
