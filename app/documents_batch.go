package app

import (
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

func init() { handle(protocol.TypeDocumentsBatch, applyDocumentsBatch) }

// applyDocumentsBatch reads the contract and, once, the document each action names;
// protocol.PlanDocumentActions judges the batch against them at the block time; then
// each action is applied in order through drive's document writes (RemoveDocument for a
// delete). The bytes added pay the perpetual storage fee; removed and shrunk items
// refund their payers (the fee result's Refunds).
func applyDocumentsBatch(e *execution, t *protocol.DocumentsBatch) error {
	c, ok, err := drive.GetContract(e.cache, t.Contract, e.r.ctx.Version)
	if err != nil {
		return err
	}
	if !ok {
		e.unbounded = true
		return protocol.ErrDataContractNotFound{ID: t.Contract}
	}
	stored := make([]drive.StoredDocument, len(t.Actions))
	before := make([]*protocol.Document, len(t.Actions))
	for i, a := range t.Actions {
		dt, ok := c.DocumentType(a.Type)
		if !ok {
			return protocol.ErrDocumentTypeNotFound{Contract: c.ID, Type: a.Type}
		}
		sd, found, err := drive.GetDocument(e.cache, drive.DocumentType{Contract: c.ID, DocumentType: dt}, a.ID)
		if err != nil {
			return err
		}
		if found {
			stored[i], before[i] = sd, &stored[i].Document
		} else if a.Kind != protocol.ActionCreate {
			e.unbounded = true // refused now; a later state holding it prices the action by its size and history
		}
	}
	plans, err := protocol.PlanDocumentActions(e.r.ctx, c, t, before)
	if err != nil {
		return err
	}
	s := &drive.Storage{Payer: t.Identity, Epoch: e.r.epoch(), PerByte: e.r.fees.StoragePerByte}
	for i, p := range plans {
		dt := drive.DocumentType{Contract: c.ID, DocumentType: p.Type}
		switch p.Action.Kind {
		case protocol.ActionCreate:
			err = drive.InsertDocument(e.cache, s, dt, *p.After)
		case protocol.ActionDelete:
			err = drive.RemoveDocument(e.cache, s, dt, stored[i])
		case protocol.ActionPurchase:
			if err = e.spend(p.Action.Price); err == nil {
				if err = e.creditIdentity(p.Before.Owner, p.Action.Price); err == nil {
					err = drive.ReplaceDocument(e.cache, s, dt, stored[i], *p.After)
				}
			}
		case protocol.ActionTransfer:
			var exists bool
			if exists, err = drive.IdentityExists(e.cache, p.Action.Recipient); err == nil && !exists {
				e.unbounded = true // refused now; once the recipient exists the whole batch runs
				err = protocol.ErrRecipientIdentityNotFound{ID: p.Action.Recipient}
			}
			if err == nil {
				err = drive.ReplaceDocument(e.cache, s, dt, stored[i], *p.After)
			}
		default:
			err = drive.ReplaceDocument(e.cache, s, dt, stored[i], *p.After)
		}
		if err != nil {
			return err
		}
		e.events = append(e.events, documentEvent(c.ID, p))
	}
	e.storage(s.Added)
	e.removed += s.Removed
	e.refunds = append(e.refunds, s.Refunds...)
	e.lifetime = append(e.lifetime, s.Lifetime...)
	e.margin += e.r.fees.ProcessingFee(s.Margin)
	return nil
}

// documentEvent names what an action did: document_create, document_replace, ...
func documentEvent(c protocol.ContractID, p protocol.ActionPlan) Event {
	d := p.After
	if d == nil {
		d = p.Before
	}
	return Event{Type: "document_" + p.Action.Kind.String(), Attrs: []Attr{
		{"contract", c.String()}, {"type", p.Type.Name}, {"id", d.ID.String()},
		{"owner", d.Owner.String()}, {"revision", u64(d.Revision)},
	}}
}
