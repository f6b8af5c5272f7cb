package proofs

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// Query paths the node serves through abci_query (docs/PROOFS.md documents each). Every
// answer carries the saved version it was read from as its height; with prove=true a
// single-key answer carries one ProofOpType operation and a range answer one
// RangeOpType operation against that version's root, which the header of the next
// height signs.
//
// The path table lives in proofs, not in abci, because it decides what a proof must
// cover: the node proves, and the client checks, the key or range TargetOf names, so
// both import it from here. proofs sits below abci and client (docs/ARCHITECTURE.md) and
// may use drive's key layout (and only that); keys are built by drive's builders only.
const (
	// PathKey: data = a raw tree key; value = its value, or empty when absent.
	PathKey = "/key"
	// PathAddress: data = 20-byte address; value = balance u64 ++ nonce record u64
	// (drive.EncodeAddressState), or empty.
	PathAddress = "/address"
	// PathIdentity: data = 32-byte identity id; value = EncodeEntries of every
	// key under the identity's prefix (empty list: no such identity), proven complete.
	PathIdentity = "/identity"
	// PathAddressChangesBlocks: data = since height u64; value = the per-block address
	// balance records at or after that height, proven complete.
	PathAddressChangesBlocks = "/address-changes/blocks"
	// PathAddressChangesCompacted: data = since height u64; value = the compacted
	// records that end at or after that height, proven complete.
	PathAddressChangesCompacted = "/address-changes/compacted"
	// PathEpoch: data = epoch index u32 (EpochData); value = EncodeEntries of every key
	// under drive.EpochPrefix(epoch): processing fees, storage share, blocks per
	// proposer, the paid record; proven complete (no entries: the epoch holds nothing).
	PathEpoch = "/epoch"
	// PathPools: no data; value = EncodeEntries of the pools root before the epochs:
	// the current-epoch record (drive.EncodeCurrentEpoch) and the storage distribution
	// pool (u64, absent when empty), proven complete. The oldest unpaid epoch
	// (drive.NextUnpaidEpochKey) lies after the epochs and refunds: read it with PathKey.
	PathPools = "/pools"
	// PathPendingRefunds: data = empty (from the first) or paid-in u32 ++ from u32
	// (PendingRefundsData: the first key to read); value = EncodeEntries of the pending
	// refunds from there on (drive.EncodePendingRefund), proven complete.
	PathPendingRefunds = "/pending-refunds"
	// PathTotalCredits: no data; value = the running total of credits in state, u64
	// (drive.TotalCreditsKey). The genesis supply it must equal is PathKey on
	// drive.SupplyKey().
	PathTotalCredits = "/total-credits"
	// PathContract: data = 32-byte contract id; value = the stored contract
	// (protocol.Contract.Encode, decoded by protocol.DecodeContract under the protocol
	// version at the answer's height), or empty when absent.
	PathContract = "/contract"
	// PathDocument: data = DocumentData(contract, type, id); value = the document's row
	// (drive.DocumentKey: storage flags ++ protocol.Document.Encode), or empty when
	// absent. The client decodes it with the type from PathContract at the same height.
	// With data = DocumentRevisionData(contract, type, id, revision), the value is that
	// revision's history row (drive.DocumentHistoryKey, same encoding) of a type that
	// keeps history, or empty when there is none.
	PathDocument = "/document"
	// PathExpirations: data = ExpirationsData(until, after): value = EncodeEntries of
	// the documents expirations tree's entries (drive.ExpirationKey -> contract id ++
	// type name) that expire at or before until (ms), after the entry (expires at, id)
	// when one is given, oldest first, proven complete: the cleanup's backlog when until
	// is the block time.
	PathExpirations = "/expirations"
	// PathLifetimePools: no data; value = EncodeEntries of the lifetime storage fee pools
	// (drive.LifetimePoolKey -> credits u64), proven complete.
	PathLifetimePools = "/lifetime-pools"
	// PathRemovals: data = RemovalsData(contract, type, after); value = EncodeEntries of
	// the contract's removal records (drive.RemovalKey -> storage flags ++
	// drive.EncodeRemoval), of one type or of all, after the record (type, id) when one
	// is given, in key order, proven complete.
	PathRemovals = "/removals"
	// PathUpgrades: no data; value = EncodeEntries of the protocol upgrade records
	// (drive.UpgradesPrefix): the version the chain moves to at the next epoch change
	// once decided (drive.NextVersionKey, u32) and the version signals of the current
	// and the last epoch (drive.EpochSignalsKey -> drive.EncodeEpochSignals), proven
	// complete. The version in force is PathKey on drive.ProtocolVersionKey.
	PathUpgrades = "/upgrades"
	// PathValidators: no data; value = EncodeEntries of the validator set
	// (drive.ValidatorKey -> drive.EncodeValidator), by address, proven complete: the
	// set from protocol version 16 on (docs/STATE.md, "Validators"); before it, no
	// entries.
	PathValidators = "/validators"
	// PathValidatorProposals: data = empty (from the first), a proposal number u64 (from
	// that proposal on) or a proposal number u64 and a 20-byte consensus address (from
	// the first key after that approval: ValidatorProposalsData); value =
	// EncodeEntries of the pending proposals from there on, each followed by its
	// approvals (drive.ValidatorProposalKey -> drive.EncodeValidatorProposal,
	// drive.ValidatorApprovalKey -> block time u64), proven complete. The next
	// proposal's number is PathKey on drive.NextValidatorProposalKey.
	PathValidatorProposals = "/validator-proposals"
	// PathMisbehavior: data = empty (from the first), a 20-byte consensus address (from
	// that validator's records on) or one and a height u64 (from the first key after
	// that record); value = EncodeEntries of the misbehaviour recorded from there on
	// (drive.MisbehaviorKey -> drive.EncodeMisbehavior), by validator and height,
	// proven complete.
	PathMisbehavior = "/misbehavior"
)

// RemovalsData is the request data of PathRemovals: the contract id, the type name's
// length u8 and the type name (0 and nothing: every type), then, to read on after a
// record, its type name's length u8, type name and document id.
func RemovalsData(c protocol.ContractID, typeName string, after *drive.RemovalRef) []byte {
	d := append(append(c[:0:0], c[:]...), uint8(len(typeName)))
	d = append(d, typeName...)
	if after != nil {
		d = append(append(append(d, uint8(len(after.Type))), after.Type...), after.ID[:]...)
	}
	return d
}

// parseRemovalsData reads RemovalsData into the range it names.
func parseRemovalsData(data []byte) (Target, error) {
	bad := ErrBadQuery{PathRemovals, fmt.Sprintf("want a %d-byte contract id, a type name (length u8, 0 for every type) and optionally a record's type name and document id to read after", protocol.ContractIDLen)}
	if len(data) < protocol.ContractIDLen+1 {
		return Target{}, bad
	}
	var c protocol.ContractID
	copy(c[:], data)
	rest := data[protocol.ContractIDLen:]
	n := int(rest[0])
	if len(rest) < 1+n {
		return Target{}, bad
	}
	prefix := drive.RemovalsPrefix(c)
	if n > 0 {
		prefix = drive.RemovalsTypePrefix(c, string(rest[1:1+n]))
	}
	rest = rest[1+n:]
	t := Target{Start: prefix, End: drive.PrefixEnd(prefix)}
	if len(rest) == 0 {
		return t, nil
	}
	m := int(rest[0])
	if len(rest) != 1+m+protocol.DocumentIDLen || (n > 0 && !bytes.Equal(rest[1:1+m], data[protocol.ContractIDLen+1:protocol.ContractIDLen+1+n])) {
		return Target{}, bad // NB: after a record of another type, the range would end before it starts
	}
	var id protocol.DocumentID
	copy(id[:], rest[1+m:])
	t.Start = append(drive.RemovalKey(c, string(rest[1:1+m]), id), 0) // the first key after the record
	return t, nil
}

// ValidatorProposalsData is the request data of PathValidatorProposals that reads on
// after the key of proposal id (approval nil) or of its approval by approval: a page
// that ends at that key continues here. After a proposal's own key it names the
// approval of the zero address, which no validator's key hashes to.
func ValidatorProposalsData(id uint64, approval *protocol.ConsensusAddress) []byte {
	var a protocol.ConsensusAddress
	if approval != nil {
		a = *approval
	}
	return append(binary.BigEndian.AppendUint64(nil, id), a[:]...)
}

// ExpirationsData is the request data of PathExpirations: until u64, then, to read on
// from an entry, its expiry u64 and document id.
func ExpirationsData(untilMs uint64, after *drive.ExpirationEntry) []byte {
	d := binary.BigEndian.AppendUint64(nil, untilMs)
	if after != nil {
		d = binary.BigEndian.AppendUint64(d, after.ExpiresAtMs)
		d = append(d, after.ID[:]...)
	}
	return d
}

// The document query paths. Their answers prove several keys and ranges against one
// root (documents.go): the value is JSON, the proof operations follow its items.
const (
	// PathDocuments: data = DocumentsData(contract, type, query JSON); value = a
	// DocumentsAnswer, proven complete.
	PathDocuments = "/documents"
	// PathCount: data = CountData(contract, type, index, where JSON); value = a
	// CountAnswer: the count record of a countable (or summable) index, proven present
	// or absent.
	PathCount = "/count"
	// PathSum: as PathCount, on a summable index.
	PathSum = "/sum"
	// PathRanked: data = DocumentsData(contract, type, ranked query JSON); value = a
	// RankedAnswer: a page of a ranked time-range index's groups in one window, most
	// counted first, proven complete.
	PathRanked = "/ranked"
)

// PathPendingNonce: data = a 20-byte address or a 32-byte identity id; value = the last
// nonce the signer used in the check state (the last saved version plus the mempool's
// accepted transactions), as a big-endian u64; 0 when it has used none. The answer has
// no height (0): the check state is not a saved version.
//
// NB: the check state is never committed, so this answer carries no proof, and a node
// can answer anything: it is a hint for picking the next nonce, not a verified read. A
// client takes the larger of it and the committed nonce.
const PathPendingNonce = "/pending-nonce"

// PathDryRun: data = a signed transaction's bytes; value = a DryRunAnswer in JSON: what
// the transaction would do if a block ran it on the check state now. Nothing is kept and
// nothing is sent. Like PathPendingNonce it is read from the check state, so it has no
// height and no proof.
const PathDryRun = "/dry-run"

// PathRestore: no data; value = the node's state sync in JSON (abci.RestoreStatus): the
// height of the snapshot it is restoring (0: none), its chunks and how many of them are
// imported, their bytes, the height it restored from, and the snapshots and chunks it
// was offered and refused. Like PathPendingNonce it has no height (0) and no proof:
// it is the node's own progress, not a saved state (ttld status shows it).
const PathRestore = "/restore"

// PathStatistics: data = until when the documents expiring are counted, in
// milliseconds u64 (StatisticsData); value = drive.Statistics in JSON, counted at the
// saved version asked: the contracts, the document types holding documents, the live
// documents and the expirations due before then. Counted from the tree's shape, it
// has no proof: the node's word.
const PathStatistics = "/statistics"

// StatisticsData is the request data of PathStatistics.
func StatisticsData(untilMs uint64) []byte { return binary.BigEndian.AppendUint64(nil, untilMs) }

// DryRunAnswer is the value of a PathDryRun answer.
type DryRunAnswer struct {
	// Code is the result code the transaction would get (0: accepted).
	Code uint32 `json:"code"`
	// Codespace is not empty (abci.CodespaceInternal) when the node could not run it.
	Codespace string `json:"codespace,omitempty"`
	Log       string `json:"log,omitempty"`
	// Fee is what it would be charged on the check state.
	Fee uint64 `json:"fee"`
	// MaxFee bounds the fee on any later state, where keys it found absent may hold
	// values: never below what a block charges it.
	MaxFee uint64 `json:"max_fee"`
}

// Query result codes, with the path table because a client reads them as well as the
// node gives them. They are not consensus data (queries are not replicated) but are
// stable all the same: docs/ERRORS.md lists them.
const (
	QueryCodeBadRequest     uint32 = 1
	QueryCodeVersionMissing uint32 = 2
	QueryCodeInternal       uint32 = 3
	// The refusals of a document query (query.ErrInvalid, by kind).
	QueryCodeNotJSON             uint32 = 4
	QueryCodeUnknownField        uint32 = 5
	QueryCodeFieldNotIndexed     uint32 = 6
	QueryCodeUnsupportedOperator uint32 = 7
	QueryCodeWrongValueType      uint32 = 8
	QueryCodeLimitTooLarge       uint32 = 9
	QueryCodeBothStarts          uint32 = 10
	// QueryCodeNotFound: the contract, the document type or the start document of a
	// document query does not exist at the height asked.
	QueryCodeNotFound uint32 = 11
	// QueryCodeWindowExpired: a window query names a window of a ttl'd time-range
	// index past its horizon at the answer's block time (Time-Range Index TTL).
	QueryCodeWindowExpired uint32 = 12
)

// DocumentData is the request data of PathDocument: contract id ++ type name length
// u8 ++ type name ++ document id.
func DocumentData(c protocol.ContractID, typeName string, id protocol.DocumentID) []byte {
	return append(DocumentsData(c, typeName, nil), id[:]...)
}

// DocumentRevisionData is the request data of PathDocument for one revision of a
// document of a type that keeps history: DocumentData ++ revision u64.
func DocumentRevisionData(c protocol.ContractID, typeName string, id protocol.DocumentID, revision uint64) []byte {
	return binary.BigEndian.AppendUint64(DocumentData(c, typeName, id), revision)
}

// SinceData is the request data of the address-changes paths: since as a big-endian u64.
func SinceData(since uint64) []byte { return binary.BigEndian.AppendUint64(nil, since) }

// EpochData is the request data of PathEpoch: the epoch index as a big-endian u32.
func EpochData(epoch uint32) []byte { return binary.BigEndian.AppendUint32(nil, epoch) }

// PendingRefundsData is the request data of PathPendingRefunds that starts at the
// pending refund of (paidIn, from): paid-in u32 ++ from u32.
func PendingRefundsData(paidIn, from uint32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, paidIn), from)
}

// MaxRangeEntries bounds one range answer; Info is "more" when it cut the range.
const MaxRangeEntries = 1000

// InfoMore marks a range answer cut by MaxRangeEntries.
const InfoMore = "more"

// Target is what a query path reads: one key, or the range [Start, End).
type Target struct {
	Key        []byte // a single key; nil for a range
	Start, End []byte
}

// Range reports whether the target is a range.
func (t Target) Range() bool { return t.Key == nil }

// ErrBadQuery: the path or its data is not understood.
type ErrBadQuery struct{ Path, Reason string }

func (e ErrBadQuery) Error() string { return fmt.Sprintf("query %s: %s", e.Path, e.Reason) }

// TargetOf maps a query path and its data to the key or range it reads. Clients use it
// too, to know what a proof must cover. A range is never empty: data that would name
// one (an expirations cursor past until) is refused as a bad request, since no proof
// covers a range that ends before it starts.
func TargetOf(path string, data []byte) (Target, error) {
	t, err := targetOf(path, data)
	if err == nil && t.Range() && bytes.Compare(t.Start, t.End) >= 0 {
		return Target{}, ErrBadQuery{path, "the data names an empty range (a cursor at or past its end)"}
	}
	return t, err
}

func targetOf(path string, data []byte) (Target, error) {
	switch path {
	case PathKey:
		if len(data) == 0 {
			return Target{}, ErrBadQuery{path, "empty key"}
		}
		return Target{Key: data}, nil
	case PathAddress:
		if len(data) != protocol.AddressLen {
			return Target{}, ErrBadQuery{path, fmt.Sprintf("want a %d-byte address", protocol.AddressLen)}
		}
		var a protocol.Address
		copy(a[:], data)
		return Target{Key: drive.AddressKey(a)}, nil
	case PathIdentity:
		if len(data) != protocol.IdentityIDLen {
			return Target{}, ErrBadQuery{path, fmt.Sprintf("want a %d-byte identity id", protocol.IdentityIDLen)}
		}
		var id protocol.IdentityID
		copy(id[:], data)
		p := drive.IdentityPrefix(id)
		return Target{Start: p, End: drive.PrefixEnd(p)}, nil
	case PathAddressChangesBlocks, PathAddressChangesCompacted:
		if len(data) != 8 {
			return Target{}, ErrBadQuery{path, "want a big-endian u64 height"}
		}
		since := binary.BigEndian.Uint64(data)
		if path == PathAddressChangesBlocks {
			return Target{Start: drive.BlockChangesKey(since), End: drive.PrefixEnd(drive.BlockChangesPrefix())}, nil
		}
		return Target{Start: drive.CompactedChangesEndingFrom(since), End: drive.PrefixEnd(drive.CompactedChangesPrefix())}, nil
	case PathEpoch:
		if len(data) != 4 {
			return Target{}, ErrBadQuery{path, "want a big-endian u32 epoch index"}
		}
		p := drive.EpochPrefix(binary.BigEndian.Uint32(data))
		return Target{Start: p, End: drive.PrefixEnd(p)}, nil
	case PathPools:
		if len(data) != 0 {
			return Target{}, ErrBadQuery{path, "want no data"}
		}
		// NB: the current-epoch record and the storage pool are the pools root's keys
		// below the first epoch; nothing else lies there.
		return Target{Start: drive.CurrentEpochKey(), End: drive.EpochPrefix(0)}, nil
	case PathPendingRefunds:
		start := drive.PendingRefundsPrefix()
		switch len(data) {
		case 0:
		case 8:
			start = drive.PendingRefundKey(binary.BigEndian.Uint32(data), binary.BigEndian.Uint32(data[4:]))
		default:
			return Target{}, ErrBadQuery{path, "want no data, or a big-endian u32 paid-in epoch and u32 from epoch"}
		}
		return Target{Start: start, End: drive.PrefixEnd(drive.PendingRefundsPrefix())}, nil
	case PathUpgrades:
		if len(data) != 0 {
			return Target{}, ErrBadQuery{path, "want no data"}
		}
		return Target{Start: drive.UpgradesPrefix(), End: drive.PrefixEnd(drive.UpgradesPrefix())}, nil
	case PathValidators:
		if len(data) != 0 {
			return Target{}, ErrBadQuery{path, "want no data"}
		}
		return Target{Start: drive.ValidatorSetPrefix(), End: drive.PrefixEnd(drive.ValidatorSetPrefix())}, nil
	case PathValidatorProposals:
		start := drive.ValidatorProposalsPrefix()
		switch len(data) {
		case 0:
		case 8:
			start = drive.ValidatorProposalKey(binary.BigEndian.Uint64(data))
		case 8 + protocol.ConsensusAddressLen:
			start = append(drive.ValidatorApprovalKey(binary.BigEndian.Uint64(data), protocol.ConsensusAddress(data[8:])), 0)
		default:
			return Target{}, ErrBadQuery{path, fmt.Sprintf("want no data, a big-endian u64 proposal number to start at, or one and a %d-byte consensus address to read after", protocol.ConsensusAddressLen)}
		}
		return Target{Start: start, End: drive.PrefixEnd(drive.ValidatorProposalsPrefix())}, nil
	case PathMisbehavior:
		start := drive.MisbehaviorPrefix()
		switch len(data) {
		case 0:
		case protocol.ConsensusAddressLen:
			start = drive.MisbehaviorValidatorPrefix(protocol.ConsensusAddress(data))
		case protocol.ConsensusAddressLen + 8:
			start = append(drive.MisbehaviorKey(protocol.ConsensusAddress(data), binary.BigEndian.Uint64(data[protocol.ConsensusAddressLen:])), 0)
		default:
			return Target{}, ErrBadQuery{path, fmt.Sprintf("want no data, a %d-byte consensus address to start at, or one and a big-endian u64 height to read after", protocol.ConsensusAddressLen)}
		}
		return Target{Start: start, End: drive.PrefixEnd(drive.MisbehaviorPrefix())}, nil
	case PathLifetimePools:
		if len(data) != 0 {
			return Target{}, ErrBadQuery{path, "want no data"}
		}
		return Target{Start: drive.LifetimePoolsPrefix(), End: drive.PrefixEnd(drive.LifetimePoolsPrefix())}, nil
	case PathExpirations:
		if len(data) != 8 && len(data) != 16+protocol.DocumentIDLen {
			return Target{}, ErrBadQuery{path, fmt.Sprintf("want until u64, and optionally an entry's expiry u64 and %d-byte document id to read after", protocol.DocumentIDLen)}
		}
		start := drive.ExpirationsPrefix()
		if len(data) > 8 {
			var id protocol.DocumentID
			copy(id[:], data[16:])
			start = append(drive.ExpirationKey(binary.BigEndian.Uint64(data[8:]), id), 0) // the first key after the entry
		}
		return Target{Start: start, End: drive.PrefixEnd(binary.BigEndian.AppendUint64(drive.ExpirationsPrefix(), binary.BigEndian.Uint64(data)))}, nil
	case PathContract:
		if len(data) != protocol.ContractIDLen {
			return Target{}, ErrBadQuery{path, fmt.Sprintf("want a %d-byte contract id", protocol.ContractIDLen)}
		}
		var id protocol.ContractID
		copy(id[:], data)
		return Target{Key: drive.ContractKey(id)}, nil
	case PathDocument:
		r, err := parseDocumentsData(path, data)
		if err != nil {
			return Target{}, err
		}
		if len(r.query) != protocol.DocumentIDLen && len(r.query) != protocol.DocumentIDLen+8 {
			return Target{}, ErrBadQuery{path, fmt.Sprintf("want a %d-byte document id, and optionally an 8-byte revision, after the type name", protocol.DocumentIDLen)}
		}
		var id protocol.DocumentID
		copy(id[:], r.query)
		if len(r.query) > protocol.DocumentIDLen {
			return Target{Key: drive.DocumentHistoryKey(r.contract, r.typeName, id, binary.BigEndian.Uint64(r.query[protocol.DocumentIDLen:]))}, nil
		}
		return Target{Key: drive.DocumentKey(r.contract, r.typeName, id)}, nil
	case PathRemovals:
		return parseRemovalsData(data)
	case PathTotalCredits:
		if len(data) != 0 {
			return Target{}, ErrBadQuery{path, "want no data"}
		}
		return Target{Key: drive.TotalCreditsKey()}, nil
	}
	return Target{}, ErrBadQuery{path, "unknown path"}
}

// DocumentsData is the request data of PathDocuments: contract id (32 bytes) ++ type
// name length u8 ++ type name ++ the query's JSON.
func DocumentsData(c protocol.ContractID, typeName string, query []byte) []byte {
	out := append(c[:0:0], c[:]...)
	out = append(out, uint8(len(typeName)))
	return append(append(out, typeName...), query...)
}

// CountData is the request data of PathCount and PathSum: contract id ++ type name
// length u8 ++ type name ++ index name length u8 ++ index name (empty: the first
// index that fits) ++ the where clauses' JSON ({"where": [...]}, or nothing).
func CountData(c protocol.ContractID, typeName, index string, query []byte) []byte {
	out := DocumentsData(c, typeName, nil)
	out = append(out, uint8(len(index)))
	return append(append(out, index...), query...)
}

// ParseDocumentsData reads the request data of PathDocument or PathDocuments: the
// contract, the type name and what follows them (a document id, and a revision or not;
// a query's JSON), as the node reads it.
func ParseDocumentsData(path string, data []byte) (protocol.ContractID, string, []byte, error) {
	r, err := parseDocumentsData(path, data)
	return r.contract, r.typeName, r.query, err
}

// documentsRequest is a decoded request of the document paths.
type documentsRequest struct {
	contract protocol.ContractID
	typeName string
	index    string // PathCount, PathSum
	query    []byte
}

func parseDocumentsData(path string, data []byte) (documentsRequest, error) {
	var r documentsRequest
	name := func() (string, bool) {
		if len(data) < 1 {
			return "", false
		}
		// NB: the length is widened before the arithmetic: 1+data[0] in a byte wraps
		// to 0 at a 255-byte name.
		n := 1 + int(data[0])
		if len(data) < n {
			return "", false
		}
		s := string(data[1:n])
		data = data[n:]
		return s, true
	}
	if len(data) < protocol.ContractIDLen {
		return r, ErrBadQuery{path, "want a 32-byte contract id, a type name and a query"}
	}
	copy(r.contract[:], data)
	data = data[protocol.ContractIDLen:]
	var ok bool
	if r.typeName, ok = name(); !ok || r.typeName == "" {
		return r, ErrBadQuery{path, "want a length-prefixed type name after the contract id"}
	}
	if path == PathCount || path == PathSum {
		if r.index, ok = name(); !ok {
			return r, ErrBadQuery{path, "want a length-prefixed index name after the type name"}
		}
	}
	r.query = data
	return r, nil
}
