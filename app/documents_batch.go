package app

import (
	"slices"

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
	records := make([]drive.StoredRemoval, len(t.Actions))
	removals := make([]*protocol.RemovalRecord, len(t.Actions))
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
		} else if a.Kind != protocol.ActionCreate && a.Kind != protocol.ActionRestore {
			e.unbounded = true // refused now; a later state holding it prices the action by its size and history
		}
		if a.Kind == protocol.ActionRestore {
			r, found, err := drive.GetRemoval(e.cache, c.ID, a.Type, a.ID)
			if err != nil {
				return err
			}
			if found {
				records[i], removals[i] = r, &records[i].RemovalRecord
			} else {
				e.unbounded = true // refused now; a later state with the record restores
			}
		}
	}
	plans, err := protocol.PlanDocumentActions(e.r.ctx, c, t, before, removals)
	if err != nil {
		return err
	}
	if err := e.drainWindows(c, plans); err != nil {
		return err
	}
	s := &drive.Storage{Payer: t.Identity, Epoch: e.r.epoch(), PerByte: e.r.fees.StoragePerByte, AtMs: e.r.ctx.BlockTimeMs}
	for i, p := range plans {
		dt := drive.DocumentType{Contract: c.ID, DocumentType: p.Type}
		if p.After != nil {
			if err := e.checkReferences(dt, *p.After, p.Before); err != nil {
				return err
			}
		}
		switch p.Action.Kind {
		case protocol.ActionCreate:
			err = drive.InsertDocument(e.cache, s, dt, *p.After)
		case protocol.ActionDelete:
			err = drive.RemoveDocument(e.cache, s, dt, stored[i])
		case protocol.ActionModerateDelete:
			err = e.moderateDelete(s, dt, stored[i], p.Removal)
		case protocol.ActionRestore:
			if err = drive.InsertDocument(e.cache, s, dt, *p.After); err == nil {
				err = drive.DeleteRemoval(e.cache, s, c.ID, records[i])
			}
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
		e.events = append(e.events, documentEvent(c.ID, t.Identity, p))
	}
	e.storage(s.Added)
	e.removed += s.Removed
	e.refunds = append(e.refunds, s.Refunds...)
	e.lifetime = append(e.lifetime, s.Lifetime...)
	e.margin += e.r.fees.ProcessingFee(s.Margin)
	e.ephemeral += s.Ephemeral
	margin, err := e.r.fees.EphemeralFee(s.EphemeralMargin)
	if err != nil {
		return protocol.ErrCreditOverflow{Account: "the ephemeral bytes fee", Amount: s.EphemeralMargin}
	}
	e.margin += margin
	storedMargin, err := e.r.fees.PerpetualStorageFee(s.StoredMargin)
	if err != nil {
		return protocol.ErrCreditOverflow{Account: "the storage fee", Amount: s.StoredMargin}
	}
	e.margin += storedMargin
	return nil
}

// checkReferences checks the references document d of type t sets (drive.
// CheckReferences); before is the document it replaces, if any. A refusal prices the
// transition on this state only: on a later one the target may be there.
func (e *execution) checkReferences(t drive.DocumentType, d protocol.Document, before *protocol.Document) error {
	err := drive.CheckReferences(e.cache, t, d, before, func(id protocol.ContractID) (protocol.Contract, bool, error) {
		return drive.GetContract(e.cache, id, e.r.ctx.Version)
	})
	if code, _ := protocol.CodeOf(err); code == protocol.CodeReferencedDocumentNotFound {
		e.unbounded = true
	}
	return err
}

// moderateDelete removes a document by a moderator's deletion through the one deletion
// path: its storage refunds go to their payers only when the type's
// moderatorAbilities.deleteRefundsOwner says so (otherwise s forfeits them), and the
// removal record, when the type keeps one, is stored paid by the moderator.
func (e *execution) moderateDelete(s *drive.Storage, t drive.DocumentType, d drive.StoredDocument, record *protocol.RemovalRecord) error {
	s.Forfeit = !t.ModeratorAbilities.DeleteRefundsOwner
	err := drive.RemoveDocument(e.cache, s, t, d)
	s.Forfeit = false
	if err != nil || record == nil {
		return err
	}
	return drive.PutRemoval(e.cache, s, t.Contract, *record)
}

// drainWindows drains, before any of the batch's writes, what its actions earn in the
// expired windows of ttl'd time-range indexes (Time-Range Index TTL: "In a document batch, all
// cleanup runs before any document mutations are generated ... Each document earns a
// budget"): each action on a type with ttl'd grids earns each of them
// drive.DrainBudget, and each grid is drained under the sum, in the order the actions
// first name it. Nobody is billed for it: its reads and deletions are off the meter.
func (e *execution) drainWindows(c protocol.Contract, plans []protocol.ActionPlan) error {
	type grid struct {
		t      drive.DocumentType
		r      protocol.TimeRange
		budget int
	}
	var grids []grid
	for _, p := range plans {
		for _, r := range drive.TTLGrids(p.Type) {
			budget := drive.DrainBudget(p.Type, r.Grid(), e.r.ctx.Limits)
			i := slices.IndexFunc(grids, func(g grid) bool { return g.t.Name == p.Type.Name && g.r.Grid() == r.Grid() })
			if i < 0 {
				grids = append(grids, grid{t: drive.DocumentType{Contract: c.ID, DocumentType: p.Type}, r: r})
				i = len(grids) - 1
			}
			grids[i].budget += budget
		}
	}
	return e.cache.Unmetered(func() error {
		for _, g := range grids {
			if _, err := drive.DrainWindows(e.cache, g.t, g.r, e.r.ctx.BlockTimeMs, g.budget); err != nil {
				return err
			}
		}
		return nil
	})
}

// documentEvent names what an action did: document_create, document_replace, ...
func documentEvent(c protocol.ContractID, signer protocol.IdentityID, p protocol.ActionPlan) protocol.Event {
	d := p.After
	if d == nil {
		d = p.Before
	}
	ev := protocol.DocumentActionEvent{Kind: p.Action.Kind, Contract: c, Type: p.Type.Name, ID: d.ID, Owner: d.Owner, Revision: d.Revision}
	if k := p.Action.Kind; k == protocol.ActionModerateDelete || k == protocol.ActionRestore {
		ev.Moderator = &signer
		ev.Reason, ev.Record = p.Action.Reason, p.Removal != nil
	}
	if r := p.Removal; r != nil {
		ev.DocumentHash = &r.DocumentHash
	}
	return ev.Event()
}
