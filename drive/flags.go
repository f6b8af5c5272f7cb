package drive

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/ttld-dev/ttld/feeschedule"
	"github.com/ttld-dev/ttld/protocol"
)

// StorageFlags lead the value of every stored item of a permanent document (its row,
// its history rows, its index entries): who paid for the item's bytes and in which
// epoch, so that removing them refunds what the perpetual storage fee has not yet paid
// out. The bytes an item is charged for are its key and its payload (the value after
// the flags); the flags themselves are not charged. Entries are sorted by epoch, then
// owner, one per pair; a shrink takes bytes from the latest entries first.
type StorageFlags []StoragePaid

// StoragePaid is Bytes paid by Owner in Epoch.
type StoragePaid struct {
	Owner protocol.IdentityID
	Epoch uint32
	Bytes uint32
}

// storagePaidLen: owner, epoch, bytes.
const storagePaidLen = protocol.IdentityIDLen + 4 + 4

// Bytes is the total the flags account for.
func (f StorageFlags) Bytes() uint64 {
	var n uint64
	for _, p := range f {
		n += uint64(p.Bytes)
	}
	return n
}

// AppendFlags writes f: the entry count u16, then each entry: owner, epoch u32, bytes u32.
func AppendFlags(out []byte, f StorageFlags) []byte {
	out = binary.BigEndian.AppendUint16(out, uint16(len(f)))
	for _, p := range f {
		out = append(out, p.Owner[:]...)
		out = binary.BigEndian.AppendUint32(out, p.Epoch)
		out = binary.BigEndian.AppendUint32(out, p.Bytes)
	}
	return out
}

// SplitFlags reads the flags that lead v and returns them with the payload after them.
func SplitFlags(v []byte) (StorageFlags, []byte, error) {
	if len(v) < 2 {
		return nil, nil, fmt.Errorf("%d bytes, no storage flags", len(v))
	}
	n := int(binary.BigEndian.Uint16(v))
	v = v[2:]
	if len(v) < n*storagePaidLen {
		return nil, nil, fmt.Errorf("%d storage flag entries announced, %d bytes left", n, len(v))
	}
	f := make(StorageFlags, n)
	for i := range f {
		copy(f[i].Owner[:], v)
		f[i].Epoch = binary.BigEndian.Uint32(v[protocol.IdentityIDLen:])
		f[i].Bytes = binary.BigEndian.Uint32(v[protocol.IdentityIDLen+4:])
		v = v[storagePaidLen:]
		if i > 0 && !f[i-1].before(f[i]) {
			return nil, nil, fmt.Errorf("storage flag entries out of order")
		}
		if f[i].Bytes == 0 {
			return nil, nil, fmt.Errorf("storage flag entry of 0 bytes")
		}
	}
	return f, v, nil
}

func (p StoragePaid) before(q StoragePaid) bool {
	if p.Epoch != q.Epoch {
		return p.Epoch < q.Epoch
	}
	return bytes.Compare(p.Owner[:], q.Owner[:]) < 0
}

// Storage keeps the books of one transition's document writes: who pays for the bytes
// it adds, in which epoch, at what perpetual price per byte, and what it has added,
// removed and refunded so far.
type Storage struct {
	Payer   protocol.IdentityID
	Epoch   uint32
	PerByte uint64
	Added   uint64
	Removed uint64
	Refunds []feeschedule.Refund
	// Margin is what a block in a later epoch would write more: each growth that joined
	// the current epoch's flags entry would add an entry of its own there.
	Margin feeschedule.Operations
	// Lifetime lists, per document of a type with a time to live, what its write added:
	// such items carry no storage flags (Document Time To Live: "Nothing a document of such a type
	// writes carries storage flags"), are not in Added, and are priced by the lifetime
	// the document has left.
	Lifetime []LifetimeWrite
	// AtMs is the block time of the writes: which time-range windows are within their
	// ttl.
	AtMs uint64
	// Ephemeral counts the bytes added under ttl'd time-range windows: no storage flags,
	// no storage fee; they bill as processing (Time-Range Index TTL).
	Ephemeral uint64
	// EphemeralMargin counts the Ephemeral bytes the writes would have added more on a
	// state without the count records they found, or in a later block (windowMargin):
	// what a fee estimate made on another state may lack.
	EphemeralMargin uint64
	// StoredMargin counts the bytes of flagged items the writes would have added more
	// in a later block (windowMargin), stored for ever; those of a document of a type
	// with a ttl are in its LifetimeWrite's MarginBytes instead.
	StoredMargin uint64
	// Forfeit, while set, keeps the refunds of what is removed from their payers: a
	// moderator's deletion whose type's moderatorAbilities.deleteRefundsOwner is false.
	// The fees stay with the epochs they were paid to; Forfeited sums the credits kept.
	Forfeit   bool
	Forfeited uint64
	ttl       *LifetimeWrite // the write in progress, while a ttl document is written
}

// LifetimeWrite is what one write of a document of a type with a time to live added.
type LifetimeWrite struct {
	ExpiresAtMs uint64
	// Bytes counts every byte written: its items' keys and payloads, and its
	// expirations tree entry.
	Bytes uint64
	// DocumentBytes counts the bytes the document's own encoding grew by (all of it for
	// a create), whose deletion the write prepays.
	DocumentBytes uint64
	// Created: the write created the document, which prepays its deletion's base and
	// index levels too.
	Created     bool
	IndexLevels uint64
	// Renewed counts, for a write that renews the document (its expiry moves later,
	// protocol version 15), the bytes the document held before it (LifetimeBytes) that
	// the write keeps: paid until RenewedFromMs, the expiry before, they now stay until
	// ExpiresAtMs.
	Renewed       uint64
	RenewedFromMs uint64
	// MarginBytes counts the bytes the write would have added more in a later block
	// (windowMargin): what a fee estimate prices at the lifetime left.
	MarginBytes uint64
}

// IndexLevels is what a document of type t weighs in index levels: the properties of
// each of its indexes (Document Time To Live: "an index counts its properties"), those of a
// time-range index once for each window a document lies in (properties × overlap).
func IndexLevels(t protocol.DocumentType) uint64 {
	var n uint64
	for _, ix := range t.Indices {
		windows := uint64(1)
		if ix.TimeRange != nil {
			windows = uint64(max(1, ix.TimeRange.Grid().Overlap()))
		}
		n += uint64(len(ix.Properties)) * windows
	}
	return n
}

// writing starts the books of a write of document d of type t and returns the function
// that closes them. A type without a ttl keeps its flags and changes nothing here.
func (s *Storage) writing(t protocol.DocumentType, d protocol.Document, created bool) func() {
	at, ok := t.ExpiresAtMs(d)
	if !ok {
		return func() {}
	}
	s.ttl = &LifetimeWrite{ExpiresAtMs: at, Created: created, IndexLevels: IndexLevels(t)}
	return func() {
		s.Lifetime = append(s.Lifetime, *s.ttl)
		s.ttl = nil
	}
}

// add records n bytes paid now and returns the flags with them.
func (s *Storage) add(f StorageFlags, n uint64) StorageFlags {
	if s.ttl != nil {
		s.ttl.Bytes += n
		return nil
	}
	s.Added += n
	if n == 0 {
		return f
	}
	out := append(StorageFlags(nil), f...)
	p := StoragePaid{Owner: s.Payer, Epoch: s.Epoch}
	i := sort.Search(len(out), func(i int) bool { return !out[i].before(p) })
	if i < len(out) && out[i].Epoch == p.Epoch && out[i].Owner == p.Owner {
		out[i].Bytes += uint32(n) // items are bounded by the transaction size
		// One more entry: its bytes, and at most one more 64-byte block to hash.
		s.Margin = s.Margin.Add(feeschedule.Operations{BytesWritten: storagePaidLen, HashBlocks: 1})
		return out
	}
	p.Bytes = uint32(n)
	return append(out[:i], append(StorageFlags{p}, out[i:]...)...)
}

// addMargin records n bytes of items a later block's write would add more: lifetime
// bytes of the document being written, if its type has a ttl, else stored bytes.
func (s *Storage) addMargin(n uint64) {
	if s.ttl != nil {
		s.ttl.MarginBytes += n
		return
	}
	s.StoredMargin += n
}

// itemValueLen is the length of an item's value with an empty payload as s writes it:
// its flags, one entry of them unless the write is of a document with a ttl.
func (s *Storage) itemValueLen() int {
	if s.ttl != nil {
		return len(AppendFlags(nil, nil))
	}
	return len(AppendFlags(nil, StorageFlags{{}}))
}

// remove takes n bytes off f, latest first, refunds each owner what its fee for them
// has not paid out from the current epoch on, and returns what is left.
func (s *Storage) remove(f StorageFlags, n uint64) StorageFlags {
	s.Removed += n
	out := append(StorageFlags(nil), f...)
	for n > 0 && len(out) > 0 {
		last := &out[len(out)-1]
		take := min(uint64(last.Bytes), n)
		s.refund(last.Owner, last.Epoch, take)
		n -= take
		last.Bytes -= uint32(take)
		if last.Bytes == 0 {
			out = out[:len(out)-1]
		}
	}
	return out
}

func (s *Storage) refund(owner protocol.IdentityID, paidIn uint32, n uint64) {
	if s.PerByte != 0 && n > math.MaxUint64/s.PerByte {
		panic("drive: a stored item's fee overflows") // items are bounded by the transaction size
	}
	fee := n * s.PerByte
	credits := feeschedule.StorageRefund(fee, paidIn, s.Epoch)
	if credits == 0 && fee == 0 {
		return
	}
	if s.Forfeit {
		s.Forfeited += credits // at most the fees paid, which are credits in circulation
		return
	}
	s.Refunds = append(s.Refunds, feeschedule.Refund{Owner: owner, PaidIn: paidIn, StorageFee: fee, Credits: credits})
}

// putItem writes key = flags ++ payload, its bytes (key and payload) paid now, over
// nothing.
func (s *Storage) putItem(kv KV, key, payload []byte) error {
	f := s.add(nil, uint64(len(key)+len(payload)))
	return kv.Set(key, append(AppendFlags(nil, f), payload...))
}

// resizeItem writes a new payload at key over an item whose flags were old and whose
// payload was oldLen bytes: growth is paid now, a shrink refunded (flagged bytes).
func (s *Storage) resizeItem(kv KV, key []byte, old StorageFlags, oldLen int, payload []byte) error {
	total, was := uint64(len(key)+len(payload)), uint64(len(key)+oldLen)
	f := old
	switch {
	case total > was:
		f = s.add(old, total-was)
	case total < was:
		f = s.remove(old, was-total)
	}
	return kv.Set(key, append(AppendFlags(nil, f), payload...))
}

// dropItem deletes key, an item whose flags are f and payload payloadLen bytes,
// refunding all its flagged bytes.
func (s *Storage) dropItem(kv KV, key []byte, f StorageFlags, payloadLen int) error {
	s.remove(f, uint64(len(key)+payloadLen))
	return kv.Delete(key)
}
