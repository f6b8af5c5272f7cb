package sim

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// BlockCleanup is what a block's documents cleanup did: its stats and the expirations
// entries it removed (document_expired and document_expiration_orphan events), in order.
type BlockCleanup struct {
	Stats   drive.DrainStats
	Removed [][]byte // drive.ExpirationKey of each removal
}

// CleanupOf reads the documents cleanup of a block executed by app.ExecuteBlock.
func CleanupOf(res app.BlockResult) (BlockCleanup, error) {
	var out BlockCleanup
	for _, c := range res.Cleanups {
		if c.Name == "documents" {
			out.Stats = c.Stats
		}
	}
	for _, e := range res.Events {
		attrs := map[string]string{}
		for _, a := range e.Attrs {
			attrs[a.Key] = a.Value
		}
		if err := out.removal(e.Type, attrs); err != nil {
			return out, err
		}
	}
	return out, nil
}

// CleanupOfEvents reads the documents cleanup of a block from the events CometBFT is
// given: the documents_cleanup event carries the block result's cleanup stats (a block
// that removed nothing has none).
func CleanupOfEvents(evs []abcitypes.Event) (BlockCleanup, error) {
	var out BlockCleanup
	for _, e := range evs {
		attrs := map[string]string{}
		for _, a := range e.Attributes {
			attrs[a.Key] = a.Value
		}
		if e.Type == protocol.EventDocumentsCleanup {
			var err error
			num := func(k string) uint64 {
				n, perr := strconv.ParseUint(attrs[k], 10, 64)
				if perr != nil && err == nil {
					err = fmt.Errorf("%s %s=%q: %v", protocol.EventDocumentsCleanup, k, attrs[k], perr)
				}
				return n
			}
			out.Stats = drive.DrainStats{Removed: int(num(protocol.AttrRemoved)), WeightUsed: num(protocol.AttrWeight), Backlog: int(num(protocol.AttrBacklog)), OldestOverdueMs: num(protocol.AttrOldestOverdueMs)}
			if err != nil {
				return out, err
			}
		}
		if err := out.removal(e.Type, attrs); err != nil {
			return out, err
		}
	}
	return out, nil
}

func (c *BlockCleanup) removal(typ string, attrs map[string]string) error {
	if typ != protocol.EventDocumentExpired && typ != protocol.EventDocumentExpirationOrphan {
		return nil
	}
	at, err := strconv.ParseUint(attrs[protocol.AttrExpiresAt], 10, 64)
	if err != nil {
		return fmt.Errorf("%s %s=%q: %v", typ, protocol.AttrExpiresAt, attrs[protocol.AttrExpiresAt], err)
	}
	key := protocol.AttrID
	if typ == protocol.EventDocumentExpirationOrphan {
		key = protocol.AttrDocument
	}
	id, err := protocol.ParseDocumentID(attrs[key])
	if err != nil {
		return fmt.Errorf("%s %s=%q: %v", typ, key, attrs[key], err)
	}
	c.Removed = append(c.Removed, drive.ExpirationKey(at, id))
	return nil
}

// CheckCleanup is the invariant that no document is visible past its expiry plus the
// backlog, after the block at atMs whose cleanup was c, on the state
// kv the block left: "After each block's state transitions the platform deletes the
// expired documents, oldest first, at most max_document_expirations_per_block per
// block (128 at protocol version 14), and no more than
// max_document_expiration_weight_per_block (1,024) in weight ... The rest wait for the
// next block" (Document Time To Live, Semantics). Either no expirations entry is due at atMs, or the
// cleanup removed the full count budget, or the next due entry would have passed the
// weight budget; the cleanup's count agrees with its removals, and every entry it
// removed comes before every due entry it left. invariants.CheckDocuments (the full scan)
// checks the rest: every stored document of a type with a ttl, expired or not, has its
// one entry.
func CheckCleanup(kv drive.KV, atMs uint64, c BlockCleanup) error {
	v, err := drive.GetProtocolVersion(kv)
	if err != nil {
		return err
	}
	l, err := protocol.LimitsFor(v)
	if err != nil {
		return err
	}
	if !l.TTL() {
		if c.Stats.Removed > 0 || len(c.Removed) > 0 {
			return fmt.Errorf("documents cleanup at protocol version %d removed %d entries", v, c.Stats.Removed)
		}
		return nil
	}
	if c.Stats.Removed != len(c.Removed) {
		return fmt.Errorf("the documents cleanup reports %d removals and names %d", c.Stats.Removed, len(c.Removed))
	}
	if c.Stats.Removed > l.MaxDocumentExpirationsPerBlock || (c.Stats.Removed > 1 && c.Stats.WeightUsed > uint64(l.MaxDocumentExpirationWeightPerBlock)) {
		return fmt.Errorf("the documents cleanup removed %d weighing %d, past its budget", c.Stats.Removed, c.Stats.WeightUsed)
	}
	prefix := drive.ExpirationsPrefix()
	end := drive.PrefixEnd(binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), atMs))
	var first, value []byte
	err = kv.Iterate(prefix, end, func(k, v []byte) (bool, error) {
		first, value = append([]byte(nil), k...), append([]byte(nil), v...)
		return true, nil
	})
	if err != nil || first == nil {
		return err
	}
	for _, k := range c.Removed {
		if bytes.Compare(k, first) >= 0 {
			return fmt.Errorf("the cleanup removed the entry %x and left the older %x", k, first)
		}
	}
	if c.Stats.Removed == l.MaxDocumentExpirationsPerBlock {
		return nil
	}
	w, err := expiryWeight(kv, v, first, value)
	if err != nil {
		return err
	}
	if c.Stats.Removed > 0 && c.Stats.WeightUsed+w > uint64(l.MaxDocumentExpirationWeightPerBlock) {
		return nil
	}
	at, id, _ := drive.ParseExpirationKey(first)
	return fmt.Errorf("document %s, expired at %d, is left past the block at %d although the cleanup removed %d weighing %d and it weighs %d",
		id, at, atMs, c.Stats.Removed, c.Stats.WeightUsed, w)
}

// expiryWeight is the weight of removing an expirations entry, read from state: 1 plus
// the index levels of its document's type, or 1 for an entry without its document.
func expiryWeight(kv drive.KV, v protocol.Version, key, value []byte) (uint64, error) {
	e, ok := drive.DecodeExpirationEntry(key, value)
	if !ok {
		return 1, nil
	}
	ct, found, err := drive.GetContract(kv, e.Contract, v)
	if err != nil || !found {
		return 1, err
	}
	dt, ok := ct.DocumentType(e.Type)
	if !ok || dt.TTLSeconds == 0 {
		return 1, nil
	}
	d, found, err := drive.GetDocument(kv, drive.DocumentType{Contract: e.Contract, DocumentType: dt}, e.ID)
	if err != nil || !found {
		return 1, err
	}
	if at, _ := dt.ExpiresAtMs(d.Document); at != e.ExpiresAtMs {
		return 1, nil
	}
	return 1 + drive.IndexLevels(dt), nil
}
