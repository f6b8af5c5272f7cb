package protocol

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"sort"
)

// Moderation is a contract's moderation block (config.moderation): the identities that,
// with the contract's owner, moderate the documents of its types whose
// moderatorAbilities allow it. It is fixed when the contract is registered: an update
// can neither add, change nor remove it.
type Moderation struct {
	// Moderators are sorted, without repeats, 1 to Limits.MaxModerators of them.
	Moderators []IdentityID
}

// ModeratorAbilities is what a document type lets the contract's moderators do
// (moderatorAbilities).
type ModeratorAbilities struct {
	// Delete: a moderator or the contract's owner may delete a document of the type,
	// whatever canBeDeleted says.
	Delete bool
	// DeleteWithinSeconds bounds that deletion to the seconds after the document's last
	// change ($updatedAt): 0 sets no bound.
	DeleteWithinSeconds uint32
	// DeleteKeepsRecord (default true): the deletion leaves a removal record under the
	// contract, which a moderator may restore the document from for a week.
	DeleteKeepsRecord bool
	// DeleteRefundsOwner (default false): the deletion refunds the document's storage
	// fee to its payers as an owner's delete does; otherwise the refund is forfeited and
	// the fee stays with the epochs it was paid to.
	DeleteRefundsOwner bool
}

// Moderator reports whether id moderates contract c: its owner or one of its
// moderation block's moderators.
func (c Contract) Moderator(id IdentityID) bool {
	if id == c.Owner {
		return true
	}
	if c.Moderation == nil {
		return false
	}
	_, found := slices.BinarySearchFunc(c.Moderation.Moderators, id, func(a, b IdentityID) int {
		return compareIDs(a[:], b[:])
	})
	return found
}

func compareIDs(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return int(a[i]) - int(b[i])
		}
	}
	return 0
}

// RemovalRecord is what a moderator's deletion keeps under the contract when the type's
// moderatorAbilities.deleteKeepsRecord allows it: whose document it was, who removed it,
// why and when, and the hash of the document as it was serialized (Document.Encode), so
// that a restore can put back exactly that document.
type RemovalRecord struct {
	Type         string
	ID           DocumentID
	Owner        IdentityID
	Moderator    IdentityID
	Reason       string
	AtMs         uint64
	DocumentHash [32]byte
}

// DocumentHash is the hash a removal record pins a document by: sha256 of its
// encoding.
func DocumentHash(encoded []byte) [32]byte { return sha256.Sum256(encoded) }

// parseModeration reads the contract's config.moderation, or returns nil when there is
// none. The meta-schema has checked the shape: 1 or more distinct ids of 64 hex digits.
func parseModeration(doc map[string]any, lim Limits) (*Moderation, error) {
	config, _ := doc["config"].(map[string]any)
	m, ok := config["moderation"].(map[string]any)
	if !ok {
		return nil, nil
	}
	const path = "/config/moderation/moderators"
	raw := m["moderators"].([]any)
	if len(raw) > lim.MaxModerators {
		return nil, ErrInvalidContractStructure{Path: path, Reason: fmt.Sprintf("%d moderators, more than the version's %d", len(raw), lim.MaxModerators)}
	}
	out := &Moderation{Moderators: make([]IdentityID, 0, len(raw))}
	for _, r := range raw {
		id, err := ParseIdentityID(r.(string))
		if err != nil {
			return nil, ErrInvalidContractStructure{Path: path, Reason: err.Error()}
		}
		out.Moderators = append(out.Moderators, id)
	}
	sort.Slice(out.Moderators, func(i, j int) bool { return compareIDs(out.Moderators[i][:], out.Moderators[j][:]) < 0 })
	return out, nil
}

// parseModeratorAbilities reads type t's moderatorAbilities into t.ModeratorAbilities
// and checks the rules of registration: the contract has a moderation block, and the
// type neither keeps history (its documents are never deleted) nor is indexOnly (there
// is no stored row to remove by id). Each refusal is ErrInvalidContractStructure.
func parseModeratorAbilities(t *DocumentType, m map[string]any, path string, moderated bool) error {
	a, ok := m["moderatorAbilities"].(map[string]any)
	if !ok {
		return nil
	}
	bad := func(reason string) error {
		return ErrInvalidContractStructure{Type: t.Name, Path: path + "/moderatorAbilities", Reason: reason}
	}
	switch {
	case !moderated:
		return bad("moderatorAbilities needs the contract's config.moderation block: it names the moderators")
	case t.DocumentsKeepHistory:
		return bad("moderatorAbilities cannot be combined with documentsKeepHistory: documents that keep history are never deleted")
	case t.IndexOnly:
		return bad("moderatorAbilities cannot be combined with indexOnly: there is no stored document to delete by id")
	}
	within, err := optUint32(a, "deleteWithin", path+"/moderatorAbilities")
	if err != nil {
		return err
	}
	t.ModeratorAbilities = &ModeratorAbilities{
		Delete:             a["delete"].(bool),
		DeleteKeepsRecord:  optBool(a, "deleteKeepsRecord", true),
		DeleteRefundsOwner: optBool(a, "deleteRefundsOwner", false),
	}
	if within != nil {
		t.ModeratorAbilities.DeleteWithinSeconds = *within
	}
	return nil
}

// ModeratorsDelete reports whether the contract's moderators may delete documents of
// the type (moderatorAbilities.delete).
func (t DocumentType) ModeratorsDelete() bool {
	return t.ModeratorAbilities != nil && t.ModeratorAbilities.Delete
}
