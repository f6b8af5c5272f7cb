package drive

import (
	"encoding/binary"

	"github.com/ttld-dev/ttld/protocol"
)

// Root prefixes: the first byte of every key. The numbers follow the platform's root
// trees where it has one (Identities 32, Pools 48, Misc 104). Never renumbered.
const (
	RootIdentities            byte = 32
	RootPools                 byte = 48
	RootAddresses             byte = 56
	RootAddressBalanceChanges byte = 58
	RootMisc                  byte = 104
)

// Sub-keys under the roots.
const (
	identityBalance byte = 'b'
	identityKey     byte = 'k'
	identityNonce   byte = 'n'

	poolProcessingFees byte = 'f'

	changesBlock     byte = 'b'
	changesCompacted byte = 'c'
	changesExpiry    byte = 'e'

	miscGenesis  byte = 'g'
	miscSupply   byte = 's'
	miscProtocol byte = 'v'
)

// IdentityPrefix is the prefix of every key of one identity: 32 | id.
func IdentityPrefix(id protocol.IdentityID) []byte {
	return append([]byte{RootIdentities}, id[:]...)
}

// IdentityBalanceKey: 32 | id | 'b' -> balance u64.
func IdentityBalanceKey(id protocol.IdentityID) []byte {
	return append(IdentityPrefix(id), identityBalance)
}

// IdentityNonceKey: 32 | id | 'n' -> last nonce u64.
func IdentityNonceKey(id protocol.IdentityID) []byte {
	return append(IdentityPrefix(id), identityNonce)
}

// IdentityKeyKey: 32 | id | 'k' | index u8 -> key type u8 ++ public key.
func IdentityKeyKey(id protocol.IdentityID, index uint8) []byte {
	return append(IdentityPrefix(id), identityKey, index)
}

// AddressKey: 56 | address -> balance u64 ++ nonce u64.
func AddressKey(a protocol.Address) []byte {
	return append([]byte{RootAddresses}, a[:]...)
}

// ProcessingFeesKey: 48 | 'f' -> processing fees collected, u64.
func ProcessingFeesKey() []byte { return []byte{RootPools, poolProcessingFees} }

// BlockChangesKey: 58 | 'b' | height u64 -> the address balances one block changed.
func BlockChangesKey(height uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{RootAddressBalanceChanges, changesBlock}, height)
}

// BlockChangesPrefix is the prefix of every per-block record.
func BlockChangesPrefix() []byte { return []byte{RootAddressBalanceChanges, changesBlock} }

// CompactedChangesKey: 58 | 'c' | end height u64 | start height u64 -> merged balances.
// Keyed by the end height first, so "every record that ends at or after h" is one range.
func CompactedChangesKey(start, end uint64) []byte {
	k := binary.BigEndian.AppendUint64([]byte{RootAddressBalanceChanges, changesCompacted}, end)
	return binary.BigEndian.AppendUint64(k, start)
}

// CompactedChangesPrefix is the prefix of every compacted record.
func CompactedChangesPrefix() []byte {
	return []byte{RootAddressBalanceChanges, changesCompacted}
}

// ChangesExpiryKey: 58 | 'e' | expires at ms u64 | end u64 | start u64 -> 0x01. The
// index the address-balance cleanup finds expired compacted records through.
func ChangesExpiryKey(expiresAtMs, start, end uint64) []byte {
	k := binary.BigEndian.AppendUint64([]byte{RootAddressBalanceChanges, changesExpiry}, expiresAtMs)
	k = binary.BigEndian.AppendUint64(k, end)
	return binary.BigEndian.AppendUint64(k, start)
}

// ChangesExpiryPrefix is the prefix of the expiry index.
func ChangesExpiryPrefix() []byte { return []byte{RootAddressBalanceChanges, changesExpiry} }

// GenesisKey: 104 | 'g' -> the chain's genesis parameters. Present from genesis on, so
// the tree is never empty (an empty IAVL tree proves nothing).
func GenesisKey() []byte { return []byte{RootMisc, miscGenesis} }

// SupplyKey: 104 | 's' -> total credits created at genesis, u64.
func SupplyKey() []byte { return []byte{RootMisc, miscSupply} }

// ProtocolVersionKey: 104 | 'v' -> the protocol version in force, u32.
func ProtocolVersionKey() []byte { return []byte{RootMisc, miscProtocol} }

// PrefixEnd returns the first key after every key that starts with prefix, or nil when
// there is none (a prefix of 0xff bytes only).
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
