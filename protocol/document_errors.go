package protocol

import "fmt"

// The refusals of documents batch actions. Each carries the document, type or property
// it is about; the code is consensus, the message is for the log. All of them are found
// after the signer is authenticated, so all are paid, except ErrDocumentDecode, which
// only a corrupt store can give.

// ErrInvalidDocument: a document's values are refused by its type (the JSON Schema
// library's verdict on the data, or a limit of the version).
type ErrInvalidDocument struct {
	Type    string
	Path    string // JSON pointer of the offending value in the data
	Keyword string // the schema keyword that failed, when known
	Reason  string
}

func (e ErrInvalidDocument) Code() Code { return CodeInvalidDocument }
func (e ErrInvalidDocument) Error() string {
	return fmt.Sprintf("document of type %q refused at %q (%s): %s", e.Type, e.Path, e.Keyword, e.Reason)
}

// ErrDocumentDecode: bytes are not a document encoding of the type.
type ErrDocumentDecode struct {
	Offset int
	Reason string
}

func (e ErrDocumentDecode) Code() Code { return CodeDocumentDecode }
func (e ErrDocumentDecode) Error() string {
	return fmt.Sprintf("document encoding at byte %d: %s", e.Offset, e.Reason)
}

// ErrDocumentTypeNotFound: the contract has no document type of that name.
type ErrDocumentTypeNotFound struct {
	Contract ContractID
	Type     string
}

func (e ErrDocumentTypeNotFound) Code() Code { return CodeDocumentTypeNotFound }
func (e ErrDocumentTypeNotFound) Error() string {
	return fmt.Sprintf("contract %s has no document type %q", e.Contract, e.Type)
}

// ErrDocumentAlreadyPresent: a create's id names a stored document.
type ErrDocumentAlreadyPresent struct{ ID DocumentID }

func (e ErrDocumentAlreadyPresent) Code() Code { return CodeDocumentAlreadyPresent }
func (e ErrDocumentAlreadyPresent) Error() string {
	return fmt.Sprintf("document %s is already present", e.ID)
}

// ErrDocumentNotFound: an action names a document that is not stored.
type ErrDocumentNotFound struct{ ID DocumentID }

func (e ErrDocumentNotFound) Code() Code    { return CodeDocumentNotFound }
func (e ErrDocumentNotFound) Error() string { return fmt.Sprintf("document %s not found", e.ID) }

// ErrDocumentOwnerIDMismatch: an action only the owner may take is signed by another
// identity.
type ErrDocumentOwnerIDMismatch struct {
	ID            DocumentID
	Owner, Signer IdentityID
}

func (e ErrDocumentOwnerIDMismatch) Code() Code { return CodeDocumentOwnerIDMismatch }
func (e ErrDocumentOwnerIDMismatch) Error() string {
	return fmt.Sprintf("document %s is owned by %s, not %s", e.ID, e.Owner, e.Signer)
}

// ErrDuplicateUniqueIndex: the document's values of a unique index are another
// document's.
type ErrDuplicateUniqueIndex struct {
	ID, Other DocumentID
	Index     string
}

func (e ErrDuplicateUniqueIndex) Code() Code { return CodeDuplicateUniqueIndex }
func (e ErrDuplicateUniqueIndex) Error() string {
	return fmt.Sprintf("document %s: unique index %q already holds its values for document %s", e.ID, e.Index, e.Other)
}

// ErrInvalidDocumentRevision: an action's revision is not the stored one plus one.
type ErrInvalidDocumentRevision struct {
	ID            DocumentID
	Stored, Given uint64
}

func (e ErrInvalidDocumentRevision) Code() Code { return CodeInvalidDocumentRevision }
func (e ErrInvalidDocumentRevision) Error() string {
	return fmt.Sprintf("document %s is at revision %d: an action on it must carry %d, not %d", e.ID, e.Stored, e.Stored+1, e.Given)
}

// ErrDocumentNotForSale: a purchase of a document without a price.
type ErrDocumentNotForSale struct{ ID DocumentID }

func (e ErrDocumentNotForSale) Code() Code { return CodeDocumentNotForSale }
func (e ErrDocumentNotForSale) Error() string {
	return fmt.Sprintf("document %s is not for sale", e.ID)
}

// ErrDocumentIncorrectPurchasePrice: a purchase offers another price than the
// document's.
type ErrDocumentIncorrectPurchasePrice struct {
	ID             DocumentID
	Price, Offered uint64
}

func (e ErrDocumentIncorrectPurchasePrice) Code() Code { return CodeDocumentIncorrectPurchasePrice }
func (e ErrDocumentIncorrectPurchasePrice) Error() string {
	return fmt.Sprintf("document %s costs %d, the purchase offers %d", e.ID, e.Price, e.Offered)
}

// ErrDocumentActionNotAllowed: the document type's flags forbid the action
// (documentsMutable, canBeDeleted, transferable, tradeMode, creationRestrictionMode), or
// the action makes no sense for its document (buying one's own, giving it to oneself).
type ErrDocumentActionNotAllowed struct {
	Type   string
	ID     DocumentID
	Action DocumentActionKind
	Rule   string // the flag or rule that forbids it
}

func (e ErrDocumentActionNotAllowed) Code() Code { return CodeDocumentActionNotAllowed }
func (e ErrDocumentActionNotAllowed) Error() string {
	return fmt.Sprintf("%s of document %s of type %q is not allowed: %s", e.Action, e.ID, e.Type, e.Rule)
}

// ErrDocumentTypeUnsupported: documents of the type use a feature this version
// parses and stores in the contract but does not carry out yet (indexOnly, a contested
// index), so they cannot be written rather than be written half right.
type ErrDocumentTypeUnsupported struct {
	Type    string
	Feature string
}

func (e ErrDocumentTypeUnsupported) Code() Code { return CodeDocumentTypeUnsupported }
func (e ErrDocumentTypeUnsupported) Error() string {
	return fmt.Sprintf("documents of type %q cannot be written: %s is not supported by this protocol version", e.Type, e.Feature)
}

// ErrDocumentExpired: DocumentExpiredError (40140), a replace, transfer, purchase or
// price update of a document at or past its expiry (validate_document_not_expired).
type ErrDocumentExpired struct {
	Contract    ContractID
	Type        string
	ID          DocumentID
	ExpiredAtMs uint64
	BlockTimeMs uint64
	// MarginMs is the context's (Context.MarginMs): 0 in a block.
	MarginMs uint64
}

func (e ErrDocumentExpired) Code() Code { return CodeDocumentExpired }
func (e ErrDocumentExpired) Error() string {
	if e.MarginMs > 0 {
		return fmt.Sprintf("document %s of type %q in contract %s expires at %d ms, before the block that includes the transaction can be counted on: the next block comes at %d ms at the earliest, and may come %d ms later%s", e.ID, e.Type, e.Contract, e.ExpiredAtMs, e.BlockTimeMs, e.MarginMs, checkOnly)
	}
	return fmt.Sprintf("document %s of type %q in contract %s expired at %d ms; the block time is %d ms", e.ID, e.Type, e.Contract, e.ExpiredAtMs, e.BlockTimeMs)
}

// checkOnly ends the message of a refusal that only CheckTx's margin (Context.MarginMs)
// decided.
const checkOnly = " (refused by the node's mempool, which judges deadlines that far ahead: nothing was charged)"

// ErrReferencedDocumentNotFound: a document written names, through a reference, a
// document that is not stored (by id, or by the value of the lookup index).
type ErrReferencedDocumentNotFound struct {
	ID       DocumentID // the document written
	Property string
	Contract ContractID // the target's
	Type     string
	Value    string // the referring value, hex
}

func (e ErrReferencedDocumentNotFound) Code() Code { return CodeReferencedDocumentNotFound }
func (e ErrReferencedDocumentNotFound) Error() string {
	return fmt.Sprintf("document %s: %q refers to %s, which no document of type %q of contract %s is", e.ID, e.Property, e.Value, e.Type, e.Contract)
}

// ErrNotAModerator: a moderator's deletion or restore is signed by an identity that is
// neither the contract's owner nor one of its moderators.
type ErrNotAModerator struct {
	Contract ContractID
	Signer   IdentityID
}

func (e ErrNotAModerator) Code() Code { return CodeNotAModerator }
func (e ErrNotAModerator) Error() string {
	return fmt.Sprintf("%s is no moderator of contract %s", e.Signer, e.Contract)
}

// ErrModerationWindowPassed: a moderator's deletion comes after the type's
// moderatorAbilities.deleteWithin seconds from the document's last change.
type ErrModerationWindowPassed struct {
	ID            DocumentID
	UpdatedAtMs   uint64
	WithinSeconds uint32
	BlockTimeMs   uint64
	// MarginMs is the context's (Context.MarginMs): 0 in a block.
	MarginMs uint64
}

func (e ErrModerationWindowPassed) Code() Code { return CodeModerationWindowPassed }
func (e ErrModerationWindowPassed) Error() string {
	if e.MarginMs > 0 {
		return fmt.Sprintf("document %s last changed at %d ms: moderators delete it within %d s, which ends before the block that includes the transaction can be counted on (the next block comes at %d ms at the earliest, and may come %d ms later)%s", e.ID, e.UpdatedAtMs, e.WithinSeconds, e.BlockTimeMs, e.MarginMs, checkOnly)
	}
	return fmt.Sprintf("document %s last changed at %d ms: moderators delete it within %d s, the block time is %d ms", e.ID, e.UpdatedAtMs, e.WithinSeconds, e.BlockTimeMs)
}

// ErrRemovalRecordNotFound: a restore names a document no removal record keeps.
type ErrRemovalRecordNotFound struct {
	Type string
	ID   DocumentID
}

func (e ErrRemovalRecordNotFound) Code() Code { return CodeRemovalRecordNotFound }
func (e ErrRemovalRecordNotFound) Error() string {
	return fmt.Sprintf("no removal record of document %s of type %q", e.ID, e.Type)
}

// ErrRestoreWindowPassed: a restore comes after Limits.RestoreWindowMs from the
// moderator's deletion.
type ErrRestoreWindowPassed struct {
	ID          DocumentID
	RemovedAtMs uint64
	BlockTimeMs uint64
	// MarginMs is the context's (Context.MarginMs): 0 in a block.
	MarginMs uint64
}

func (e ErrRestoreWindowPassed) Code() Code { return CodeRestoreWindowPassed }
func (e ErrRestoreWindowPassed) Error() string {
	if e.MarginMs > 0 {
		return fmt.Sprintf("document %s was removed at %d ms: its restore window ends before the block that includes the transaction can be counted on (the next block comes at %d ms at the earliest, and may come %d ms later)%s", e.ID, e.RemovedAtMs, e.BlockTimeMs, e.MarginMs, checkOnly)
	}
	return fmt.Sprintf("document %s was removed at %d ms: the block time %d ms is past its restore window", e.ID, e.RemovedAtMs, e.BlockTimeMs)
}

// ErrRestoredDocumentMismatch: the document a restore carries is not the one its
// removal record's hash pins (or is no document of the type, or has another id).
type ErrRestoredDocumentMismatch struct {
	ID     DocumentID
	Reason string
}

func (e ErrRestoredDocumentMismatch) Code() Code { return CodeRestoredDocumentMismatch }
func (e ErrRestoredDocumentMismatch) Error() string {
	return fmt.Sprintf("the restore of document %s: %s", e.ID, e.Reason)
}
