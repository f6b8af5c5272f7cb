package protocol

// ActionPlan is what one action of a batch does, as PlanDocumentActions decided it:
// the document before (nil for a create or a restore) and after (nil for a delete).
type ActionPlan struct {
	Action DocumentAction
	Type   DocumentType
	Before *Document
	After  *Document
	// Removal is the removal record a restore restores from, or, for a moderator's
	// deletion of a type whose moderatorAbilities.deleteKeepsRecord holds, the record
	// it leaves; nil otherwise.
	Removal *RemovalRecord
}

// PlanDocumentActions is the batch's validation against its contract and the documents
// its actions name, at the block time of ctx: every rule that needs them but no other
// state (the unique indexes, balances and recipients are checked when the plan is
// applied). stored[i] is the stored document action i names, read once by the caller
// (nil: none); removals[i], for a restore, the removal record of that document (nil:
// none). It returns one plan per action, or the first refusal.
//
// The rules, in the order they are checked for each action: the type exists and its
// documents can be written; a create names no stored document and respects
// creationRestrictionMode; a moderator's deletion or restore is planModeration's; any
// other action names a stored document, signed by its owner (a purchase by anyone
// else), allowed by the type's flags (a renewal: by its ttl), carrying the stored
// revision plus one; a create's or replace's data is valid for the type; a purchase
// offers the document's price.
func PlanDocumentActions(ctx Context, c Contract, b *DocumentsBatch, stored []*Document, removals []*RemovalRecord) ([]ActionPlan, error) {
	plans := make([]ActionPlan, len(b.Actions))
	for i, a := range b.Actions {
		t, ok := c.DocumentType(a.Type)
		if !ok {
			return nil, ErrDocumentTypeNotFound{Contract: c.ID, Type: a.Type}
		}
		if err := writable(t); err != nil {
			return nil, err
		}
		if a.Kind == ActionModerateDelete || a.Kind == ActionRestore {
			p, err := planModeration(ctx, c, b.Identity, t, a, stored[i], removals[i])
			if err != nil {
				return nil, err
			}
			plans[i] = p
			continue
		}
		after, err := planAction(ctx, c, b.Identity, t, a, stored[i])
		if err != nil {
			return nil, err
		}
		plans[i] = ActionPlan{Action: a, Type: t, Before: stored[i], After: after}
	}
	return plans, nil
}

// writable refuses a type whose documents need a feature this version does not carry
// out.
func writable(t DocumentType) error {
	if t.IndexOnly {
		return ErrDocumentTypeUnsupported{Type: t.Name, Feature: "indexOnly"}
	}
	for _, ix := range t.Indices {
		if ix.Contested != nil {
			return ErrDocumentTypeUnsupported{Type: t.Name, Feature: "the contested index " + ix.Name}
		}
	}
	return nil
}

func planAction(ctx Context, c Contract, signer IdentityID, t DocumentType, a DocumentAction, before *Document) (*Document, error) {
	now := ctx.BlockTimeMs
	notAllowed := func(rule string) error {
		return ErrDocumentActionNotAllowed{Type: t.Name, ID: a.ID, Action: a.Kind, Rule: rule}
	}
	if a.Kind == ActionCreate {
		if before != nil {
			return nil, ErrDocumentAlreadyPresent{ID: a.ID}
		}
		switch t.CreationRestrictionMode {
		case CreationOwnerOnly:
			if signer != c.Owner {
				return nil, notAllowed("creationRestrictionMode 1: only the contract owner creates documents")
			}
		case CreationNotAllowed:
			return nil, notAllowed("creationRestrictionMode 2: no one creates documents")
		}
		values, err := ParseDocumentData(t, a.Data, ctx.Limits)
		if err != nil {
			return nil, err
		}
		return &Document{ID: a.ID, Owner: signer, Revision: 1, CreatedAt: now, UpdatedAt: now, Values: values}, nil
	}
	if before == nil {
		return nil, ErrDocumentNotFound{ID: a.ID}
	}
	if a.Kind != ActionDelete {
		if err := ValidateDocumentNotExpired(ctx, c.ID, t, *before); err != nil {
			return nil, err
		}
	}
	if a.Kind == ActionPurchase {
		if t.TradeMode != TradeModeDirectPurchase {
			return nil, notAllowed("tradeMode 0: documents are not sold")
		}
		if before.Owner == signer {
			return nil, notAllowed("the buyer owns the document")
		}
	} else if before.Owner != signer {
		return nil, ErrDocumentOwnerIDMismatch{ID: a.ID, Owner: before.Owner, Signer: signer}
	}
	switch a.Kind {
	case ActionDelete:
		if !t.CanBeDeleted {
			return nil, notAllowed("canBeDeleted is false")
		}
		return nil, nil
	case ActionReplace:
		if !t.DocumentsMutable {
			return nil, notAllowed("documentsMutable is false")
		}
	case ActionTransfer:
		if t.Transferable != TransferableAlways {
			return nil, notAllowed("transferable 0: documents stay with their owner")
		}
	case ActionUpdatePrice:
		if t.TradeMode != TradeModeDirectPurchase {
			return nil, notAllowed("tradeMode 0: documents are not sold")
		}
	case ActionRenew:
		if t.TTLSeconds == 0 {
			return nil, notAllowed("renewal: the type has no ttl")
		}
	}
	if a.Revision != before.Revision+1 {
		return nil, ErrInvalidDocumentRevision{ID: a.ID, Stored: before.Revision, Given: a.Revision}
	}
	after := *before
	after.Revision = a.Revision
	after.UpdatedAt = now
	switch a.Kind {
	case ActionReplace:
		values, err := ParseDocumentData(t, a.Data, ctx.Limits)
		if err != nil {
			return nil, err
		}
		after.Values = values
		if t.RenewOnReplace {
			after.RenewedAt = now
		}
	case ActionTransfer:
		after.Owner, after.TransferredAt, after.Price = a.Recipient, now, 0
	case ActionPurchase:
		if before.Price == 0 {
			return nil, ErrDocumentNotForSale{ID: a.ID}
		}
		if a.Price != before.Price {
			return nil, ErrDocumentIncorrectPurchasePrice{ID: a.ID, Price: before.Price, Offered: a.Price}
		}
		after.Owner, after.TransferredAt, after.Price = signer, now, 0
	case ActionUpdatePrice:
		after.Price = a.Price
	case ActionRenew:
		after.RenewedAt = now
	}
	return &after, nil
}

// planModeration plans a moderator's deletion or restore, signed by the contract's
// owner or one of its moderators (Contract.Moderator).
//
// A deletion names a stored document of a type whose moderatorAbilities.delete holds
// (canBeDeleted is not looked at), within deleteWithin seconds of its $updatedAt when
// the type bounds it; expiry does not stop it, as it does not stop the owner's. With
// deleteKeepsRecord it leaves a removal record: the owner, the moderator, the reason,
// the block time and the hash of the document's encoding.
//
// A restore names a document that is not stored and that a removal record keeps; the
// document it carries is the one the record's hash pins, of the type and id; Document Time To Live:
// it "is refused once that document has expired" (validate_document_not_expired on
// the pinned document's $createdAt, 40140), and a week after the deletion the record no
// longer restores it.
func planModeration(ctx Context, c Contract, signer IdentityID, t DocumentType, a DocumentAction, before *Document, removal *RemovalRecord) (ActionPlan, error) {
	now := ctx.BlockTimeMs
	plan := ActionPlan{Action: a, Type: t, Before: before}
	if !c.Moderator(signer) {
		return plan, ErrNotAModerator{Contract: c.ID, Signer: signer}
	}
	if !t.ModeratorsDelete() {
		return plan, ErrDocumentActionNotAllowed{Type: t.Name, ID: a.ID, Action: a.Kind, Rule: "moderatorAbilities.delete is not set"}
	}
	if a.Kind == ActionModerateDelete {
		if before == nil {
			return plan, ErrDocumentNotFound{ID: a.ID}
		}
		if w, end := t.ModeratorAbilities.DeleteWithinSeconds, ctx.Horizon(); w > 0 && end-min(end, before.UpdatedAt) > uint64(w)*1000 {
			return plan, ErrModerationWindowPassed{ID: a.ID, UpdatedAtMs: before.UpdatedAt, WithinSeconds: w, BlockTimeMs: now, MarginMs: ctx.MarginMs}
		}
		if t.ModeratorAbilities.DeleteKeepsRecord {
			plan.Removal = &RemovalRecord{Type: t.Name, ID: a.ID, Owner: before.Owner, Moderator: signer, Reason: a.Reason,
				AtMs: now, DocumentHash: DocumentHash(before.Encode(t))}
		}
		return plan, nil
	}
	if before != nil {
		return plan, ErrDocumentAlreadyPresent{ID: a.ID}
	}
	if removal == nil {
		return plan, ErrRemovalRecordNotFound{Type: t.Name, ID: a.ID}
	}
	d, err := DecodeDocument(a.Document, t)
	switch {
	case err != nil:
		return plan, ErrRestoredDocumentMismatch{ID: a.ID, Reason: "not a document of the type: " + err.Error()}
	case d.ID != a.ID:
		return plan, ErrRestoredDocumentMismatch{ID: a.ID, Reason: "the document carried is " + d.ID.String()}
	case DocumentHash(a.Document) != removal.DocumentHash:
		return plan, ErrRestoredDocumentMismatch{ID: a.ID, Reason: "its hash is not the removal record's"}
	}
	if err := ValidateDocumentNotExpired(ctx, c.ID, t, d); err != nil {
		return plan, err
	}
	if end := ctx.Horizon(); end-min(end, removal.AtMs) >= ctx.Limits.RestoreWindowMs {
		return plan, ErrRestoreWindowPassed{ID: a.ID, RemovedAtMs: removal.AtMs, BlockTimeMs: now, MarginMs: ctx.MarginMs}
	}
	plan.After, plan.Removal = &d, removal
	return plan, nil
}

// ValidateDocumentNotExpired is validate_document_not_expired, the one rule of expiry
// (Document Time To Live): "a document of a type with a ttl has expired when block time is at or past
// its $createdAt plus the ttl", the same boundary the cleanup deletes at. The batch
// calls it for every action on a stored document but a delete (its owner's or a
// moderator's), and a restore calls it on the document it restores.
func ValidateDocumentNotExpired(ctx Context, c ContractID, t DocumentType, d Document) error {
	if at, ok := t.ExpiresAtMs(d); ok && ctx.Horizon() >= at {
		return ErrDocumentExpired{Contract: c, Type: t.Name, ID: d.ID, ExpiredAtMs: at, BlockTimeMs: ctx.BlockTimeMs, MarginMs: ctx.MarginMs}
	}
	return nil
}
