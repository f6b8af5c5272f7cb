package protocol

import "crypto/sha256"

// Bounds of a chain's epoch length (genesis epoch_time_length_s). Mainnet uses 788,400
// s (9.125 days); a local chain an hour.
const (
	MinEpochLengthS = 60
	MaxEpochLengthS = 31_536_000 // a year
	// MaxEpoch is the largest epoch index. No block time reaches near it: the last
	// (MaxBlockTimeMs) is in epoch 4,223,371,679 at the shortest length, leaving more
	// than the 2,000 epochs a storage fee is spread over (docs/STATE.md, "Block time").
	MaxEpoch = 1<<32 - 1
)

// EpochIndex is the epoch of a block at timeMs: floor((timeMs - genesisMs) /
// lengthS*1000), 0 for a time before genesis, capped at MaxEpoch. lengthS is at least
// MinEpochLengthS (genesis refuses less).
func EpochIndex(genesisMs, lengthS, timeMs uint64) uint32 {
	if timeMs <= genesisMs || lengthS == 0 {
		return 0
	}
	return uint32(min((timeMs-genesisMs)/(lengthS*1000), MaxEpoch))
}

// EpochStartMs is when epoch index begins: genesisMs + index*lengthS*1000.
func EpochStartMs(genesisMs, lengthS uint64, index uint32) uint64 {
	return genesisMs + uint64(index)*lengthS*1000
}

// PayoutIdentityDomain prefixes the hash that names a validator's default payout
// identity.
const PayoutIdentityDomain = "ttld/validator-payout"

// PayoutIdentityID is the identity `ttld init` and `ttld testnet` create for a
// validator's rewards: sha256(PayoutIdentityDomain || the validator's 20-byte consensus
// address). Genesis may name any other identity instead.
func PayoutIdentityID(validator []byte) IdentityID {
	h := sha256.New()
	h.Write([]byte(PayoutIdentityDomain))
	h.Write(validator)
	var id IdentityID
	copy(id[:], h.Sum(nil))
	return id
}
