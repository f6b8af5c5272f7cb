package protocol

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
)

// ContractIDLen is the byte length of a contract id.
const ContractIDLen = 32

// ContractID names a data contract.
type ContractID [ContractIDLen]byte

func (id ContractID) String() string { return hex.EncodeToString(id[:]) }

// ParseContractID reads a contract id written as 64 hex digits.
func ParseContractID(s string) (ContractID, error) {
	var id ContractID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != ContractIDLen {
		return id, fmt.Errorf("contract id must be %d hex digits", 2*ContractIDLen)
	}
	copy(id[:], b)
	return id, nil
}

// NewContractID derives the id of the contract that owner creates with identity nonce
// nonce: sha256 of the domain "ttld/contract", the owner and the nonce, so no two creates
// can yield the same id.
func NewContractID(owner IdentityID, nonce uint64) ContractID {
	h := sha256.New()
	h.Write([]byte("ttld/contract"))
	h.Write(owner[:])
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], nonce)
	h.Write(n[:])
	var id ContractID
	copy(id[:], h.Sum(nil))
	return id
}

// Contract is a data contract: the document types an owner registered, under an id.
type Contract struct {
	ID    ContractID
	Owner IdentityID
	// Version is 1 when created and grows by one with each accepted update.
	Version uint32
	// Moderation is the contract's moderation block; nil: none.
	Moderation *Moderation
	// DocumentTypes are sorted by name, names unique, as ParseDocumentTypes returns them.
	DocumentTypes []DocumentType
}

// DocumentType returns the contract's document type called name.
func (c Contract) DocumentType(name string) (DocumentType, bool) {
	i, ok := sort.Find(len(c.DocumentTypes), func(i int) int {
		switch {
		case name < c.DocumentTypes[i].Name:
			return -1
		case name > c.DocumentTypes[i].Name:
			return 1
		}
		return 0
	})
	if !ok {
		return DocumentType{}, false
	}
	return c.DocumentTypes[i], true
}

// contractEncodingFormat leads an encoded contract.
const contractEncodingFormat = 1

// contractHeaderLen: format byte, id, owner, version.
const contractHeaderLen = 1 + ContractIDLen + IdentityIDLen + 4

// MaxContractEncodingLen bounds the encoding of a contract valid under limits l: the
// header and a canonical JSON of at most l.MaxContractBytes.
func MaxContractEncodingLen(l Limits) int { return contractHeaderLen + l.MaxContractBytes }

// Encode returns the contract's one deterministic encoding: the format byte 1, the id
// (32 bytes), the owner (32 bytes), the version (4 bytes big-endian), then the
// canonical JSON of its document types (CanonicalJSON). Decoding parses that JSON
// again, so a stored contract is validated on every read.
func (c Contract) Encode() []byte {
	js := CanonicalDefinitionJSON(c.Definition())
	out := make([]byte, 0, contractHeaderLen+len(js))
	out = append(out, contractEncodingFormat)
	out = append(out, c.ID[:]...)
	out = append(out, c.Owner[:]...)
	out = binary.BigEndian.AppendUint32(out, c.Version)
	return append(out, js...)
}

// DecodeContract reads an encoded contract and validates its document types again under
// protocol version v: a refusal carries the code ParseDocumentTypes gives it; bytes
// that are no contract encoding at all give ErrContractDecode.
func DecodeContract(b []byte, v Version) (Contract, error) {
	if len(b) < contractHeaderLen {
		return Contract{}, ErrContractDecode{Reason: fmt.Sprintf("%d bytes, shorter than the %d-byte header", len(b), contractHeaderLen)}
	}
	if b[0] != contractEncodingFormat {
		return Contract{}, ErrContractDecode{Reason: fmt.Sprintf("unknown format %d", b[0])}
	}
	var c Contract
	copy(c.ID[:], b[1:])
	copy(c.Owner[:], b[1+ContractIDLen:])
	c.Version = binary.BigEndian.Uint32(b[1+ContractIDLen+IdentityIDLen:])
	d, err := ParseDefinition(b[contractHeaderLen:], v)
	if err != nil {
		return Contract{}, err
	}
	c.Moderation, c.DocumentTypes = d.Moderation, d.DocumentTypes
	return c, nil
}

// Definition is the contract's definition: its config and its document types.
func (c Contract) Definition() Definition {
	return Definition{Moderation: c.Moderation, DocumentTypes: c.DocumentTypes}
}

// CheckContractUpdate checks that next may replace prev as far as document types go: a
// new type may be added (with a ttl or without); an existing type may only gain
// optional properties (at new positions) and keeps its required list, its flags, its
// ttl and its indexes. Anything else is
// ErrDocumentTypeUpdate, naming the type and what changed. The id, owner and version
// rules of an update belong to its transition.
func CheckContractUpdate(prev, next Contract) error {
	// The moderation block is fixed at registration: moderators are who the types'
	// writers agreed to when they wrote.
	if !moderationEqual(prev.Moderation, next.Moderation) {
		return ErrContractConfigUpdate{ID: prev.ID, Change: "config.moderation is fixed at registration"}
	}
	for _, old := range prev.DocumentTypes {
		nt, ok := next.DocumentType(old.Name)
		if !ok {
			return ErrDocumentTypeUpdate{Type: old.Name, Change: "document type removed"}
		}
		if err := checkDocumentTypeUpdate(old, nt); err != nil {
			return err
		}
	}
	return nil
}

func checkDocumentTypeUpdate(old, nt DocumentType) error {
	change := func(what string) error { return ErrDocumentTypeUpdate{Type: old.Name, Change: what} }
	flags := []struct {
		name     string
		was, now any
	}{
		{"documentsMutable", old.DocumentsMutable, nt.DocumentsMutable},
		{"canBeDeleted", old.CanBeDeleted, nt.CanBeDeleted},
		{"transferable", old.Transferable, nt.Transferable},
		{"tradeMode", old.TradeMode, nt.TradeMode},
		{"documentsKeepHistory", old.DocumentsKeepHistory, nt.DocumentsKeepHistory},
		{"creationRestrictionMode", old.CreationRestrictionMode, nt.CreationRestrictionMode},
		{"indexOnly", old.IndexOnly, nt.IndexOnly},
	}
	for _, f := range flags {
		if f.was != f.now {
			return change(fmt.Sprintf("%s changed from %v to %v", f.name, f.was, f.now))
		}
	}
	// Document Time To Live: "A contract update may not add, remove or change the ttl of an existing
	// document type: every stored document carries the expiry it was written and paid
	// with."
	switch {
	case old.TTLSeconds == nt.TTLSeconds:
	case old.TTLSeconds == 0:
		return change(fmt.Sprintf("ttl %d added", nt.TTLSeconds))
	case nt.TTLSeconds == 0:
		return change(fmt.Sprintf("ttl %d removed", old.TTLSeconds))
	default:
		return change(fmt.Sprintf("ttl changed from %d to %d", old.TTLSeconds, nt.TTLSeconds))
	}
	if old.RenewOnReplace != nt.RenewOnReplace {
		return change(fmt.Sprintf("renewOnReplace changed from %t to %t", old.RenewOnReplace, nt.RenewOnReplace))
	}
	// Positions run from 0 without gaps in both, so the old properties keep their
	// positions exactly when they are a prefix of the new ones.
	if len(nt.Properties) < len(old.Properties) {
		return change(fmt.Sprintf("property %q removed", old.Properties[len(nt.Properties)].Name))
	}
	for i, p := range old.Properties {
		if !propertyEqual(p, nt.Properties[i]) {
			if q, ok := nt.Property(p.Name); !ok {
				return change(fmt.Sprintf("property %q removed", p.Name))
			} else if q.Position != p.Position {
				return change(fmt.Sprintf("property %q moved from position %d to %d", p.Name, p.Position, q.Position))
			}
			return change(fmt.Sprintf("property %q redefined", p.Name))
		}
	}
	for _, p := range nt.Properties[len(old.Properties):] {
		if nt.IsRequired(p.Name) {
			return change(fmt.Sprintf("added property %q is required", p.Name))
		}
	}
	if !slices.Equal(old.Required, nt.Required) {
		return change("required changed")
	}
	if !slices.EqualFunc(old.Indices, nt.Indices, indexEqual) {
		return change("indices changed")
	}
	if !eqPtr(old.ModeratorAbilities, nt.ModeratorAbilities) {
		return change("moderatorAbilities changed")
	}
	return nil
}

func moderationEqual(a, b *Moderation) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Moderators, b.Moderators)
}

func referenceEqual(a, b *Reference) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Type == b.Type && a.Kind == b.Kind && a.Lookup == b.Lookup && eqPtr(a.Contract, b.Contract)
}

func propertyEqual(a, b Property) bool {
	return a.Name == b.Name && a.Position == b.Position && a.Type == b.Type &&
		eqPtr(a.MinLength, b.MinLength) && eqPtr(a.MaxLength, b.MaxLength) && a.Pattern == b.Pattern &&
		eqPtr(a.Minimum, b.Minimum) && eqPtr(a.Maximum, b.Maximum) &&
		eqPtr(a.MinItems, b.MinItems) && eqPtr(a.MaxItems, b.MaxItems) && referenceEqual(a.RefersTo, b.RefersTo)
}

// indexEqual reports whether an update keeps index a as b: every keyword the index's
// entries were written under, its time-range grid and window ttl and its ranking
// included (the stored entries of a time-range index lie where its grid put them and
// drain by its ttl; a deletion of a stored document looks for them there).
func indexEqual(a, b Index) bool {
	if a.Name != b.Name || a.Unique != b.Unique || a.Countable != b.Countable || a.Summable != b.Summable ||
		a.Ranked != b.Ranked || !eqPtr(a.TimeRange, b.TimeRange) ||
		!slices.Equal(a.Properties, b.Properties) || (a.Contested == nil) != (b.Contested == nil) {
		return false
	}
	return a.Contested == nil ||
		(a.Contested.Resolution == b.Contested.Resolution && slices.Equal(a.Contested.FieldMatches, b.Contested.FieldMatches))
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
