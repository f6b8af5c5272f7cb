package feeschedule

import (
	"fmt"
	"math"

	"github.com/ttld-dev/ttld/protocol"
)

// Version numbers a fee table. Declared once, never renumbered or reused.
type Version uint32

const (
	// FeeVersion1 is the first table: processing and perpetual storage, the platform's
	// figures.
	FeeVersion1 Version = 1
	// FeeVersion2 is version 1 and the document_ttl group (protocol version 14; the
	// platform's FEE_VERSION3).
	FeeVersion2 Version = 2
)

// Processing prices the work a transition makes the node do, in credits.
type Processing struct {
	// SeekCost is charged per tree lookup.
	SeekCost uint64
	// LoadedPerByte is charged per key and value byte read.
	LoadedPerByte uint64
	// WrittenPerByte is charged per key and value byte added, replaced or removed.
	WrittenPerByte uint64
	// HashBase and HashPerBlock price one hash call over n bytes:
	// HashBase + HashPerBlock*ceil(n/64).
	HashBase     uint64
	HashPerBlock uint64
	// SignatureVerify is charged per ed25519 signature checked.
	SignatureVerify uint64
}

// Schedule is one version of the fee table.
type Schedule struct {
	Version    Version
	Processing Processing
	// StoragePerByte is the perpetual storage fee of one byte (key or value) added to
	// the state.
	StoragePerByte uint64
	// DocumentTTL prices documents of a type with a time to live (ttl.go); zero when
	// the table has no such group (HasDocumentTTL).
	DocumentTTL DocumentTTL
	// TTLEphemeralPerByte prices a byte added under a ttl'd time-range index, billed as
	// processing (ttl_ephemeral_disk_usage_credit_per_byte, Time-Range Index TTL); zero before the
	// tables that have it.
	TTLEphemeralPerByte uint64
}

// feeVersion1 is the first table, which later ones extend.
var feeVersion1 = Schedule{
	Version: FeeVersion1,
	Processing: Processing{
		SeekCost:        2000,
		LoadedPerByte:   20,
		WrittenPerByte:  400,
		HashBase:        100,
		HashPerBlock:    300,
		SignatureVerify: 3000,
	},
	StoragePerByte: 27000,
}

var schedules = map[Version]Schedule{
	FeeVersion1: feeVersion1,
	FeeVersion2: func() Schedule {
		s := feeVersion1
		s.Version = FeeVersion2
		s.DocumentTTL = documentTTLV1
		s.TTLEphemeralPerByte = 270
		return s
	}(),
}

var byProtocol = map[protocol.Version]Version{
	protocol.V13: FeeVersion1,
	protocol.V14: FeeVersion2,
	protocol.V15: FeeVersion2,
	protocol.V16: FeeVersion2,
}

// For returns the fee schedule of protocol version v.
func For(v protocol.Version) (Schedule, error) {
	fv, ok := byProtocol[v]
	if !ok {
		return Schedule{}, fmt.Errorf("feeschedule: no fee table for protocol version %d", v)
	}
	return schedules[fv], nil
}

// Operations counts the work of one transition, as drive meters it.
type Operations struct {
	Seeks        uint64
	BytesLoaded  uint64
	BytesWritten uint64 // added, replaced or removed
	HashCalls    uint64
	HashBlocks   uint64 // 64-byte blocks hashed, over all calls
	Signatures   uint64
	// AbsentReads counts the lookups that found nothing. They are priced like any seek;
	// the count lets a fee estimate bound what they would cost had they found a value.
	AbsentReads uint64
}

// Add returns the sum of two counts.
func (o Operations) Add(p Operations) Operations {
	return Operations{
		Seeks:        o.Seeks + p.Seeks,
		BytesLoaded:  o.BytesLoaded + p.BytesLoaded,
		BytesWritten: o.BytesWritten + p.BytesWritten,
		HashCalls:    o.HashCalls + p.HashCalls,
		HashBlocks:   o.HashBlocks + p.HashBlocks,
		Signatures:   o.Signatures + p.Signatures,
		AbsentReads:  o.AbsentReads + p.AbsentReads,
	}
}

// HashBlocksOf is the number of 64-byte blocks one hash call over n bytes processes.
func HashBlocksOf(n int) uint64 { return uint64(n+63) / 64 }

// ProcessingFee prices ops. The counts of one transition are bounded by the
// transaction size limit, so the sum cannot overflow.
func (s Schedule) ProcessingFee(ops Operations) uint64 {
	p := s.Processing
	return ops.Seeks*p.SeekCost +
		ops.BytesLoaded*p.LoadedPerByte +
		ops.BytesWritten*p.WrittenPerByte +
		ops.HashCalls*p.HashBase + ops.HashBlocks*p.HashPerBlock +
		ops.Signatures*p.SignatureVerify
}

// EphemeralFee prices bytesAdded bytes under ttl'd time-range indexes: processing,
// with no storage fee and nothing to refund (Time-Range Index TTL: "added bytes bill to processing
// at FeeStorageVersion::ttl_ephemeral_disk_usage_credit_per_byte (270 credits/byte ...)
// and the storage fee contribution is zero"). An overflow is ErrOverflow.
func (s Schedule) EphemeralFee(bytesAdded uint64) (uint64, error) {
	if s.TTLEphemeralPerByte != 0 && bytesAdded > math.MaxUint64/s.TTLEphemeralPerByte {
		return 0, ErrOverflow{What: "ephemeral bytes fee"}
	}
	return bytesAdded * s.TTLEphemeralPerByte, nil
}

// AbsentReadMargin bounds what one absent read would cost more had it found a value of
// at most maxValueLen bytes: a fee estimate made before a key is written stays an upper
// bound of the fee charged after.
func (s Schedule) AbsentReadMargin(maxValueLen int) uint64 {
	return uint64(maxValueLen) * s.Processing.LoadedPerByte
}

// PerpetualStorageFee prices bytesAdded bytes stored for ever. An overflow is an
// ErrOverflow: the caller refuses the transition.
func (s Schedule) PerpetualStorageFee(bytesAdded uint64) (uint64, error) {
	if s.StoragePerByte != 0 && bytesAdded > math.MaxUint64/s.StoragePerByte {
		return 0, ErrOverflow{What: "perpetual storage fee"}
	}
	return bytesAdded * s.StoragePerByte, nil
}
