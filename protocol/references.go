package protocol

import "fmt"

// ReferenceKind says what a reference may point at (refersTo.kind).
type ReferenceKind uint8

const (
	// ReferencePermanentDocument: the target type never loses documents (Document Time To Live: not
	// one whose documents_can_disappear), so the reference, once written, stays good.
	ReferencePermanentDocument ReferenceKind = 1
	// ReferenceDeletableDocument: the target may later disappear; the reference is
	// checked when it is written only.
	ReferenceDeletableDocument ReferenceKind = 2
	// ReferenceListElement: each item of an identifier list names a document of a type
	// that never loses documents.
	ReferenceListElement ReferenceKind = 3
)

var referenceKinds = []string{ReferencePermanentDocument: "permanentDocument", ReferenceDeletableDocument: "deletableDocument", ReferenceListElement: "listElement"}

func (k ReferenceKind) String() string {
	if int(k) < len(referenceKinds) && k != 0 {
		return referenceKinds[k]
	}
	return fmt.Sprintf("ReferenceKind(%d)", uint8(k))
}

// Reference is a property's refersTo: the document type its value names a document of,
// by id or, with Lookup, by the value of one of that type's unique indexes.
type Reference struct {
	// Contract holds the target type; nil: the referring contract itself.
	Contract *ContractID
	Type     string
	Kind     ReferenceKind
	// Lookup names a unique index of the target type with one property, whose value the
	// referring value is; "": the referring value is the target document's id.
	Lookup string
}

// TargetContract is the contract the reference's type lives in, for a reference made
// from contract c.
func (r Reference) TargetContract(c ContractID) ContractID {
	if r.Contract != nil {
		return *r.Contract
	}
	return c
}

// parseReference reads property p's refersTo (on an identifier list, its items') and
// checks what the referring type alone decides: listElement exactly on a list's items,
// a lookup on a string, integer or identifier that is no list item, an id reference on
// an identifier. What the target type decides is CheckReferences'. Each refusal is
// ErrInvalidContractStructure.
func parseReference(typeName string, p *Property, m map[string]any, path string) error {
	list := p.Type == PropertyIdentifierList
	if list {
		m = m["items"].(map[string]any)
		path += "/items"
	}
	raw, ok := m["refersTo"].(map[string]any)
	if !ok {
		return nil
	}
	bad := func(format string, args ...any) error {
		return ErrInvalidContractStructure{Type: typeName, Path: path + "/refersTo", Reason: fmt.Sprintf(format, args...)}
	}
	r := Reference{Type: raw["type"].(string)}
	for k, name := range referenceKinds {
		if name == raw["kind"].(string) && k != 0 {
			r.Kind = ReferenceKind(k)
		}
	}
	if why := ValidName(r.Type); why != "" {
		return bad("type %q %s", r.Type, why)
	}
	if s, ok := raw["contract"].(string); ok {
		id, err := ParseContractID(s)
		if err != nil {
			return bad("%v", err)
		}
		r.Contract = &id
	}
	r.Lookup, _ = raw["lookup"].(string)
	switch {
	case list && r.Kind != ReferenceListElement:
		return bad("the items of an identifier list refer as listElement, not %s", r.Kind)
	case !list && r.Kind == ReferenceListElement:
		return bad("listElement is the reference of an identifier list's items")
	case r.Lookup != "" && list:
		return bad("a list element refers by id: it has no lookup")
	case r.Lookup != "" && p.Type == PropertyBoolean:
		return bad("a boolean cannot look a document up")
	case r.Lookup == "" && !list && p.Type != PropertyIdentifier:
		return bad("a %s refers by lookup only: a reference by id is an identifier", p.Type)
	}
	if r.Lookup != "" {
		if why := ValidName(r.Lookup); why != "" {
			return bad("lookup %q %s", r.Lookup, why)
		}
	}
	p.RefersTo = &r
	return nil
}

// CheckReferences checks every reference of the document types of contract c against
// its target type, as a registration or update does: the target contract and type
// exist and the type is not indexOnly; a lookup names a unique index of the target with
// one property of the referring property's type; and, the ttl keyword reference, "A permanentDocument reference and a
// listElement reference may not point at it, a lookup included
// (ReferencedDocumentTypeDeletableError, 40122); a deletableDocument reference may",
// where it is a type whose documents can disappear. A permanent reference by lookup
// also needs the looked-up value to stay with its document (valueCanChange), or it
// would come to name another. contract returns another contract by id (ok false:
// none); a reference to c itself resolves to c.
func CheckReferences(c Contract, contract func(ContractID) (Contract, bool, error)) error {
	for _, t := range c.DocumentTypes {
		for _, p := range t.Properties {
			r := p.RefersTo
			if r == nil {
				continue
			}
			bad := func(format string, args ...any) error {
				return ErrInvalidReference{Type: t.Name, Property: p.Name, Reason: fmt.Sprintf(format, args...)}
			}
			target := c
			if id := r.TargetContract(c.ID); id != c.ID {
				var ok bool
				var err error
				if target, ok, err = contract(id); err != nil {
					return err
				} else if !ok {
					return bad("contract %s does not exist", id)
				}
			}
			tt, ok := target.DocumentType(r.Type)
			switch {
			case !ok:
				return bad("contract %s has no document type %q", target.ID, r.Type)
			case tt.IndexOnly:
				return bad("document type %q is indexOnly: no document of it is ever stored to be found", r.Type)
			}
			if r.Lookup != "" {
				ix, ok := tt.Index(r.Lookup)
				switch {
				case !ok:
					return bad("document type %q has no index %q to look up", r.Type, r.Lookup)
				case !ix.Unique || len(ix.Properties) != 1 || ix.TimeRange != nil:
					return bad("lookup index %q of %q is not a unique index of one property", r.Lookup, r.Type)
				}
				if lookupType(tt, ix.Properties[0].Name) != p.Type {
					return bad("lookup index %q of %q holds a %s, the property is a %s", r.Lookup, r.Type, lookupType(tt, ix.Properties[0].Name), p.Type)
				}
			}
			if r.Kind != ReferenceDeletableDocument && tt.DocumentsCanDisappear() {
				return ErrReferencedDocumentTypeDeletable{Type: t.Name, Property: p.Name, Contract: target.ID, Target: r.Type, Kind: r.Kind}
			}
			if r.Kind != ReferenceDeletableDocument && r.Lookup != "" {
				ix, _ := tt.Index(r.Lookup)
				if field := ix.Properties[0].Name; valueCanChange(tt, field) {
					return bad("lookup index %q of %q is on %s, which a document's writes can change: a permanent reference by lookup would come to name another document", r.Lookup, r.Type, field)
				}
			}
		}
	}
	return nil
}

// valueCanChange reports whether the value of field (a property or a system field) of a
// stored document of type t can change: a property by a replace (documentsMutable),
// $ownerId by a transfer or a purchase, $updatedAt by any action on the document,
// $transferredAt by a transfer or a purchase, $renewedAt by a renewal (a type with a
// ttl). $id and $createdAt never change.
func valueCanChange(t DocumentType, field string) bool {
	moves := t.Transferable == TransferableAlways || t.TradeMode == TradeModeDirectPurchase
	switch field {
	case "$id", "$createdAt":
		return false
	case "$renewedAt":
		return t.TTLSeconds > 0
	case "$ownerId", "$transferredAt":
		return moves
	case "$updatedAt":
		return moves || t.DocumentsMutable
	}
	return t.DocumentsMutable
}

// lookupType is the type of the values property name (a property or a system field)
// holds in an index of t.
func lookupType(t DocumentType, name string) PropertyType {
	if p, ok := t.Property(name); ok {
		return p.Type
	}
	switch name {
	case "$id", "$ownerId":
		return PropertyIdentifier
	}
	return PropertyInteger // the times
}

// Index returns the type's index called name.
func (t DocumentType) Index(name string) (Index, bool) {
	for _, x := range t.Indices {
		if x.Name == name {
			return x, true
		}
	}
	return Index{}, false
}
