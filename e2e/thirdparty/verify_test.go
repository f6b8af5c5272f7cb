package thirdparty

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/ttld-dev/ttld/proofs"
)

// TestTargetOfAgrees: the key or range this package derives from docs/PROOFS.md's path
// table is the one the node reads (proofs.TargetOf), for every path the table gives a
// key or a range, with and without a cursor, and both refuse the same data.
func TestTargetOfAgrees(t *testing.T) {
	contract := bytes.Repeat([]byte{0xc0}, 32)
	id := bytes.Repeat([]byte{0xd0}, 32)
	name := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	u64 := func(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }
	for _, tc := range []struct {
		path string
		data []byte
	}{
		{"/key", []byte{104, 's'}},
		{"/address", bytes.Repeat([]byte{1}, 20)},
		{"/identity", id},
		{"/address-changes/blocks", u64(7)},
		{"/address-changes/compacted", u64(7)},
		{"/epoch", []byte{0, 0, 0, 3}},
		{"/pools", nil},
		{"/pending-refunds", nil},
		{"/pending-refunds", []byte{0, 0, 0, 1, 0, 0, 0, 2}},
		{"/lifetime-pools", nil},
		{"/lifetime-pools", []byte{0}},
		{"/upgrades", nil},
		{"/upgrades", []byte{0}},
		{"/expirations", u64(1_767_225_600_000)},
		{"/expirations", u64(1<<64 - 1)},
		{"/expirations", cat(u64(1_767_225_600_000), u64(1_767_225_500_000), id)},
		{"/expirations", cat(u64(1_767_225_600_000), u64(1))},
		{"/removals", cat(contract, name(""))},
		{"/removals", cat(contract, name("post"))},
		{"/removals", cat(contract, name(""), name("post"), id)},
		{"/removals", cat(contract, name("post"), name("post"), id)},
		{"/removals", cat(contract, name("post"), name("thread"), id)},
		{"/removals", cat(contract, name("post"), name("post"))},
		{"/removals", contract},
		{"/total-credits", nil},
		{"/contract", contract},
		{"/document", cat(contract, name("post"), id)},
	} {
		want, werr := proofs.TargetOf(tc.path, tc.data)
		got, gerr := TargetOf(tc.path, tc.data)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%s %x: the node says %v, the document %v", tc.path, tc.data, werr, gerr)
		}
		if !bytes.Equal(got.Key, want.Key) || !bytes.Equal(got.Start, want.Start) || !bytes.Equal(got.End, want.End) {
			t.Fatalf("%s %x: the node reads %x [%x, %x), the document %x [%x, %x)", tc.path, tc.data, want.Key, want.Start, want.End, got.Key, got.Start, got.End)
		}
	}
}
