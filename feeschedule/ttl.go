package feeschedule

import (
	"fmt"
	"math"
	"math/bits"
)

// DocumentTTL is the document_ttl fee group (Document Time To Live, "Fees"; FEE_VERSION3's
// FeeDocumentTtlVersion on the platform): what a document of a type with a time to
// live pays instead of perpetual storage. A schedule without the group has it zero
// (Schedule.HasDocumentTTL).
type DocumentTTL struct {
	// Tiers price a remaining lifetime of at most UpToSeconds at PerByte credits per
	// byte, the first tier that holds it; UpToSeconds ascending, PerByte never
	// decreasing. Shared by every copy of the schedule: read only.
	Tiers []TTLTier
	// PricingPeriodSeconds and PerPeriod price a lifetime past the last tier:
	// PerPeriod per period spanned, rounded up (pricing_period_seconds, the mainnet
	// epoch length, never the node's own). PerPeriod is at least the last tier's price,
	// so the price never decreases with the lifetime.
	PricingPeriodSeconds uint64
	PerPeriod            uint64
	// The deletion a creation prepays, as processing: CleanupBase, plus
	// CleanupPerIndexLevel per index level of the type, plus CleanupPerDocumentByte per
	// byte of the stored document (cleanup_base_processing_cost,
	// cleanup_processing_cost_per_index_level, cleanup_processing_cost_per_document_byte).
	CleanupBase            uint64
	CleanupPerIndexLevel   uint64
	CleanupPerDocumentByte uint64
}

// TTLTier is one tier of DocumentTTL.
type TTLTier struct {
	UpToSeconds uint64
	PerByte     uint64
}

// documentTTLV1 is the group as protocol version 14 introduces it (Document Time To
// Live's table, the platform's FEE_VERSION3 document_ttl group; docs/STATE.md).
var documentTTLV1 = DocumentTTL{
	Tiers: []TTLTier{
		{UpToSeconds: 3_600, PerByte: 1},    // up to 1 hour
		{UpToSeconds: 86_400, PerByte: 4},   // up to 1 day
		{UpToSeconds: 172_800, PerByte: 8},  // up to 2 days
		{UpToSeconds: 345_600, PerByte: 15}, // up to 4 days
		{UpToSeconds: 604_800, PerByte: 26}, // up to 7 days
	},
	PricingPeriodSeconds:   788_400,
	PerPeriod:              34,
	CleanupBase:            1_200_000,
	CleanupPerIndexLevel:   400_000,
	CleanupPerDocumentByte: 420,
}

// MaxLifetimeEpochs bounds the epochs a lifetime storage fee is paid out over: one
// era (Document Time To Live: "rounded up and at most one era (40 epochs)").
const MaxLifetimeEpochs = EpochsPerEra

// HasDocumentTTL reports whether the schedule has the document_ttl group (fee version
// 2 on; protocol version 14).
func (s Schedule) HasDocumentTTL() bool { return s.DocumentTTL.PricingPeriodSeconds > 0 }

// ErrNoDocumentTTL: a ttl price asked of a schedule without the document_ttl group, a
// caller's bug (no type has a ttl before protocol version 14).
type ErrNoDocumentTTL struct{ Version Version }

func (e ErrNoDocumentTTL) Error() string {
	return fmt.Sprintf("feeschedule: fee version %d has no document_ttl group", e.Version)
}

// TTLStoragePerByte is the price of one byte that stays in the state for remainingMs
// more milliseconds: the first tier whose bound holds the lifetime, else PerPeriod per
// PricingPeriodSeconds spanned, rounded up. A partial second counts as a whole one,
// and a lifetime of 0 (a write at the expiry itself) costs the first tier, like any
// lifetime up to its bound: a byte is never free, and the price never decreases with
// the lifetime, so an estimate made at an earlier block time is an upper bound.
func (s Schedule) TTLStoragePerByte(remainingMs uint64) (uint64, error) {
	g := s.DocumentTTL
	if !s.HasDocumentTTL() {
		return 0, ErrNoDocumentTTL{Version: s.Version}
	}
	secs := remainingMs / 1000
	if remainingMs%1000 != 0 {
		secs++
	}
	for _, t := range g.Tiers {
		if secs <= t.UpToSeconds {
			return t.PerByte, nil
		}
	}
	periods := secs / g.PricingPeriodSeconds
	if secs%g.PricingPeriodSeconds != 0 {
		periods++
	}
	hi, price := bits.Mul64(periods, g.PerPeriod)
	if hi != 0 {
		return 0, ErrOverflow{What: "ttl storage price per byte"}
	}
	return price, nil
}

// TTLStorageFee prices bytes bytes that stay in the state for remainingMs more
// milliseconds (TTLStoragePerByte each).
func (s Schedule) TTLStorageFee(bytes, remainingMs uint64) (uint64, error) {
	per, err := s.TTLStoragePerByte(remainingMs)
	if err != nil {
		return 0, err
	}
	return mul(bytes, per, "ttl storage fee")
}

// RenewalFee prices the renewal of bytes bytes (protocol version 15, docs/STATE.md
// "Renewal") that had fromMs of their lifetime left and now have toMs: per byte, the
// price of toMs less the price of fromMs, which was paid. The price never decreases
// with the lifetime, so a renewal to at least the lifetime left costs 0 or more; one
// to less (no renewal does that) costs 0, and nothing is refunded.
func (s Schedule) RenewalFee(bytes, fromMs, toMs uint64) (uint64, error) {
	was, err := s.TTLStoragePerByte(fromMs)
	if err != nil {
		return 0, err
	}
	now, err := s.TTLStoragePerByte(toMs)
	if err != nil {
		return 0, err
	}
	if now <= was {
		return 0, nil
	}
	return mul(bytes, now-was, "ttl renewal fee")
}

// DeletionPrepay is what creating a document prepays, as processing, for its deletion
// by the platform: CleanupBase + CleanupPerIndexLevel × indexLevels +
// CleanupPerDocumentByte × documentBytes.
func (s Schedule) DeletionPrepay(indexLevels, documentBytes uint64) (uint64, error) {
	g := s.DocumentTTL
	if !s.HasDocumentTTL() {
		return 0, ErrNoDocumentTTL{Version: s.Version}
	}
	levels, err := mul(indexLevels, g.CleanupPerIndexLevel, "deletion prepay")
	if err != nil {
		return 0, err
	}
	perBytes, err := s.ChangeDeletionPrepay(documentBytes)
	if err != nil {
		return 0, err
	}
	sum, err := add(g.CleanupBase, levels, "deletion prepay")
	if err != nil {
		return 0, err
	}
	return add(sum, perBytes, "deletion prepay")
}

// ChangeDeletionPrepay is what a replace, transfer, purchase or price update prepays
// for the deletion of the documentBytes bytes it adds to the stored document (Document Time To Live:
// "prepays the deletion of the document bytes it adds at
// cleanup_processing_cost_per_document_byte").
func (s Schedule) ChangeDeletionPrepay(documentBytes uint64) (uint64, error) {
	if !s.HasDocumentTTL() {
		return 0, ErrNoDocumentTTL{Version: s.Version}
	}
	return mul(documentBytes, s.DocumentTTL.CleanupPerDocumentByte, "deletion prepay")
}

// LifetimeEpochs is the number of epochs a lifetime storage fee is paid out over:
// the epochs of epochLengthS seconds (the network's own epoch length) that
// remainingMs spans, rounded up, clamped to 1..MaxLifetimeEpochs. An epoch length of 0
// spans every lifetime with more than any count, so it gives the clamp's top.
func LifetimeEpochs(remainingMs, epochLengthS uint64) uint16 {
	if remainingMs == 0 {
		return 1
	}
	if epochLengthS == 0 {
		return MaxLifetimeEpochs
	}
	if epochLengthS > math.MaxUint64/1000 {
		return 1 // one epoch is longer than any remainingMs
	}
	epochMs := epochLengthS * 1000
	n := remainingMs / epochMs
	if remainingMs%epochMs != 0 {
		n++
	}
	return uint16(min(n, MaxLifetimeEpochs))
}

// SpreadLifetimePool splits a lifetime storage fee pool of credits over its epochs at
// an epoch change (Document Time To Live: "the next epoch change spreads each pool of an earlier
// epoch evenly over its number of epochs from the new epoch on, the remainder of the
// division to the new epoch"): perEpoch to each of the epochs epochs from the new one
// on, and remainder to the new epoch on top of its part; perEpoch × epochs + remainder
// = credits. A pool of 0 epochs, which no block writes, goes to the new epoch whole.
func SpreadLifetimePool(credits uint64, epochs uint16) (perEpoch, remainder uint64) {
	if epochs == 0 {
		return 0, credits
	}
	return credits / uint64(epochs), credits % uint64(epochs)
}

// mul is a × b, or ErrOverflow naming what.
func mul(a, b uint64, what string) (uint64, error) {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return 0, ErrOverflow{What: what}
	}
	return lo, nil
}
