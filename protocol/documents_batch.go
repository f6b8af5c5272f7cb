package protocol

import (
	"fmt"
	"unicode/utf8"
)

// TypeDocumentsBatch: an identity writes documents of one contract.
const TypeDocumentsBatch TransitionType = 8

func init() {
	register(Kind{Type: TypeDocumentsBatch, Name: "documents_batch", New: func() Transition { return &DocumentsBatch{} }})
}

// DocumentsBatch carries one or more document actions on one contract, signed once and
// consuming one nonce. The actions are applied in order, all or none: one refusal
// refuses the batch.
type DocumentsBatch struct {
	Identity IdentityID
	KeyIndex uint8
	Nonce    uint64
	Contract ContractID
	Actions  []DocumentAction
}

// DocumentActionKind names what an action does to its document.
type DocumentActionKind uint8

const (
	ActionCreate      DocumentActionKind = 1
	ActionReplace     DocumentActionKind = 2
	ActionDelete      DocumentActionKind = 3
	ActionTransfer    DocumentActionKind = 4
	ActionPurchase    DocumentActionKind = 5
	ActionUpdatePrice DocumentActionKind = 6
	// ActionModerateDelete: a moderator deletes a document (moderatorAbilities.delete).
	ActionModerateDelete DocumentActionKind = 7
	// ActionRestore: a moderator puts back a document a moderator deleted, from its
	// removal record.
	ActionRestore DocumentActionKind = 8
	// ActionRenew: the owner renews a document of a type with a ttl: its $renewedAt
	// becomes the block time, from which its expiry counts again (protocol version 15).
	ActionRenew DocumentActionKind = 9
)

// DocumentActionKinds are the action kinds, in number order.
func DocumentActionKinds() []DocumentActionKind {
	return []DocumentActionKind{ActionCreate, ActionReplace, ActionDelete, ActionTransfer, ActionPurchase,
		ActionUpdatePrice, ActionModerateDelete, ActionRestore, ActionRenew}
}

func (k DocumentActionKind) String() string {
	switch k {
	case ActionCreate:
		return "create"
	case ActionReplace:
		return "replace"
	case ActionDelete:
		return "delete"
	case ActionTransfer:
		return "transfer"
	case ActionPurchase:
		return "purchase"
	case ActionUpdatePrice:
		return "update_price"
	case ActionModerateDelete:
		return "moderate_delete"
	case ActionRestore:
		return "restore"
	case ActionRenew:
		return "renew"
	}
	return fmt.Sprintf("DocumentActionKind(%d)", uint8(k))
}

// DocumentAction is one action of a batch. Which fields it carries follows its kind
// (docs/TX.md): a create its entropy and data; a replace the document, its next revision
// and data; a delete the document; a transfer the document, its next revision and the
// recipient; a purchase the document, its next revision and the price offered; a price
// update the document, its next revision and the price (0 takes it off sale); a
// moderator's deletion the document and a reason; a restore the document's id and its
// encoding (Document.Encode) as the removal record pins it; a renewal the document and
// its next revision.
type DocumentAction struct {
	Kind DocumentActionKind
	Type string
	// ID names the document; for a create it is derived (NewDocumentID) from Entropy
	// when the transition is decoded.
	ID        DocumentID
	Entropy   [32]byte
	Revision  uint64
	Data      []byte // JSON: the values (ParseDocumentData)
	Recipient IdentityID
	Price     uint64
	Reason    string // a moderator's deletion: why, UTF-8, for the removal record
	Document  []byte // a restore: the document's encoding
}

func (*DocumentsBatch) Type() TransitionType { return TypeDocumentsBatch }
func (t *DocumentsBatch) GetNonce() uint64   { return t.Nonce }
func (t *DocumentsBatch) SetNonce(n uint64)  { t.Nonce = n }
func (t *DocumentsBatch) Signer() Signer {
	return Signer{Kind: SignerIdentity, Identity: t.Identity, KeyIndex: t.KeyIndex}
}

// CreateID returns the id a create action of t makes: NewDocumentID of the batch's
// contract and signer and the action's type and entropy.
func (t *DocumentsBatch) CreateID(a DocumentAction) DocumentID {
	return NewDocumentID(t.Contract, t.Identity, a.Type, a.Entropy)
}

// documentsBatchCreateOverhead is the size of a signed documents batch of one create
// with an empty type name and no data: what MaxTxBytes leaves a create's data is
// MaxTxBytes less it and the type name (docs/CONTRACTS.md, What fits in a transaction).
const documentsBatchCreateOverhead = 176

func (t *DocumentsBatch) encodeBody(e *encoder) {
	e.bytes(t.Identity[:])
	e.u8(t.KeyIndex)
	e.u64(t.Nonce)
	e.bytes(t.Contract[:])
	e.u8(uint8(len(t.Actions)))
	for _, a := range t.Actions {
		e.u8(uint8(a.Kind))
		e.u8(uint8(len(a.Type)))
		e.bytes([]byte(a.Type))
		switch a.Kind {
		case ActionCreate:
			e.bytes(a.Entropy[:])
			e.sized(a.Data)
		case ActionReplace:
			e.bytes(a.ID[:])
			e.u64(a.Revision)
			e.sized(a.Data)
		case ActionDelete:
			e.bytes(a.ID[:])
		case ActionTransfer:
			e.bytes(a.ID[:])
			e.u64(a.Revision)
			e.bytes(a.Recipient[:])
		case ActionPurchase, ActionUpdatePrice:
			e.bytes(a.ID[:])
			e.u64(a.Revision)
			e.u64(a.Price)
		case ActionModerateDelete:
			e.bytes(a.ID[:])
			e.sized([]byte(a.Reason))
		case ActionRestore:
			e.bytes(a.ID[:])
			e.sized(a.Document)
		case ActionRenew:
			e.bytes(a.ID[:])
			e.u64(a.Revision)
		}
	}
}

func (t *DocumentsBatch) decodeBody(d *decoder) {
	copy(t.Identity[:], d.fixed(IdentityIDLen, "identity id"))
	t.KeyIndex = d.u8("key index")
	t.Nonce = d.u64("nonce")
	copy(t.Contract[:], d.fixed(ContractIDLen, "contract id"))
	n := int(d.u8("action count"))
	t.Actions = make([]DocumentAction, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		var a DocumentAction
		at := d.off
		a.Kind = DocumentActionKind(d.u8("action kind"))
		a.Type = string(d.fixed(int(d.u8("document type length")), "document type"))
		switch a.Kind {
		case ActionCreate:
			copy(a.Entropy[:], d.fixed(32, "entropy"))
			a.Data = d.sized("document data")
			a.ID = t.CreateID(a)
		case ActionReplace:
			copy(a.ID[:], d.fixed(DocumentIDLen, "document id"))
			a.Revision = d.u64("revision")
			a.Data = d.sized("document data")
		case ActionDelete:
			copy(a.ID[:], d.fixed(DocumentIDLen, "document id"))
		case ActionTransfer:
			copy(a.ID[:], d.fixed(DocumentIDLen, "document id"))
			a.Revision = d.u64("revision")
			copy(a.Recipient[:], d.fixed(IdentityIDLen, "recipient identity id"))
		case ActionPurchase, ActionUpdatePrice:
			copy(a.ID[:], d.fixed(DocumentIDLen, "document id"))
			a.Revision = d.u64("revision")
			a.Price = d.u64("price")
		case ActionModerateDelete:
			copy(a.ID[:], d.fixed(DocumentIDLen, "document id"))
			a.Reason = string(d.sized("reason"))
		case ActionRestore:
			copy(a.ID[:], d.fixed(DocumentIDLen, "document id"))
			a.Document = d.sized("document")
		case ActionRenew:
			if !d.limits.Renewal {
				if d.err == nil {
					d.err = ErrTxDecode{Offset: at, Reason: fmt.Sprintf("action %d has kind %d (renew), which protocol version %d brings", i, a.Kind, V15)}
				}
				break
			}
			copy(a.ID[:], d.fixed(DocumentIDLen, "document id"))
			a.Revision = d.u64("revision")
		default:
			if d.err == nil {
				d.err = ErrTxDecode{Offset: d.off, Reason: fmt.Sprintf("action %d has unknown kind %d", i, a.Kind)}
			}
		}
		t.Actions = append(t.Actions, a)
	}
}

// validate checks what the batch's bytes decide alone: one to MaxDocumentActions
// actions, valid type names, at most one action per document, revisions past 1, a
// positive purchase price, a transfer to another identity, a moderator's reason of at
// most MaxRemovalReasonBytes of UTF-8. The rules that need the
// contract and the stored documents are PlanDocumentActions'.
func (t *DocumentsBatch) validate(ctx Context) error {
	bad := func(i int, field, reason string) error {
		return ErrInvalidTransition{Field: fmt.Sprintf("actions[%d].%s", i, field), Reason: reason}
	}
	if len(t.Actions) == 0 || len(t.Actions) > ctx.Limits.MaxDocumentActions {
		return ErrInvalidTransition{Field: "actions", Reason: fmt.Sprintf("%d actions: a batch carries 1 to %d", len(t.Actions), ctx.Limits.MaxDocumentActions)}
	}
	seen := make(map[DocumentID]int, len(t.Actions))
	for i, a := range t.Actions {
		if reason := ValidName(a.Type); reason != "" {
			return bad(i, "type", reason)
		}
		if j, dup := seen[a.ID]; dup {
			return bad(i, "id", fmt.Sprintf("document %s is the subject of action %d already", a.ID, j))
		}
		seen[a.ID] = i
		if (a.Kind == ActionReplace || a.Kind == ActionTransfer || a.Kind == ActionPurchase || a.Kind == ActionUpdatePrice || a.Kind == ActionRenew) && a.Revision < 2 {
			return bad(i, "revision", "an action on a stored document carries its next revision, at least 2")
		}
		switch a.Kind {
		case ActionTransfer:
			if a.Recipient == t.Identity {
				return bad(i, "recipient", "a document cannot be transferred to its owner")
			}
		case ActionPurchase:
			if a.Price == 0 {
				return bad(i, "price", "a purchase offers a positive price")
			}
		case ActionModerateDelete:
			if len(a.Reason) > ctx.Limits.MaxRemovalReasonBytes || !utf8.ValidString(a.Reason) {
				return bad(i, "reason", fmt.Sprintf("a reason is at most %d bytes of UTF-8", ctx.Limits.MaxRemovalReasonBytes))
			}
		}
	}
	return nil
}
