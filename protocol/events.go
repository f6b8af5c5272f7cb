package protocol

import (
	"encoding/hex"
	"strconv"
)

// Event is something a block did, reported in its results: a transaction's events in
// its result, the block's own (epochs, cleanups, upgrades) in FinalizeBlock's. The
// node hands them to CometBFT as ABCI events; every reader (the node's metrics, the web
// view, the simulation) matches the types and keys declared here, never a literal.
// docs/TX.md, "Events", lists them.
type Event struct {
	Type  string
	Attrs []Attr
}

// Attr is one attribute of an event.
type Attr struct{ Key, Value string }

// The event types.
const (
	// A transaction's events.
	EventTransition          = "transition"
	EventTransfer            = "transfer"
	EventIdentityCreated     = "identity_created"
	EventDataContractCreated = "data_contract_created"
	EventDataContractUpdated = "data_contract_updated"
	// EventVersionSignal is the result event of a proposer's version signal.
	EventVersionSignal = "version_signal"
	// EventDocumentPrefix begins the type of a documents batch action's event, followed
	// by the action's kind (EventDocumentAction): document_create, document_replace, ...
	EventDocumentPrefix = "document_"

	// A block's own events.
	EventProtocolUpgrade          = "protocol_upgrade"
	EventProtocolUpgradeDecided   = "protocol_upgrade_decided"
	EventEpochChange              = "epoch_change"
	EventTimeRangeSweep           = "time_range_sweep"
	EventEpochPaid                = "epoch_paid"
	EventEpochPayout              = "epoch_payout"
	EventAddressBalancesCompacted = "address_balances_compacted"
	EventAddressBalancesCleanup   = "address_balances_cleanup"
	EventDocumentExpired          = "document_expired"
	EventDocumentExpirationOrphan = "document_expiration_orphan"
	EventDocumentsCleanup         = "documents_cleanup"

	// The validator set (docs/STATE.md, "Validators"), version 16 on.
	EventValidatorProposal        = "validator_proposal"
	EventValidatorApproval        = "validator_approval"
	EventValidatorProposalExpired = "validator_proposal_expired"
	EventValidatorProposalDropped = "validator_proposal_dropped"
	EventValidatorUpdate          = "validator_update"
	EventValidatorMisbehavior     = "validator_misbehavior"

	// EventBlockTransactions is the node's block event of a block that holds
	// transactions: how many. It is the node's, not the state machine's (no rule
	// emits it), so that a reader can search the blocks that hold any.
	EventBlockTransactions = "block_transactions"
)

// Attr returns the value of e's attribute key ("" when it has none).
func (e Event) Attr(key string) string {
	for _, a := range e.Attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// EventDocumentAction is the event type of a documents batch action of kind k.
func EventDocumentAction(k DocumentActionKind) string { return EventDocumentPrefix + k.String() }

// The attribute keys.
const (
	AttrAmount                = "amount"
	AttrApproved              = "approved"
	AttrBacklog               = "backlog"
	AttrBlocks                = "blocks"
	AttrCode                  = "code"
	AttrContract              = "contract"
	AttrCount                 = "count"
	AttrCredits               = "credits"
	AttrDocument              = "document"
	AttrDocumentHash          = "document_hash"
	AttrEndHeight             = "end_height"
	AttrEntries               = "entries"
	AttrEpoch                 = "epoch"
	AttrExpiresAt             = "expires_at"
	AttrExpiresAtMs           = "expires_at_ms"
	AttrFee                   = "fee"
	AttrFeeDeletionPrepay     = "fee_deletion_prepay"
	AttrFeeLifetimeStorage    = "fee_lifetime_storage"
	AttrFeePerpetualStorage   = "fee_perpetual_storage"
	AttrFeeProcessing         = "fee_processing"
	AttrFrom                  = "from"
	AttrFunder                = "funder"
	AttrHeight                = "height"
	AttrKind                  = "kind"
	AttrGrids                 = "grids"
	AttrID                    = "id"
	AttrIdentity              = "identity"
	AttrLifetimeStorageSpread = "lifetime_storage_spread"
	AttrModerator             = "moderator"
	AttrNonce                 = "nonce"
	AttrOldestOverdueMs       = "oldest_overdue_ms"
	AttrOperator              = "operator"
	AttrOrphans               = "orphans"
	AttrOwner                 = "owner"
	AttrPaid                  = "paid"
	AttrPassed                = "passed"
	AttrPower                 = "power"
	AttrProposal              = "proposal"
	AttrPool                  = "pool"
	AttrPreviousEpoch         = "previous_epoch"
	AttrPubKey                = "pubkey"
	AttrProposer              = "proposer"
	AttrReason                = "reason"
	AttrRecord                = "record"
	AttrRefunds               = "refunds"
	AttrRefundsTakenBack      = "refunds_taken_back"
	AttrRemoved               = "removed"
	AttrRevision              = "revision"
	AttrRolledOver            = "rolled_over"
	AttrSignals               = "signals"
	AttrSigner                = "signer"
	AttrStartHeight           = "start_height"
	AttrStartMs               = "start_ms"
	AttrStorageDistributed    = "storage_distributed"
	AttrThresholdPercent      = "threshold_percent"
	AttrTotal                 = "total"
	AttrTo                    = "to"
	AttrType                  = "type"
	AttrValidator             = "validator"
	AttrVersion               = "version"
	AttrWeight                = "weight"
)

func u64(n uint64) string { return strconv.FormatUint(n, 10) }

// SearchedAttr names an event attribute by its event type and key.
type SearchedAttr struct{ Type, Key string }

// Searched lists the event attributes a reader of the chain's history searches for
// through CometBFT's transaction and block indexes: the web view's lists and its
// search (docs/ARCHITECTURE.md, "The web view"; docs/STATE.md, "The transaction
// index", says what they cost). The node marks these indexed and emits every other
// attribute unindexed, so the index writes a few records a transaction instead of one
// per attribute; CometBFT indexes tx.hash, tx.height and block.height itself. A reader
// that searches for another attribute adds it here.
var Searched = searched()

func searched() []SearchedAttr {
	out := []SearchedAttr{
		// transactions: by signer, by kind, by result code, by recipient
		{EventTransition, AttrSigner},
		{EventTransition, AttrType},
		{EventTransition, AttrCode},
		{EventTransfer, AttrTo},
		{EventIdentityCreated, AttrIdentity},
		{EventDataContractCreated, AttrContract},
		{EventDataContractCreated, AttrOwner},
	}
	// a document's history, and the transactions of each action kind
	for _, k := range DocumentActionKinds() {
		out = append(out, SearchedAttr{EventDocumentAction(k), AttrID})
	}
	// block events (CometBFT's block index)
	return append(out,
		SearchedAttr{EventDocumentExpired, AttrID},
		SearchedAttr{EventEpochPayout, AttrIdentity},
		SearchedAttr{EventValidatorUpdate, AttrValidator},
		SearchedAttr{EventBlockTransactions, AttrCount},
	)
}

// IsSearched reports whether the attribute key of events of type typ is one of
// Searched.
func IsSearched(typ, key string) bool {
	for _, s := range Searched {
		if s.Type == typ && s.Key == key {
			return true
		}
	}
	return false
}

// Query is the attribute's name in CometBFT's query language, "type.key".
func (s SearchedAttr) Query() string { return s.Type + "." + s.Key }

// TransitionEvent is what every executed transaction reports, accepted or refused:
// its type, its signer (address or identity), its nonce, the fee charged by its parts,
// the storage refunds it earned the owners of what it removed, and the result code.
type TransitionEvent struct {
	Type   TransitionType
	Signer string
	Nonce  uint64
	// Fee is what the payer was charged, part by part; the event's fee is their sum.
	Fee FeeParts
	// Refunds are credited to their owners by the block, never netted from the fee.
	Refunds uint64
	Code    Code
}

// Event is the transition's event: the fee and each of its parts, then the refunds.
func (t TransitionEvent) Event() Event {
	return Event{EventTransition, []Attr{
		{AttrType, t.Type.String()}, {AttrSigner, t.Signer}, {AttrNonce, u64(t.Nonce)}, {AttrFee, u64(t.Fee.Total())},
		{AttrFeeProcessing, u64(t.Fee.Processing)}, {AttrFeePerpetualStorage, u64(t.Fee.PerpetualStorage)},
		{AttrFeeLifetimeStorage, u64(t.Fee.LifetimeStorage)}, {AttrFeeDeletionPrepay, u64(t.Fee.DeletionPrepay)},
		{AttrRefunds, u64(t.Refunds)}, {AttrCode, u64(uint64(t.Code))},
	}}
}

// NewTransferEvent: credits moved from the payer (address or identity) to an account.
func NewTransferEvent(from, to string, amount uint64) Event {
	return Event{EventTransfer, []Attr{{AttrFrom, from}, {AttrTo, to}, {AttrAmount, u64(amount)}}}
}

// NewIdentityCreatedEvent: an identity created, funded by an address.
func NewIdentityCreatedEvent(id IdentityID, funder Address, amount uint64) Event {
	return Event{EventIdentityCreated, []Attr{{AttrIdentity, id.String()}, {AttrFunder, funder.String()}, {AttrAmount, u64(amount)}}}
}

// NewDataContractEvent: a contract registered (EventDataContractCreated) or updated
// (EventDataContractUpdated) to version.
func NewDataContractEvent(typ string, id ContractID, owner IdentityID, version uint32) Event {
	return Event{typ, []Attr{{AttrContract, id.String()}, {AttrOwner, owner.String()}, {AttrVersion, u64(uint64(version))}}}
}

// DocumentActionEvent is what a documents batch action's event reports.
type DocumentActionEvent struct {
	Kind     DocumentActionKind
	Contract ContractID
	Type     string
	ID       DocumentID
	Owner    IdentityID
	Revision uint64
	// Moderator signed a moderator's deletion or a restore; nil for the other kinds.
	Moderator *IdentityID
	// Reason and Record (a removal record was kept): a moderator's deletion only.
	Reason string
	Record bool
	// DocumentHash is the removal record's hash of the document, when one is written
	// or restored from.
	DocumentHash *[32]byte
}

// Event is the action's event: its kind as the type (EventDocumentAction).
func (a DocumentActionEvent) Event() Event {
	ev := Event{EventDocumentAction(a.Kind), []Attr{
		{AttrContract, a.Contract.String()}, {AttrType, a.Type}, {AttrID, a.ID.String()},
		{AttrOwner, a.Owner.String()}, {AttrRevision, u64(a.Revision)},
	}}
	if a.Moderator != nil {
		ev.Attrs = append(ev.Attrs, Attr{AttrModerator, a.Moderator.String()})
		if a.Kind == ActionModerateDelete {
			ev.Attrs = append(ev.Attrs, Attr{AttrReason, a.Reason}, Attr{AttrRecord, strconv.FormatBool(a.Record)})
		}
	}
	if a.DocumentHash != nil {
		ev.Attrs = append(ev.Attrs, Attr{AttrDocumentHash, hex.EncodeToString(a.DocumentHash[:])})
	}
	return ev
}

// NewProtocolUpgradeEvent: the block that switched the protocol version.
func NewProtocolUpgradeEvent(from, to Version) Event {
	return Event{EventProtocolUpgrade, []Attr{{AttrFrom, u64(uint64(from))}, {AttrTo, u64(uint64(to))}}}
}

// NewVersionSignalEvent: a block's signal of version v, the epoch's signals of v so far
// with it.
func NewVersionSignalEvent(v Version, epoch uint32, signals uint64) Event {
	return Event{EventVersionSignal, []Attr{{AttrVersion, u64(uint64(v))}, {AttrEpoch, u64(uint64(epoch))}, {AttrSignals, u64(signals)}}}
}

// NewProtocolUpgradeDecidedEvent: the epoch change that decided the chain moves to
// version to at the next one, since signals of the blocks of epoch signalled to or a
// later version, at least thresholdPercent of them.
func NewProtocolUpgradeDecidedEvent(to Version, epoch uint32, signals, blocks, thresholdPercent uint64) Event {
	return Event{EventProtocolUpgradeDecided, []Attr{{AttrTo, u64(uint64(to))}, {AttrEpoch, u64(uint64(epoch))}, {AttrSignals, u64(signals)}, {AttrBlocks, u64(blocks)}, {AttrThresholdPercent, u64(thresholdPercent)}}}
}

// EpochChangeEvent is what the first block of an epoch reports.
type EpochChangeEvent struct {
	Epoch                 uint32
	StartMs               uint64
	StorageDistributed    uint64
	RefundsTakenBack      uint64
	LifetimeStorageSpread uint64  // reported when not zero
	PreviousEpoch         *uint32 // nil: the chain's first epoch change
}

// Event is the epoch change's event.
func (c EpochChangeEvent) Event() Event {
	ev := Event{EventEpochChange, []Attr{
		{AttrEpoch, u64(uint64(c.Epoch))}, {AttrStartMs, u64(c.StartMs)},
		{AttrStorageDistributed, u64(c.StorageDistributed)}, {AttrRefundsTakenBack, u64(c.RefundsTakenBack)},
	}}
	if c.LifetimeStorageSpread > 0 {
		ev.Attrs = append(ev.Attrs, Attr{AttrLifetimeStorageSpread, u64(c.LifetimeStorageSpread)})
	}
	if c.PreviousEpoch != nil {
		ev.Attrs = append(ev.Attrs, Attr{AttrPreviousEpoch, u64(uint64(*c.PreviousEpoch))})
	}
	return ev
}

// NewTimeRangeSweepEvent: an epoch change's sweep of expired time-range windows.
func NewTimeRangeSweepEvent(removed, grids uint64) Event {
	return Event{EventTimeRangeSweep, []Attr{{AttrRemoved, u64(removed)}, {AttrGrids, u64(grids)}}}
}

// NewEpochPaidEvent: a finished epoch's pool paid out, what was paid and what rolled
// over to the next epoch.
func NewEpochPaidEvent(epoch uint32, pool, paid uint64) Event {
	return Event{EventEpochPaid, []Attr{
		{AttrEpoch, u64(uint64(epoch))}, {AttrPool, u64(pool)}, {AttrPaid, u64(paid)}, {AttrRolledOver, u64(pool - paid)},
	}}
}

// NewEpochPayoutEvent: one proposer's share of a finished epoch, paid to its payout
// identity.
func NewEpochPayoutEvent(epoch uint32, proposer []byte, id IdentityID, blocks, credits uint64) Event {
	return Event{EventEpochPayout, []Attr{
		{AttrEpoch, u64(uint64(epoch))}, {AttrProposer, hex.EncodeToString(proposer)}, {AttrIdentity, id.String()},
		{AttrBlocks, u64(blocks)}, {AttrCredits, u64(credits)},
	}}
}

// NewAddressBalancesCompactedEvent: per-block address balance records compacted into
// one, which expires at expiresAtMs.
func NewAddressBalancesCompactedEvent(startHeight, endHeight uint64, entries int, expiresAtMs uint64) Event {
	return Event{EventAddressBalancesCompacted, []Attr{
		{AttrStartHeight, u64(startHeight)}, {AttrEndHeight, u64(endHeight)},
		{AttrEntries, strconv.Itoa(entries)}, {AttrExpiresAtMs, u64(expiresAtMs)},
	}}
}

// NewAddressBalancesCleanupEvent: the block's cleanup of expired address balance
// records.
func NewAddressBalancesCleanupEvent(removed, backlog int, oldestOverdueMs uint64) Event {
	return Event{EventAddressBalancesCleanup, []Attr{
		{AttrRemoved, strconv.Itoa(removed)}, {AttrBacklog, strconv.Itoa(backlog)}, {AttrOldestOverdueMs, u64(oldestOverdueMs)},
	}}
}

// NewDocumentExpiredEvent: expire_documents deleted a document at its expiry.
func NewDocumentExpiredEvent(contract ContractID, typeName string, id DocumentID, owner IdentityID, expiresAt uint64) Event {
	return Event{EventDocumentExpired, []Attr{
		{AttrContract, contract.String()}, {AttrType, typeName}, {AttrID, id.String()},
		{AttrOwner, owner.String()}, {AttrExpiresAt, u64(expiresAt)},
	}}
}

// NewDocumentExpirationOrphanEvent: expire_documents removed an expirations entry
// whose document was gone.
func NewDocumentExpirationOrphanEvent(id DocumentID, expiresAt uint64) Event {
	return Event{EventDocumentExpirationOrphan, []Attr{{AttrDocument, id.String()}, {AttrExpiresAt, u64(expiresAt)}}}
}

// NewDocumentsCleanupEvent: the block's expire_documents, when it removed anything:
// entries removed (orphans among them), the weight used, the entries still due and
// how long the oldest of them is overdue.
func NewDocumentsCleanupEvent(removed, orphans int, weight uint64, backlog int, oldestOverdueMs uint64) Event {
	return Event{EventDocumentsCleanup, []Attr{
		{AttrRemoved, strconv.Itoa(removed)}, {AttrOrphans, strconv.Itoa(orphans)}, {AttrWeight, u64(weight)},
		{AttrBacklog, strconv.Itoa(backlog)}, {AttrOldestOverdueMs, u64(oldestOverdueMs)},
	}}
}

// NewValidatorProposalEvent: proposal id of change made by the operator of validator
// by, expiring at expiresAtMs unless passed.
func NewValidatorProposalEvent(id uint64, c ValidatorChange, by ConsensusAddress, expiresAtMs uint64) Event {
	attrs := []Attr{{AttrProposal, u64(id)}, {AttrKind, c.Kind.String()}, {AttrValidator, c.Target().String()}}
	if c.Kind == ValidatorAdd || c.Kind == ValidatorRotate {
		attrs = append(attrs, Attr{AttrPubKey, hex.EncodeToString(c.PubKey)})
	}
	if c.Kind == ValidatorAdd || c.Kind == ValidatorPower {
		attrs = append(attrs, Attr{AttrPower, u64(c.Power)})
	}
	if c.Kind == ValidatorAdd {
		attrs = append(attrs, Attr{AttrOperator, c.Operator.String()})
	}
	attrs = append(attrs, Attr{AttrProposer, by.String()}, Attr{AttrExpiresAtMs, u64(expiresAtMs)})
	return Event{EventValidatorProposal, attrs}
}

// NewValidatorApprovalEvent: validator approved proposal id; its approvals hold
// approved of the set's total power, and passed says whether that passed it.
func NewValidatorApprovalEvent(id uint64, validator ConsensusAddress, approved, total uint64, passed bool) Event {
	return Event{EventValidatorApproval, []Attr{
		{AttrProposal, u64(id)}, {AttrValidator, validator.String()}, {AttrApproved, u64(approved)},
		{AttrTotal, u64(total)}, {AttrPassed, strconv.FormatBool(passed)},
	}}
}

// NewValidatorProposalExpiredEvent: proposal id expired unpassed.
func NewValidatorProposalExpiredEvent(id uint64) Event {
	return Event{EventValidatorProposalExpired, []Attr{{AttrProposal, u64(id)}}}
}

// NewValidatorProposalDroppedEvent: passed proposal id could not be applied to the set
// as it had become (code: the refusal it would get if proposed now).
func NewValidatorProposalDroppedEvent(id uint64, code Code) Event {
	return Event{EventValidatorProposalDropped, []Attr{{AttrProposal, u64(id)}, {AttrCode, u64(uint64(code))}}}
}

// NewValidatorUpdateEvent: the block changed validator's power in the set to power (0:
// removed), by proposal (kind "proposal", its number) or misbehaviour (kind
// "misbehavior", the evidence's height).
func NewValidatorUpdateEvent(validator ConsensusAddress, pub []byte, power uint64, kind string, ref uint64) Event {
	key := AttrProposal
	if kind == "misbehavior" {
		key = AttrHeight
	}
	return Event{EventValidatorUpdate, []Attr{
		{AttrValidator, validator.String()}, {AttrPubKey, hex.EncodeToString(pub)}, {AttrPower, u64(power)},
		{AttrReason, kind}, {key, u64(ref)},
	}}
}

// NewValidatorMisbehaviorEvent: evidence of kind against validator at height, and
// whether the validator was removed (it was not when it had left the set already, or
// was its last validator).
func NewValidatorMisbehaviorEvent(validator ConsensusAddress, kind MisbehaviorKind, height uint64, removed bool) Event {
	return Event{EventValidatorMisbehavior, []Attr{
		{AttrValidator, validator.String()}, {AttrKind, kind.String()}, {AttrHeight, u64(height)},
		{AttrRemoved, strconv.FormatBool(removed)},
	}}
}

// NewBlockTransactionsEvent: a block holds n transactions (n > 0).
func NewBlockTransactionsEvent(n int) Event {
	return Event{EventBlockTransactions, []Attr{{AttrCount, strconv.Itoa(n)}}}
}
