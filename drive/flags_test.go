package drive

import (
	"bytes"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/ttld-dev/ttld/feeschedule"
	"github.com/ttld-dev/ttld/protocol"
)

// The reference model of the storage fee and refund arithmetic: an item is a list of
// units, one per byte, each naming who paid for it and in which epoch, kept in the
// order the flags document (epoch, then owner); growth adds units paid now, a shrink or
// a removal takes the last units off and refunds each (owner, epoch) group of them
// feeschedule.StorageRefund of its bytes times the price per byte. Nothing here is
// shared with flags.go but the refund schedule.

type unit struct {
	owner protocol.IdentityID
	epoch uint32
}

type modelItem []unit

type refundKey struct {
	owner  protocol.IdentityID
	paidIn uint32
}

type refundSum struct{ fee, credits uint64 }

type feeModel struct {
	perByte uint64
	added   uint64
	removed uint64
	refunds map[refundKey]refundSum
}

func (m *feeModel) grow(it modelItem, n int, payer protocol.IdentityID, epoch uint32) modelItem {
	for i := 0; i < n; i++ {
		it = append(it, unit{owner: payer, epoch: epoch})
	}
	sort.SliceStable(it, func(i, j int) bool {
		if it[i].epoch != it[j].epoch {
			return it[i].epoch < it[j].epoch
		}
		return bytes.Compare(it[i].owner[:], it[j].owner[:]) < 0
	})
	m.added += uint64(n)
	return it
}

// shrink takes n units off the end; the units one call takes are refunded by group.
func (m *feeModel) shrink(it modelItem, n int, now uint32) modelItem {
	taken := map[refundKey]uint64{}
	var order []refundKey
	for i := 0; i < n; i++ {
		u := it[len(it)-1]
		it = it[:len(it)-1]
		k := refundKey{u.owner, u.epoch}
		if taken[k] == 0 {
			order = append(order, k)
		}
		taken[k]++
	}
	for _, k := range order {
		fee := taken[k] * m.perByte
		r := m.refunds[k]
		r.fee += fee
		r.credits += feeschedule.StorageRefund(fee, k.paidIn, now)
		m.refunds[k] = r
	}
	m.removed += uint64(n)
	return it
}

// flagsOf groups the units as StorageFlags would hold them.
func (it modelItem) flags() StorageFlags {
	var out StorageFlags
	for _, u := range it {
		if n := len(out); n > 0 && out[n-1].Owner == u.owner && out[n-1].Epoch == u.epoch {
			out[n-1].Bytes++
			continue
		}
		out = append(out, StoragePaid{Owner: u.owner, Epoch: u.epoch, Bytes: 1})
	}
	return out
}

// TestFlagsRemovalOrShrinkRefundsUnpaidSchedule: a removal or a shrinking replace refunds
// the owner what the 50-era schedule has not yet paid out (docs/STATE.md, "Storage
// flags"). Random sequences of item
// writes, growths, shrinks and removals, by several payers across epochs (within one,
// a few apart, and past the schedule's 2000 epochs), go through drive.Storage and the
// reference model: the flags of every item, the bytes added and removed, and the
// refunds summed by (owner, epoch paid in) must agree, and every refund must be
// feeschedule.StorageRefund of its entry's bytes times 27,000.
func TestFlagsRemovalOrShrinkRefundsUnpaidSchedule(t *testing.T) {
	t.Parallel()
	payers := []protocol.IdentityID{{1}, {2}, {3}, {0xff, 9}}
	for run := 0; run < 200; run++ {
		rng := rand.New(rand.NewSource(int64(run)))
		kv := NewCache(Empty())
		m := &feeModel{perByte: 27_000, refunds: map[refundKey]refundSum{}}
		real := map[refundKey]refundSum{}
		var added, removed uint64
		items := map[string]modelItem{}
		var keys []string // live items, in creation order
		epoch := uint32(rng.Intn(5))
		for step := 0; step < 120; step++ {
			switch p := rng.Intn(20); {
			case p == 0:
				epoch += 1500 + uint32(rng.Intn(1000))
			case p < 6:
				epoch += uint32(1 + rng.Intn(40))
			}
			s := &Storage{Payer: payers[rng.Intn(len(payers))], Epoch: epoch, PerByte: 27_000}
			// One transition's worth of writes with one payer.
			for op := 0; op < 1+rng.Intn(3); op++ {
				payload := make([]byte, rng.Intn(300))
				switch k := rng.Intn(10); {
				case k < 3 || len(keys) == 0: // a new item
					key := make([]byte, 1+rng.Intn(60))
					rng.Read(key)
					if _, ok := items[string(key)]; ok {
						continue
					}
					if err := s.putItem(kv, key, payload); err != nil {
						t.Fatal(err)
					}
					items[string(key)] = m.grow(nil, len(key)+len(payload), s.Payer, epoch)
					keys = append(keys, string(key))
				case k < 8: // a replace: grows, shrinks or keeps its size
					i := rng.Intn(len(keys))
					key := keys[i]
					old := mustFlags(t, kv, []byte(key))
					if rng.Intn(4) == 0 { // the same size
						payload = make([]byte, int(old.Bytes())-len(key))
					}
					if err := s.resizeItem(kv, []byte(key), old, int(old.Bytes())-len(key), payload); err != nil {
						t.Fatal(err)
					}
					it, want := items[key], len(key)+len(payload)
					if want > len(it) {
						it = m.grow(it, want-len(it), s.Payer, epoch)
					} else {
						it = m.shrink(it, len(it)-want, epoch)
					}
					items[key] = it
				default: // a removal
					i := rng.Intn(len(keys))
					key := keys[i]
					f := mustFlags(t, kv, []byte(key))
					if err := s.dropItem(kv, []byte(key), f, int(f.Bytes())-len(key)); err != nil {
						t.Fatal(err)
					}
					m.shrink(items[key], len(items[key]), epoch)
					delete(items, key)
					keys = append(keys[:i], keys[i+1:]...)
				}
			}
			added += s.Added
			removed += s.Removed
			for _, r := range s.Refunds {
				if r.StorageFee%27_000 != 0 || r.Credits != feeschedule.StorageRefund(r.StorageFee, r.PaidIn, epoch) {
					t.Fatalf("run %d step %d: refund %+v is not StorageRefund of its bytes at epoch %d", run, step, r, epoch)
				}
				k := refundKey{r.Owner, r.PaidIn}
				got := real[k]
				got.fee += r.StorageFee
				got.credits += r.Credits
				real[k] = got
			}
			where := fmt.Sprintf("run %d step %d (epoch %d)", run, step, epoch)
			if added != m.added || removed != m.removed {
				t.Fatalf("%s: Storage added %d removed %d, the model %d and %d", where, added, removed, m.added, m.removed)
			}
			for _, key := range keys {
				got, want := mustFlags(t, kv, []byte(key)), items[key].flags()
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s: item %x flags %v, the model %v", where, key, got, want)
				}
			}
			if fmt.Sprint(sortedRefunds(real)) != fmt.Sprint(sortedRefunds(m.refunds)) {
				t.Fatalf("%s: refunds by owner and epoch\n%v\nthe model\n%v", where, sortedRefunds(real), sortedRefunds(m.refunds))
			}
		}
	}
}

// mustFlags reads the flags of the item at key.
func mustFlags(t *testing.T, kv KV, key []byte) StorageFlags {
	t.Helper()
	v, err := kv.Get(key)
	if err != nil || v == nil {
		t.Fatalf("item %x: %v", key, err)
	}
	f, _, err := SplitFlags(v)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func sortedRefunds(m map[refundKey]refundSum) []string {
	out := make([]string, 0, len(m))
	for k, r := range m {
		out = append(out, fmt.Sprintf("%x@%d: fee %d credits %d", k.owner[:2], k.paidIn, r.fee, r.credits))
	}
	sort.Strings(out)
	return out
}

// TestFlagsShrinkRefundsLatestBytesFirst: a removal in the epoch its bytes were paid in refunds the
// whole fee; one more than the schedule's 2000 epochs later refunds nothing; a shrink
// takes the latest epoch's bytes first, so the bytes paid earliest stay.
func TestFlagsShrinkRefundsLatestBytesFirst(t *testing.T) {
	a, b := protocol.IdentityID{1}, protocol.IdentityID{2}
	flags := StorageFlags{{Owner: a, Epoch: 3, Bytes: 10}, {Owner: b, Epoch: 7, Bytes: 5}}
	s := &Storage{Payer: a, Epoch: 7, PerByte: 27_000}
	left := s.remove(flags, 8)
	want := []feeschedule.Refund{
		{Owner: b, PaidIn: 7, StorageFee: 5 * 27_000, Credits: 5 * 27_000},
		{Owner: a, PaidIn: 3, StorageFee: 3 * 27_000, Credits: feeschedule.StorageRefund(3*27_000, 3, 7)},
	}
	if fmt.Sprint(s.Refunds) != fmt.Sprint(want) || fmt.Sprint(left) != fmt.Sprint(StorageFlags{{Owner: a, Epoch: 3, Bytes: 7}}) {
		t.Fatalf("refunds %+v, left %+v", s.Refunds, left)
	}
	late := &Storage{Payer: a, Epoch: 3 + feeschedule.PerpetualEpochs, PerByte: 27_000}
	late.remove(left, 7)
	if len(late.Refunds) != 1 || late.Refunds[0].Credits != 0 || late.Refunds[0].StorageFee != 7*27_000 {
		t.Fatalf("after the schedule's end: %+v", late.Refunds)
	}
}
