package invariants

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// invariantsContract is docs/examples/market.json's types with one that keeps history.
func invariantsContract(t *testing.T) protocol.Contract {
	t.Helper()
	raw, err := os.ReadFile("../../docs/examples/market.json")
	if err != nil {
		t.Fatal(err)
	}
	log := `"log":{"type":"object","documentsKeepHistory":true,"properties":{"line":{"type":"string","maxLength":64,"position":0},"n":{"type":"integer","position":1}},"additionalProperties":false,` +
		`"indices":[{"name":"byN","properties":[{"n":"asc"}],"countable":true,"summable":"n"}]},`
	raw = bytes.Replace(raw, []byte(`"documentSchemas": {`), []byte(`"documentSchemas": {`+log), 1)
	types, err := protocol.ParseDocumentTypes(raw, protocol.Latest)
	if err != nil {
		t.Fatal(err)
	}
	return protocol.Contract{ID: protocol.ContractID{0xc0}, Owner: protocol.IdentityID{0xa1}, Version: 1, DocumentTypes: types}
}

type invariantsFixture struct {
	t     *testing.T
	kv    *drive.Cache
	c     protocol.Contract
	lim   protocol.Limits
	epoch uint32
}

func (f *invariantsFixture) typ(name string) drive.DocumentType {
	dt, ok := f.c.DocumentType(name)
	if !ok {
		f.t.Fatalf("no type %s", name)
	}
	return drive.DocumentType{Contract: f.c.ID, DocumentType: dt}
}

func (f *invariantsFixture) storage(payer byte) *drive.Storage {
	return &drive.Storage{Payer: protocol.IdentityID{payer}, Epoch: f.epoch, PerByte: 27_000}
}

func (f *invariantsFixture) values(typ, data string) []protocol.Value {
	v, err := protocol.ParseDocumentData(f.typ(typ).DocumentType, []byte(data), f.lim)
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

func (f *invariantsFixture) create(typ string, id byte, owner byte, data string) protocol.Document {
	d := protocol.Document{ID: protocol.DocumentID{id}, Owner: protocol.IdentityID{owner}, Revision: 1, CreatedAt: 1000 + uint64(id), UpdatedAt: 1000 + uint64(id), Values: f.values(typ, data)}
	if err := drive.InsertDocument(f.kv, f.storage(owner), f.typ(typ), d); err != nil {
		f.t.Fatal(err)
	}
	return d
}

func (f *invariantsFixture) replace(typ string, id byte, data string) {
	dt := f.typ(typ)
	before, ok, err := drive.GetDocument(f.kv, dt, protocol.DocumentID{id})
	if err != nil || !ok {
		f.t.Fatalf("document %d: %v", id, err)
	}
	after := before.Document
	after.Revision++
	after.UpdatedAt += 5
	after.Values = f.values(typ, data)
	if err := drive.ReplaceDocument(f.kv, f.storage(before.Owner[0]), dt, before, after); err != nil {
		f.t.Fatal(err)
	}
}

func (f *invariantsFixture) remove(typ string, id byte) {
	dt := f.typ(typ)
	before, ok, err := drive.GetDocument(f.kv, dt, protocol.DocumentID{id})
	if err != nil || !ok {
		f.t.Fatalf("document %d: %v", id, err)
	}
	if err := drive.RemoveDocument(f.kv, f.storage(before.Owner[0]), dt, before); err != nil {
		f.t.Fatal(err)
	}
}

const seller1 = `[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]`
const seller2 = `[2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2]`

// newInvariantsFixture stores the contract and documents of every type through the
// document writes: creates, replaces that grow, shrink and move index entries across
// epochs, and removals.
func newInvariantsFixture(t *testing.T) *invariantsFixture {
	lim, err := protocol.LimitsFor(protocol.Latest)
	if err != nil {
		t.Fatal(err)
	}
	f := &invariantsFixture{t: t, kv: drive.NewCache(drive.Empty()), c: invariantsContract(t), lim: lim, epoch: 3}
	if err := drive.SetProtocolVersion(f.kv, protocol.Latest); err != nil {
		t.Fatal(err)
	}
	if _, err := drive.SetContract(f.kv, f.c); err != nil {
		t.Fatal(err)
	}
	f.create("listing", 1, 1, `{"sku":"A-1","category":"books","quantity":5,"seller":`+seller1+`}`)
	f.create("listing", 2, 1, `{"sku":"A-2","category":"books","quantity":7,"seller":`+seller1+`}`)
	f.create("listing", 3, 2, `{"sku":"A-1","category":"games","quantity":-0,"seller":`+seller2+`,"active":true}`)
	f.create("listing", 4, 2, `{"sku":"B","category":"toys","quantity":1,"seller":`+seller2+`}`)
	f.create("review", 5, 3, `{"listing":`+seller1+`,"stars":4,"text":"fine"}`)
	f.create("log", 6, 1, `{"line":"first","n":-3}`)
	f.create("log", 7, 2, `{}`)
	f.epoch = 9
	f.replace("listing", 2, `{"sku":"A-2","category":"games","quantity":70,"seller":`+seller2+`,"photo":[1,2,3,4,5,6,7,8]}`)
	f.replace("listing", 2, `{"sku":"A-2","category":"games","quantity":71,"seller":`+seller2+`}`)
	f.replace("log", 6, `{"line":"second, longer than the first","n":8}`)
	f.replace("log", 6, `{"n":8}`)
	f.remove("listing", 4)
	f.remove("log", 7)
	return f
}

// TestCheckDocumentsHolds: what the document writes leave passes every rule.
func TestCheckDocumentsHolds(t *testing.T) {
	f := newInvariantsFixture(t)
	if err := CheckDocuments(f.kv); err != nil {
		t.Fatal(err)
	}
	if err := CheckDocuments(drive.NewCache(drive.Empty())); err != nil {
		t.Fatalf("an empty state: %v", err)
	}
}

// firstKey returns the first key under prefix.
func firstKey(t *testing.T, kv drive.KV, prefix []byte) ([]byte, []byte) {
	var k, v []byte
	err := kv.Iterate(prefix, drive.PrefixEnd(prefix), func(key, value []byte) (bool, error) {
		k, v = append([]byte(nil), key...), append([]byte(nil), value...)
		return true, nil
	})
	if err != nil || k == nil {
		t.Fatalf("nothing under %x: %v", prefix, err)
	}
	return k, v
}

// TestCheckDocumentsCatches: each way the documents tree can break is found, and the
// error names the key that breaks the rule: every index entry points at a stored
// document, every stored document has all its entries, counts and sums equal a
// recount.
func TestCheckDocumentsCatches(t *testing.T) {
	c := protocol.ContractID{0xc0}
	listing := func(id byte) []byte { return drive.DocumentKey(c, "listing", protocol.DocumentID{id}) }
	cases := []struct {
		name   string
		mutate func(f *invariantsFixture) []byte // returns the key the error must name
	}{
		{"index entry of no document", func(f *invariantsFixture) []byte {
			k, v := firstKey(t, f.kv, drive.IndexPrefix(c, "listing", "byCategory"))
			stray := append(k[:len(k)-protocol.DocumentIDLen:len(k)-protocol.DocumentIDLen], bytes.Repeat([]byte{0xee}, 32)...)
			mustSet(t, f.kv, stray, v)
			return stray
		}},
		{"index entry with other values", func(f *invariantsFixture) []byte {
			k, _ := firstKey(t, f.kv, drive.IndexPrefix(c, "listing", "ownerSku"))
			p, _ := drive.ParseDocumentKey(k)
			moved := drive.IndexEntryKey(c, "listing", "ownerSku", append(p.Values, 'x'), p.ID)
			mustSet(t, f.kv, moved, drive.AppendFlags(nil, drive.StorageFlags{{Epoch: 1, Bytes: uint32(len(moved))}}))
			return moved
		}},
		{"document missing an entry", func(f *invariantsFixture) []byte {
			k, _ := firstKey(t, f.kv, drive.IndexPrefix(c, "listing", "stockBySeller"))
			mustDelete(t, f.kv, k)
			p, _ := drive.ParseDocumentKey(k)
			return listing(p.ID[0])
		}},
		{"count off by one", func(f *invariantsFixture) []byte {
			k, v := firstKey(t, f.kv, drive.IndexCountKey(c, "listing", "byCategory", nil))
			n, _ := drive.DecodeIndexCount(v)
			n.Count++
			mustSet(t, f.kv, k, drive.EncodeIndexCount(n))
			return k
		}},
		{"sum off by one", func(f *invariantsFixture) []byte {
			k := drive.IndexCountKey(c, "listing", "stockBySeller", nil)
			v, _ := f.kv.Get(k)
			n, _ := drive.DecodeIndexCount(v)
			n.Sum = n.Sum.Add(drive.Int64(1))
			mustSet(t, f.kv, k, drive.EncodeIndexCount(n))
			return k
		}},
		{"count record of no document", func(f *invariantsFixture) []byte {
			k := drive.IndexCountKey(c, "listing", "byCategory", drive.AppendIndexPart(nil, drive.IndexField{Kind: drive.FieldString}, protocol.Value{Set: true, Bytes: []byte("zzz")}))
			mustSet(t, f.kv, k, drive.EncodeIndexCount(drive.IndexCount{Count: 1}))
			return k
		}},
		{"count record missing", func(f *invariantsFixture) []byte {
			k := drive.IndexCountKey(c, "review", "starsOfListing", nil)
			mustDelete(t, f.kv, k)
			return k
		}},
		{"flags short of the bytes", func(f *invariantsFixture) []byte {
			k := listing(1)
			v, _ := f.kv.Get(k)
			fl, payload, _ := drive.SplitFlags(v)
			fl[0].Bytes--
			mustSet(t, f.kv, k, append(drive.AppendFlags(nil, fl), payload...))
			return k
		}},
		{"flags of an index entry over its key", func(f *invariantsFixture) []byte {
			k, v := firstKey(t, f.kv, drive.IndexPrefix(c, "review", "oneReviewPerListing"))
			fl, _, _ := drive.SplitFlags(v)
			fl[0].Bytes++
			mustSet(t, f.kv, k, drive.AppendFlags(nil, fl))
			return k
		}},
		{"row of another id", func(f *invariantsFixture) []byte {
			v, _ := f.kv.Get(listing(1))
			k := listing(9)
			mustSet(t, f.kv, k, v)
			return k
		}},
		{"row that does not decode", func(f *invariantsFixture) []byte {
			k := listing(1)
			v, _ := f.kv.Get(k)
			fl, payload, _ := drive.SplitFlags(v)
			payload = append(payload, 0)
			fl[len(fl)-1].Bytes++
			mustSet(t, f.kv, k, append(drive.AppendFlags(nil, fl), payload...))
			return k
		}},
		{"history revision missing", func(f *invariantsFixture) []byte {
			mustDelete(t, f.kv, drive.DocumentHistoryKey(c, "log", protocol.DocumentID{6}, 2))
			return drive.DocumentKey(c, "log", protocol.DocumentID{6})
		}},
		{"history of a removed document", func(f *invariantsFixture) []byte {
			v, _ := f.kv.Get(drive.DocumentHistoryKey(c, "log", protocol.DocumentID{6}, 1))
			dt := f.typ("log")
			sd, _ := drive.DecodeStoredDocument(nil, v, dt.DocumentType)
			sd.ID = protocol.DocumentID{7}
			k := drive.DocumentHistoryKey(c, "log", sd.ID, 1)
			enc := sd.Encode(dt.DocumentType)
			mustSet(t, f.kv, k, append(drive.AppendFlags(nil, drive.StorageFlags{{Owner: sd.Owner, Epoch: 1, Bytes: uint32(len(k) + len(enc))}}), enc...))
			return k
		}},
		{"history row of another revision", func(f *invariantsFixture) []byte {
			v, _ := f.kv.Get(drive.DocumentHistoryKey(c, "log", protocol.DocumentID{6}, 1))
			k := drive.DocumentHistoryKey(c, "log", protocol.DocumentID{6}, 2)
			mustSet(t, f.kv, k, v)
			return k
		}},
		{"history of a type without", func(f *invariantsFixture) []byte {
			v, _ := f.kv.Get(listing(1))
			k := drive.DocumentHistoryKey(c, "listing", protocol.DocumentID{1}, 1)
			mustSet(t, f.kv, k, v)
			return k
		}},
		{"key of an unknown type", func(f *invariantsFixture) []byte {
			v, _ := f.kv.Get(listing(1))
			k := drive.DocumentKey(c, "nosuchtype", protocol.DocumentID{1})
			mustSet(t, f.kv, k, v)
			return k
		}},
		{"documents of no contract", func(f *invariantsFixture) []byte {
			v, _ := f.kv.Get(listing(1))
			k := drive.DocumentKey(protocol.ContractID{0xc1}, "listing", protocol.DocumentID{1})
			mustSet(t, f.kv, k, v)
			return k
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newInvariantsFixture(t)
			want := tc.mutate(f)
			err := CheckDocuments(f.kv)
			var e ErrDocuments
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want ErrDocuments", err)
			}
			if !bytes.Equal(e.Key, want) {
				t.Fatalf("the error names %x (%s), want %x", e.Key, e.Reason, want)
			}
		})
	}
}

func mustSet(t *testing.T, kv drive.KV, k, v []byte) {
	t.Helper()
	if err := kv.Set(k, v); err != nil {
		t.Fatal(err)
	}
}

func mustDelete(t *testing.T, kv drive.KV, k []byte) {
	t.Helper()
	if err := kv.Delete(k); err != nil {
		t.Fatal(err)
	}
}
