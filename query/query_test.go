package query

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

func marketListing(t testing.TB) protocol.DocumentType {
	t.Helper()
	raw, err := os.ReadFile("../docs/examples/market.json")
	if err != nil {
		t.Fatal(err)
	}
	types, err := protocol.ParseDocumentTypes(raw, protocol.V13)
	if err != nil {
		t.Fatal(err)
	}
	c := protocol.Contract{DocumentTypes: types}
	lt, ok := c.DocumentType("listing")
	if !ok {
		t.Fatal("market.json has no listing type")
	}
	return lt
}

// The index a query gets, and the plan on it: "equality (== or a one-value in) on the
// leading properties, then at most one range / in / startsWith clause on the next
// property, orderBy along the index (same or fully reversed directions)".
func TestParseQueryPlans(t *testing.T) {
	lt := marketListing(t)
	for _, c := range []struct {
		query, index string
		equal        int
		ranged       string
		reverse      bool
		limit        int
	}{
		{`{}`, "stockBySeller", 0, "", false, 100},
		{`{"limit":0}`, "stockBySeller", 0, "", false, 100},
		{`{"where":[["category","==","home"]],"limit":10}`, "byCategory", 1, "", false, 10},
		{`{"where":[["category","in",["home"]]]}`, "byCategory", 1, "", false, 100},
		{`{"where":[["category","==","home"]],"orderBy":[["$createdAt","desc"]]}`, "byCategory", 1, "", false, 100},
		{`{"where":[["category","==","home"]],"orderBy":[["$createdAt","asc"]]}`, "byCategory", 1, "", true, 100},
		{`{"where":[["category","==","home"],["$createdAt",">",5]]}`, "byCategory", 1, "$createdAt", false, 100},
		{`{"where":[["category","==","home"],["$createdAt",">",5],["$createdAt","<",9]]}`, "byCategory", 1, "$createdAt", false, 100},
		{`{"where":[["category","in",["a","b"]]],"orderBy":[["category","desc"],["$createdAt","asc"]]}`, "byCategory", 0, "category", true, 100},
		{`{"where":[["category","startsWith","ho"]]}`, "byCategory", 0, "category", false, 100},
		{`{"where":[["$ownerId","==","` + strings.Repeat("ab", 32) + `"],["sku",">=","A"]]}`, "ownerSku", 1, "sku", false, 100},
		{`{"orderBy":[["$ownerId","desc"]]}`, "ownerSku", 0, "", true, 100},
	} {
		q, err := Parse(lt, []byte(c.query), protocol.V13)
		if err != nil {
			t.Errorf("%s: %v", c.query, err)
			continue
		}
		ranged := ""
		if q.Range != nil {
			ranged = q.Range.Field
		}
		if q.Index.Name != c.index || len(q.Equal) != c.equal || ranged != c.ranged || q.Reverse != c.reverse || q.Limit != c.limit {
			t.Errorf("%s: index %s, %d equal, range on %q, reverse %t, limit %d; want %s, %d, %q, %t, %d",
				c.query, q.Index.Name, len(q.Equal), ranged, q.Reverse, q.Limit, c.index, c.equal, c.ranged, c.reverse, c.limit)
		}
	}
}

// "Clear query errors (typed ...) for: not JSON, unknown field, a field no index
// serves, unsupported operator, a value of the wrong type, limit too large, both
// startAt and startAfter."
func TestParseQueryRefusals(t *testing.T) {
	lt := marketListing(t)
	id := strings.Repeat("ab", 32)
	for _, c := range []struct {
		query string
		kind  ErrorKind
	}{
		{`nope`, NotJSON},
		{`{}{}`, NotJSON},
		{`[]`, NotJSON},
		{`{"where":[["category","=="]]}`, NotJSON},
		{`{"orderBy":[["category","up"]]}`, NotJSON},
		{`{"select":["sku"]}`, UnknownField},
		{`{"where":[["colour","==","red"]]}`, UnknownField},
		{`{"orderBy":[["colour","asc"]]}`, UnknownField},
		{`{"where":[["quantity",">",1]]}`, FieldNotIndexed},
		{`{"where":[["category",">","a"],["$createdAt",">",1]]}`, FieldNotIndexed},
		{`{"where":[["category",">","a"]],"orderBy":[["$createdAt","desc"]]}`, FieldNotIndexed},
		{`{"where":[["category","==","a"]],"orderBy":[["$createdAt","desc"],["$id","asc"]]}`, FieldNotIndexed},
		{`{"where":[["category","==","a"],["category","==","b"]]}`, FieldNotIndexed},
		{`{"where":[["category","!=","a"]]}`, UnsupportedOperator},
		{`{"where":[["active","<",true]]}`, UnsupportedOperator},
		{`{"where":[["quantity","startsWith","1"]]}`, UnsupportedOperator},
		{`{"where":[["category","==",1]]}`, WrongValueType},
		{`{"where":[["quantity","==","1"]]}`, WrongValueType},
		{`{"where":[["quantity","==",1.5]]}`, WrongValueType},
		{`{"where":[["seller","==","zz"]]}`, WrongValueType},
		{`{"where":[["seller","==",[1,2,300]]]}`, WrongValueType},
		{`{"where":[["category","in",[]]]}`, WrongValueType},
		{`{"where":[["category","startsWith",""]]}`, WrongValueType},
		{`{"startAfter":"xyz"}`, WrongValueType},
		{`{"limit":101}`, LimitTooLarge},
		{`{"limit":-1}`, LimitTooLarge},
		{`{"startAt":"` + id + `","startAfter":"` + id + `"}`, BothStarts},
	} {
		_, err := Parse(lt, []byte(c.query), protocol.V13)
		var iq ErrInvalid
		if !errors.As(err, &iq) || iq.Kind != c.kind {
			t.Errorf("%s: %v, want kind %d", c.query, err, c.kind)
		}
	}
}

// A document matches the where clauses it satisfies, and an unset value none.
func TestQueryMatches(t *testing.T) {
	lt := marketListing(t)
	d := protocol.Document{CreatedAt: 10, Values: []protocol.Value{{Set: true, Bytes: []byte("SKU")}, {Set: true, Bytes: []byte("home")}}}
	for query, want := range map[string]bool{
		`{"where":[["category","==","home"]]}`:                                   true,
		`{"where":[["category","startsWith","ho"]]}`:                             true,
		`{"where":[["category","in",["a","home"]]]}`:                             true,
		`{"where":[["category","==","home"],["$createdAt",">",10]]}`:             false,
		`{"where":[["category","==","home"],["$createdAt",">=",10]]}`:            true,
		`{"where":[["category","<","home"]]}`:                                    false,
		`{"where":[["seller","==","` + strings.Repeat("00", 32) + `"]]}`:         false,
		`{"where":[["category","==","home"],["$createdAt","<=",9]]}`:             false,
		`{"where":[["category","==","home"],["$createdAt","<",11]]}`:             true,
		`{"where":[["category","in",["a","b"]]],"orderBy":[["category","asc"]]}`: false,
	} {
		q, err := Parse(lt, []byte(query), protocol.V13)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		if got := q.Matches(d); got != want {
			t.Errorf("%s matches: %t, want %t", query, got, want)
		}
	}
}

// FuzzParseQuery: the parsers (Parse, ParseCount) never panic; what they refuse is an
// ErrInvalid, and what Parse accepts has an index whose properties hold every where
// clause, a limit in 1..MaxQueryLimit, and a range (if any) right after the equal values.
func FuzzParseQuery(f *testing.F) {
	lt := marketListing(f)
	lim, _ := protocol.LimitsFor(protocol.V13)
	for _, s := range []string{
		`{}`,
		`{"where":[["category","==","home"],["$createdAt",">",1767225600000]],"orderBy":[["$createdAt","desc"]],"limit":10,"startAfter":"` + strings.Repeat("ab", 32) + `"}`,
		`{"where":[["category","in",["a","b","a"]]],"orderBy":[["category","desc"]]}`,
		`{"where":[["category","startsWith","h"]]}`,
		`{"where":[["seller","==",[1,2,3]]]}`,
		`{"where":[["$ownerId","==","` + strings.Repeat("0", 64) + `"],["sku","<","Z"]]}`,
		`{"limit":1e3}`,
		`{"where":[[1,2,3]]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, sum := range []bool{false, true} {
			cq, err := ParseCount(lt, raw, protocol.V13, "", sum)
			var iq ErrInvalid
			switch {
			case err != nil && (!errors.As(err, &iq) || iq.Kind < NotJSON || iq.Kind > BothStarts):
				t.Fatalf("ParseCount(%q) = %v, not an ErrInvalid", raw, err)
			case err == nil && (len(cq.Equal) > len(cq.Index.Properties) || (sum && cq.Index.Summable == "")):
				t.Fatalf("ParseCount(%q, sum %t) plans %d values on index %+v", raw, sum, len(cq.Equal), cq.Index)
			}
		}
		q, err := Parse(lt, raw, protocol.V13)
		if err != nil {
			var iq ErrInvalid
			if !errors.As(err, &iq) || iq.Kind < NotJSON || iq.Kind > BothStarts {
				t.Fatalf("Parse(%q) = %v, not an ErrInvalid", raw, err)
			}
			return
		}
		if q.Limit < 1 || q.Limit > lim.MaxQueryLimit {
			t.Fatalf("Parse(%q) limit %d", raw, q.Limit)
		}
		if len(q.Equal) > len(q.Index.Properties) || (q.Range != nil && q.Range.Field != q.Index.Properties[len(q.Equal)].Name) {
			t.Fatalf("Parse(%q) plans %d equal values and range %+v on index %+v", raw, len(q.Equal), q.Range, q.Index)
		}
		for _, c := range q.Where {
			found := false
			for _, p := range q.Index.Properties {
				found = found || p.Name == c.Field
			}
			if !found {
				t.Fatalf("Parse(%q) answers a clause on %s with index %s", raw, c.Field, q.Index.Name)
			}
		}
	})
}
