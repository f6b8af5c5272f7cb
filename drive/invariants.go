package drive

import (
	"encoding/binary"
	"fmt"
)

// ErrCreditsNotConserved: the credits in state differ from the genesis supply.
type ErrCreditsNotConserved struct {
	Supply, Balances, Fees uint64
}

func (e ErrCreditsNotConserved) Error() string {
	return fmt.Sprintf("credits not conserved: balances %d + fees %d != supply %d", e.Balances, e.Fees, e.Supply)
}

// CheckCredits walks the whole tree and checks that every balance plus the collected
// fees equals the supply created at genesis. It reads every key: an invariant check for
// tests and simulations, not for block execution.
func CheckCredits(kv KV) error {
	supply, err := GetSupply(kv)
	if err != nil {
		return err
	}
	fees, err := GetProcessingFees(kv)
	if err != nil {
		return err
	}
	var balances uint64
	credit := func(k []byte, n uint64) error {
		if balances+n < balances {
			return ErrCorrupt{Key: k, Reason: "the balances sum past 2^64-1"}
		}
		balances += n
		return nil
	}
	err = kv.Iterate([]byte{RootIdentities}, []byte{RootIdentities + 1}, func(k, v []byte) (bool, error) {
		if _, entry, _, ok := ParseIdentityKey(k); ok && entry == IdentityEntryBalance {
			if len(v) != U64Len {
				return true, ErrCorrupt{Key: k, Reason: "want 8 bytes"}
			}
			return false, credit(k, binary.BigEndian.Uint64(v))
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	err = kv.Iterate([]byte{RootAddresses}, []byte{RootAddresses + 1}, func(k, v []byte) (bool, error) {
		st, err := DecodeAddressState(v)
		if err != nil {
			return true, ErrCorrupt{Key: k, Reason: err.Error()}
		}
		return false, credit(k, st.Balance)
	})
	if err != nil {
		return err
	}
	if balances+fees < balances || balances+fees != supply {
		return ErrCreditsNotConserved{Supply: supply, Balances: balances, Fees: fees}
	}
	return nil
}
