package drive

import (
	"bytes"
	"encoding/binary"
	"sort"

	"github.com/ttld-dev/ttld/protocol"
)

// StoredDocument is a document as stored: its values and the storage flags of its row.
type StoredDocument struct {
	protocol.Document
	Flags StorageFlags
}

// DocumentType names a document type where its documents are stored.
type DocumentType struct {
	Contract protocol.ContractID
	protocol.DocumentType
}

// GetDocument reads document id of type t. A stored value that does not decode is
// ErrCorrupt: this package wrote it.
func GetDocument(kv KV, t DocumentType, id protocol.DocumentID) (StoredDocument, bool, error) {
	key := DocumentKey(t.Contract, t.Name, id)
	v, err := kv.Get(key)
	if err != nil || v == nil {
		return StoredDocument{}, false, err
	}
	d, err := DecodeStoredDocument(key, v, t.DocumentType)
	return d, err == nil, err
}

// DecodeStoredDocument reads the value of a document row or history row at key.
func DecodeStoredDocument(key, v []byte, t protocol.DocumentType) (StoredDocument, error) {
	f, payload, err := SplitFlags(v)
	if err != nil {
		return StoredDocument{}, ErrCorrupt{Key: key, Reason: err.Error()}
	}
	d, err := protocol.DecodeDocument(payload, t)
	if err != nil {
		return StoredDocument{}, ErrCorrupt{Key: key, Reason: err.Error()}
	}
	return StoredDocument{Document: d, Flags: f}, nil
}

// InsertDocument stores a new document d of type t with its index entries, history row
// and counts, its bytes paid by s.Payer. A unique index whose values another document
// holds refuses it (ErrDuplicateUniqueIndex) before anything is written.
func InsertDocument(kv KV, s *Storage, t DocumentType, d protocol.Document) error {
	if err := checkUnique(kv, s, t, d, nil); err != nil {
		return err
	}
	defer s.writing(t.DocumentType, d, true)()
	enc := d.Encode(t.DocumentType)
	if err := s.putItem(kv, DocumentKey(t.Contract, t.Name, d.ID), enc); err != nil {
		return err
	}
	if err := putHistory(kv, s, t, d, enc); err != nil {
		return err
	}
	if at, ok := t.ExpiresAtMs(d); ok {
		key, value := ExpirationKey(at, d.ID), EncodeExpiration(t.Contract, t.Name)
		s.ttl.Bytes += uint64(len(key) + len(value))
		s.ttl.DocumentBytes += uint64(len(enc))
		if err := kv.Set(key, value); err != nil {
			return err
		}
	}
	for _, ix := range t.Indices {
		if ix.TimeRange != nil {
			continue // updateWindows
		}
		values, _ := IndexValues(IndexFields(t.DocumentType, ix), d)
		if err := s.putItem(kv, IndexEntryKey(t.Contract, t.Name, ix.Name, values, d.ID), nil); err != nil {
			return err
		}
	}
	if err := updateWindows(kv, s, t, nil, &d); err != nil {
		return err
	}
	return updateCounts(kv, t, nil, &d)
}

// ReplaceDocument writes after over the stored document before (same id): the row is
// resized (growth paid by s.Payer, a shrink refunded to the bytes' payers), the index
// entries whose values changed are moved, counts and sums follow. A unique index whose
// new values another document holds refuses it before anything is written.
func ReplaceDocument(kv KV, s *Storage, t DocumentType, before StoredDocument, after protocol.Document) error {
	if err := checkUnique(kv, s, t, after, &before.Document); err != nil {
		return err
	}
	defer s.writing(t.DocumentType, after, false)()
	if from, ok := t.ExpiresAtMs(before.Document); ok && from != s.ttl.ExpiresAtMs {
		s.ttl.Renewed, s.ttl.RenewedFromMs = keptBytes(t, before.Document, after, s.AtMs), from
	}
	enc, was := after.Encode(t.DocumentType), before.Encode(t.DocumentType)
	if s.ttl != nil && len(enc) > len(was) {
		s.ttl.DocumentBytes += uint64(len(enc) - len(was))
	}
	if err := s.resizeItem(kv, DocumentKey(t.Contract, t.Name, after.ID), before.Flags, len(was), enc); err != nil {
		return err
	}
	if err := putHistory(kv, s, t, after, enc); err != nil {
		return err
	}
	if err := moveExpiration(kv, t, before.Document, after); err != nil {
		return err
	}
	for _, ix := range t.Indices {
		if ix.TimeRange != nil {
			continue // updateWindows
		}
		fields := IndexFields(t.DocumentType, ix)
		old, _ := IndexValues(fields, before.Document)
		next, _ := IndexValues(fields, after)
		if bytes.Equal(old, next) {
			continue
		}
		if err := dropIndexEntry(kv, s, IndexEntryKey(t.Contract, t.Name, ix.Name, old, before.ID)); err != nil {
			return err
		}
		if err := s.putItem(kv, IndexEntryKey(t.Contract, t.Name, ix.Name, next, after.ID), nil); err != nil {
			return err
		}
	}
	if err := updateWindows(kv, s, t, &before.Document, &after); err != nil {
		return err
	}
	return updateCounts(kv, t, &before.Document, &after)
}

// LifetimeBytes is what document d of type t, a type with a ttl, holds in the state at
// block time atMs, as its writes count it (Storage.Lifetime): its row (key and
// encoding), its index entries, its entries under time-range grids without a ttl, and
// its expirations tree entry. Count records and entries under ttl'd grids are not
// lifetime storage.
func LifetimeBytes(t DocumentType, d protocol.Document, atMs uint64) uint64 {
	return keptBytes(t, d, d, atMs)
}

// keptBytes is what of before's lifetime storage (LifetimeBytes) a write of after at
// block time atMs keeps: its row up to the shorter of the two encodings, the index
// entries and entries under grids without a ttl that after has under the same keys,
// and its expirations entry, which the write moves. What the write adds it pays as new
// bytes, and what it removes is no longer held: a renewal renews what it keeps
// (docs/STATE.md, "Renewal").
func keptBytes(t DocumentType, before, after protocol.Document, atMs uint64) uint64 {
	n := uint64(len(DocumentKey(t.Contract, t.Name, before.ID)) + min(len(before.Encode(t.DocumentType)), len(after.Encode(t.DocumentType))))
	for _, ix := range t.Indices {
		if ix.TimeRange != nil {
			continue
		}
		fields := IndexFields(t.DocumentType, ix)
		values, _ := IndexValues(fields, before)
		if next, _ := IndexValues(fields, after); bytes.Equal(values, next) {
			n += uint64(len(IndexEntryKey(t.Contract, t.Name, ix.Name, values, before.ID)))
		}
	}
	kept := map[string]bool{}
	for _, w := range WindowItems(t.DocumentType, &after, atMs, false) {
		kept[string(w.EntryKey(t, after.ID))] = true
	}
	for _, w := range WindowItems(t.DocumentType, &before, atMs, false) {
		if key := w.EntryKey(t, before.ID); w.Index.TimeRange.TTL == 0 && kept[string(key)] {
			n += uint64(len(key))
		}
	}
	if at, ok := t.ExpiresAtMs(before); ok {
		n += uint64(len(ExpirationKey(at, before.ID)) + len(EncodeExpiration(t.Contract, t.Name)))
	}
	return n
}

// RemoveDocument is the one deletion path: every removal of a document (its owner's
// delete, and the platform's removals to come) goes through it. It deletes the document
// as read once by the caller (before), every index entry of it, every history row, and
// brings the counts and sums down; each item's bytes are refunded to their payers as
// far as their storage fee has not paid out. Whatever else a document owns is removed
// here too, so that no path can forget it.
func RemoveDocument(kv KV, s *Storage, t DocumentType, before StoredDocument) error {
	for _, ix := range t.Indices {
		if ix.TimeRange != nil {
			continue // updateWindows
		}
		values, _ := IndexValues(IndexFields(t.DocumentType, ix), before.Document)
		if err := dropIndexEntry(kv, s, IndexEntryKey(t.Contract, t.Name, ix.Name, values, before.ID)); err != nil {
			return err
		}
	}
	if t.DocumentsKeepHistory {
		prefix := DocumentHistoryPrefix(t.Contract, t.Name, before.ID)
		var rows [][2][]byte
		err := kv.Iterate(prefix, PrefixEnd(prefix), func(k, v []byte) (bool, error) {
			rows = append(rows, [2][]byte{append([]byte(nil), k...), append([]byte(nil), v...)})
			return false, nil
		})
		if err != nil {
			return err
		}
		for _, r := range rows {
			f, payload, err := SplitFlags(r[1])
			if err != nil {
				return ErrCorrupt{Key: r[0], Reason: err.Error()}
			}
			if err := s.dropItem(kv, r[0], f, len(payload)); err != nil {
				return err
			}
		}
	}
	if err := s.dropItem(kv, DocumentKey(t.Contract, t.Name, before.ID), before.Flags, len(before.Encode(t.DocumentType))); err != nil {
		return err
	}
	// The ttl hook: the document's expirations tree entry goes with it, whoever
	// deletes it, so a document deleted early leaves nothing for the cleanup.
	if at, ok := t.ExpiresAtMs(before.Document); ok {
		if err := kv.Delete(ExpirationKey(at, before.ID)); err != nil {
			return err
		}
	}
	if err := updateWindows(kv, s, t, &before.Document, nil); err != nil {
		return err
	}
	return updateCounts(kv, t, &before.Document, nil)
}

// moveExpiration moves the expirations tree entry of a document of a type with a ttl
// whose expiry a write changes (a renewal, protocol version 15): the entry of its old
// expiry goes, the one of its new expiry comes, of the same size, so the tree keeps one
// entry per document and nothing of the old expiry time is left behind.
func moveExpiration(kv KV, t DocumentType, before, after protocol.Document) error {
	was, ok := t.ExpiresAtMs(before)
	at, _ := t.ExpiresAtMs(after)
	if !ok || was == at {
		return nil
	}
	if err := kv.Delete(ExpirationKey(was, before.ID)); err != nil {
		return err
	}
	return kv.Set(ExpirationKey(at, after.ID), EncodeExpiration(t.Contract, t.Name))
}

// putHistory stores revision d of a type that keeps history.
func putHistory(kv KV, s *Storage, t DocumentType, d protocol.Document, enc []byte) error {
	if !t.DocumentsKeepHistory {
		return nil
	}
	return s.putItem(kv, DocumentHistoryKey(t.Contract, t.Name, d.ID, d.Revision), enc)
}

// dropIndexEntry reads the flags of an index entry and deletes it. A missing entry is
// ErrCorrupt: entries are written with their document.
func dropIndexEntry(kv KV, s *Storage, key []byte) error {
	v, err := kv.Get(key)
	if err != nil {
		return err
	}
	if v == nil {
		return ErrCorrupt{Key: key, Reason: "the index entry of a stored document is missing"}
	}
	f, payload, err := SplitFlags(v)
	if err != nil {
		return ErrCorrupt{Key: key, Reason: err.Error()}
	}
	return s.dropItem(kv, key, f, len(payload))
}

// checkUnique refuses d when a unique index of t whose values are all set holds them
// for another document. before is the document d replaces (nil for a create): an index
// whose values it does not change is not looked at.
func checkUnique(kv KV, s *Storage, t DocumentType, d protocol.Document, before *protocol.Document) error {
	for _, ix := range t.Indices {
		if !ix.Unique {
			continue
		}
		fields := IndexFields(t.DocumentType, ix)
		values, allSet := IndexValues(fields, d)
		if !allSet {
			continue
		}
		if before != nil {
			if old, _ := IndexValues(fields, *before); bytes.Equal(old, values) {
				continue
			}
		}
		prefix := IndexValuesPrefix(t.Contract, t.Name, ix.Name, values)
		if ix.TimeRange != nil {
			// range == step on $createdAt (the parser's rule): d lies in one window.
			windows := WindowItems(t.DocumentType, &d, s.AtMs, false)
			if len(windows) == 0 {
				continue
			}
			w := windows[0]
			prefix = WindowValuesPrefix(t.Contract, t.Name, ix.TimeRange.Grid(), w.StartMs, ix.Name, values)
		}
		var other *protocol.DocumentID
		err := kv.Iterate(prefix, PrefixEnd(prefix), func(k, _ []byte) (bool, error) {
			var id protocol.DocumentID
			copy(id[:], k[len(k)-protocol.DocumentIDLen:])
			if id == d.ID {
				return false, nil
			}
			other = &id
			return true, nil
		})
		if err != nil {
			return err
		}
		if other != nil {
			return protocol.ErrDuplicateUniqueIndex{ID: d.ID, Other: *other, Index: ix.Name}
		}
	}
	return nil
}

// IndexCount is the record of a countable or summable index for some leading values:
// how many documents have them and the sum of their summable property.
type IndexCount struct {
	Count uint64
	Sum   Int128
}

// indexCountLen: count u64, sum hi i64, sum lo u64.
const indexCountLen = 24

// EncodeIndexCount: count u64 ++ sum as 16 bytes big-endian two's complement.
func EncodeIndexCount(c IndexCount) []byte {
	out := binary.BigEndian.AppendUint64(nil, c.Count)
	out = binary.BigEndian.AppendUint64(out, uint64(c.Sum.Hi))
	return binary.BigEndian.AppendUint64(out, c.Sum.Lo)
}

// DecodeIndexCount reads a value written by EncodeIndexCount.
func DecodeIndexCount(v []byte) (IndexCount, bool) {
	if len(v) != indexCountLen {
		return IndexCount{}, false
	}
	return IndexCount{
		Count: binary.BigEndian.Uint64(v),
		Sum:   Int128{Hi: int64(binary.BigEndian.Uint64(v[8:])), Lo: binary.BigEndian.Uint64(v[16:])},
	}, true
}

// GetIndexCount reads the count record of index of type t for the encoded leading
// values prefix (absent: no document has them).
func GetIndexCount(kv KV, t DocumentType, index string, prefix []byte) (IndexCount, error) {
	key := IndexCountKey(t.Contract, t.Name, index, prefix)
	v, err := kv.Get(key)
	if err != nil || v == nil {
		return IndexCount{}, err
	}
	c, ok := DecodeIndexCount(v)
	if !ok {
		return IndexCount{}, ErrCorrupt{Key: key, Reason: "not a count record"}
	}
	return c, nil
}

// updateCounts moves the count records of t's countable and summable indexes from
// before's contributions (nil: none) to after's (nil: none), and then the windows'
// (updateWindowCounts does those). Records are written in key order, only where
// something changed, and removed when their count reaches 0.
func updateCounts(kv KV, t DocumentType, before, after *protocol.Document) error {
	deltas := map[string]*countDelta{}
	add := func(d *protocol.Document, sign int64) {
		for _, ix := range t.Indices {
			if ix.TimeRange != nil || (!ix.Countable && ix.Summable == "") {
				continue
			}
			for _, prefix := range IndexPrefixes(IndexFields(t.DocumentType, ix), *d) {
				k := string(IndexCountKey(t.Contract, t.Name, ix.Name, prefix))
				deltas[k] = deltas[k].add(sign, SummableValue(t.DocumentType, ix, *d))
			}
		}
	}
	if before != nil {
		add(before, -1)
	}
	if after != nil {
		add(after, 1)
	}
	return applyCountDeltas(kv, deltas, nil)
}

// SummableValue is what d adds to ix's sums: its summable property (unset: 0), or 0.
func SummableValue(t protocol.DocumentType, ix protocol.Index, d protocol.Document) int64 {
	if ix.Summable == "" {
		return 0
	}
	p, _ := t.Property(ix.Summable)
	return d.Value(p.Position).Int
}

// countDelta is how a write moves one count record.
type countDelta struct {
	count int64
	sum   Int128
}

// add returns d (a new one for nil) moved by one document of summable value v, added
// (sign 1) or taken away (-1).
func (d *countDelta) add(sign, v int64) *countDelta {
	if d == nil {
		d = &countDelta{}
	}
	d.count += sign
	if sign > 0 {
		d.sum = d.sum.Add(Int64(v))
	} else {
		d.sum = d.sum.Sub(Int64(v))
	}
	return d
}

// applyCountDeltas applies deltas to their count records in key order, skipping those
// that move nothing, removing a record whose count reaches 0; changed (when not nil)
// hears each record's move.
func applyCountDeltas(kv KV, deltas map[string]*countDelta, changed func(key string, from, to IndexCount)) error {
	keys := make([]string, 0, len(deltas))
	for k, d := range deltas {
		if d.count != 0 || !d.sum.IsZero() {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		key := []byte(k)
		dl := deltas[k]
		v, err := kv.Get(key)
		if err != nil {
			return err
		}
		var c IndexCount
		if v != nil {
			var ok bool
			if c, ok = DecodeIndexCount(v); !ok {
				return ErrCorrupt{Key: key, Reason: "not a count record"}
			}
		}
		if dl.count < 0 && c.Count < uint64(-dl.count) {
			return ErrCorrupt{Key: key, Reason: "a count record below the documents it counts"}
		}
		from := c
		c.Count = uint64(int64(c.Count) + dl.count)
		c.Sum = c.Sum.Add(dl.sum)
		if changed != nil {
			changed(k, from, c)
		}
		if c.Count == 0 {
			if !c.Sum.IsZero() {
				return ErrCorrupt{Key: key, Reason: "a count record of no documents sums to something"}
			}
			if err := kv.Delete(key); err != nil {
				return err
			}
			continue
		}
		if err := kv.Set(key, EncodeIndexCount(c)); err != nil {
			return err
		}
	}
	return nil
}
