package drive

import (
	"crypto/ed25519"
	"encoding/binary"
	"fmt"

	"github.com/ttld-dev/ttld/protocol"
)

// ErrCorrupt: a stored value does not decode. State written by this package always
// decodes, so this is a broken invariant or a damaged database.
type ErrCorrupt struct {
	Key    []byte
	Reason string
}

func (e ErrCorrupt) Error() string {
	return fmt.Sprintf("drive: corrupt value at %x: %s", e.Key, e.Reason)
}

// Value sizes of the fixed-width records: what a fee priced before a write counts.
const (
	// U64Len is the size of a balance, a nonce or a pool value.
	U64Len = 8
	// AddressStateLen is the size of an address's value (EncodeAddressState).
	AddressStateLen = 16
	// LastBlockLen is the size of the last block record (EncodeLastBlock).
	LastBlockLen = 16
	// MaxReadValueLen is the largest value a transition reads at a key that may be
	// absent and written later (an address record, an index count record): what a fee
	// estimate adds per absent read. NB: a new kind of record read by transitions must
	// be counted here.
	MaxReadValueLen = max(AddressStateLen, indexCountLen)
)

func getU64(kv KV, key []byte) (uint64, bool, error) {
	v, err := kv.Get(key)
	if err != nil || v == nil {
		return 0, false, err
	}
	if len(v) != U64Len {
		return 0, false, ErrCorrupt{Key: key, Reason: "want 8 bytes"}
	}
	return binary.BigEndian.Uint64(v), true, nil
}

func putU64(kv KV, key []byte, n uint64) error {
	return kv.Set(key, binary.BigEndian.AppendUint64(nil, n))
}

// Identity is an identity as stored.
type Identity struct {
	ID      protocol.IdentityID
	Balance uint64
	Nonce   protocol.NonceState
	Keys    []ed25519.PublicKey
}

// keyTypeEd25519 is the only key type so far; the type byte leaves room for others.
const keyTypeEd25519 byte = 0

// IdentityExists reports whether id has been created.
func IdentityExists(kv KV, id protocol.IdentityID) (bool, error) {
	_, ok, err := getU64(kv, IdentityBalanceKey(id))
	return ok, err
}

// GetIdentityBalance returns the balance of id and whether it exists.
func GetIdentityBalance(kv KV, id protocol.IdentityID) (uint64, bool, error) {
	return getU64(kv, IdentityBalanceKey(id))
}

// SetIdentityBalance writes the balance of id.
func SetIdentityBalance(kv KV, id protocol.IdentityID, balance uint64) error {
	return putU64(kv, IdentityBalanceKey(id), balance)
}

// GetIdentityNonce returns the nonce record of id (NonceState.Encode in a u64).
func GetIdentityNonce(kv KV, id protocol.IdentityID) (protocol.NonceState, error) {
	n, _, err := getU64(kv, IdentityNonceKey(id))
	return protocol.DecodeNonceState(n), err
}

// SetIdentityNonce writes the nonce record of id.
func SetIdentityNonce(kv KV, id protocol.IdentityID, nonce protocol.NonceState) error {
	return putU64(kv, IdentityNonceKey(id), nonce.Encode())
}

// GetIdentityKey returns the public key at index, or nil.
func GetIdentityKey(kv KV, id protocol.IdentityID, index uint8) (ed25519.PublicKey, error) {
	key := IdentityKeyKey(id, index)
	v, err := kv.Get(key)
	if err != nil || v == nil {
		return nil, err
	}
	if len(v) != 1+ed25519.PublicKeySize || v[0] != keyTypeEd25519 {
		return nil, ErrCorrupt{Key: key, Reason: "want an ed25519 key record"}
	}
	return ed25519.PublicKey(v[1:]), nil
}

// InsertIdentity writes a new identity: its balance, its keys and its nonce, in that
// order.
func InsertIdentity(kv KV, idn Identity) error {
	if err := SetIdentityBalance(kv, idn.ID, idn.Balance); err != nil {
		return err
	}
	for i, k := range idn.Keys {
		v := append([]byte{keyTypeEd25519}, k...)
		if err := kv.Set(IdentityKeyKey(idn.ID, uint8(i)), v); err != nil {
			return err
		}
	}
	return SetIdentityNonce(kv, idn.ID, idn.Nonce)
}

// DecodeIdentity rebuilds an identity from the entries under its prefix, in key order
// (what a range query over IdentityPrefix returns). ok is false when there are none.
func DecodeIdentity(id protocol.IdentityID, entries [][2][]byte) (idn Identity, ok bool, err error) {
	idn.ID = id
	for _, e := range entries {
		k, v := e[0], e[1]
		of, entry, _, parsed := ParseIdentityKey(k)
		if !parsed || of != id {
			return idn, false, ErrCorrupt{Key: k, Reason: "not a key of this identity"}
		}
		switch {
		case entry == IdentityEntryBalance && len(v) == U64Len:
			idn.Balance = binary.BigEndian.Uint64(v)
			ok = true
		case entry == IdentityEntryNonce && len(v) == U64Len:
			idn.Nonce = protocol.DecodeNonceState(binary.BigEndian.Uint64(v))
		case entry == IdentityEntryKey && len(v) == 1+ed25519.PublicKeySize && v[0] == keyTypeEd25519:
			idn.Keys = append(idn.Keys, ed25519.PublicKey(v[1:]))
		default:
			return idn, false, ErrCorrupt{Key: k, Reason: "unknown identity entry"}
		}
	}
	return idn, ok, nil
}

// AddressState is a platform address as stored: 56 | address -> balance ++ nonce record.
type AddressState struct {
	Balance uint64
	Nonce   protocol.NonceState
}

// EncodeAddressState is the AddressStateLen-byte value of an address: balance u64 ++
// nonce record u64 (NonceState.Encode: skipped-nonce bits in the top 24, the last nonce
// used in the low 40).
func EncodeAddressState(s AddressState) []byte {
	b := binary.BigEndian.AppendUint64(nil, s.Balance)
	return binary.BigEndian.AppendUint64(b, s.Nonce.Encode())
}

// DecodeAddressState reads the value of an address.
func DecodeAddressState(v []byte) (AddressState, error) {
	if len(v) != AddressStateLen {
		return AddressState{}, fmt.Errorf("address value of %d bytes, want %d", len(v), AddressStateLen)
	}
	return AddressState{Balance: binary.BigEndian.Uint64(v), Nonce: protocol.DecodeNonceState(binary.BigEndian.Uint64(v[8:]))}, nil
}

// GetAddress returns the state of a, and whether it exists.
func GetAddress(kv KV, a protocol.Address) (AddressState, bool, error) {
	key := AddressKey(a)
	v, err := kv.Get(key)
	if err != nil || v == nil {
		return AddressState{}, false, err
	}
	s, err := DecodeAddressState(v)
	if err != nil {
		return s, false, ErrCorrupt{Key: key, Reason: err.Error()}
	}
	return s, true, nil
}

// SetAddress writes the state of a.
func SetAddress(kv KV, a protocol.Address, s AddressState) error {
	return kv.Set(AddressKey(a), EncodeAddressState(s))
}

// GetSupply returns the total credits created at genesis.
func GetSupply(kv KV) (uint64, error) {
	n, _, err := getU64(kv, SupplyKey())
	return n, err
}

// SetSupply writes the total credits created at genesis.
func SetSupply(kv KV, n uint64) error { return putU64(kv, SupplyKey(), n) }

// GetProtocolVersion returns the protocol version in force.
func GetProtocolVersion(kv KV) (protocol.Version, error) {
	v, err := kv.Get(ProtocolVersionKey())
	if err != nil {
		return 0, err
	}
	return DecodeProtocolVersion(v)
}

// DecodeProtocolVersion reads the value at ProtocolVersionKey: the version, u32. Every
// reader of the record, in the node or in a client checking a proven answer, decodes
// it here; anything but 4 bytes is an ErrCorrupt.
func DecodeProtocolVersion(v []byte) (protocol.Version, error) {
	if len(v) != 4 {
		return 0, ErrCorrupt{Key: ProtocolVersionKey(), Reason: "want a 4-byte protocol version"}
	}
	return protocol.Version(binary.BigEndian.Uint32(v)), nil
}

// SetProtocolVersion writes the protocol version in force.
func SetProtocolVersion(kv KV, v protocol.Version) error {
	return kv.Set(ProtocolVersionKey(), binary.BigEndian.AppendUint32(nil, uint32(v)))
}

// ChainParams are the genesis parameters kept in state.
type ChainParams struct {
	ChainID       string
	GenesisTimeMs uint64
	InitialHeight uint64
	// EpochLengthS is the epoch length in seconds (protocol.MinEpochLengthS ..
	// protocol.MaxEpochLengthS).
	EpochLengthS uint64
}

// chainParamsVersion is the layout of EncodeChainParams.
const chainParamsVersion = 2

// EncodeChainParams: version u8 (2) | chain id length u8 | chain id | genesis time ms
// u64 | initial height u64 | epoch length s u64.
func EncodeChainParams(p ChainParams) []byte {
	b := []byte{chainParamsVersion, uint8(len(p.ChainID))}
	b = append(b, p.ChainID...)
	b = binary.BigEndian.AppendUint64(b, p.GenesisTimeMs)
	b = binary.BigEndian.AppendUint64(b, p.InitialHeight)
	return binary.BigEndian.AppendUint64(b, p.EpochLengthS)
}

// GetChainParams reads the genesis parameters.
func GetChainParams(kv KV) (ChainParams, error) {
	key := GenesisKey()
	v, err := kv.Get(key)
	if err != nil {
		return ChainParams{}, err
	}
	if len(v) < 2 || v[0] != chainParamsVersion || len(v) != 2+int(v[1])+24 {
		return ChainParams{}, ErrCorrupt{Key: key, Reason: "bad chain parameters"}
	}
	n := int(v[1])
	return ChainParams{
		ChainID:       string(v[2 : 2+n]),
		GenesisTimeMs: binary.BigEndian.Uint64(v[2+n:]),
		InitialHeight: binary.BigEndian.Uint64(v[10+n:]),
		EpochLengthS:  binary.BigEndian.Uint64(v[18+n:]),
	}, nil
}

// SetChainParams writes the genesis parameters.
func SetChainParams(kv KV, p ChainParams) error { return kv.Set(GenesisKey(), EncodeChainParams(p)) }

// LastBlock is the last block the state has executed.
type LastBlock struct {
	Height uint64
	TimeMs uint64
}

// EncodeLastBlock: height u64 ++ time ms u64.
func EncodeLastBlock(b LastBlock) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, b.Height), b.TimeMs)
}

// GetLastBlock returns the last executed block; ok is false before the first block.
func GetLastBlock(kv KV) (b LastBlock, ok bool, err error) {
	key := LastBlockKey()
	v, err := kv.Get(key)
	if err != nil || v == nil {
		return b, false, err
	}
	if b, ok = DecodeLastBlock(v); !ok {
		return b, false, ErrCorrupt{Key: key, Reason: "bad last block record"}
	}
	return b, true, nil
}

// DecodeLastBlock reads a value written by EncodeLastBlock.
func DecodeLastBlock(v []byte) (LastBlock, bool) {
	if len(v) != LastBlockLen {
		return LastBlock{}, false
	}
	return LastBlock{Height: binary.BigEndian.Uint64(v), TimeMs: binary.BigEndian.Uint64(v[8:])}, true
}

// SetLastBlock records the block just executed.
func SetLastBlock(kv KV, b LastBlock) error { return kv.Set(LastBlockKey(), EncodeLastBlock(b)) }

// ProtocolUpgrade is a scheduled switch to protocol version Version at block Height.
type ProtocolUpgrade struct {
	Version protocol.Version
	Height  uint64
}

// GetProtocolUpgrade reads the scheduled upgrade (ok false: none).
func GetProtocolUpgrade(kv KV) (u ProtocolUpgrade, ok bool, err error) {
	key := ProtocolUpgradeKey()
	v, err := kv.Get(key)
	if err != nil || v == nil {
		return u, false, err
	}
	if len(v) != 12 {
		return u, false, ErrCorrupt{Key: key, Reason: "not a protocol upgrade"}
	}
	return ProtocolUpgrade{Version: protocol.Version(binary.BigEndian.Uint32(v)), Height: binary.BigEndian.Uint64(v[4:])}, true, nil
}

// SetProtocolUpgrade schedules u.
func SetProtocolUpgrade(kv KV, u ProtocolUpgrade) error {
	return kv.Set(ProtocolUpgradeKey(), binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(nil, uint32(u.Version)), u.Height))
}

// InsertDocumentTTLTrees is the state protocol version 14 starts with
// (Drive::insert_document_ttl_trees), shared by a genesis on 14 and the first block of
// 14: the documents expirations tree (104/E) and the lifetime storage fee pools (48/l)
// are key ranges of the one IAVL tree, which exist with their first entry and need no
// creation; what is written is the record of the height version 14 began at.
func InsertDocumentTTLTrees(kv KV, height uint64) error {
	return kv.Set(VersionActivatedKey(protocol.V14), binary.BigEndian.AppendUint64(nil, height))
}

// GetLocalLimits reads the limits a local chain's genesis lowered (zero: none).
func GetLocalLimits(kv KV) (protocol.LocalLimits, error) {
	n, _, err := getU64(kv, LocalLimitsKey())
	return protocol.LocalLimits{MinDocumentTTLSeconds: n}, err
}

// SetLocalLimits records o.
func SetLocalLimits(kv KV, o protocol.LocalLimits) error {
	return putU64(kv, LocalLimitsKey(), o.MinDocumentTTLSeconds)
}
