package drive

import (
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// TestGetContractMemo: a contract read again, read under another version, changed in
// place or past the memo's bound decodes to exactly what protocol.DecodeContract makes
// of the bytes stored at that moment; a stored value that does not decode is ErrCorrupt
// every time.
func TestGetContractMemo(t *testing.T) {
	kv := NewCache(Empty())
	c := protocol.Contract{ID: protocol.ContractID{0xc0}, Owner: protocol.IdentityID{0xa1}, Version: 1, DocumentTypes: marketTypes(t)}
	if _, err := SetContract(kv, c); err != nil {
		t.Fatal(err)
	}
	check := func(v protocol.Version) protocol.Contract {
		t.Helper()
		got, ok, err := GetContract(kv, c.ID, v)
		if err != nil || !ok {
			t.Fatalf("GetContract: %v %v", ok, err)
		}
		b, _ := GetContractBytes(kv, c.ID)
		want, err := protocol.DecodeContract(b, v)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("GetContract under %d: %+v, DecodeContract: %+v", v, got, want)
		}
		return got
	}
	first := check(protocol.Latest)
	if again := check(protocol.Latest); !reflect.DeepEqual(first, again) {
		t.Fatal("a second read differs from the first")
	}
	check(protocol.V14)

	// The next version of the contract under the same id: the new bytes are decoded.
	next := c
	next.Version = 2
	next.DocumentTypes = next.DocumentTypes[:1]
	if _, err := SetContract(kv, next); err != nil {
		t.Fatal(err)
	}
	if got := check(protocol.Latest); got.Version != 2 || len(got.DocumentTypes) != 1 {
		t.Fatalf("after the update: version %d with %d types", got.Version, len(got.DocumentTypes))
	}

	// More contracts than the memo keeps, then the first again.
	for i := range maxDecodedContracts + 1 {
		other := c
		other.ID = protocol.ContractID{0xd0, byte(i >> 8), byte(i)}
		if _, err := SetContract(kv, other); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := GetContract(kv, other.ID, protocol.Latest); err != nil || !ok || got.ID != other.ID {
			t.Fatalf("contract %d: %v %v %v", i, got.ID, ok, err)
		}
	}
	check(protocol.Latest)

	if err := kv.Set(ContractKey(c.ID), []byte{0xff, 1, 2}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, _, err := GetContract(kv, c.ID, protocol.Latest); !errors.As(err, new(ErrCorrupt)) {
			t.Fatalf("a value that does not decode: %v, want ErrCorrupt", err)
		}
	}
}

// marketTypes are the document types of docs/examples/market.json at the latest
// protocol version.
func marketTypes(t *testing.T) []protocol.DocumentType {
	t.Helper()
	raw, err := os.ReadFile("../docs/examples/market.json")
	if err != nil {
		t.Fatal(err)
	}
	types, err := protocol.ParseDocumentTypes(raw, protocol.Latest)
	if err != nil {
		t.Fatal(err)
	}
	return types
}
