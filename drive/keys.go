package drive

import (
	"bytes"
	"encoding/binary"

	"github.com/ttld-dev/ttld/protocol"
)

// Root prefixes: the first byte of every key. The numbers follow the platform's root
// trees where it has one (Identities 32, Pools 48, DataContractDocuments 64, Misc
// 104). Never renumbered.
const (
	RootIdentities            byte = 32
	RootPools                 byte = 48
	RootAddresses             byte = 56
	RootAddressBalanceChanges byte = 58
	RootDataContracts         byte = 64
	RootMisc                  byte = 104
)

// Sub-keys: the byte after a root or a prefix of one, every one of them in this block
// (docs/STATE.md's table gives each key whole, with its value). No other file of the
// repository names a key byte: the builders and parsers below use these, and nothing
// else of drive builds a key (lint/keys_test.go).
const (
	// 32 | id | ...: one identity.
	identityBalance byte = 'b'
	identityKey     byte = 'k' // | index u8
	identityNonce   byte = 'n'

	// 48 | ...: the pools.
	poolCurrentEpoch byte = 'c'
	poolStorage      byte = 'd'
	poolEpoch        byte = 'e' // | epoch u32 | one of epoch*
	poolLifetime     byte = 'l' // | epoch u32 | lifetime u16
	poolRefunds      byte = 'r' // | paid in u32 | from u32
	poolNextUnpaid   byte = 'u'

	// 48 | 'e' | epoch u32 | ...: one epoch's pool.
	epochFees      byte = 'f'
	epochStorage   byte = 's'
	epochProposers byte = 'p' // | proposer
	epochPaid      byte = 'x'

	// 58 | ...: the address-balance recent storage.
	changesBlock     byte = 'b' // | height u64
	changesCompacted byte = 'c' // | end u64 | start u64
	changesExpiry    byte = 'e' // | expires at u64 | end u64 | start u64

	// 64 | contract id | ...: one data contract.
	contractDefinition byte = 'c'
	contractDocuments  byte = 'd' // | type name length u8 | type name | one of document*
	contractRemovals   byte = 'r' // | type name length u8 | type name | id (removals.go)

	// 64 | contract id | 'd' | type | ...: one document type.
	documentPrimary byte = 'p' // | id
	documentHistory byte = 'h' // | id | revision u64
	documentIndex   byte = 'i' // | index | parts | id
	documentCount   byte = 'n' // | index | leading parts
	documentWindows byte = 'w' // | grid | start u64 | one of window* (windows.go)

	// 104 | ...: the platform's Misc tree.
	miscExpirations byte = 'E' // | expires at u64 | document id
	miscGenesis     byte = 'g'
	miscLastBlock   byte = 'l'
	miscPayout      byte = 'p' // | validator
	miscSupply      byte = 's'
	miscTotal       byte = 't'
	miscProtocol    byte = 'v'
	miscUpgrade     byte = 'U'
	miscLocal       byte = 'o'
	miscActivated   byte = 'A' // | version u32
	miscUpgrades    byte = 'P' // | one of upgrade*
	// The ttl'd time-range grids and the epoch sweep's place among them (windows.go).
	miscTimeRanges     byte = 'W' // | contract id | type name length u8 | type name | grid
	miscTimeRangeSweep byte = 'w'
	// The validator set and its governance (validators.go), version 16 on.
	miscValidators byte = 'V' // | one of validator*

	// 104 | 'P' | ...: protocol upgrades in place.
	upgradeNext    byte = 'n'
	upgradeSignals byte = 's' // | epoch u32

	// 104 | 'V' | ...: the validator set.
	validatorNextProposal byte = 'n'
	validatorMisbehavior  byte = 'm' // | address | height u64
	validatorProposals    byte = 'p' // | id u64 [| address: an approval]
	validatorSet          byte = 's' // | address
)

// WindowPart is what a key under one window of a time-range grid holds, the byte after
// the window's start: ... | 'w' | grid | start u64 | part | ... (WindowKeyParts.Part).
type WindowPart byte

// The parts of a window, in the order a drain takes them.
const (
	WindowEntry WindowPart = 'i' // | index | parts | id
	WindowCount WindowPart = 'n' // | index | leading parts
	WindowRank  WindowPart = 'r' // | index | ^count u64 | parts
)

// IdentityEntry names what an identity key under IdentityPrefix holds.
type IdentityEntry uint8

// The entries of an identity.
const (
	IdentityEntryBalance IdentityEntry = iota + 1
	IdentityEntryNonce
	IdentityEntryKey
)

// ParseIdentityKey reads a key built by IdentityBalanceKey, IdentityNonceKey or
// IdentityKeyKey: the identity, which entry it is and, for a public key, its index.
func ParseIdentityKey(k []byte) (id protocol.IdentityID, entry IdentityEntry, index uint8, ok bool) {
	const head = 1 + protocol.IdentityIDLen
	if len(k) < head+1 || k[0] != RootIdentities {
		return id, 0, 0, false
	}
	copy(id[:], k[1:head])
	switch sub := k[head:]; {
	case len(sub) == 1 && sub[0] == identityBalance:
		return id, IdentityEntryBalance, 0, true
	case len(sub) == 1 && sub[0] == identityNonce:
		return id, IdentityEntryNonce, 0, true
	case len(sub) == 2 && sub[0] == identityKey:
		return id, IdentityEntryKey, sub[1], true
	}
	return id, 0, 0, false
}

// ParseAddressKey reads a key built by AddressKey.
func ParseAddressKey(k []byte) (a protocol.Address, ok bool) {
	if len(k) != 1+protocol.AddressLen || k[0] != RootAddresses {
		return a, false
	}
	copy(a[:], k[1:])
	return a, true
}

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

// ContractPrefix is the prefix of every key of one data contract: 64 | id. The
// contract itself is one key under it; its documents and index entries will share it,
// so a contract and everything in it is one range.
func ContractPrefix(id protocol.ContractID) []byte {
	return append([]byte{RootDataContracts}, id[:]...)
}

// ContractsPrefix is the prefix of every key of every data contract: 64.
func ContractsPrefix() []byte { return []byte{RootDataContracts} }

// ContractOfKey is the contract a key under ContractsPrefix belongs to.
func ContractOfKey(k []byte) (id protocol.ContractID, ok bool) {
	if len(k) < 1+protocol.ContractIDLen || k[0] != RootDataContracts {
		return id, false
	}
	copy(id[:], k[1:])
	return id, true
}

// DocumentTypesPrefix is the prefix of every key of the document types of contract c:
// 64 | c | 'd'.
func DocumentTypesPrefix(c protocol.ContractID) []byte {
	return append(ContractPrefix(c), contractDocuments)
}

// ContractKey: 64 | id | 'c' -> the stored contract (protocol.Contract.Encode).
func ContractKey(id protocol.ContractID) []byte {
	return append(ContractPrefix(id), contractDefinition)
}

// ParseContractKey reads a key built by ContractKey.
func ParseContractKey(k []byte) (id protocol.ContractID, ok bool) {
	if len(k) != 1+protocol.ContractIDLen+1 || k[0] != RootDataContracts || k[len(k)-1] != contractDefinition {
		return id, false
	}
	copy(id[:], k[1:])
	return id, true
}

// DocumentTypePrefix is the prefix of every key of one document type of a contract:
// 64 | contract | 'd' | name length u8 | name.
func DocumentTypePrefix(c protocol.ContractID, typeName string) []byte {
	k := append(ContractPrefix(c), contractDocuments, uint8(len(typeName)))
	return append(k, typeName...)
}

// DocumentsPrefix is the prefix of the documents of a type: DocumentTypePrefix | 'p'.
func DocumentsPrefix(c protocol.ContractID, typeName string) []byte {
	return append(DocumentTypePrefix(c, typeName), documentPrimary)
}

// DocumentKey: DocumentsPrefix | id -> storage flags ++ the document
// (protocol.Document.Encode).
func DocumentKey(c protocol.ContractID, typeName string, id protocol.DocumentID) []byte {
	return append(DocumentsPrefix(c, typeName), id[:]...)
}

// DocumentHistoryPrefix is the prefix of the revisions of one document of a type that
// keeps history: DocumentTypePrefix | 'h' | id.
func DocumentHistoryPrefix(c protocol.ContractID, typeName string, id protocol.DocumentID) []byte {
	return append(append(DocumentTypePrefix(c, typeName), documentHistory), id[:]...)
}

// DocumentHistoryKey: DocumentHistoryPrefix | revision u64 -> storage flags ++ the
// document at that revision.
func DocumentHistoryKey(c protocol.ContractID, typeName string, id protocol.DocumentID, revision uint64) []byte {
	return binary.BigEndian.AppendUint64(DocumentHistoryPrefix(c, typeName, id), revision)
}

// IndexPrefix is the prefix of the entries of one index: DocumentTypePrefix | 'i' |
// index name length u8 | index name.
func IndexPrefix(c protocol.ContractID, typeName, index string) []byte {
	k := append(DocumentTypePrefix(c, typeName), documentIndex, uint8(len(index)))
	return append(k, index...)
}

// IndexEntryKey: IndexPrefix | the encoded values of the index's properties
// (AppendIndexPart) | document id -> storage flags. The id ends the key, so documents
// with equal values are ordered by id.
func IndexEntryKey(c protocol.ContractID, typeName, index string, values []byte, id protocol.DocumentID) []byte {
	return append(IndexValuesPrefix(c, typeName, index, values), id[:]...)
}

// IndexValuesPrefix: IndexPrefix | encoded values, the prefix of the entries of every
// document whose index properties have those values (IndexEntryKey without the id).
func IndexValuesPrefix(c protocol.ContractID, typeName, index string, values []byte) []byte {
	return append(IndexPrefix(c, typeName, index), values...)
}

// IndexCountKey: DocumentTypePrefix | 'n' | index name length u8 | index name | the
// encoded values of the index's first properties -> count u64 ++ sum i128: how many
// documents of a countable or summable index have those leading values, and the sum of
// their summable property. Every prefix length has its record, the empty one included.
func IndexCountKey(c protocol.ContractID, typeName, index string, prefix []byte) []byte {
	k := append(DocumentTypePrefix(c, typeName), documentCount, uint8(len(index)))
	return append(append(k, index...), prefix...)
}

// DocumentEntry names what a key under DocumentTypePrefix holds.
type DocumentEntry uint8

// The entries of a document type.
const (
	DocumentEntryDocument DocumentEntry = iota + 1
	DocumentEntryHistory
	DocumentEntryIndex
	DocumentEntryCount
	// DocumentEntryWindow: an entry, count or rank under a time-range window (Window).
	DocumentEntryWindow
)

// DocumentKeyParts is a key under DocumentTypePrefix, read back: which entry it is, the
// document id (documents, history, index entries), the revision (history), the index
// name and the encoded values (index entries and counts).
type DocumentKeyParts struct {
	Contract protocol.ContractID
	Type     string
	Entry    DocumentEntry
	ID       protocol.DocumentID
	Revision uint64
	Index    string
	Values   []byte
	Window   *WindowKeyParts
}

// ParseDocumentKey reads a key built by DocumentKey, DocumentHistoryKey, IndexEntryKey,
// IndexCountKey, WindowEntryKey, WindowCountKey or WindowRankKey.
func ParseDocumentKey(k []byte) (p DocumentKeyParts, ok bool) {
	const head = 1 + protocol.ContractIDLen
	if len(k) < head+3 || k[0] != RootDataContracts || k[head] != contractDocuments {
		return p, false
	}
	copy(p.Contract[:], k[1:head])
	n := int(k[head+1])
	rest := k[head+2:]
	if len(rest) < n+1 {
		return p, false
	}
	p.Type, rest = string(rest[:n]), rest[n:]
	sub, rest := rest[0], rest[1:]
	switch sub {
	case documentPrimary:
		if len(rest) != protocol.DocumentIDLen {
			return p, false
		}
		p.Entry = DocumentEntryDocument
		copy(p.ID[:], rest)
	case documentHistory:
		if len(rest) != protocol.DocumentIDLen+8 {
			return p, false
		}
		p.Entry = DocumentEntryHistory
		copy(p.ID[:], rest)
		p.Revision = binary.BigEndian.Uint64(rest[protocol.DocumentIDLen:])
	case documentWindows:
		w, ok := parseWindowKey(rest)
		if !ok {
			return p, false
		}
		p.Entry, p.Window, p.Index, p.ID = DocumentEntryWindow, &w, w.Index, w.ID
	case documentIndex, documentCount:
		if len(rest) < 1 || len(rest) < 1+int(rest[0]) {
			return p, false
		}
		p.Index, rest = string(rest[1:1+int(rest[0])]), rest[1+int(rest[0]):]
		if sub == documentCount {
			p.Entry = DocumentEntryCount
			p.Values = append([]byte{}, rest...)
			break
		}
		if len(rest) < protocol.DocumentIDLen {
			return p, false
		}
		p.Entry = DocumentEntryIndex
		cut := len(rest) - protocol.DocumentIDLen
		p.Values = append([]byte{}, rest[:cut]...)
		copy(p.ID[:], rest[cut:])
	default:
		return p, false
	}
	return p, true
}

// RemovalsPrefix is the prefix of every removal record of contract c: 64 | c | 'r'.
func RemovalsPrefix(c protocol.ContractID) []byte {
	return append(ContractPrefix(c), contractRemovals)
}

// RemovalsTypePrefix is the prefix of the removal records of one document type:
// RemovalsPrefix | name length u8 | name.
func RemovalsTypePrefix(c protocol.ContractID, typeName string) []byte {
	return append(append(RemovalsPrefix(c), uint8(len(typeName))), typeName...)
}

// RemovalKey: RemovalsTypePrefix | document id -> storage flags ++ the record
// (EncodeRemoval).
func RemovalKey(c protocol.ContractID, typeName string, id protocol.DocumentID) []byte {
	return append(RemovalsTypePrefix(c, typeName), id[:]...)
}

// ParseRemovalKey reads a key built by RemovalKey.
func ParseRemovalKey(k []byte) (c protocol.ContractID, typeName string, id protocol.DocumentID, ok bool) {
	const head = 1 + protocol.ContractIDLen
	if len(k) < head+2 || k[0] != RootDataContracts || k[head] != contractRemovals {
		return c, "", id, false
	}
	n := int(k[head+1])
	if len(k) != head+2+n+protocol.DocumentIDLen {
		return c, "", id, false
	}
	copy(c[:], k[1:head])
	copy(id[:], k[head+2+n:])
	return c, string(k[head+2 : head+2+n]), id, true
}

// The windows of a time-range grid (windows.go): WindowPrefix = DocumentTypePrefix | 'w'
// | grid | start ms u64, then one of the parts WindowEntry, WindowCount, WindowRank.

// windowGridLen is a grid's bytes in a key.
const windowGridLen = 1 + 4 + 4 + 4

// gridField is the byte of a grid's field in a key.
func gridField(on string) byte {
	switch on {
	case "$createdAt":
		return 1
	case "$updatedAt":
		return 2
	case "$transferredAt":
		return 3
	case "$renewedAt":
		return 4
	}
	panic("drive: a time-range grid on " + on + ", which the parser let through")
}

// WindowsPrefix is the prefix of every window of grid g of a type.
func WindowsPrefix(c protocol.ContractID, typeName string, g protocol.Grid) []byte {
	k := append(DocumentTypePrefix(c, typeName), documentWindows, gridField(g.On))
	k = binary.BigEndian.AppendUint32(k, g.Range)
	k = binary.BigEndian.AppendUint32(k, g.Step)
	return binary.BigEndian.AppendUint32(k, g.Phase)
}

// WindowPrefix is the prefix of what the window of grid g starting at startMs holds.
func WindowPrefix(c protocol.ContractID, typeName string, g protocol.Grid, startMs uint64) []byte {
	return binary.BigEndian.AppendUint64(WindowsPrefix(c, typeName, g), startMs)
}

func windowPart(c protocol.ContractID, typeName string, g protocol.Grid, startMs uint64, part WindowPart, index string) []byte {
	k := append(WindowPrefix(c, typeName, g, startMs), byte(part), uint8(len(index)))
	return append(k, index...)
}

// WindowEntriesPrefix is the prefix of index's entries in a window.
func WindowEntriesPrefix(c protocol.ContractID, typeName string, g protocol.Grid, startMs uint64, index string) []byte {
	return windowPart(c, typeName, g, startMs, WindowEntry, index)
}

// WindowEntryKey: a window's entry of index for a document with the encoded values
// (AppendIndexPart) and id.
func WindowEntryKey(c protocol.ContractID, typeName string, g protocol.Grid, startMs uint64, index string, values []byte, id protocol.DocumentID) []byte {
	return append(WindowValuesPrefix(c, typeName, g, startMs, index, values), id[:]...)
}

// WindowValuesPrefix: the prefix of a window's entries of index for every document with
// the encoded values, as IndexValuesPrefix is for an ordinary index (WindowEntryKey
// without the id).
func WindowValuesPrefix(c protocol.ContractID, typeName string, g protocol.Grid, startMs uint64, index string, values []byte) []byte {
	return append(WindowEntriesPrefix(c, typeName, g, startMs, index), values...)
}

// WindowCountKey: the count record of index in a window for the encoded leading values
// prefix, as IndexCountKey is for an ordinary index.
func WindowCountKey(c protocol.ContractID, typeName string, g protocol.Grid, startMs uint64, index string, prefix []byte) []byte {
	return append(windowPart(c, typeName, g, startMs, WindowCount, index), prefix...)
}

// WindowRanksPrefix is the prefix of a ranked index's groups in a window, most
// counted first.
func WindowRanksPrefix(c protocol.ContractID, typeName string, g protocol.Grid, startMs uint64, index string) []byte {
	return windowPart(c, typeName, g, startMs, WindowRank, index)
}

// WindowRankKey: the rank of the group with the encoded values of all index's
// properties and count documents in a window: the count inverted, so that byte order
// is most counted first, then the values.
func WindowRankKey(c protocol.ContractID, typeName string, g protocol.Grid, startMs uint64, index string, count uint64, group []byte) []byte {
	return append(binary.BigEndian.AppendUint64(WindowRanksPrefix(c, typeName, g, startMs, index), ^count), group...)
}

// WindowKeyParts is a key under WindowsPrefix, read back.
type WindowKeyParts struct {
	Grid    protocol.Grid
	StartMs uint64
	Part    WindowPart
	Index   string
	Values  []byte // entries: the parts; counts: the leading parts; ranks: the group
	ID      protocol.DocumentID
	Count   uint64 // ranks
}

// parseGrid reads a grid's bytes.
func parseGrid(b []byte) (g protocol.Grid, ok bool) {
	if len(b) != windowGridLen {
		return g, false
	}
	switch b[0] {
	case 1:
		g.On = "$createdAt"
	case 2:
		g.On = "$updatedAt"
	case 3:
		g.On = "$transferredAt"
	case 4:
		g.On = "$renewedAt"
	default:
		return g, false
	}
	g.Range = binary.BigEndian.Uint32(b[1:])
	g.Step = binary.BigEndian.Uint32(b[5:])
	g.Phase = binary.BigEndian.Uint32(b[9:])
	return g, true
}

// parseWindowKey reads what follows DocumentTypePrefix | 'w' in a key.
func parseWindowKey(rest []byte) (p WindowKeyParts, ok bool) {
	if len(rest) < windowGridLen+8+2 {
		return p, false
	}
	if p.Grid, ok = parseGrid(rest[:windowGridLen]); !ok {
		return p, false
	}
	rest = rest[windowGridLen:]
	p.StartMs, rest = binary.BigEndian.Uint64(rest), rest[8:]
	p.Part, rest = WindowPart(rest[0]), rest[1:]
	n := int(rest[0])
	if len(rest) < 1+n {
		return p, false
	}
	p.Index, rest = string(rest[1:1+n]), rest[1+n:]
	switch p.Part {
	case WindowEntry:
		if len(rest) < protocol.DocumentIDLen {
			return p, false
		}
		cut := len(rest) - protocol.DocumentIDLen
		p.Values = append([]byte{}, rest[:cut]...)
		copy(p.ID[:], rest[cut:])
	case WindowCount:
		p.Values = append([]byte{}, rest...)
	case WindowRank:
		if len(rest) < 8 {
			return p, false
		}
		p.Count = ^binary.BigEndian.Uint64(rest)
		p.Values = append([]byte{}, rest[8:]...)
	default:
		return p, false
	}
	return p, true
}

// ExpirationsPrefix is the prefix of the documents expirations tree: 104 | 'E'
// (Document Time To Live: Misc (104) / E / <expires at, u64 big endian ms> / <document id>).
func ExpirationsPrefix() []byte { return []byte{RootMisc, miscExpirations} }

// ExpirationKey: 104 | 'E' | expires at u64 (ms) | document id -> contract id ++
// document type name: the entry the cleanup finds an expiring document through,
// written and removed with the document. Keys of one expiry time are one range, so the
// last entry of a time removed leaves nothing of that time behind.
func ExpirationKey(expiresAtMs uint64, id protocol.DocumentID) []byte {
	return append(binary.BigEndian.AppendUint64(ExpirationsPrefix(), expiresAtMs), id[:]...)
}

// ParseExpirationKey reads a key built by ExpirationKey.
func ParseExpirationKey(k []byte) (expiresAtMs uint64, id protocol.DocumentID, ok bool) {
	rest, ok := bytes.CutPrefix(k, ExpirationsPrefix())
	if !ok || len(rest) != 8+protocol.DocumentIDLen {
		return 0, id, false
	}
	copy(id[:], rest[8:])
	return binary.BigEndian.Uint64(rest), id, true
}

// ExpirationEntry is one entry of the documents expirations tree.
type ExpirationEntry struct {
	ExpiresAtMs uint64
	ID          protocol.DocumentID
	Contract    protocol.ContractID
	Type        string
}

// DecodeExpirationEntry reads an entry (key and value) of the expirations tree.
func DecodeExpirationEntry(k, v []byte) (ExpirationEntry, bool) {
	at, id, ok := ParseExpirationKey(k)
	if !ok {
		return ExpirationEntry{}, false
	}
	c, t, ok := DecodeExpiration(v)
	return ExpirationEntry{ExpiresAtMs: at, ID: id, Contract: c, Type: t}, ok
}

// EncodeExpiration is the value of an expiration entry: contract id ++ type name.
func EncodeExpiration(c protocol.ContractID, typeName string) []byte {
	return append(append([]byte(nil), c[:]...), typeName...)
}

// DecodeExpiration reads a value written by EncodeExpiration.
func DecodeExpiration(v []byte) (c protocol.ContractID, typeName string, ok bool) {
	if len(v) <= protocol.ContractIDLen || len(v) > protocol.ContractIDLen+protocol.MaxNameLength {
		return c, "", false
	}
	copy(c[:], v)
	return c, string(v[protocol.ContractIDLen:]), true
}

// CurrentEpochKey: 48 | 'c' -> the current epoch: index u32 ++ first height u64 ++
// first block time ms u64.
func CurrentEpochKey() []byte { return []byte{RootPools, poolCurrentEpoch} }

// StoragePoolKey: 48 | 'd' -> the storage distribution pool: perpetual storage fees
// collected since the last epoch change, u64.
func StoragePoolKey() []byte { return []byte{RootPools, poolStorage} }

// NextUnpaidEpochKey: 48 | 'u' -> the oldest epoch not yet paid out, u32.
func NextUnpaidEpochKey() []byte { return []byte{RootPools, poolNextUnpaid} }

// EpochPrefix: 48 | 'e' | epoch u32, the prefix of every key of one epoch's pool.
func EpochPrefix(epoch uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{RootPools, poolEpoch}, epoch)
}

// EpochFeesKey: 48 | 'e' | epoch | 'f' -> processing fees collected in the epoch, u64.
func EpochFeesKey(epoch uint32) []byte { return append(EpochPrefix(epoch), epochFees) }

// EpochStorageKey: 48 | 'e' | epoch | 's' -> the epoch's share of storage fees, u64.
func EpochStorageKey(epoch uint32) []byte { return append(EpochPrefix(epoch), epochStorage) }

// EpochProposerKey: 48 | 'e' | epoch | 'p' | proposer -> blocks the proposer (its
// consensus address) proposed in the epoch, u64.
func EpochProposerKey(epoch uint32, proposer []byte) []byte {
	return append(append(EpochPrefix(epoch), epochProposers), proposer...)
}

// EpochProposersPrefix is the prefix of an epoch's proposer counts.
func EpochProposersPrefix(epoch uint32) []byte { return append(EpochPrefix(epoch), epochProposers) }

// EpochPaidKey: 48 | 'e' | epoch | 'x' -> credits the epoch paid out to its proposers,
// u64; present once the epoch is paid.
func EpochPaidKey(epoch uint32) []byte { return append(EpochPrefix(epoch), epochPaid) }

// EpochEntry names what a key under EpochPrefix holds.
type EpochEntry uint8

// The entries of an epoch.
const (
	EpochEntryFees EpochEntry = iota + 1
	EpochEntryStorage
	EpochEntryProposer
	EpochEntryPaid
)

// ParseEpochKey reads a key built by EpochFeesKey, EpochStorageKey, EpochProposerKey
// or EpochPaidKey; proposer is set for a proposer count.
func ParseEpochKey(k []byte) (epoch uint32, entry EpochEntry, proposer []byte, ok bool) {
	if len(k) < 7 || k[0] != RootPools || k[1] != poolEpoch {
		return 0, 0, nil, false
	}
	epoch = binary.BigEndian.Uint32(k[2:6])
	switch sub := k[6:]; {
	case len(sub) == 1 && sub[0] == epochFees:
		return epoch, EpochEntryFees, nil, true
	case len(sub) == 1 && sub[0] == epochStorage:
		return epoch, EpochEntryStorage, nil, true
	case len(sub) == 1 && sub[0] == epochPaid:
		return epoch, EpochEntryPaid, nil, true
	case len(sub) > 1 && sub[0] == epochProposers:
		return epoch, EpochEntryProposer, sub[1:], true
	}
	return 0, 0, nil, false
}

// LifetimePoolKey: 48 | 'l' | collected in epoch u32 | lifetime in epochs u16 ->
// credits u64: the lifetime storage fees (documents with a ttl) collected in an epoch
// for a number of epochs, spread over that many epochs at the next epoch change
// (Document Time To Live: Pools (48) / l / <collected in epoch><lifetime in epochs>; the epoch is
// u32 here as in every epoch key of this chain, whose epochs may be a minute long).
func LifetimePoolKey(epoch uint32, lifetime uint16) []byte {
	return binary.BigEndian.AppendUint16(LifetimePoolsFrom(epoch), lifetime)
}

// LifetimePoolsFrom: 48 | 'l' | epoch u32, the smallest key of every pool collected in
// epoch or later (a key prefix, not a pool's key): the pools collected before epoch are
// the keys from LifetimePoolsPrefix up to it.
func LifetimePoolsFrom(epoch uint32) []byte {
	return binary.BigEndian.AppendUint32(LifetimePoolsPrefix(), epoch)
}

// LifetimePoolsPrefix is the prefix of every lifetime storage fee pool.
func LifetimePoolsPrefix() []byte { return []byte{RootPools, poolLifetime} }

// ParseLifetimePoolKey reads a key built by LifetimePoolKey.
func ParseLifetimePoolKey(k []byte) (epoch uint32, lifetime uint16, ok bool) {
	rest, ok := bytes.CutPrefix(k, LifetimePoolsPrefix())
	if !ok || len(rest) != 6 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint32(rest), binary.BigEndian.Uint16(rest[4:]), true
}

// PendingRefundKey: 48 | 'r' | epoch paid in u32 | from epoch u32 -> storage fee u64 ++
// refunded u64: storage fees paid in one epoch that owners were refunded, to be taken
// back from the epochs from `from` on at the next epoch change.
func PendingRefundKey(paidIn, from uint32) []byte {
	k := binary.BigEndian.AppendUint32([]byte{RootPools, poolRefunds}, paidIn)
	return binary.BigEndian.AppendUint32(k, from)
}

// PendingRefundsPrefix is the prefix of every pending refund.
func PendingRefundsPrefix() []byte { return []byte{RootPools, poolRefunds} }

// ParsePendingRefundKey reads a key built by PendingRefundKey.
func ParsePendingRefundKey(k []byte) (paidIn, from uint32, ok bool) {
	rest, ok := bytes.CutPrefix(k, PendingRefundsPrefix())
	if !ok || len(rest) != 8 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint32(rest), binary.BigEndian.Uint32(rest[4:]), true
}

// BlockChangesKey: 58 | 'b' | height u64 -> the address balances one block changed.
func BlockChangesKey(height uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{RootAddressBalanceChanges, changesBlock}, height)
}

// ParseBlockChangesKey reads a key built by BlockChangesKey.
func ParseBlockChangesKey(k []byte) (height uint64, ok bool) {
	rest, ok := bytes.CutPrefix(k, BlockChangesPrefix())
	if !ok || len(rest) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(rest), true
}

// BlockChangesPrefix is the prefix of every per-block record.
func BlockChangesPrefix() []byte { return []byte{RootAddressBalanceChanges, changesBlock} }

// CompactedChangesKey: 58 | 'c' | end height u64 | start height u64 -> merged balances.
// Keyed by the end height first, so "every record that ends at or after h" is one range.
func CompactedChangesKey(start, end uint64) []byte {
	k := binary.BigEndian.AppendUint64([]byte{RootAddressBalanceChanges, changesCompacted}, end)
	return binary.BigEndian.AppendUint64(k, start)
}

// ParseCompactedChangesKey reads a key built by CompactedChangesKey.
func ParseCompactedChangesKey(k []byte) (start, end uint64, ok bool) {
	rest, ok := bytes.CutPrefix(k, CompactedChangesPrefix())
	if !ok || len(rest) != 16 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint64(rest[8:]), binary.BigEndian.Uint64(rest), true
}

// CompactedChangesEndingFrom: 58 | 'c' | end u64, the smallest key of every compacted
// record that ends at or after end (a key prefix, not a record's key).
func CompactedChangesEndingFrom(end uint64) []byte {
	return binary.BigEndian.AppendUint64(CompactedChangesPrefix(), end)
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

// ParseChangesExpiryKey reads a key built by ChangesExpiryKey.
func ParseChangesExpiryKey(k []byte) (expiresAtMs, start, end uint64, ok bool) {
	rest, ok := bytes.CutPrefix(k, ChangesExpiryPrefix())
	if !ok || len(rest) != 24 {
		return 0, 0, 0, false
	}
	return binary.BigEndian.Uint64(rest), binary.BigEndian.Uint64(rest[16:]), binary.BigEndian.Uint64(rest[8:]), true
}

// ChangesExpiryPrefix is the prefix of the expiry index.
func ChangesExpiryPrefix() []byte { return []byte{RootAddressBalanceChanges, changesExpiry} }

// GenesisKey: 104 | 'g' -> the chain's genesis parameters. Present from genesis on, so
// the tree is never empty (an empty IAVL tree proves nothing).
func GenesisKey() []byte { return []byte{RootMisc, miscGenesis} }

// LastBlockKey: 104 | 'l' -> the last executed block: height u64 ++ time ms u64. What
// CheckTx, structure validation and queries judge time-dependent rules against between
// blocks.
func LastBlockKey() []byte { return []byte{RootMisc, miscLastBlock} }

// PayoutIdentityKey: 104 | 'p' | validator -> the identity (32 bytes) a validator's
// share of its epochs' pools is paid to. Written at genesis.
func PayoutIdentityKey(validator []byte) []byte {
	return append(PayoutIdentitiesPrefix(), validator...)
}

// PayoutIdentitiesPrefix is the prefix of every PayoutIdentityKey: 104 | 'p'.
func PayoutIdentitiesPrefix() []byte { return []byte{RootMisc, miscPayout} }

// ConsensusAddressLen is the length of a validator's consensus address (CometBFT's:
// the first 20 bytes of the SHA-256 of its public key), as payout identity keys hold
// it.
const ConsensusAddressLen = 20

// ParsePayoutIdentityKey reads a key built by PayoutIdentityKey.
func ParsePayoutIdentityKey(k []byte) (validator []byte, ok bool) {
	rest, ok := bytes.CutPrefix(k, PayoutIdentitiesPrefix())
	if !ok || len(rest) != ConsensusAddressLen {
		return nil, false
	}
	return rest, true
}

// TotalCreditsKey: 104 | 't' -> the running total of credits held in state (balances
// and pools, less pending refunds), u64; every block's writes update it, and it equals
// the supply while credits are conserved.
func TotalCreditsKey() []byte { return []byte{RootMisc, miscTotal} }

// SupplyKey: 104 | 's' -> total credits created at genesis, u64.
func SupplyKey() []byte { return []byte{RootMisc, miscSupply} }

// ProtocolVersionKey: 104 | 'v' -> the protocol version in force, u32.
func ProtocolVersionKey() []byte { return []byte{RootMisc, miscProtocol} }

// ProtocolUpgradeKey: 104 | 'U' -> version u32 ++ height u64: the protocol upgrade
// genesis scheduled, removed when the block of that height carries it out.
func ProtocolUpgradeKey() []byte { return []byte{RootMisc, miscUpgrade} }

// LocalLimitsKey: 104 | 'o' -> min document ttl seconds u64: the limits a local
// chain's genesis lowered (protocol.LocalLimits); absent: none.
func LocalLimitsKey() []byte { return []byte{RootMisc, miscLocal} }

// VersionActivatedKey: 104 | 'A' | version u32 -> height u64: the first height of a
// protocol version that brought state of its own (14: document time to live), written
// by the genesis that starts on it or by the block that upgrades to it.
func VersionActivatedKey(v protocol.Version) []byte {
	return binary.BigEndian.AppendUint32([]byte{RootMisc, miscActivated}, uint32(v))
}

// UpgradesPrefix: 104 | 'P': the records of protocol upgrades in place
// (docs/STATE.md, "Protocol upgrades"): the next version, once decided, and the version
// signals of the current and the last epoch; nothing else lies under it.
func UpgradesPrefix() []byte { return []byte{RootMisc, miscUpgrades} }

// NextVersionKey: 104 | 'P' | 'n' -> version u32: the version an epoch change decided
// the chain moves to at the next one; absent: none decided.
func NextVersionKey() []byte { return []byte{RootMisc, miscUpgrades, upgradeNext} }

// EpochSignalsKey: 104 | 'P' | 's' | epoch u32 -> the version signals of the epoch's
// blocks (EncodeEpochSignals); absent: no block of the epoch signalled.
func EpochSignalsKey(epoch uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{RootMisc, miscUpgrades, upgradeSignals}, epoch)
}

// ValidatorsRoot: 104 | 'V': the validator set, its proposals and approvals, the next
// proposal's number and the misbehaviour recorded (docs/STATE.md, "Validators");
// nothing else lies under it.
func ValidatorsRoot() []byte { return []byte{RootMisc, miscValidators} }

// ValidatorSetPrefix: 104 | 'V' | 's': the validators of the set, by address.
func ValidatorSetPrefix() []byte { return []byte{RootMisc, miscValidators, validatorSet} }

// ValidatorKey: 104 | 'V' | 's' | address -> the validator (EncodeValidator).
func ValidatorKey(a protocol.ConsensusAddress) []byte { return append(ValidatorSetPrefix(), a[:]...) }

// ParseValidatorKey reads a key built by ValidatorKey.
func ParseValidatorKey(k []byte) (a protocol.ConsensusAddress, ok bool) {
	rest, ok := bytes.CutPrefix(k, ValidatorSetPrefix())
	if !ok || len(rest) != protocol.ConsensusAddressLen {
		return a, false
	}
	return protocol.ConsensusAddress(rest), true
}

// ValidatorProposalsPrefix: 104 | 'V' | 'p': the pending proposals, each followed by
// its approvals.
func ValidatorProposalsPrefix() []byte { return []byte{RootMisc, miscValidators, validatorProposals} }

// ValidatorProposalKey: 104 | 'V' | 'p' | id u64 -> the proposal
// (EncodeValidatorProposal).
func ValidatorProposalKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64(ValidatorProposalsPrefix(), id)
}

// ValidatorApprovalKey: 104 | 'V' | 'p' | id u64 | address -> the block time of the
// approval, u64 ms. The proposer's own approval is one.
func ValidatorApprovalKey(id uint64, a protocol.ConsensusAddress) []byte {
	return append(ValidatorProposalKey(id), a[:]...)
}

// ParseValidatorProposalKey reads a key built by ValidatorProposalKey (approval
// false) or ValidatorApprovalKey (approval true, by validator a).
func ParseValidatorProposalKey(k []byte) (id uint64, a protocol.ConsensusAddress, approval, ok bool) {
	rest, ok := bytes.CutPrefix(k, ValidatorProposalsPrefix())
	switch {
	case !ok:
		return 0, a, false, false
	case len(rest) == U64Len:
		return binary.BigEndian.Uint64(rest), a, false, true
	case len(rest) == U64Len+protocol.ConsensusAddressLen:
		return binary.BigEndian.Uint64(rest), protocol.ConsensusAddress(rest[U64Len:]), true, true
	}
	return 0, a, false, false
}

// NextValidatorProposalKey: 104 | 'V' | 'n' -> the number the next proposal gets, u64
// (absent: 1).
func NextValidatorProposalKey() []byte {
	return []byte{RootMisc, miscValidators, validatorNextProposal}
}

// MisbehaviorPrefix: 104 | 'V' | 'm': the misbehaviour recorded, by validator and
// height.
func MisbehaviorPrefix() []byte { return []byte{RootMisc, miscValidators, validatorMisbehavior} }

// MisbehaviorKey: 104 | 'V' | 'm' | address | height u64 -> the evidence recorded
// (EncodeMisbehavior).
func MisbehaviorKey(a protocol.ConsensusAddress, height uint64) []byte {
	return binary.BigEndian.AppendUint64(MisbehaviorValidatorPrefix(a), height)
}

// MisbehaviorValidatorPrefix: 104 | 'V' | 'm' | address: the evidence recorded against
// one validator.
func MisbehaviorValidatorPrefix(a protocol.ConsensusAddress) []byte {
	return append(MisbehaviorPrefix(), a[:]...)
}

// ParseMisbehaviorKey reads a key built by MisbehaviorKey.
func ParseMisbehaviorKey(k []byte) (a protocol.ConsensusAddress, height uint64, ok bool) {
	rest, ok := bytes.CutPrefix(k, MisbehaviorPrefix())
	if !ok || len(rest) != protocol.ConsensusAddressLen+U64Len {
		return a, 0, false
	}
	return protocol.ConsensusAddress(rest), binary.BigEndian.Uint64(rest[protocol.ConsensusAddressLen:]), true
}

// EpochSignalsPrefix is the prefix of every EpochSignalsKey.
func EpochSignalsPrefix() []byte { return []byte{RootMisc, miscUpgrades, upgradeSignals} }

// ParseEpochSignalsKey reads a key built by EpochSignalsKey.
func ParseEpochSignalsKey(k []byte) (epoch uint32, ok bool) {
	rest, ok := bytes.CutPrefix(k, EpochSignalsPrefix())
	if !ok || len(rest) != 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(rest), true
}

// TimeRangesPrefix is the prefix of the registry of ttl'd time-range grids:
// 104 | 'W'. Each entry, 104 | 'W' | contract:32 | type name length u8 | type name |
// grid -> ttl seconds u32, is written when a contract brings a type with such a grid,
// so that the epoch sweep can find the grids nobody writes into any more.
func TimeRangesPrefix() []byte { return []byte{RootMisc, miscTimeRanges} }

// TimeRangeKey is the registry entry of grid g of a type.
func TimeRangeKey(c protocol.ContractID, typeName string, g protocol.Grid) []byte {
	k := append(append(TimeRangesPrefix(), c[:]...), uint8(len(typeName)))
	k = append(k, typeName...)
	return append(k, WindowsPrefix(c, typeName, g)[len(DocumentTypePrefix(c, typeName))+1:]...)
}

// ParseTimeRangeKey reads a key built by TimeRangeKey.
func ParseTimeRangeKey(k []byte) (c protocol.ContractID, typeName string, g protocol.Grid, ok bool) {
	rest, ok := bytes.CutPrefix(k, TimeRangesPrefix())
	if !ok || len(rest) < protocol.ContractIDLen+1 {
		return c, "", g, false
	}
	copy(c[:], rest)
	rest = rest[protocol.ContractIDLen:]
	n := int(rest[0])
	if len(rest) != 1+n+windowGridLen {
		return c, "", g, false
	}
	typeName = string(rest[1 : 1+n])
	g, ok = parseGrid(rest[1+n:])
	return c, typeName, g, ok
}

// TimeRangeSweepKey: 104 | 'w' -> the registry key the next epoch sweep starts at
// (absent: the first).
func TimeRangeSweepKey() []byte { return []byte{RootMisc, miscTimeRangeSweep} }

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
