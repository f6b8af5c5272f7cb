package drive

import (
	"encoding/hex"
	"slices"

	"github.com/ttld-dev/ttld/protocol"
)

// Contracts finds a contract by id for a reference check (ok false: none).
type Contracts func(protocol.ContractID) (protocol.Contract, bool, error)

// CheckReferences refuses document d of type t when a reference it sets names no
// stored document (protocol.ErrReferencedDocumentNotFound): by id, the target type's
// document of that id; by lookup, an entry of the target's unique lookup index holding
// the value; for an identifier list, every item by id. before is the document d
// replaces (nil for a create or a restore): a reference whose value it does not change
// is not looked at again, since a deletableDocument target may have gone since without
// the referring document being wrong. A document past its expiry that the cleanup has
// not deleted yet is still stored, and is found (Document Time To Live: "Until the cleanup deletes
// it, it can still be queried and referenced").
func CheckReferences(kv KV, t DocumentType, d protocol.Document, before *protocol.Document, contracts Contracts) error {
	for _, p := range t.Properties {
		r := p.RefersTo
		v := d.Value(p.Position)
		if r == nil || !v.Set {
			continue
		}
		if before != nil {
			if old := before.Value(p.Position); old.Set && slices.Equal(old.Bytes, v.Bytes) && old.Int == v.Int {
				continue
			}
		}
		tc := r.TargetContract(t.Contract)
		target, ok, err := contracts(tc)
		if err != nil {
			return err
		}
		tt, typeOK := target.DocumentType(r.Type)
		if !ok || !typeOK {
			// The registration's CheckReferences found both, and neither a contract
			// nor a type is ever removed.
			return ErrCorrupt{Key: ContractKey(tc), Reason: "the target of a registered reference is gone"}
		}
		missing := func(value []byte) error {
			return protocol.ErrReferencedDocumentNotFound{ID: d.ID, Property: p.Name, Contract: tc, Type: r.Type, Value: hex.EncodeToString(value)}
		}
		if r.Lookup != "" {
			ix, _ := tt.Index(r.Lookup)
			f := IndexFields(tt, ix)[0]
			prefix := AppendIndexPart(IndexPrefix(tc, r.Type, r.Lookup), f, v)
			found := false
			err := kv.Iterate(prefix, PrefixEnd(prefix), func(_, _ []byte) (bool, error) {
				found = true
				return true, nil
			})
			if err != nil {
				return err
			}
			if !found {
				return missing(AppendIndexPart(nil, f, v))
			}
			continue
		}
		for id := range slices.Chunk(v.Bytes, protocol.DocumentIDLen) {
			b, err := kv.Get(DocumentKey(tc, r.Type, protocol.DocumentID(id)))
			if err != nil {
				return err
			}
			if b == nil {
				return missing(id)
			}
		}
	}
	return nil
}
