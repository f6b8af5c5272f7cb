package sim

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// chooser is where a documents batch's choices come from: the generator's seeded
// random source or the fuzzer's bytes.
type chooser interface {
	n(max int) int // 0..max-1
	u64() uint64
}

type rngChooser struct{ r *rand.Rand }

func (c rngChooser) n(max int) int { return c.r.Intn(max) }
func (c rngChooser) u64() uint64   { return c.r.Uint64() }

// docRef names a document a batch created or tried to create.
type docRef struct {
	typ     string
	id      protocol.DocumentID
	creator protocol.IdentityID
	entropy [32]byte
}

// documentBatches makes documents batches against known contracts and remembers the
// documents their creates name, so that most later actions hit stored documents. The
// stored document (owner, revision, price) is read from state when an action is made.
type documentBatches struct {
	pick chooser
	docs map[protocol.ContractID][]docRef
	// owners finds a known identity by id: the identities batch was given, indexed as
	// they grow (the first position of each id).
	owners  map[protocol.IdentityID]int
	indexed int
	// identities are those of the batch being made: signers and recipients.
	identities []identity
	// nowMs is the time of the block the batches are for, 0 when not known; a batch
	// that changes a sampled document expired at nowMs sets expiredChange.
	nowMs         uint64
	expiredChange bool
	// expiredUnique: the batch creates the unique values of a sampled document that has
	// expired at nowMs and waits for the cleanup: "a create of the same unique value is
	// refused as a duplicate until the cleanup has run" (Document Time To Live).
	expiredUnique bool
	// contract is the stored contract of the batch being made (zero: none), whose
	// moderators may delete and restore and whose references name its documents.
	contract protocol.Contract
	// removed keeps, by their hash, the encodings of documents a moderator's deletion
	// was made for (at most maxRemembered, the oldest forgotten first), so that a later
	// batch can restore them; restorable are the removal records of the batch's contract
	// whose document is known.
	removed     map[[32]byte][]byte
	removedFIFO [][32]byte
	restorable  []drive.StoredRemoval
	// kv is the state the batch is made against, where references find their targets.
	kv drive.KV
	// renewal: the version in force renews documents (protocol version 15 on).
	renewal bool
}

// maxRemembered bounds the removed documents a generator keeps for restores.
const maxRemembered = 512

func newDocumentBatches(pick chooser) *documentBatches {
	return &documentBatches{pick: pick, docs: map[protocol.ContractID][]docRef{}, owners: map[protocol.IdentityID]int{}, removed: map[[32]byte][]byte{}}
}

// remember keeps the encoding of a document a moderator's deletion is made for.
func (b *documentBatches) remember(enc []byte) {
	h := protocol.DocumentHash(enc)
	if _, ok := b.removed[h]; ok {
		return
	}
	if len(b.removedFIFO) == maxRemembered {
		delete(b.removed, b.removedFIFO[0])
		b.removedFIFO = b.removedFIFO[1:]
	}
	b.removed[h] = enc
	b.removedFIFO = append(b.removedFIFO, h)
}

// restorables reads up to 8 removal records of contract c whose documents the
// generator knows.
func (b *documentBatches) restorables(kv drive.KV, c protocol.ContractID) ([]drive.StoredRemoval, error) {
	var out []drive.StoredRemoval
	prefix := drive.RemovalsPrefix(c)
	err := kv.Iterate(prefix, drive.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		r, err := drive.DecodeRemovalValue(k, v)
		if err != nil {
			return true, err
		}
		if _, ok := b.removed[r.DocumentHash]; ok {
			out = append(out, r)
		}
		return len(out) == 8, nil
	})
	return out, err
}

// identityOf returns the known identity id, if identities (the list batch was given,
// which only grows) holds it.
func (b *documentBatches) identityOf(identities []identity, id protocol.IdentityID) (identity, bool) {
	if b.indexed > len(identities) { // another list: start over
		b.owners, b.indexed = map[protocol.IdentityID]int{}, 0
	}
	for ; b.indexed < len(identities); b.indexed++ {
		if _, ok := b.owners[identities[b.indexed].id]; !ok {
			b.owners[identities[b.indexed].id] = b.indexed
		}
	}
	i, ok := b.owners[id]
	if !ok || identities[i].id != id {
		return identity{}, false
	}
	return identities[i], true
}

// storedDoc is a sampled document as the batch's maker saw it.
type storedDoc struct {
	ref    docRef
	doc    protocol.Document
	stored bool
}

// batch makes a documents batch on contract c (stored or not) with one to four actions
// of every kind, mostly valid: creates with data made from the stored type, actions on
// documents sampled from those created before, signed by their owner (a purchase by
// someone else) at the next revision, transfers to known identities. invalid makes one
// action wrong in one of the ways fault names (action). Duplicate unique values come of
// themselves: strings are drawn from a few values. identities are the known identities
// (at least one); it returns the batch (its nonce left to the caller) and its signer.
func (b *documentBatches) batch(kv drive.KV, c protocol.ContractID, identities []identity, invalid bool) (*protocol.DocumentsBatch, identity, error) {
	p := b.pick
	b.identities = identities
	b.contract, b.kv = protocol.Contract{ID: c}, kv
	var types []protocol.DocumentType
	v, err := drive.GetProtocolVersion(kv)
	if err != nil {
		return nil, identity{}, err
	}
	l, err := protocol.LimitsFor(v)
	if err != nil {
		return nil, identity{}, err
	}
	b.renewal = l.Renewal
	if raw, err := drive.GetContractBytes(kv, c); err != nil {
		return nil, identity{}, err
	} else if raw != nil {
		if ct, err := protocol.DecodeContract(raw, v); err == nil {
			types, b.contract = ct.DocumentTypes, ct
		}
	}
	if b.restorable, err = b.restorables(kv, c); err != nil {
		return nil, identity{}, err
	}
	var sample []storedDoc
	known := b.docs[c]
	for i := 0; i < 6 && len(known) > 0; i++ {
		ref := known[p.n(len(known))]
		if i%2 == 1 && len(known) > 32 { // half among the latest: alive, or expiring
			ref = known[len(known)-1-p.n(32)]
		}
		s := storedDoc{ref: ref}
		if t, ok := typeNamed(types, ref.typ); ok {
			sd, found, err := drive.GetDocument(kv, drive.DocumentType{Contract: c, DocumentType: t}, ref.id)
			if err != nil {
				return nil, identity{}, err
			}
			s.doc, s.stored = sd.Document, found
		}
		sample = append(sample, s)
	}
	if b.nowMs > 0 && p.n(4) > 0 {
		due, err := b.expired(kv, c, types)
		if err != nil {
			return nil, identity{}, err
		}
		sample = append(due, sample...)
	}
	signer := identities[p.n(len(identities))]
	if m := b.contract.Moderation; m != nil && p.n(2) == 0 { // a moderator, to moderate
		if idn, ok := b.identityOf(identities, m.Moderators[p.n(len(m.Moderators))]); ok {
			signer = idn
		}
	} else if p.n(4) > 0 {
		for _, s := range sample {
			if s.stored {
				if idn, ok := b.identityOf(identities, s.doc.Owner); ok {
					signer = idn
					break
				}
			}
		}
	}
	// A price update now and then sets a boundary price (BoundaryAmount) around the
	// balance of a would-be buyer.
	buyer, _, err := drive.GetIdentityBalance(kv, identities[p.n(len(identities))].id)
	if err != nil {
		return nil, identity{}, err
	}
	t := &protocol.DocumentsBatch{Identity: signer.id, Contract: c}
	bad := -1
	n := []int{1, 1, 1, 1, 2, 2, 3, 4}[p.n(8)]
	if invalid {
		bad = p.n(n)
	}
	used := map[protocol.DocumentID]bool{}
	for i := 0; i < n; i++ {
		a := b.action(t, types, sample, used, buyer, i == bad)
		used[a.ID] = true
		t.Actions = append(t.Actions, a)
	}
	return t, signer, nil
}

// expired samples up to two documents of contract c that have expired at the block's
// time and wait for the cleanup (the expirations tree's entries due at nowMs, among
// the first 64), so that batches try to change them.
func (b *documentBatches) expired(kv drive.KV, c protocol.ContractID, types []protocol.DocumentType) ([]storedDoc, error) {
	var out []storedDoc
	prefix := drive.ExpirationsPrefix()
	end := drive.PrefixEnd(binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), b.nowMs))
	seen := 0
	var due []drive.ExpirationEntry
	err := kv.Iterate(prefix, end, func(k, v []byte) (bool, error) {
		seen++
		if e, ok := drive.DecodeExpirationEntry(k, v); ok && e.Contract == c {
			due = append(due, e)
		}
		return seen == 64, nil
	})
	if err != nil {
		return nil, err
	}
	for i := 0; i < 2 && len(due) > 0; i++ {
		e := due[b.pick.n(len(due))]
		t, ok := typeNamed(types, e.Type)
		if !ok {
			continue
		}
		sd, found, err := drive.GetDocument(kv, drive.DocumentType{Contract: c, DocumentType: t}, e.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, storedDoc{ref: docRef{typ: e.Type, id: e.ID}, doc: sd.Document, stored: found})
	}
	return out, nil
}

// dueContract is the contract of the oldest document expired at nowMs that waits for
// the cleanup, if any.
func (b *documentBatches) dueContract(kv drive.KV) (protocol.ContractID, bool, error) {
	var c protocol.ContractID
	found := false
	prefix := drive.ExpirationsPrefix()
	end := drive.PrefixEnd(binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), b.nowMs))
	err := kv.Iterate(prefix, end, func(k, v []byte) (bool, error) {
		e, ok := drive.DecodeExpirationEntry(k, v)
		c, found = e.Contract, ok
		return true, nil
	})
	return c, found, err
}

// holdsUnique reports whether a create by signer with the data of document d of type
// t is a duplicate in one of t's unique indexes while d is stored: every property of
// the index is required, or is $ownerId and signer owns d (a type whose owner cannot
// delete its documents keeps d stored until the block's cleanup).
func holdsUnique(t protocol.DocumentType, d protocol.Document, signer protocol.IdentityID) bool {
	for _, ix := range t.Indices {
		all := ix.Unique
		for _, ip := range ix.Properties {
			if !(t.IsRequired(ip.Name) && !strings.HasPrefix(ip.Name, "$")) && !(ip.Name == "$ownerId" && d.Owner == signer) {
				all = false
			}
		}
		if all {
			return true
		}
	}
	return false
}

func typeNamed(types []protocol.DocumentType, name string) (protocol.DocumentType, bool) {
	for _, t := range types {
		if t.Name == name {
			return t, true
		}
	}
	return protocol.DocumentType{}, false
}

// fault is the one way a wrong action is made invalid (documentBatches.action). The
// values are the draws of the seeded source: renumbering them changes every run.
type fault int

const (
	noFault              fault = iota - 1 // a valid action
	faultNoSuchType                       // a type the contract does not have
	faultOthersDocument                   // another owner's document
	faultRevision                         // a stale or skipped revision
	faultWrongType                        // data of a wrong type, or a purchase at another price
	faultMissingRequired                  // a missing required property
	faultExtraProperty                    // an extra property
	faultOversizedString                  // an oversized string
	faultFloat                            // a float
	faultNotJSON                          // data that is not JSON
	faultStoredID                         // a create of an id that is stored
	faultKinds                            // the number of faults: not a fault
)

// action makes one action of batch t; buyer is the balance a boundary price is set
// around; wrong makes the action invalid by one fault, drawn among all of them. (A
// fault that does not apply to the action leaves it valid.) In order, each step drawing
// from the seeded source only when the one before made nothing: a create of a stored
// id (faultStoredID), a create of the unique values an expired document holds, a
// restore, a create, a moderator's deletion of a sampled document, or a change of it.
func (b *documentBatches) action(t *protocol.DocumentsBatch, types []protocol.DocumentType, sample []storedDoc, used map[protocol.DocumentID]bool, buyer uint64, wrong bool) protocol.DocumentAction {
	p := b.pick
	f := noFault
	if wrong {
		f = fault(p.n(int(faultKinds)))
	}
	if f == faultStoredID {
		if a, ok := createStored(t, sample, used); ok {
			return a
		}
	}
	if f == noFault && p.n(3) == 0 {
		if a, ok := b.createExpiredUnique(t, types, sample); ok {
			return a
		}
	}
	if b.restoreNow(t) {
		if a, ok := b.restore(t, types, used, wrong); ok {
			return a
		}
	}
	if len(sample) == 0 || p.n(5) < 2 {
		return b.create(t, types, f)
	}
	s, buy := b.choose(t, types, sample, used, f)
	if s == nil {
		return b.create(t, types, f)
	}
	dt, _ := typeNamed(types, s.ref.typ)
	if s.stored && dt.ModeratorsDelete() && b.contract.Moderator(t.Identity) && p.n(2) == 0 {
		return b.moderatorDeletion(*s, dt)
	}
	if !buy && f != faultOthersDocument && s.stored && s.doc.Owner != t.Identity && p.n(4) > 0 {
		return b.create(t, types, f) // none of the signer's own sampled
	}
	kind, ok := b.kind(dt, buy)
	if !ok {
		return b.create(t, types, f)
	}
	return b.change(t, *s, dt, kind, f, buyer)
}

// createStored is faultStoredID's action: the signer's create of a sampled document
// it created, again.
func createStored(t *protocol.DocumentsBatch, sample []storedDoc, used map[protocol.DocumentID]bool) (protocol.DocumentAction, bool) {
	for _, o := range sample {
		if o.stored && o.ref.creator == t.Identity && !used[o.ref.id] {
			return protocol.DocumentAction{Kind: protocol.ActionCreate, Type: o.ref.typ, ID: o.ref.id, Entropy: o.ref.entropy, Data: []byte("{}")}, true
		}
	}
	return protocol.DocumentAction{}, false
}

// createExpiredUnique is a create of the unique values a sampled document holds that
// has expired at nowMs and that the cleanup has not deleted yet (expiredUnique).
func (b *documentBatches) createExpiredUnique(t *protocol.DocumentsBatch, types []protocol.DocumentType, sample []storedDoc) (protocol.DocumentAction, bool) {
	for _, o := range sample {
		dt, _ := typeNamed(types, o.ref.typ)
		if at, ok := dt.ExpiresAtMs(o.doc); ok && o.stored && at <= b.nowMs && !dt.CanBeDeleted && holdsUnique(dt, o.doc, t.Identity) {
			b.expiredUnique = true
			a := protocol.DocumentAction{Kind: protocol.ActionCreate, Type: dt.Name, Data: protocol.DocumentData(dt, o.doc)}
			binary.BigEndian.PutUint64(a.Entropy[:], b.pick.u64())
			a.ID = t.CreateID(a)
			return a, true
		}
	}
	return protocol.DocumentAction{}, false
}

// restoreNow draws whether the action is a restore, when there are restorable records:
// half the time for a moderator signer, an eighth for another.
func (b *documentBatches) restoreNow(t *protocol.DocumentsBatch) bool {
	return len(b.restorable) > 0 && (b.contract.Moderator(t.Identity) || b.pick.n(4) == 0) && b.pick.n(2) == 0
}

// choose picks the sampled document the action is on, and whether the action is a
// purchase: someone else's document for sale, or one of the signer's own (another's,
// for faultOthersDocument), now and then one of its own that has expired; failing
// those, any sampled document, stored ones first. Nil when no stored document was
// sampled and the action is to be a create instead (mostly; now and then a miss).
func (b *documentBatches) choose(t *protocol.DocumentsBatch, types []protocol.DocumentType, sample []storedDoc, used map[protocol.DocumentID]bool, f fault) (s *storedDoc, buy bool) {
	p := b.pick
	for i := range sample {
		o := &sample[i]
		if !used[o.ref.id] && o.stored && (s == nil || !s.stored) {
			s = o
		}
	}
	if s == nil {
		if p.n(8) > 0 {
			return nil, false
		}
		s = &sample[p.n(len(sample))]
	}
	buy = p.n(6) == 0
	if o := wanted(t, sample, used, buy, f); o != nil {
		s = o
	}
	if !buy && f != faultOthersDocument && p.n(2) == 0 {
		if o := b.expiredOwn(t, types, sample, used); o != nil {
			s = o
		}
	}
	return s, buy
}

// wanted is the first unused sampled document the action wants: for a purchase one
// another owns that is for sale, for faultOthersDocument one another owns, otherwise
// one of the signer's own.
func wanted(t *protocol.DocumentsBatch, sample []storedDoc, used map[protocol.DocumentID]bool, buy bool, f fault) *storedDoc {
	for i := range sample {
		o := &sample[i]
		mine := o.stored && o.doc.Owner == t.Identity
		want := mine
		if buy {
			want = o.stored && !mine && o.doc.Price > 0
		}
		if f == faultOthersDocument {
			want = o.stored && !mine
		}
		if want && !used[o.ref.id] {
			return o
		}
	}
	return nil
}

// expiredOwn is the first unused sampled document of the signer's own that has
// expired at nowMs.
func (b *documentBatches) expiredOwn(t *protocol.DocumentsBatch, types []protocol.DocumentType, sample []storedDoc, used map[protocol.DocumentID]bool) *storedDoc {
	for i := range sample {
		o := &sample[i]
		dt, _ := typeNamed(types, o.ref.typ)
		if at, ok := dt.ExpiresAtMs(o.doc); ok && o.stored && o.doc.Owner == t.Identity && !used[o.ref.id] && at <= b.nowMs {
			return o
		}
	}
	return nil
}

// moderatorDeletion is a moderator's deletion of s (within deleteWithin or not), its
// document remembered for a restore.
func (b *documentBatches) moderatorDeletion(s storedDoc, dt protocol.DocumentType) protocol.DocumentAction {
	b.remember(s.doc.Encode(dt))
	return protocol.DocumentAction{Kind: protocol.ActionModerateDelete, Type: s.ref.typ, ID: s.ref.id, Reason: []string{"spam", "", "off-topic"}[b.pick.n(3)]}
}

// kind draws the kind of a change of a document of type dt: mostly one of those dt
// allows (allowedKinds), false when it allows none; a tenth of the time any kind, a
// renewal included whatever the version.
func (b *documentBatches) kind(dt protocol.DocumentType, buy bool) (protocol.DocumentActionKind, bool) {
	kinds := []protocol.DocumentActionKind{protocol.ActionReplace, protocol.ActionDelete, protocol.ActionTransfer, protocol.ActionPurchase, protocol.ActionUpdatePrice, protocol.ActionRenew}
	if b.pick.n(10) > 0 {
		if kinds = allowedKinds(dt, buy, b.renewal); len(kinds) == 0 {
			return 0, false
		}
	}
	return kinds[b.pick.n(len(kinds))], true
}

// allowedKinds are the changes type dt allows, weighted by repeats: a purchase when
// buying from a type that sells, otherwise replaces, a delete, a transfer, price
// updates and, where the version renews, renewals of a type with a ttl as its rules
// permit.
func allowedKinds(dt protocol.DocumentType, buy, renewal bool) []protocol.DocumentActionKind {
	var kinds []protocol.DocumentActionKind
	if buy && dt.TradeMode == protocol.TradeModeDirectPurchase {
		return append(kinds, protocol.ActionPurchase)
	}
	if dt.DocumentsMutable {
		kinds = append(kinds, protocol.ActionReplace, protocol.ActionReplace)
	}
	if dt.CanBeDeleted {
		kinds = append(kinds, protocol.ActionDelete)
	}
	if dt.Transferable == protocol.TransferableAlways {
		kinds = append(kinds, protocol.ActionTransfer)
	}
	if dt.TradeMode == protocol.TradeModeDirectPurchase {
		kinds = append(kinds, protocol.ActionUpdatePrice, protocol.ActionUpdatePrice)
	}
	if renewal && dt.TTLSeconds > 0 {
		kinds = append(kinds, protocol.ActionRenew, protocol.ActionRenew)
	}
	return kinds
}

// change makes an action of kind on sampled document s of type dt, at its next
// revision (2 for a document not stored), with what the kind carries: new data, a
// recipient (now and then nobody), the price paid, or a new price (now and then a
// boundary price, BoundaryAmount, around buyer). f spoils the revision
// (faultRevision), the type (faultNoSuchType), the data or the price paid
// (faultWrongType and data's faults). A change of a document expired at nowMs sets
// expiredChange.
func (b *documentBatches) change(t *protocol.DocumentsBatch, s storedDoc, dt protocol.DocumentType, kind protocol.DocumentActionKind, f fault, buyer uint64) protocol.DocumentAction {
	p := b.pick
	if at, ok := dt.ExpiresAtMs(s.doc); ok && s.stored && kind != protocol.ActionDelete && b.nowMs > 0 && at <= b.nowMs {
		b.expiredChange = true
	}
	a := protocol.DocumentAction{Kind: kind, Type: s.ref.typ, ID: s.ref.id, Revision: s.doc.Revision + 1}
	if !s.stored {
		a.Revision = 2
	}
	if f == faultRevision {
		a.Revision = []uint64{s.doc.Revision, s.doc.Revision + 2, 1}[p.n(3)]
	}
	if f == faultNoSuchType {
		a.Type = "nosuchtype"
	}
	switch kind {
	case protocol.ActionReplace:
		a.Data = b.data(dt, f)
	case protocol.ActionTransfer:
		a.Recipient = protocol.IdentityID{0xee, byte(p.n(4))}
		if idn := b.identities[p.n(len(b.identities))]; idn.id != t.Identity && p.n(8) > 0 {
			a.Recipient = idn.id
		}
	case protocol.ActionPurchase:
		a.Price = s.doc.Price
		if a.Price == 0 || f == faultWrongType {
			a.Price = 1 + uint64(p.n(1000))
		}
	case protocol.ActionUpdatePrice:
		a.Price = uint64(p.n(4)) * uint64(1+p.n(1_000_000))
		if p.n(6) == 0 {
			a.Price = BoundaryAmount(p.u64(), buyer)
		}
	}
	return a
}

// restore makes a restore of one of the restorable records by the batch's signer (a
// moderator or not), with the document the record pins or, when wrong, one byte of it
// changed. A restore of a document expired at the block's time must be refused.
func (b *documentBatches) restore(t *protocol.DocumentsBatch, types []protocol.DocumentType, used map[protocol.DocumentID]bool, wrong bool) (protocol.DocumentAction, bool) {
	r := b.restorable[b.pick.n(len(b.restorable))]
	if used[r.ID] {
		return protocol.DocumentAction{}, false
	}
	enc := append([]byte(nil), b.removed[r.DocumentHash]...)
	if wrong {
		enc[len(enc)-1] ^= 1
	}
	if dt, ok := typeNamed(types, r.Type); ok {
		if d, err := protocol.DecodeDocument(enc, dt); err == nil {
			if at, ok := dt.ExpiresAtMs(d); ok && b.nowMs > 0 && at <= b.nowMs {
				b.expiredChange = true
			}
		}
	}
	return protocol.DocumentAction{Kind: protocol.ActionRestore, Type: r.Type, ID: r.ID, Document: enc}, true
}

// target picks, for a reference to type target of the batch's contract, one of the
// first 16 documents of that type stored in the state the batch is made against, or
// nil: now and then on purpose, so that references miss.
func (b *documentBatches) target(target string) *protocol.Document {
	dt, ok := b.contract.DocumentType(target)
	if !ok || b.kv == nil || b.pick.n(8) == 0 {
		return nil
	}
	var docs []protocol.Document
	prefix := drive.DocumentsPrefix(b.contract.ID, target)
	err := b.kv.Iterate(prefix, drive.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		sd, err := drive.DecodeStoredDocument(k, v, dt)
		if err != nil {
			return true, err
		}
		docs = append(docs, sd.Document)
		return len(docs) == 16, nil
	})
	if err != nil || len(docs) == 0 {
		return nil
	}
	return &docs[b.pick.n(len(docs))]
}

// reference is the id of a target document (target), or random bytes.
func (b *documentBatches) reference(target string) []int {
	out := make([]int, protocol.DocumentIDLen)
	d := b.target(target)
	for i := range out {
		if d != nil {
			out[i] = int(d.ID[i])
		} else {
			out[i] = b.pick.n(256)
		}
	}
	return out
}

// lookupValue is, for a reference by lookup r, the value of a target document's lookup
// property, if a target was found and its value is a string.
func (b *documentBatches) lookupValue(r protocol.Reference) (string, bool) {
	d := b.target(r.Type)
	if d == nil {
		return "", false
	}
	dt, _ := b.contract.DocumentType(r.Type)
	ix, _ := dt.Index(r.Lookup)
	p, ok := dt.Property(ix.Properties[0].Name)
	if !ok || p.Type != protocol.PropertyString || !d.Value(p.Position).Set {
		return "", false
	}
	return string(d.Value(p.Position).Bytes), true
}

// flood makes a batch of n creates on ttl contract c signed by signer, none
// remembered: "ping" documents, or "heavy" ones mostly when heavy is set
// (ttlDefinition).
func (b *documentBatches) flood(c protocol.Contract, signer protocol.IdentityID, n int, heavy bool) *protocol.DocumentsBatch {
	t := &protocol.DocumentsBatch{Identity: signer, Contract: c.ID}
	for i := 0; i < n; i++ {
		name := "ping"
		if heavy && b.pick.n(8) > 0 {
			name = "heavy"
		}
		dt, _ := c.DocumentType(name)
		a := protocol.DocumentAction{Kind: protocol.ActionCreate, Type: name, Data: b.data(dt, noFault)}
		binary.BigEndian.PutUint64(a.Entropy[:], b.pick.u64())
		a.ID = t.CreateID(a)
		t.Actions = append(t.Actions, a)
	}
	return t
}

// create makes a create action of batch t of one of types (faultNoSuchType: of no type
// of the contract), its data spoiled by f as data says, and remembers the id it names.
func (b *documentBatches) create(t *protocol.DocumentsBatch, types []protocol.DocumentType, f fault) protocol.DocumentAction {
	p := b.pick
	a := protocol.DocumentAction{Kind: protocol.ActionCreate, Type: "nosuchtype"}
	var dt protocol.DocumentType
	if len(types) > 0 && f != faultNoSuchType {
		dt = types[p.n(len(types))]
		a.Type = dt.Name
	}
	for i := 0; i < 4; i++ {
		a.Entropy[i] = byte(p.n(256))
	}
	a.Entropy[31] = byte(len(b.docs[t.Contract]))
	a.Data = b.data(dt, f)
	a.ID = t.CreateID(a)
	b.docs[t.Contract] = append(b.docs[t.Contract], docRef{typ: a.Type, id: a.ID, creator: t.Identity, entropy: a.Entropy})
	return a
}

// data writes the JSON values of a document of type t, valid for it unless f is one of
// the ways data is wrong (faultWrongType to faultNotJSON). Strings and identifiers are
// drawn from a few values, so unique indexes meet duplicates and counts gather several
// documents.
func (b *documentBatches) data(t protocol.DocumentType, f fault) []byte {
	p := b.pick
	obj := map[string]any{}
	for _, prop := range t.Properties {
		if !t.IsRequired(prop.Name) && p.n(3) == 0 {
			continue
		}
		switch prop.Type {
		case protocol.PropertyString:
			lo, hi := 0, 12
			if prop.MinLength != nil {
				lo = int(*prop.MinLength)
			}
			if prop.MaxLength != nil && int(*prop.MaxLength) < hi {
				hi = int(*prop.MaxLength)
			}
			if hi < lo {
				hi = lo
			}
			n := lo + p.n(hi-lo+1)
			obj[prop.Name] = strings.Repeat(string(rune('a'+p.n(3))), n)
			if r := prop.RefersTo; r != nil && r.Lookup != "" && r.Contract == nil {
				if v, ok := b.lookupValue(*r); ok {
					obj[prop.Name] = v
				}
			}
		case protocol.PropertyInteger:
			lo, hi := int64(-5), int64(50)
			if prop.Minimum != nil && *prop.Minimum > lo {
				lo = *prop.Minimum
			}
			if prop.Maximum != nil && *prop.Maximum < hi {
				hi = *prop.Maximum
			}
			if hi < lo {
				hi = lo
			}
			obj[prop.Name] = lo + int64(p.n(int(hi-lo+1)))
		case protocol.PropertyBoolean:
			obj[prop.Name] = p.n(2) == 0
		case protocol.PropertyIdentifierList:
			list := [][]int{}
			target := ""
			if prop.RefersTo != nil && prop.RefersTo.Contract == nil {
				target = prop.RefersTo.Type
			}
			for i := 0; i < p.n(int(*prop.MaxItems)+1); i++ {
				list = append(list, b.reference(target))
			}
			obj[prop.Name] = list
		case protocol.PropertyIdentifier:
			if prop.RefersTo != nil && prop.RefersTo.Contract == nil {
				obj[prop.Name] = b.reference(prop.RefersTo.Type)
				break
			}
			fallthrough
		default:
			lo, hi := 0, 16
			if prop.MinItems != nil {
				lo = int(*prop.MinItems)
			}
			if prop.MaxItems != nil && int(*prop.MaxItems) < hi {
				hi = int(*prop.MaxItems)
			}
			if hi < lo {
				hi = lo
			}
			items := make([]int, lo+p.n(hi-lo+1))
			fill := p.n(3)
			for i := range items {
				items[i] = fill
			}
			obj[prop.Name] = items
		}
	}
	var prop protocol.Property
	if len(t.Properties) > 0 {
		prop = t.Properties[p.n(len(t.Properties))]
	}
	switch f {
	case faultWrongType:
		obj[prop.Name] = map[string]any{"x": 1}
	case faultMissingRequired:
		for _, r := range t.Required {
			delete(obj, r)
		}
		if len(t.Required) == 0 {
			obj[prop.Name] = []any{true}
		}
	case faultExtraProperty:
		obj["extra"] = 1
	case faultOversizedString:
		n := 1 << 14
		if prop.MaxLength != nil && p.n(2) == 0 {
			n = int(*prop.MaxLength)
		}
		obj[prop.Name] = strings.Repeat("z", n+1)
	case faultFloat:
		obj[prop.Name] = json.Number(fmt.Sprintf("%d.5", p.n(100)))
	case faultNotJSON:
		return []byte(`{"` + prop.Name + `":`)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		panic(err) // maps of strings, integers, booleans and slices always marshal
	}
	return out
}
