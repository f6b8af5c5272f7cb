package protocol

import "fmt"

// DocumentType is one document type of a contract, as parsed from its JSON schema
// (docs/CONTRACTS.md). A DocumentType that ParseDocumentTypes returned satisfies every
// rule of its protocol version; build one by parsing, never by hand.
type DocumentType struct {
	// Name is unique within its contract and follows the name rule (ValidName).
	Name string
	// Properties are in position order: Properties[i].Position == i.
	Properties []Property
	// Required names properties of the type or the system fields of RequirableSystemFields;
	// sorted, no repeats.
	Required []string

	// DocumentsMutable: documents may be replaced (default true).
	DocumentsMutable bool
	// CanBeDeleted: the owner may delete documents (default true).
	CanBeDeleted bool
	Transferable Transferable
	TradeMode    TradeMode
	// DocumentsKeepHistory: every revision of a document stays queryable (default false).
	DocumentsKeepHistory    bool
	CreationRestrictionMode CreationRestrictionMode
	// IndexOnly: documents live in their indexes only, no row by id (default false).
	IndexOnly bool
	// ModeratorAbilities is what the contract's moderators may do with documents of the
	// type (moderatorAbilities); nil: nothing. Only a contract with a moderation block
	// declares it.
	ModeratorAbilities *ModeratorAbilities
	// TTLSeconds is the type's time to live (the ttl keyword, protocol version 14 on):
	// each document is deleted by the platform once TTLSeconds have passed since its
	// $createdAt. 0: none, documents live until someone deletes them.
	TTLSeconds uint32
	// RenewOnReplace (protocol version 15 on, a type with a ttl only): a replace renews
	// the document as a renew action does, the session pattern (docs/STATE.md,
	// "Renewal"). Fixed, like the ttl, once the type is registered.
	RenewOnReplace bool

	// Indices are sorted by name; names are unique and no two have the same properties.
	Indices []Index
}

// Property is one user-defined property of a document type.
type Property struct {
	Name string
	// Position is the property's place in the document encoding; positions of a type
	// run 0, 1, ... without gaps or repeats.
	Position uint32
	Type     PropertyType

	// String bounds (PropertyString only). MaxLength, when set, is at most the version's
	// MaxStringLength and not below MinLength.
	MinLength, MaxLength *uint32
	// Pattern (PropertyString only) is an RE2 regular expression, or "" for none.
	Pattern string

	// Integer bounds (PropertyInteger only); Minimum <= Maximum when both are set.
	Minimum, Maximum *int64

	// Byte array bounds (PropertyByteArray; PropertyIdentifier has both at 32). MaxItems,
	// when set, is at most the version's MaxByteArrayLength and not below MinItems. For
	// PropertyIdentifierList they count identifiers: MaxItems is set, at most the
	// version's MaxIdentifierListLength.
	MinItems, MaxItems *uint32

	// RefersTo makes the value (for an identifier list, each of its items) a reference
	// to a document (References); nil: none.
	RefersTo *Reference
}

// PropertyType is the kind of value a property holds. There is no number type: a
// consensus value is never a float.
type PropertyType uint8

const (
	PropertyString  PropertyType = 1
	PropertyInteger PropertyType = 2 // a signed 64-bit integer
	PropertyBoolean PropertyType = 3
	// PropertyByteArray is written {"type": "array", "byteArray": true}.
	PropertyByteArray PropertyType = 4
	// PropertyIdentifier is a 32-byte byte array with contentMediaType
	// IdentifierMediaType: an identity, contract or document id.
	PropertyIdentifier PropertyType = 5
	// PropertyIdentifierList is a list of identifiers, written {"type": "array",
	// "items": <an identifier>, "maxItems": n}; its value holds the identifiers one
	// after the other. It is never indexed.
	PropertyIdentifierList PropertyType = 6
)

// IdentifierMediaType marks a 32-byte byte array as an identifier, as the platform writes it.
const IdentifierMediaType = "application/x.dash.dpp.identifier"

func (t PropertyType) String() string {
	switch t {
	case PropertyString:
		return "string"
	case PropertyInteger:
		return "integer"
	case PropertyBoolean:
		return "boolean"
	case PropertyByteArray:
		return "byteArray"
	case PropertyIdentifier:
		return "identifier"
	case PropertyIdentifierList:
		return "identifier list"
	}
	return fmt.Sprintf("PropertyType(%d)", uint8(t))
}

// Transferable says whether a document's owner may give it to another identity. The
// values are the platform's: JSON 0 or 1.
type Transferable uint8

const (
	TransferableNever  Transferable = 0 // the default
	TransferableAlways Transferable = 1
)

// TradeMode says whether documents can be sold. The values are the platform's: JSON 0 or 1.
type TradeMode uint8

const (
	TradeModeNone TradeMode = 0 // the default
	// TradeModeDirectPurchase: the owner sets a price and anyone may buy at it.
	TradeModeDirectPurchase TradeMode = 1
)

// CreationRestrictionMode says who may create documents. The values are the platform's:
// JSON 0, 1 or 2.
type CreationRestrictionMode uint8

const (
	CreationUnrestricted CreationRestrictionMode = 0 // the default: anyone
	CreationOwnerOnly    CreationRestrictionMode = 1 // the contract's owner only
	CreationNotAllowed   CreationRestrictionMode = 2 // nobody
)

// Index is one index of a document type.
type Index struct {
	// Name is unique within its type and follows the name rule.
	Name string
	// Properties are the index's key, in order: each a property of the type or one of
	// IndexableSystemFields, none twice.
	Properties []IndexProperty
	// Unique: no two documents share the values of the index's properties.
	Unique bool
	// Countable: the index keeps a provable count of its documents (of each window's,
	// for a time-range index).
	Countable bool
	// Ranked (time-range indexes, with Countable): each window also orders its value
	// groups by their count, most first, so a window's top groups are one range.
	Ranked bool
	// TimeRange makes the index a time-range index (protocol version 14): its entries
	// are stored under each window of the grid that holds the document, Properties
	// under the window. Nil for an ordinary index.
	TimeRange *TimeRange
	// Summable names an integer property of the type whose provable sum the index
	// keeps, or is "" for none.
	Summable string
	// Contested is parsed and stored only: this version resolves no contested value by
	// vote, and refuses contested indexes at registration (ContestedIndexUnsupported).
	// Nil for none.
	Contested *Contested
}

// IndexProperty is one key part of an index.
type IndexProperty struct {
	Name       string
	Descending bool // "desc"; false is "asc"
}

// Contested is an index's contested resolution, as the platform writes it.
type Contested struct {
	// Resolution is 0, the only one the platform defines (masternode vote).
	Resolution   uint8
	FieldMatches []FieldMatch
}

// FieldMatch: values of Field matching RegexPattern (RE2) are contested.
type FieldMatch struct {
	Field        string
	RegexPattern string
}

// RequirableSystemFields are the system fields a type may list in required (sorted).
var RequirableSystemFields = []string{"$createdAt", "$transferredAt", "$updatedAt"}

// IndexableSystemFields are the system fields an index may use (sorted); from protocol
// version 15 on, $renewedAt too (IndexableSystemFieldsOf).
var IndexableSystemFields = []string{"$createdAt", "$id", "$ownerId", "$transferredAt", "$updatedAt"}

// IndexableSystemFieldsOf are the system fields an index may use under limits l
// (sorted): IndexableSystemFields, and $renewedAt where the version renews.
func IndexableSystemFieldsOf(l Limits) []string {
	if !l.Renewal {
		return IndexableSystemFields
	}
	return []string{"$createdAt", "$id", "$ownerId", "$renewedAt", "$transferredAt", "$updatedAt"}
}

// ExpiresAtMs is when document d of the type expires (document_expires_at): its
// $renewedAt plus the ttl, in milliseconds, which is its $createdAt plus the ttl until
// a renewal (protocol version 15); ok is false for a type without a ttl.
func (t DocumentType) ExpiresAtMs(d Document) (at uint64, ok bool) {
	if t.TTLSeconds == 0 {
		return 0, false
	}
	return d.RenewedAtMs() + uint64(t.TTLSeconds)*1000, true
}

// DocumentsCanDisappear reports whether documents of the type can be deleted at all
// (DocumentTypeV2Getters::documents_can_disappear): by their owner (canBeDeleted), by
// the contract's moderators (moderatorAbilities.delete) or by the platform when their
// time to live ends (Document Time To Live: "References treat a type with a ttl as deletable, like
// one with canBeDeleted or moderatorAbilities.delete"). A permanentDocument or
// listElement reference may not target such a type.
func (t DocumentType) DocumentsCanDisappear() bool {
	return t.CanBeDeleted || t.ModeratorsDelete() || t.TTLSeconds > 0
}

// Property returns the type's property called name.
func (t DocumentType) Property(name string) (Property, bool) {
	for _, p := range t.Properties {
		if p.Name == name {
			return p, true
		}
	}
	return Property{}, false
}

// IsRequired reports whether name (a property or a system field) is in required.
func (t DocumentType) IsRequired(name string) bool {
	for _, r := range t.Required {
		if r == name {
			return true
		}
	}
	return false
}
