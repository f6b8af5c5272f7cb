package protocol

// ActionPlan is what one action of a batch does, as PlanDocumentActions decided it:
// the document before (nil for a create) and after (nil for a delete).
type ActionPlan struct {
	Action DocumentAction
	Type   DocumentType
	Before *Document
	After  *Document
}

// PlanDocumentActions is the batch's validation against its contract and the documents
// its actions name, at the block time of ctx: every rule that needs them but no other
// state (the unique indexes, balances and recipients are checked when the plan is
// applied). stored[i] is the stored document action i names, read once by the caller
// (nil: none). It returns one plan per action, or the first refusal.
//
// The rules, in the order they are checked for each action: the type exists and its
// documents can be written; a create names no stored document and respects
// creationRestrictionMode; any other action names a stored document, signed by its
// owner (a purchase by anyone else), allowed by the type's flags, carrying the stored
// revision plus one; a create's or replace's data is valid for the type; a purchase
// offers the document's price.
func PlanDocumentActions(ctx Context, c Contract, b *DocumentsBatch, stored []*Document) ([]ActionPlan, error) {
	plans := make([]ActionPlan, len(b.Actions))
	for i, a := range b.Actions {
		t, ok := c.DocumentType(a.Type)
		if !ok {
			return nil, ErrDocumentTypeNotFound{Contract: c.ID, Type: a.Type}
		}
		if err := writable(t); err != nil {
			return nil, err
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
	}
	return &after, nil
}

// ValidateDocumentNotExpired is validate_document_not_expired, the one rule of expiry
// (seed 000): "a document of a type with a ttl has expired when block time is at or past
// its $createdAt plus the ttl", the same boundary the cleanup deletes at. The batch
// calls it for every action on a stored document but an owner's delete.
func ValidateDocumentNotExpired(ctx Context, c ContractID, t DocumentType, d Document) error {
	if at, ok := t.ExpiresAtMs(d); ok && ctx.BlockTimeMs >= at {
		return ErrDocumentExpired{Contract: c, Type: t.Name, ID: d.ID, ExpiredAtMs: at, BlockTimeMs: ctx.BlockTimeMs}
	}
	return nil
}
