package abci

import (
	"encoding/binary"
	"fmt"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// Query paths served by Query. Every answer carries the saved version it was read from
// as its height; with prove=true it carries ICS23 proofs (proofs.ProofOpType) against
// that version's root, which the header of the next height signs.
const (
	// PathKey: data = a raw tree key; value = its value, or empty when absent.
	PathKey = "/key"
	// PathAddress: data = 20-byte address; value = balance u64 ++ nonce u64, or empty.
	PathAddress = "/address"
	// PathIdentity: data = 32-byte identity id; value = proofs.EncodeEntries of every
	// key under the identity's prefix (empty list: no such identity), proven complete.
	PathIdentity = "/identity"
	// PathAddressChangesBlocks: data = since height u64; value = the per-block address
	// balance records at or after that height, proven complete.
	PathAddressChangesBlocks = "/address-changes/blocks"
	// PathAddressChangesCompacted: data = since height u64; value = the compacted
	// records that end at or after that height, proven complete.
	PathAddressChangesCompacted = "/address-changes/compacted"
)

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
// too, to know what a proof must cover.
func TargetOf(path string, data []byte) (Target, error) {
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
		p := drive.CompactedChangesPrefix()
		return Target{Start: binary.BigEndian.AppendUint64(append([]byte(nil), p...), since), End: drive.PrefixEnd(p)}, nil
	}
	return Target{}, ErrBadQuery{path, "unknown path"}
}
