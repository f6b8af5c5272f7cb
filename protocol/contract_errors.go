package protocol

import "fmt"

// The refusals of a contract definition (ParseDocumentTypes) and of its update
// (CheckContractUpdate). Each carries the type, index, property or path it is about;
// the code is consensus, the message is for the log.

// ErrJSONSchema: the contract's JSON is not JSON, or the version's meta-schema refuses
// it (an unknown keyword, a wrong shape, a value out of the meta-schema's bounds).
type ErrJSONSchema struct {
	Path    string // JSON pointer of the offending value in the contract
	Keyword string // the meta-schema keyword that failed, when known
	Reason  string
}

func (e ErrJSONSchema) Code() Code { return CodeJSONSchema }
func (e ErrJSONSchema) Error() string {
	return fmt.Sprintf("contract JSON schema error at %q (%s): %s", e.Path, e.Keyword, e.Reason)
}

// ErrDuplicateIndex: two indexes of a type have the same properties in the same order.
type ErrDuplicateIndex struct{ Type, Index, Other string }

func (e ErrDuplicateIndex) Code() Code { return CodeDuplicateIndex }
func (e ErrDuplicateIndex) Error() string {
	return fmt.Sprintf("document type %q: index %q has the properties of index %q", e.Type, e.Index, e.Other)
}

// ErrInvalidContractStructure: a rule across keywords the meta-schema cannot state
// (bounds out of order, a limit of the version, a pattern that is no RE2 expression, a
// required name that is no property, an index property twice, ...).
type ErrInvalidContractStructure struct {
	Type   string // the document type
	Path   string // JSON pointer of the offending value
	Reason string
}

func (e ErrInvalidContractStructure) Code() Code { return CodeInvalidContractStructure }
func (e ErrInvalidContractStructure) Error() string {
	return fmt.Sprintf("invalid contract structure in document type %q at %q: %s", e.Type, e.Path, e.Reason)
}

// ErrUndefinedIndexProperty: an index names a property the type does not define and
// that is no indexable system field.
type ErrUndefinedIndexProperty struct{ Type, Index, Property string }

func (e ErrUndefinedIndexProperty) Code() Code { return CodeUndefinedIndexProperty }
func (e ErrUndefinedIndexProperty) Error() string {
	return fmt.Sprintf("document type %q: index %q uses undefined property %q", e.Type, e.Index, e.Property)
}

// ErrInvalidSummableProperty: an index's summable names no integer property of the type.
type ErrInvalidSummableProperty struct{ Type, Index, Property, Reason string }

func (e ErrInvalidSummableProperty) Code() Code { return CodeInvalidSummableProperty }
func (e ErrInvalidSummableProperty) Error() string {
	return fmt.Sprintf("document type %q: index %q sums %q: %s", e.Type, e.Index, e.Property, e.Reason)
}

// ErrTooManyDocumentTypes: the contract defines more types than MaxDocumentTypes.
type ErrTooManyDocumentTypes struct{ Count, Max int }

func (e ErrTooManyDocumentTypes) Code() Code { return CodeTooManyDocumentTypes }
func (e ErrTooManyDocumentTypes) Error() string {
	return fmt.Sprintf("contract defines %d document types, the limit is %d", e.Count, e.Max)
}

// ErrTooManyProperties: a type defines more properties than MaxPropertiesPerType.
type ErrTooManyProperties struct {
	Type       string
	Count, Max int
}

func (e ErrTooManyProperties) Code() Code { return CodeTooManyProperties }
func (e ErrTooManyProperties) Error() string {
	return fmt.Sprintf("document type %q defines %d properties, the limit is %d", e.Type, e.Count, e.Max)
}

// ErrTooManyIndexes: a type defines more indexes than MaxIndexesPerType.
type ErrTooManyIndexes struct {
	Type       string
	Count, Max int
}

func (e ErrTooManyIndexes) Code() Code { return CodeTooManyIndexes }
func (e ErrTooManyIndexes) Error() string {
	return fmt.Sprintf("document type %q defines %d indices, the limit is %d", e.Type, e.Count, e.Max)
}

// ErrTooManyIndexProperties: an index has more properties than MaxIndexProperties.
type ErrTooManyIndexProperties struct {
	Type, Index string
	Count, Max  int
}

func (e ErrTooManyIndexProperties) Code() Code { return CodeTooManyIndexProperties }
func (e ErrTooManyIndexProperties) Error() string {
	return fmt.Sprintf("document type %q: index %q has %d properties, the limit is %d", e.Type, e.Index, e.Count, e.Max)
}

// ErrContractTooLarge: the contract's JSON, as sent or in its canonical form, exceeds
// MaxContractBytes.
type ErrContractTooLarge struct{ Size, Max int }

func (e ErrContractTooLarge) Code() Code { return CodeContractTooLarge }
func (e ErrContractTooLarge) Error() string {
	return fmt.Sprintf("contract of %d bytes exceeds the limit of %d", e.Size, e.Max)
}

// ErrInvalidName: a document type, property or index name breaks the name rule
// (ValidName).
type ErrInvalidName struct {
	Kind   string // "document type", "property" or "index"
	Type   string // the document type, for a property or index
	Name   string
	Reason string
}

func (e ErrInvalidName) Code() Code { return CodeInvalidName }
func (e ErrInvalidName) Error() string {
	return fmt.Sprintf("invalid %s name %q (document type %q): %s", e.Kind, e.Name, e.Type, e.Reason)
}

// ErrInvalidPropertyPosition: a type's positions do not run 0, 1, ... without gaps or
// repeats.
type ErrInvalidPropertyPosition struct {
	Type, Property string
	Position       uint32
	Reason         string
}

func (e ErrInvalidPropertyPosition) Code() Code { return CodeInvalidPropertyPosition }
func (e ErrInvalidPropertyPosition) Error() string {
	return fmt.Sprintf("document type %q: property %q at position %d: %s", e.Type, e.Property, e.Position, e.Reason)
}

// ErrDuplicateIndexName: two indexes of a type share a name.
type ErrDuplicateIndexName struct{ Type, Index string }

func (e ErrDuplicateIndexName) Code() Code { return CodeDuplicateIndexName }
func (e ErrDuplicateIndexName) Error() string {
	return fmt.Sprintf("document type %q: two indices are named %q", e.Type, e.Index)
}

// ErrContractDecode: the bytes are no contract encoding (Contract.Encode).
type ErrContractDecode struct{ Reason string }

func (e ErrContractDecode) Code() Code    { return CodeContractDecode }
func (e ErrContractDecode) Error() string { return "contract decode error: " + e.Reason }

// ErrDocumentTypeUpdate: a contract update changes an existing document type in a way
// CheckContractUpdate does not allow. Paid.
type ErrDocumentTypeUpdate struct {
	Type   string
	Change string // what changed: "document type removed", "canBeDeleted changed from true to false", ...
}

func (e ErrDocumentTypeUpdate) Code() Code { return CodeDocumentTypeUpdate }
func (e ErrDocumentTypeUpdate) Error() string {
	return fmt.Sprintf("document type %q cannot be updated: %s", e.Type, e.Change)
}

// ErrDataContractAlreadyPresent: a create's contract id names a stored contract. The
// id is derived from the owner and a nonce the owner has not used, so only a hash
// collision reaches it. Paid.
type ErrDataContractAlreadyPresent struct{ ID ContractID }

func (e ErrDataContractAlreadyPresent) Code() Code { return CodeDataContractAlreadyPresent }
func (e ErrDataContractAlreadyPresent) Error() string {
	return fmt.Sprintf("data contract %s is already present", e.ID)
}

// ErrDataContractNotFound: an update names no stored contract. Paid.
type ErrDataContractNotFound struct{ ID ContractID }

func (e ErrDataContractNotFound) Code() Code { return CodeDataContractNotFound }
func (e ErrDataContractNotFound) Error() string {
	return fmt.Sprintf("data contract %s not found", e.ID)
}

// ErrDataContractOwnerMismatch: an update is signed by another identity than the
// contract's owner. Paid.
type ErrDataContractOwnerMismatch struct {
	ID            ContractID
	Owner, Signer IdentityID
}

func (e ErrDataContractOwnerMismatch) Code() Code { return CodeDataContractOwnerMismatch }
func (e ErrDataContractOwnerMismatch) Error() string {
	return fmt.Sprintf("data contract %s is owned by %s, not by the signer %s", e.ID, e.Owner, e.Signer)
}

// ErrInvalidDataContractVersion: an update's version is not the stored version plus
// one. Paid.
type ErrInvalidDataContractVersion struct {
	ID          ContractID
	Stored, Got uint32
}

func (e ErrInvalidDataContractVersion) Code() Code { return CodeInvalidDataContractVersion }
func (e ErrInvalidDataContractVersion) Error() string {
	return fmt.Sprintf("data contract %s is at version %d: an update must make version %d, not %d", e.ID, e.Stored, e.Stored+1, e.Got)
}

// ErrContestedIndexUnsupported: a contract registration or update declares a contested
// index. The platform resolves a contested value by a vote, which this version does not
// hold; a type with a ttl and a contested index is refused with 10231 before this.
type ErrContestedIndexUnsupported struct{ Type, Index string }

func (e ErrContestedIndexUnsupported) Code() Code { return CodeContestedIndexUnsupported }
func (e ErrContestedIndexUnsupported) Error() string {
	return fmt.Sprintf("document type %q: index %q is contested, and contested values are not supported by this protocol version", e.Type, e.Index)
}

// ErrContractConfigUpdate: a contract update changes the contract's config (its
// moderation block), which is fixed at registration.
type ErrContractConfigUpdate struct {
	ID     ContractID
	Change string
}

func (e ErrContractConfigUpdate) Code() Code { return CodeContractConfigUpdate }
func (e ErrContractConfigUpdate) Error() string {
	return fmt.Sprintf("contract %s: %s", e.ID, e.Change)
}

// ErrModeratorNotFound: a contract's moderation block names an identity that does not
// exist.
type ErrModeratorNotFound struct{ ID IdentityID }

func (e ErrModeratorNotFound) Code() Code { return CodeModeratorNotFound }
func (e ErrModeratorNotFound) Error() string {
	return fmt.Sprintf("moderator identity %s does not exist", e.ID)
}

// ErrInvalidReference: a property's refersTo names a contract or document type that
// does not exist, or a lookup index that is no unique index of one property of the
// property's type.
type ErrInvalidReference struct{ Type, Property, Reason string }

func (e ErrInvalidReference) Code() Code { return CodeInvalidReference }
func (e ErrInvalidReference) Error() string {
	return fmt.Sprintf("document type %q: the reference of %q: %s", e.Type, e.Property, e.Reason)
}

// ErrReferencedDocumentTypeDeletable: ReferencedDocumentTypeDeletableError (40122), a
// permanentDocument or listElement reference, a lookup one included, to a type whose
// documents can disappear (canBeDeleted, moderatorAbilities.delete or a ttl).
type ErrReferencedDocumentTypeDeletable struct {
	Type, Property string
	Contract       ContractID
	Target         string
	Kind           ReferenceKind
}

func (e ErrReferencedDocumentTypeDeletable) Code() Code { return CodeReferencedDocumentTypeDeletable }
func (e ErrReferencedDocumentTypeDeletable) Error() string {
	return fmt.Sprintf("document type %q: %q is a %s reference to type %q of contract %s, whose documents can disappear", e.Type, e.Property, e.Kind, e.Target, e.Contract)
}
