package app

import (
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// expireDocumentsStep is step 4 of the pipeline, expire_documents (Document Time To Live,
// "Cleanup"), from protocol version 14 on: the expirations tree's entries at or before
// the block time, oldest first, at most MaxDocumentExpirationsPerBlock of them and
// MaxDocumentExpirationWeightPerBlock in weight (a document weighs 1 plus its type's
// index levels, an orphaned entry 1), the block's first removal always allowed. Each
// entry is checked against state (its contract, document type and ttl, the stored
// document, and that the document expires when its entry says) and the document is
// deleted through drive.RemoveDocument, the owner's deletion without the canBeDeleted
// guard, which takes the entry with it. An entry without such a document is only
// removed, and reported. All of it goes into the block's working tree in order, each
// removal seeing those before it, and nobody is billed.
func expireDocumentsStep(kv drive.KV, r rules, b Block) ([]protocol.Event, Cleanup, error) {
	cleanup := Cleanup{Name: "documents"}
	l := r.ctx.Limits
	if !l.TTL() {
		return nil, cleanup, nil
	}
	var events []protocol.Event
	contracts := map[protocol.ContractID]*protocol.Contract{} // each read once in the block
	idx := drive.ExpiryIndex{
		Prefix: drive.ExpirationsPrefix(),
		Weigh: func(kv drive.KV, key, value []byte) (uint64, error) {
			t, _, ok, err := expiring(kv, r, contracts, key, value)
			if err != nil || !ok {
				return 1, err
			}
			return 1 + drive.IndexLevels(t.DocumentType), nil
		},
		Remove: func(kv drive.KV, key, value []byte) error {
			t, d, ok, err := expiring(kv, r, contracts, key, value)
			if err != nil {
				return err
			}
			at, id, _ := drive.ParseExpirationKey(key)
			if !ok {
				cleanup.Orphans++
				events = append(events, protocol.NewDocumentExpirationOrphanEvent(id, at))
				return kv.Delete(key)
			}
			s := &drive.Storage{Epoch: r.epoch(), PerByte: r.fees.StoragePerByte, AtMs: r.ctx.BlockTimeMs}
			if err := drive.RemoveDocument(kv, s, t, d); err != nil {
				return err
			}
			if len(s.Refunds) > 0 || s.Added > 0 {
				return faultf("the expiry of document %s moved credits: its items carried storage flags", id)
			}
			events = append(events, protocol.NewDocumentExpiredEvent(t.Contract, t.Name, id, d.Owner, at))
			return nil
		},
	}
	budget := drive.Budget{MaxCount: l.MaxDocumentExpirationsPerBlock, MaxWeight: uint64(l.MaxDocumentExpirationWeightPerBlock)}
	var err error
	if cleanup.Stats, err = drive.Drain(kv, idx, b.TimeMs, budget); err != nil {
		return nil, cleanup, err
	}
	if st := cleanup.Stats; st.Removed > 0 {
		events = append(events, protocol.NewDocumentsCleanupEvent(st.Removed, cleanup.Orphans, st.WeightUsed, st.Backlog, st.OldestOverdueMs))
	}
	return events, cleanup, nil
}

// expiring resolves an expirations tree entry to the document it deletes: ok is false
// for an orphan (an entry that is no key of the tree, names a contract, type or
// document that is not stored, a type without a ttl, or a document that does not
// expire at the entry's time). contracts caches the block's contract reads.
func expiring(kv drive.KV, r rules, contracts map[protocol.ContractID]*protocol.Contract, key, value []byte) (drive.DocumentType, drive.StoredDocument, bool, error) {
	var none drive.DocumentType
	at, id, ok := drive.ParseExpirationKey(key)
	if !ok {
		return none, drive.StoredDocument{}, false, nil
	}
	cid, typeName, ok := drive.DecodeExpiration(value)
	if !ok {
		return none, drive.StoredDocument{}, false, nil
	}
	c, cached := contracts[cid]
	if !cached {
		got, found, err := drive.GetContract(kv, cid, r.ctx.Version)
		if err != nil {
			return none, drive.StoredDocument{}, false, err
		}
		if found {
			c = &got
		}
		contracts[cid] = c
	}
	if c == nil {
		return none, drive.StoredDocument{}, false, nil
	}
	dt, ok := c.DocumentType(typeName)
	if !ok || dt.TTLSeconds == 0 {
		return none, drive.StoredDocument{}, false, nil
	}
	t := drive.DocumentType{Contract: cid, DocumentType: dt}
	d, found, err := drive.GetDocument(kv, t, id)
	if err != nil || !found {
		return none, drive.StoredDocument{}, false, err
	}
	if expires, _ := dt.ExpiresAtMs(d.Document); expires != at {
		return none, drive.StoredDocument{}, false, nil
	}
	return t, d, true, nil
}
