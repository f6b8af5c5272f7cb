package client

import (
	"bytes"
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/protocol"
)

func listingType(t *testing.T) protocol.DocumentType {
	t.Helper()
	raw, err := os.ReadFile("../docs/examples/market.json")
	if err != nil {
		t.Fatal(err)
	}
	types, err := protocol.ParseDocumentTypes(raw, protocol.Latest)
	if err != nil {
		t.Fatal(err)
	}
	for _, dt := range types {
		if dt.Name == "listing" {
			return dt
		}
	}
	t.Fatal("market.json has no listing type")
	return protocol.DocumentType{}
}

// TestWireDocumentData: "the client may also accept a string "0x<hex>" or a 64-hex
// string for such a property and convert it before sending, using the contract's type
// ... Strings of string properties stay strings." The converted data reads, through
// protocol.ParseDocumentData, as the same values as the wire form written by hand.
func TestWireDocumentData(t *testing.T) {
	lt := listingType(t)
	ctx, err := protocol.ContextFor(protocol.Latest, 0)
	if err != nil {
		t.Fatal(err)
	}
	seller := strings.Repeat("ab", 32)
	sellerWire := "[" + strings.TrimSuffix(strings.Repeat("171,", 32), ",") + "]"
	for _, tc := range []struct{ given, wire string }{
		// A 64-hex identifier, a 0x byte array, and a 0x string of a string property kept.
		{`{"sku":"A-1","category":"0x00ff","quantity":3,"seller":"` + seller + `","photo":"0x00ff10"}`,
			`{"sku":"A-1","category":"0x00ff","quantity":3,"seller":` + sellerWire + `,"photo":[0,255,16]}`},
		{`{"sku":"A-1","category":"c","quantity":3,"seller":"0x` + seller + `","photo":"0x"}`,
			`{"sku":"A-1","category":"c","quantity":3,"seller":` + sellerWire + `,"photo":[]}`},
	} {
		got, err := WireDocumentData(lt, []byte(tc.given))
		if err != nil {
			t.Fatalf("%s: %v", tc.given, err)
		}
		vals, err := protocol.ParseDocumentData(lt, got, ctx.Limits)
		if err != nil {
			t.Fatalf("%s converted to %s: %v", tc.given, got, err)
		}
		want, err := protocol.ParseDocumentData(lt, []byte(tc.wire), ctx.Limits)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(vals, want) {
			t.Errorf("%s converted to %s: values %v, want %v", tc.given, got, vals, want)
		}
	}

	// Data in the wire form already is sent byte for byte.
	wire := []byte(`{"sku":"A-1", "category":"c","quantity":3,"seller":` + sellerWire + `}`)
	if got, err := WireDocumentData(lt, wire); err != nil || !bytes.Equal(got, wire) {
		t.Errorf("wire data: %s %v, want it unchanged", got, err)
	}

	for _, tc := range []struct{ given, property string }{
		{`{"seller":"abcd"}`, "seller"}, // neither 0x nor 64 digits
		{`{"photo":"0x0"}`, "photo"},    // odd digits
		{`{"photo":"0xzz"}`, "photo"},   // no hex
		{`{"seller":"` + strings.Repeat("g", 64) + `"}`, "seller"},
		{`[1,2]`, ""},
		{`null`, ""},
		{`{"sku":"A"} {}`, ""},
	} {
		_, err := WireDocumentData(lt, []byte(tc.given))
		var bad ErrDocumentData
		if !errors.As(err, &bad) || bad.Property != tc.property || bad.Type != "listing" {
			t.Errorf("%s: err = %v, want ErrDocumentData on %q", tc.given, err, tc.property)
		}
	}
}

// TestReadableDocumentDataRoundTrips: what ReadableDocumentData prints, WireDocumentData
// turns back into the data the node reads.
func TestReadableDocumentDataRoundTrips(t *testing.T) {
	raw, err := os.ReadFile("../docs/examples/market.json")
	if err != nil {
		t.Fatal(err)
	}
	types, err := protocol.ParseDocumentTypes(raw, protocol.Latest)
	if err != nil {
		t.Fatal(err)
	}
	listing := types[0]
	lim, _ := protocol.LimitsFor(protocol.Latest)
	data := `{"sku":"A-1","category":"home","quantity":2,"seller":[` + strings.Repeat("171,", 31) + `171],"photo":[0,1,255]}`
	values, err := protocol.ParseDocumentData(listing, []byte(data), lim)
	if err != nil {
		t.Fatal(err)
	}
	d := protocol.Document{Values: values}
	readable := ReadableDocumentData(listing, d)
	if want := `"seller":"` + strings.Repeat("ab", 32) + `"`; !strings.Contains(string(readable), want) || !strings.Contains(string(readable), `"photo":"0x0001ff"`) {
		t.Fatalf("readable form %s", readable)
	}
	wire, err := WireDocumentData(listing, readable)
	if err != nil {
		t.Fatal(err)
	}
	back, err := protocol.ParseDocumentData(listing, wire, lim)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := protocol.DocumentData(listing, protocol.Document{Values: back}), protocol.DocumentData(listing, d); string(got) != string(want) {
		t.Fatalf("round trip gives %s, want %s", got, want)
	}
}

// TestIdentifierListData: an identifier list is written as an array of identifiers,
// each in hex or as integers, converted to the wire form item by item, and read back as
// the hex strings it was given.
func TestIdentifierListData(t *testing.T) {
	raw, err := os.ReadFile("../docs/examples/forum.json")
	if err != nil {
		t.Fatal(err)
	}
	types, err := protocol.ParseDocumentTypes(raw, protocol.Latest)
	if err != nil {
		t.Fatal(err)
	}
	var post protocol.DocumentType
	for _, dt := range types {
		if dt.Name == "post" {
			post = dt
		}
	}
	ctx, err := protocol.ContextFor(protocol.Latest, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := strings.Repeat("ab", 32), strings.Repeat("0c", 32)
	wireB := "[" + strings.TrimSuffix(strings.Repeat("12,", 32), ",") + "]"
	given := `{"thread":"` + a + `","text":"hi","mentions":["` + a + `",` + wireB + `]}`
	wire, err := WireDocumentData(post, []byte(given))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := protocol.ParseDocumentData(post, wire, ctx.Limits)
	if err != nil {
		t.Fatalf("%s: %v", wire, err)
	}
	readable := ReadableDocumentData(post, protocol.Document{Values: vals})
	if want := `{"mentions":["` + a + `","` + b + `"],"text":"hi","thread":"` + a + `"}`; string(readable) != want {
		t.Errorf("read back as %s, want %s", readable, want)
	}
	if _, err := WireDocumentData(post, []byte(`{"mentions":["0xzz"]}`)); err == nil {
		t.Error("a list item that is no hex was converted")
	}
}

// TestTxLimits: the limits a writer checks a batch against are those of the protocol
// version in force, which is the genesis's until an upgrade's height.
func TestTxLimits(t *testing.T) {
	ctx := context.Background()
	chain := newMemChain(t, genesis.AppState{ProtocolVersion: protocol.V13, Upgrade: &genesis.Upgrade{Version: protocol.V14, Height: 3}})
	c := New(chain, Options{})
	for _, want := range []protocol.Version{protocol.V13, protocol.V14} {
		v, lim, err := c.TxLimits(ctx)
		wantLim, _ := protocol.LimitsFor(want)
		if err != nil || v != want || lim != wantLim {
			t.Fatalf("at height %d: version %d, limits %+v, %v; want version %d", chain.height, v, lim, err, want)
		}
		chain.block(nil)
		chain.block(nil)
	}
}
