package invariants

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// ErrDocuments: the documents tree breaks one of CheckDocuments' rules at Key.
type ErrDocuments struct {
	Key    []byte
	Reason string
}

func (e ErrDocuments) Error() string {
	return fmt.Sprintf("invariants: documents broken at %x: %s", e.Key, e.Reason)
}

// CheckDocuments reads every key of the data contracts tree the long way and checks the
// rules the document writes keep (docs/STATE.md): every key under a contract is its
// definition or an entry of one of its document types; a document row or history row
// decodes under its type, in its one encoding, with the id (and revision) of its key;
// every index entry points at a stored document whose values encode to the entry's key,
// and every stored document has one entry in each index of its type; every count record
// equals a recount of the documents (count and sum for each leading-values prefix) and
// no record exists for a prefix no document has; a type that keeps history holds
// revisions 1 up to the stored one of each stored document, and no other; every item's
// storage flags account for exactly its key and its payload. The first rule broken is
// returned as ErrDocuments naming the key. It is a check for tests and
// simulations, not for every block.
func CheckDocuments(kv drive.KV) error {
	expiring := map[string]bool{} // the expirations entries the stored documents want
	if err := checkDocumentsTree(kv, expiring); err != nil {
		return err
	}
	return checkExpirations(kv, expiring)
}

// checkExpirations checks the documents expirations tree against the documents of
// types with a ttl: one entry per such document, at its expiry, naming its contract
// and type, and no other entry.
func checkExpirations(kv drive.KV, want map[string]bool) error {
	seen := 0
	err := kv.Iterate(drive.ExpirationsPrefix(), drive.PrefixEnd(drive.ExpirationsPrefix()), func(k, _ []byte) (bool, error) {
		if !want[string(k)] {
			return true, ErrDocuments{Key: append([]byte(nil), k...), Reason: "an expirations entry without its document"}
		}
		seen++
		return false, nil
	})
	if err != nil {
		return err
	}
	if seen != len(want) {
		for _, k := range sortedStrings(want) {
			if v, err := kv.Get([]byte(k)); err != nil || v == nil {
				return ErrDocuments{Key: []byte(k), Reason: "a document with a ttl has no expirations entry"}
			}
		}
	}
	return nil
}

func sortedStrings(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func checkDocumentsTree(kv drive.KV, expiring map[string]bool) error {
	root := []byte{drive.RootDataContracts}
	last, _, err := drive.GetLastBlock(kv)
	if err != nil {
		return err
	}
	var (
		version  protocol.Version
		haveVer  bool
		contract *protocol.Contract
		types    map[string]*typeScan
		names    []string
	)
	finish := func() error {
		for _, n := range names {
			if err := types[n].check(); err != nil {
				return err
			}
			for _, k := range types[n].expiring {
				expiring[k] = true
			}
		}
		return nil
	}
	err = kv.Iterate(root, drive.PrefixEnd(root), func(k, v []byte) (bool, error) {
		broken := func(reason string) (bool, error) {
			return true, ErrDocuments{Key: append([]byte(nil), k...), Reason: reason}
		}
		if id, ok := drive.ParseContractKey(k); ok {
			if err := finish(); err != nil {
				return true, err
			}
			if !haveVer {
				var err error
				if version, err = drive.GetProtocolVersion(kv); err != nil {
					return true, err
				}
				haveVer = true
			}
			c, err := protocol.DecodeContract(v, version)
			if err != nil {
				return broken("the contract does not decode: " + err.Error())
			}
			if c.ID != id {
				return broken(fmt.Sprintf("the contract stored here has id %s", c.ID))
			}
			contract, types, names = &c, map[string]*typeScan{}, nil
			for _, t := range c.DocumentTypes {
				types[t.Name] = newTypeScan(drive.DocumentType{Contract: c.ID, DocumentType: t}, last.TimeMs)
				names = append(names, t.Name)
			}
			return false, nil
		}
		if rc, typeName, _, ok := drive.ParseRemovalKey(k); ok {
			if contract == nil || rc != contract.ID {
				return broken("a removal record of a contract that is not stored")
			}
			if t, ok := contract.DocumentType(typeName); !ok || !t.ModeratorsDelete() || !t.ModeratorAbilities.DeleteKeepsRecord {
				return broken(fmt.Sprintf("a removal record of type %q, whose moderators keep none", typeName))
			}
			if _, err := drive.DecodeRemovalValue(k, v); err != nil {
				return broken("the removal record does not decode: " + err.Error())
			}
			return false, nil
		}
		p, ok := drive.ParseDocumentKey(k)
		if !ok {
			return broken("neither a contract, a document nor a removal record key")
		}
		if contract == nil || p.Contract != contract.ID {
			return broken("a document key of a contract that is not stored")
		}
		ts := types[p.Type]
		if ts == nil {
			return broken(fmt.Sprintf("a document key of type %q, which the contract does not have", p.Type))
		}
		if err := ts.add(k, v, p); err != nil {
			return true, err
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	return finish()
}

// typeScan gathers the keys of one document type as the scan meets them.
type typeScan struct {
	t       drive.DocumentType
	docs    map[protocol.DocumentID]protocol.Document
	ids     []protocol.DocumentID // in key order
	history map[protocol.DocumentID][]uint64
	hkeys   map[protocol.DocumentID][]byte // the first history key of each document
	entries map[string]protocol.DocumentID // index entry key -> the id it names
	ekeys   []string
	counts  map[string]drive.IndexCount
	ckeys   []string
	// expiring are the expirations tree keys of the type's documents (ttl types).
	expiring []string
	// nowMs is the last block's time: which windows are within their ttl.
	nowMs uint64
	// windows are the keys under the type's time-range windows, parsed, and their
	// count records' and ranks' values.
	windows     map[string]drive.WindowKeyParts
	wkeys       []string
	windowCount map[string]drive.IndexCount
}

func newTypeScan(t drive.DocumentType, nowMs uint64) *typeScan {
	return &typeScan{
		t:           t,
		nowMs:       nowMs,
		windows:     map[string]drive.WindowKeyParts{},
		windowCount: map[string]drive.IndexCount{},
		docs:        map[protocol.DocumentID]protocol.Document{},
		history:     map[protocol.DocumentID][]uint64{},
		hkeys:       map[protocol.DocumentID][]byte{},
		entries:     map[string]protocol.DocumentID{},
		counts:      map[string]drive.IndexCount{},
	}
}

func (s *typeScan) index(name string) (protocol.Index, bool) {
	for _, ix := range s.t.Indices {
		if ix.Name == name {
			return ix, true
		}
	}
	return protocol.Index{}, false
}

// add checks what one key says alone and keeps it for check.
func (s *typeScan) add(k, v []byte, p drive.DocumentKeyParts) error {
	key := append([]byte(nil), k...)
	broken := func(reason string) error { return ErrDocuments{Key: key, Reason: reason} }
	if p.Entry == drive.DocumentEntryWindow {
		return s.addWindowKey(key, v, *p.Window)
	}
	if p.Entry == drive.DocumentEntryCount {
		ix, ok := s.index(p.Index)
		if !ok || (!ix.Countable && ix.Summable == "") {
			return broken(fmt.Sprintf("a count record of %q, which is no countable or summable index of the type", p.Index))
		}
		c, ok := drive.DecodeIndexCount(v)
		if !ok {
			return broken("not a count record")
		}
		s.counts[string(key)] = c
		s.ckeys = append(s.ckeys, string(key))
		return nil
	}
	f, payload, err := drive.SplitFlags(v)
	if err != nil {
		return broken("storage flags: " + err.Error())
	}
	if s.t.TTLSeconds > 0 {
		if len(f) > 0 {
			return broken("an item of a document with a ttl carries storage flags")
		}
	} else if want := uint64(len(k) + len(payload)); f.Bytes() != want {
		return broken(fmt.Sprintf("storage flags account for %d bytes, the key and payload are %d", f.Bytes(), want))
	}
	switch p.Entry {
	case drive.DocumentEntryIndex:
		if _, ok := s.index(p.Index); !ok {
			return broken(fmt.Sprintf("an entry of index %q, which the type does not have", p.Index))
		}
		if len(payload) != 0 {
			return broken(fmt.Sprintf("an index entry with a %d-byte payload", len(payload)))
		}
		s.entries[string(key)] = p.ID
		s.ekeys = append(s.ekeys, string(key))
		return nil
	case drive.DocumentEntryHistory:
		if !s.t.DocumentsKeepHistory {
			return broken("a history row of a type that keeps no history")
		}
	}
	d, err := protocol.DecodeDocument(payload, s.t.DocumentType)
	if err != nil {
		return broken("the document does not decode under its type: " + err.Error())
	}
	if !bytes.Equal(d.Encode(s.t.DocumentType), payload) {
		return broken("the document is not in its one encoding")
	}
	if d.ID != p.ID {
		return broken(fmt.Sprintf("the row holds document %s", d.ID))
	}
	if p.Entry == drive.DocumentEntryHistory {
		if d.Revision != p.Revision {
			return broken(fmt.Sprintf("the history row of revision %d holds revision %d", p.Revision, d.Revision))
		}
		if _, ok := s.hkeys[p.ID]; !ok {
			s.hkeys[p.ID] = key
		}
		s.history[p.ID] = append(s.history[p.ID], p.Revision)
		return nil
	}
	if d.Revision == 0 {
		return broken("a document at revision 0")
	}
	s.docs[d.ID] = d
	if at, ok := s.t.ExpiresAtMs(d); ok {
		s.expiring = append(s.expiring, string(drive.ExpirationKey(at, d.ID)))
	}
	s.ids = append(s.ids, d.ID)
	return nil
}

// check compares what the type's keys hold with what its documents call for.
func (s *typeScan) check() error {
	t := s.t
	want := map[string]protocol.DocumentID{}
	counts := map[string]drive.IndexCount{}
	for _, id := range s.ids {
		d := s.docs[id]
		for _, ix := range t.Indices {
			if ix.TimeRange != nil {
				continue // checkWindows
			}
			fields := drive.IndexFields(t.DocumentType, ix)
			values, _ := drive.IndexValues(fields, d)
			k := drive.IndexEntryKey(t.Contract, t.Name, ix.Name, values, id)
			if _, ok := s.entries[string(k)]; !ok {
				return ErrDocuments{Key: drive.DocumentKey(t.Contract, t.Name, id), Reason: fmt.Sprintf("the document has no entry %x in index %q", k, ix.Name)}
			}
			want[string(k)] = id
			if !ix.Countable && ix.Summable == "" {
				continue
			}
			var sum int64
			if ix.Summable != "" {
				p, _ := t.Property(ix.Summable)
				sum = d.Value(p.Position).Int
			}
			for _, prefix := range drive.IndexPrefixes(fields, d) {
				ck := string(drive.IndexCountKey(t.Contract, t.Name, ix.Name, prefix))
				c := counts[ck]
				c.Count++
				c.Sum = c.Sum.Add(drive.Int64(sum))
				counts[ck] = c
			}
		}
		if t.DocumentsKeepHistory {
			revs := s.history[id]
			if uint64(len(revs)) != d.Revision {
				return ErrDocuments{Key: drive.DocumentKey(t.Contract, t.Name, id), Reason: fmt.Sprintf("the document is at revision %d, its history holds %d revisions", d.Revision, len(revs))}
			}
			for i, r := range revs {
				if r != uint64(i+1) {
					return ErrDocuments{Key: drive.DocumentHistoryKey(t.Contract, t.Name, id, r), Reason: fmt.Sprintf("history revision %d where %d belongs", r, i+1)}
				}
			}
		}
	}
	for _, k := range s.ekeys {
		if _, ok := want[k]; ok {
			continue
		}
		id := s.entries[k]
		reason := "the index entry points at no stored document"
		if _, ok := s.docs[id]; ok {
			reason = fmt.Sprintf("the index entry's values are not those of document %s", id)
		}
		return ErrDocuments{Key: []byte(k), Reason: reason}
	}
	hids := make([]protocol.DocumentID, 0, len(s.hkeys))
	for id := range s.hkeys {
		hids = append(hids, id)
	}
	sort.Slice(hids, func(i, j int) bool { return bytes.Compare(hids[i][:], hids[j][:]) < 0 })
	for _, id := range hids {
		if _, ok := s.docs[id]; !ok {
			return ErrDocuments{Key: s.hkeys[id], Reason: "a history row of a document that is not stored"}
		}
	}
	for _, k := range s.ckeys {
		want, ok := counts[k]
		if !ok {
			return ErrDocuments{Key: []byte(k), Reason: "a count record for leading values no document has"}
		}
		if got := s.counts[k]; got != want {
			return ErrDocuments{Key: []byte(k), Reason: fmt.Sprintf("the record counts %d summing to %s, the documents %d summing to %s", got.Count, got.Sum, want.Count, want.Sum)}
		}
	}
	var missing []string
	for k := range counts {
		if _, ok := s.counts[k]; !ok {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		return ErrDocuments{Key: []byte(missing[0]), Reason: "no count record where documents have these leading values"}
	}
	return s.checkWindows()
}

// addWindowKey checks one key under a time-range window alone and keeps it.
func (s *typeScan) addWindowKey(key, v []byte, w drive.WindowKeyParts) error {
	broken := func(reason string) error { return ErrDocuments{Key: key, Reason: reason} }
	ix, ok := s.index(w.Index)
	if !ok || ix.TimeRange == nil || ix.TimeRange.Grid() != w.Grid {
		return broken(fmt.Sprintf("a window key of %q, which is no time-range index of the type on this grid", w.Index))
	}
	if !w.Grid.IsStart(w.StartMs) {
		return broken(fmt.Sprintf("a window starting at %d, no start of its grid", w.StartMs))
	}
	switch {
	case w.Part == drive.WindowCount:
		c, ok := drive.DecodeIndexCount(v)
		if !ok || (!ix.Countable && ix.Summable == "") {
			return broken("not a count record of a countable or summable index")
		}
		s.windowCount[string(key)] = c
	case w.Part == drive.WindowRank && !ix.Ranked:
		return broken("a rank of an index that is not ranked")
	case w.Part == drive.WindowRank || ix.TimeRange.TTL > 0:
		if !bytes.Equal(v, drive.Ephemeral) {
			return broken("a rank, or an entry under a ttl'd grid, that holds more than its marker (storage flags?)")
		}
	default:
		f, payload, err := drive.SplitFlags(v)
		if err != nil || len(payload) != 0 {
			return broken(fmt.Sprintf("a window entry whose value is no storage flags alone (%v)", err))
		}
		if s.t.TTLSeconds == 0 && f.Bytes() != uint64(len(key)) {
			return broken(fmt.Sprintf("storage flags account for %d bytes, the key is %d", f.Bytes(), len(key)))
		}
	}
	s.windows[string(key)] = w
	s.wkeys = append(s.wkeys, string(key))
	return nil
}

// checkWindows checks the type's time-range windows against its documents at the last
// block's time: every standing entry in a live window points to a live document and
// every live document has its entries in every live window it belongs to
// (docs/STATE.md, "Time-range windows"):
//
//   - every stored document has its entry in each window within its ttl that holds it;
//   - every standing entry, in a window within its ttl or past it, is one of a stored
//     document's (a user's delete leaves none behind in a partly drained window);
//   - in the windows within their ttl, the count records are those the documents call
//     for, and a ranked index has one rank per counted group, at its count.
//
// A window past its ttl may stand partly drained, so its counts and ranks are not
// checked.
func (s *typeScan) checkWindows() error {
	t := s.t
	all := map[string]bool{}  // every entry of a stored document, any window
	live := map[string]bool{} // those in windows within their ttl
	counts := map[string]drive.IndexCount{}
	ranked := map[string]bool{} // the count records of ranked groups
	for _, id := range s.ids {
		d := s.docs[id]
		for _, w := range drive.WindowItems(t.DocumentType, &d, s.nowMs, true) {
			k := string(w.EntryKey(t, id))
			all[k] = true
			if w.Expired {
				continue
			}
			if _, ok := s.windows[k]; !ok {
				return ErrDocuments{Key: drive.DocumentKey(t.Contract, t.Name, id), Reason: fmt.Sprintf("the document has no entry %x in the window at %d of %q", k, w.StartMs, w.Index.Name)}
			}
			live[k] = true
			if !w.Index.Countable && w.Index.Summable == "" {
				continue
			}
			prefixes := drive.IndexPrefixes(drive.IndexFields(t.DocumentType, w.Index), d)
			for i, prefix := range prefixes {
				ck := string(drive.WindowCountKey(t.Contract, t.Name, w.Index.TimeRange.Grid(), w.StartMs, w.Index.Name, prefix))
				if w.Index.Ranked && i == len(prefixes)-1 {
					ranked[ck] = true
				}
				c := counts[ck]
				c.Count++
				c.Sum = c.Sum.Add(drive.Int64(drive.SummableValue(t.DocumentType, w.Index, d)))
				counts[ck] = c
			}
		}
	}
	seen := map[string]bool{}
	for _, k := range s.wkeys {
		w := s.windows[k]
		ix, _ := s.index(w.Index)
		expired := ix.TimeRange.Expired(w.StartMs, s.nowMs)
		switch w.Part {
		case drive.WindowEntry:
			if !all[k] {
				return ErrDocuments{Key: []byte(k), Reason: "a window entry that is no stored document's"}
			}
		case drive.WindowCount:
			if expired {
				continue
			}
			want, ok := counts[k]
			if !ok || want != s.windowCount[k] {
				return ErrDocuments{Key: []byte(k), Reason: fmt.Sprintf("the window count record holds %+v, the documents call for %+v", s.windowCount[k], want)}
			}
			seen[k] = true
		case drive.WindowRank:
			if expired {
				continue
			}
			ck := string(drive.WindowCountKey(t.Contract, t.Name, w.Grid, w.StartMs, w.Index, w.Values))
			if c := counts[ck]; c.Count != w.Count || w.Count == 0 {
				return ErrDocuments{Key: []byte(k), Reason: fmt.Sprintf("a rank at count %d of a group the documents count %d times", w.Count, c.Count)}
			}
			rk := "rank " + ck
			if seen[rk] {
				return ErrDocuments{Key: []byte(k), Reason: "a second rank of one group"}
			}
			seen[rk] = true
		}
	}
	for _, ck := range slices.Sorted(maps.Keys(counts)) {
		if !seen[ck] {
			return ErrDocuments{Key: []byte(ck), Reason: "no window count record where documents lie"}
		}
		if ranked[ck] && !seen["rank "+ck] {
			return ErrDocuments{Key: []byte(ck), Reason: "a counted group with no rank"}
		}
	}
	return nil
}
