package protocol

import (
	"fmt"
	"slices"
	"strconv"
)

// Version is a protocol version. Versions are declared once and never renumbered or
// reused; a retired one keeps its number. The numbering follows Dash Platform's, whose
// specifications this chain implements (docs/ARCHITECTURE.md, "Specifications"): 13 is
// the first version this chain runs, 14 (document time to live) follows.
type Version uint32

const (
	// V13 is the first version of this chain: identities, platform addresses, credit
	// transfers, address-balance recent storage and its cleanup.
	V13 Version = 13
	// V14 turns document time to live on (Document Time To Live and the ttl keyword reference): the ttl keyword of document
	// types, the documents expirations tree, expire_documents after every block, the
	// document_ttl fee group and the lifetime storage fee pools.
	V14 Version = 14
	// V15 makes document time to live renewable (docs/STATE.md, "Renewal"): a ttl
	// document's $renewedAt, from which its expiry counts, moved forward by a renewal
	// that pays for the lifetime it adds.
	V15 Version = 15
	// V16 lets the validators govern their own set (docs/STATE.md, "Validators"): the
	// set is state, changed by its operators' proposals and approvals, and a
	// validator that misbehaves is removed from it.
	V16 Version = 16

	// Latest is the newest version this source implements. A binary may be built to
	// stop short of it (Newest); a new genesis starts on Newest unless it names another.
	Latest = V16
)

// Limits are the consensus limits of one protocol version.
type Limits struct {
	// MaxTxBytes bounds an encoded transition, signature included.
	MaxTxBytes int
	// MaxIdentityKeys bounds the public keys an identity is created with (>= 1).
	MaxIdentityKeys int
	// MaxNonceGap: a transition's nonce n is accepted when last < n <= last+MaxNonceGap.
	MaxNonceGap uint64
	// AddressBalanceCompactAfterBlocks: once this many per-block address balance
	// records are pending, they are compacted into one record.
	AddressBalanceCompactAfterBlocks int
	// AddressBalanceCompactAfterAddresses: pending records holding at least this many
	// address entries in all are compacted even before AddressBalanceCompactAfterBlocks.
	AddressBalanceCompactAfterAddresses int
	// CompactedAddressBalanceLifetimeMs is how long (block time) a compacted record is
	// kept after the block that compacted it.
	CompactedAddressBalanceLifetimeMs uint64
	// MaxAddressBalanceCleanupsPerBlock bounds the expired compacted records one block
	// removes; the backlog drains over later blocks.
	MaxAddressBalanceCleanupsPerBlock int
	// MaxEpochsPaidPerBlock bounds the finished epochs one block pays out (>= 1),
	// oldest first; after a halt that skipped many epochs the rest are paid over the
	// next blocks.
	MaxEpochsPaidPerBlock int

	// MaxContractBytes bounds a contract definition's JSON, both as sent and in its
	// canonical form (CanonicalJSON), which is what is stored (<= MaxTxBytes, so a
	// contract fits a transition).
	MaxContractBytes int
	// MaxDocumentTypes bounds the document types of one contract (>= 1).
	MaxDocumentTypes int
	// MaxPropertiesPerType bounds the properties of one document type (>= 1).
	MaxPropertiesPerType int
	// MaxIndexesPerType bounds the indices of one document type.
	MaxIndexesPerType int
	// MaxIndexProperties bounds the properties of one index (>= 1).
	MaxIndexProperties int
	// MaxStringLength bounds a string property's minLength and maxLength.
	MaxStringLength int
	// MaxByteArrayLength bounds a byte array property's minItems and maxItems (>= 32,
	// an identifier's length).
	MaxByteArrayLength int
	// MaxIndexedStringLength: an indexed string property declares a maxLength of at
	// most this (<= MaxStringLength), which bounds its index keys.
	MaxIndexedStringLength int
	// MaxIndexedByteArrayLength: an indexed byte array property declares a maxItems of
	// at most this (<= MaxByteArrayLength).
	MaxIndexedByteArrayLength int
	// MaxDocumentActions bounds the actions of one documents batch (1..255).
	MaxDocumentActions int
	// MaxQueryLimit bounds the documents one query answers with.
	MaxQueryLimit int
	// MaxModerators bounds the identities a contract's moderation block names (>= 1).
	MaxModerators int
	// MaxIdentifierListLength bounds an identifier list property's maxItems (>= 1).
	MaxIdentifierListLength int
	// MaxRemovalReasonBytes bounds the reason a moderator's deletion gives (UTF-8).
	MaxRemovalReasonBytes int
	// RestoreWindowMs is how long after a moderator's deletion its removal record lets
	// a moderator restore the document.
	RestoreWindowMs uint64

	// Document time to live (V14 on; zero before). MinDocumentTTLSeconds and
	// MaxDocumentTTLSeconds bound a type's ttl when a contract is registered or
	// updated (min_document_ttl_seconds, max_document_ttl_seconds).
	MinDocumentTTLSeconds uint64
	MaxDocumentTTLSeconds uint64
	// MaxDocumentExpirationsPerBlock and MaxDocumentExpirationWeightPerBlock bound
	// what expire_documents removes in one block (max_document_expirations_per_block,
	// max_document_expiration_weight_per_block); the block's first removal is always
	// allowed.
	MaxDocumentExpirationsPerBlock      int
	MaxDocumentExpirationWeightPerBlock int

	// Time-range indexes (V14 on; zero before, when no meta-schema admits them).
	// MaxTimeRangeOverlapFactor bounds a grid's Range / Step
	// (max_time_range_overlap_factor); MaxTimeRangeTTLSeconds bounds a time-range
	// index's ttl (max_time_range_ttl_seconds); MinTimeRangeTTLDropOperationsPerWrite
	// is the floor of the drain budget each write into a ttl'd index earns
	// (min_time_range_ttl_drop_operations_per_write).
	MaxTimeRangeOverlapFactor             int
	MaxTimeRangeTTLSeconds                uint64
	MinTimeRangeTTLDropOperationsPerWrite int
	// MaxTimeRangeSweepDropsPerEpoch bounds the keys each epoch change drains from the
	// expired windows of ttl'd grids, whether or not anyone still writes into them
	// (ours: the backstop Time-Range Index TTL leaves out of scope).
	MaxTimeRangeSweepDropsPerEpoch int
	// MaxTimeRangeSweepGridsPerEpoch bounds the registered grids one epoch change's
	// sweep visits, so that its reads stay bounded however many grids are registered.
	MaxTimeRangeSweepGridsPerEpoch int

	// Renewal (V15 on): a document of a type with a ttl may be renewed, its expiry
	// counted from its $renewedAt (docs/STATE.md, "Renewal").
	Renewal bool

	// The validator set (V16 on; zero before): ValidatorVotes turns the set's
	// transitions and the handling of misbehaviour on (docs/STATE.md, "Validators").
	// MaxValidators bounds the set, MaxValidatorPower a validator's power (the least
	// is 1). A proposal not passed within ValidatorProposalLifetimeMs of block time
	// expires; an operator has at most MaxValidatorProposals pending at once.
	ValidatorVotes              bool
	MaxValidators               int
	MaxValidatorPower           uint64
	ValidatorProposalLifetimeMs uint64
	MaxValidatorProposals       int

	// UpgradeThresholdPercent: the chain decides to move to the next version at an
	// epoch change when at least this share of the finished epoch's blocks signalled
	// it or a later one (docs/STATE.md, "Protocol upgrades").
	UpgradeThresholdPercent uint64
}

// MinDocumentTTLSeconds is version 14's min_document_ttl_seconds: the most a local
// chain's genesis may lower the minimum ttl to (LocalLimits), whichever versions the
// binary that reads the genesis implements.
const MinDocumentTTLSeconds uint64 = 3_600

// LocalLimits lower limits on a local chain (LocalChainID) so that its users can watch
// what the limits make slow: the minimum ttl, so documents expire in minutes. Genesis
// may set them; they never raise a limit.
type LocalLimits struct {
	// MinDocumentTTLSeconds, when not 0, replaces a higher MinDocumentTTLSeconds.
	MinDocumentTTLSeconds uint64
}

// WithLocal returns l with o's lowerings.
func (l Limits) WithLocal(o LocalLimits) Limits {
	if o.MinDocumentTTLSeconds > 0 && o.MinDocumentTTLSeconds < l.MinDocumentTTLSeconds {
		l.MinDocumentTTLSeconds = o.MinDocumentTTLSeconds
	}
	return l
}

// LocalChainID reports whether chain id names a local network, one that may lower its
// limits: it ends in "-local", "-devnet", "-test" or "-e2e". Any other chain id is
// treated as public.
func LocalChainID(id string) bool {
	for _, suffix := range []string{"-local", "-devnet", "-test", "-e2e"} {
		if len(id) > len(suffix) && id[len(id)-len(suffix):] == suffix {
			return true
		}
	}
	return false
}

// TTL reports whether the version has document time to live.
func (l Limits) TTL() bool { return l.MaxDocumentTTLSeconds > 0 }

var limits = map[Version]Limits{
	V13: v13Limits,
	V14: v14Limits,
	V15: v15Limits,
	V16: func() Limits {
		l := v15Limits
		l.ValidatorVotes = true
		l.MaxValidators = 100
		l.MaxValidatorPower = 1_000_000
		l.ValidatorProposalLifetimeMs = 3 * 24 * 60 * 60 * 1000
		l.MaxValidatorProposals = 4
		return l
	}(),
}

// v15Limits are version 15's limits, which version 16 extends.
var v15Limits = func() Limits {
	l := v14Limits
	l.Renewal = true
	return l
}()

// v14Limits are version 14's limits, which version 15 extends.
var v14Limits = func() Limits {
	l := v13Limits
	l.MinDocumentTTLSeconds = MinDocumentTTLSeconds
	l.MaxDocumentTTLSeconds = 31_536_000
	l.MaxDocumentExpirationsPerBlock = 128
	l.MaxDocumentExpirationWeightPerBlock = 1_024
	l.MaxTimeRangeOverlapFactor = 24
	l.MaxTimeRangeTTLSeconds = 604_800
	l.MinTimeRangeTTLDropOperationsPerWrite = 32
	l.MaxTimeRangeSweepDropsPerEpoch = 4096
	l.MaxTimeRangeSweepGridsPerEpoch = 256
	return l
}()

// v13Limits are version 13's limits, which version 14 extends.
var v13Limits = Limits{
	MaxTxBytes:                          16 * 1024,
	MaxIdentityKeys:                     16,
	MaxNonceGap:                         24,
	AddressBalanceCompactAfterBlocks:    64,
	AddressBalanceCompactAfterAddresses: 2048,
	CompactedAddressBalanceLifetimeMs:   24 * 60 * 60 * 1000,
	MaxAddressBalanceCleanupsPerBlock:   16,
	MaxEpochsPaidPerBlock:               10,
	MaxContractBytes:                    16 * 1024,
	MaxDocumentTypes:                    100,
	MaxPropertiesPerType:                100,
	MaxIndexesPerType:                   10,
	MaxIndexProperties:                  10,
	MaxStringLength:                     16 * 1024,
	MaxByteArrayLength:                  8 * 1024,
	MaxIndexedStringLength:              63,
	MaxIndexedByteArrayLength:           255,
	MaxDocumentActions:                  10,
	MaxQueryLimit:                       100,
	MaxModerators:                       16,
	MaxIdentifierListLength:             64,
	MaxRemovalReasonBytes:               256,
	RestoreWindowMs:                     7 * 24 * 60 * 60 * 1000,
	UpgradeThresholdPercent:             75,
}

// LimitsFor returns the limits of version v, or an error for a version this build does
// not know.
func LimitsFor(v Version) (Limits, error) {
	l, ok := limits[v]
	if !ok || v > Newest() {
		return Limits{}, fmt.Errorf("protocol: unknown protocol version %d", v)
	}
	return l, nil
}

// Known reports whether this build implements version v.
func Known(v Version) bool {
	_, ok := limits[v]
	return ok && v <= Newest()
}

// Supported returns the versions this build implements (every v that Known reports),
// oldest first.
func Supported() []Version {
	vs := make([]Version, 0, len(limits))
	for v := range limits {
		if Known(v) {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return vs
}

// newestLimit, set at link time (go build -ldflags "-X
// github.com/ttld-dev/ttld/protocol.newestLimit=13"), builds a binary that implements
// no version after it: what a binary released before the later versions is. The
// upgrade test runs one (make image PROTOCOL_NEWEST=13) to watch it stop where the
// chain moves past it. Empty: Latest.
var newestLimit string

// newest is Newest's answer, read once from newestLimit.
var newest = func() Version {
	if newestLimit == "" {
		return Latest
	}
	n, err := strconv.ParseUint(newestLimit, 10, 32)
	if _, ok := limits[Version(n)]; err != nil || !ok || Version(n) > Latest {
		panic(fmt.Sprintf("protocol: the link-time newest version %q is no version this source implements", newestLimit))
	}
	return Version(n)
}()

// Newest is the newest version this binary implements: Latest, unless the binary was
// built to stop short of it. A new genesis starts on it, a proposer signals it unless
// told to hold back, and a chain that moves past it stops this binary
// (docs/STATE.md, "Protocol upgrades").
func Newest() Version { return newest }
