package query

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ttld-dev/ttld/protocol"
)

// A document query, as a client writes it (the platform's form, docs/PROOFS.md "The
// query"):
//
//	{"where": [["category", "==", "home"], ["$createdAt", ">", 1767225600000]],
//	 "orderBy": [["$createdAt", "desc"]], "limit": 10, "startAfter": "<hex id>"}
//
// Parse reads it against a document type and chooses the index that answers it:
// equality (== or an `in` of one value) on the index's leading properties, then at most
// one range, `in` or startsWith clause (a lower and an upper bound on the same property
// count as one) on the next property, and an orderBy that follows the index from there,
// every direction the index's or every one reversed. Nothing else is answered: a query
// no index serves is refused, never scanned.

// Operator is the operator of one where clause.
type Operator uint8

const (
	Equal          Operator = iota + 1 // ==
	In                                 // in: one of a list
	Less                               // <
	LessOrEqual                        // <=
	Greater                            // >
	GreaterOrEqual                     // >=
	StartsWith                         // startsWith: a string prefix
)

// operatorNames are the operators as a query writes them.
var operatorNames = [...]string{Equal: "==", In: "in", Less: "<", LessOrEqual: "<=",
	Greater: ">", GreaterOrEqual: ">=", StartsWith: "startsWith"}

// operatorOf reads an operator as a query writes it.
func operatorOf(s string) (Operator, bool) {
	for o := Equal; o <= StartsWith; o++ {
		if operatorNames[o] == s {
			return o, true
		}
	}
	return 0, false
}

func (o Operator) String() string {
	if o >= Equal && o <= StartsWith {
		return operatorNames[o]
	}
	return fmt.Sprintf("Operator(%d)", uint8(o))
}

// MaxInValues bounds the values of one `in` clause.
const MaxInValues = 100

// Clause is one where condition of a query: Field Op Values (one value except for In,
// whose values are sorted ascending and distinct).
type Clause struct {
	Field  string
	Op     Operator
	Values []protocol.Value
}

// Query is a parsed document query with the index that answers it.
type Query struct {
	Type protocol.DocumentType
	// Index answers the query; every where clause is on one of its properties.
	Index protocol.Index
	// Equal holds the values of the index's first len(Equal) properties.
	Equal []protocol.Value
	// Range restricts the index's property len(Equal); nil: no restriction.
	Range *Range
	// Reverse: the answer runs against the index's order (the orderBy reversed every
	// direction of the index).
	Reverse bool
	// Limit is 1..MaxQueryLimit of the query's protocol version.
	Limit int
	// Start: the answer starts at (StartIncluded, startAt) or right after (startAfter)
	// this document's place in the index; nil: from the beginning.
	Start         *protocol.DocumentID
	StartIncluded bool
	// Where are the clauses as given, for Matches.
	Where []Clause
	// Window is the window a query on a time-range index reads (nil: an ordinary
	// index); its start is set by ResolveWindow.
	Window *Window
}

// Range is the restriction of one index property: bounds, a list of values, or a
// string prefix (exactly one kind is set).
type Range struct {
	Field string
	// Lower and Upper bound the values (nil: unbounded on that side).
	Lower, Upper                 *protocol.Value
	LowerIncluded, UpperIncluded bool
	// In lists the values, sorted ascending and distinct (at least two).
	In []protocol.Value
	// Prefix is the start of every string value (startsWith).
	Prefix *protocol.Value
}

// queryJSON is the request's form.
type queryJSON struct {
	Where      [][]json.RawMessage `json:"where"`
	OrderBy    [][]string          `json:"orderBy"`
	Limit      *int64              `json:"limit"`
	StartAfter *string             `json:"startAfter"`
	StartAt    *string             `json:"startAt"`
	Window     json.RawMessage     `json:"window"`
}

// decode reads one JSON object into v after checking it has no member but the known
// ones.
func decode(raw []byte, v any, known ...string) error {
	var members map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(raw))
	if err := d.Decode(&members); err != nil {
		return ErrInvalid{Kind: NotJSON, Reason: err.Error()}
	}
	if d.More() {
		return ErrInvalid{Kind: NotJSON, Reason: "trailing data after the query"}
	}
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(known, name) {
			return ErrInvalid{Kind: UnknownField, Field: name, Reason: "not a member of a query"}
		}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return ErrInvalid{Kind: NotJSON, Reason: err.Error()}
	}
	return nil
}

// field is a field a query may name: a property of the type or a system field.
type field struct {
	typ       protocol.PropertyType
	timestamp bool
}

func fieldOf(t protocol.DocumentType, name string) (field, bool) {
	switch name {
	case "$id", "$ownerId":
		return field{typ: protocol.PropertyIdentifier}, true
	case "$createdAt", "$updatedAt", "$transferredAt", "$renewedAt":
		return field{typ: protocol.PropertyInteger, timestamp: true}, true
	}
	p, ok := t.Property(name)
	return field{typ: p.Type}, ok
}

// Parse reads a query (JSON) of document type t under protocol version v: the limit is
// bounded by v's MaxQueryLimit and the index is chosen by v's rules (choice.go). Every
// refusal of the query is ErrInvalid; a version this build does not know is another
// error.
func Parse(t protocol.DocumentType, raw []byte, v protocol.Version) (Query, error) {
	l, err := protocol.LimitsFor(v)
	if err != nil {
		return Query{}, err
	}
	choice, err := indexChoiceFor(v)
	if err != nil {
		return Query{}, err
	}
	var qj queryJSON
	if err := decode(raw, &qj, "where", "orderBy", "limit", "startAfter", "startAt", "window"); err != nil {
		return Query{}, err
	}
	q := Query{Type: t, Limit: l.MaxQueryLimit}
	var windowed *protocol.Index
	if qj.Window != nil {
		w, ix, err := parseWindow(t, qj.Window)
		if err != nil {
			return Query{}, err
		}
		q.Window, windowed = w, &ix
	}
	if qj.Limit != nil {
		if *qj.Limit < 0 || *qj.Limit > int64(l.MaxQueryLimit) {
			return Query{}, ErrInvalid{Kind: LimitTooLarge, Reason: fmt.Sprintf("limit %d is outside 0..%d", *qj.Limit, l.MaxQueryLimit)}
		}
		if *qj.Limit > 0 {
			q.Limit = int(*qj.Limit)
		}
	}
	switch {
	case qj.StartAfter != nil && qj.StartAt != nil:
		return Query{}, ErrInvalid{Kind: BothStarts, Reason: "startAt and startAfter exclude each other"}
	case qj.StartAfter != nil || qj.StartAt != nil:
		s, name := qj.StartAfter, "startAfter"
		if s == nil {
			s, name, q.StartIncluded = qj.StartAt, "startAt", true
		}
		id, err := protocol.ParseDocumentID(*s)
		if err != nil {
			return Query{}, ErrInvalid{Kind: WrongValueType, Field: name, Reason: err.Error()}
		}
		q.Start = &id
	}
	for _, w := range qj.Where {
		c, err := parseWhere(t, w)
		if err != nil {
			return Query{}, err
		}
		q.Where = append(q.Where, c)
	}
	var order []protocol.IndexProperty
	for _, o := range qj.OrderBy {
		if len(o) != 2 || (o[1] != "asc" && o[1] != "desc") {
			return Query{}, ErrInvalid{Kind: NotJSON, Reason: fmt.Sprintf("an orderBy clause is [field, \"asc\" or \"desc\"], got %q", o)}
		}
		if _, ok := fieldOf(t, o[0]); !ok {
			return Query{}, ErrInvalid{Kind: UnknownField, Field: o[0], Reason: "no such property"}
		}
		order = append(order, protocol.IndexProperty{Name: o[0], Descending: o[1] == "desc"})
	}
	return choice.documents(q, order, windowed)
}

// parseWhere reads one clause [field, operator, value].
func parseWhere(t protocol.DocumentType, w []json.RawMessage) (Clause, error) {
	if len(w) != 3 {
		return Clause{}, ErrInvalid{Kind: NotJSON, Reason: fmt.Sprintf("a where clause is [field, operator, value], got %d items", len(w))}
	}
	var name, op string
	if json.Unmarshal(w[0], &name) != nil || json.Unmarshal(w[1], &op) != nil {
		return Clause{}, ErrInvalid{Kind: NotJSON, Reason: "a where clause's field and operator are strings"}
	}
	f, ok := fieldOf(t, name)
	if !ok {
		return Clause{}, ErrInvalid{Kind: UnknownField, Field: name, Reason: "no such property"}
	}
	c := Clause{Field: name}
	if c.Op, ok = operatorOf(op); !ok {
		return Clause{}, ErrInvalid{Kind: UnsupportedOperator, Field: name, Reason: fmt.Sprintf("unknown operator %q", op)}
	}
	switch c.Op {
	case StartsWith:
		if f.typ != protocol.PropertyString {
			return Clause{}, ErrInvalid{Kind: UnsupportedOperator, Field: name, Reason: "startsWith applies to strings only"}
		}
	case Less, LessOrEqual, Greater, GreaterOrEqual:
		if f.typ == protocol.PropertyBoolean {
			return Clause{}, ErrInvalid{Kind: UnsupportedOperator, Field: name, Reason: fmt.Sprintf("%s does not apply to booleans", op)}
		}
	}
	if c.Op != In {
		v, err := parseValue(f, name, w[2])
		if err != nil {
			return Clause{}, err
		}
		if c.Op == StartsWith && len(v.Bytes) == 0 {
			return Clause{}, ErrInvalid{Kind: WrongValueType, Field: name, Reason: "startsWith needs a non-empty prefix"}
		}
		c.Values = []protocol.Value{v}
		return c, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(w[2], &items); err != nil || len(items) == 0 {
		return Clause{}, ErrInvalid{Kind: WrongValueType, Field: name, Reason: "in takes a non-empty array"}
	}
	if len(items) > MaxInValues {
		return Clause{}, ErrInvalid{Kind: WrongValueType, Field: name, Reason: fmt.Sprintf("in takes at most %d values", MaxInValues)}
	}
	for _, it := range items {
		v, err := parseValue(f, name, it)
		if err != nil {
			return Clause{}, err
		}
		c.Values = append(c.Values, v)
	}
	slices.SortFunc(c.Values, compareValues)
	c.Values = slices.CompactFunc(c.Values, func(a, b protocol.Value) bool { return compareValues(a, b) == 0 })
	return c, nil
}

// parseValue reads a value of field f: a string, an integer (a timestamp is not
// negative), a boolean, a byte array as an array of integers 0..255, an identifier as
// 64 hex digits or as such an array of 32.
func parseValue(f field, name string, raw json.RawMessage) (protocol.Value, error) {
	wrong := func(want string) (protocol.Value, error) {
		return protocol.Value{}, ErrInvalid{Kind: WrongValueType, Field: name, Reason: fmt.Sprintf("want %s, got %s", want, raw)}
	}
	switch f.typ {
	case protocol.PropertyString:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return wrong("a string")
		}
		return protocol.Value{Set: true, Bytes: []byte(s)}, nil
	case protocol.PropertyInteger:
		n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
		if err != nil || (f.timestamp && n < 0) {
			if f.timestamp {
				return wrong("a timestamp in milliseconds")
			}
			return wrong("an integer")
		}
		return protocol.Value{Set: true, Int: n}, nil
	case protocol.PropertyBoolean:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return wrong("a boolean")
		}
		return protocol.Value{Set: true, Bool: b}, nil
	case protocol.PropertyIdentifier:
		var s string
		if json.Unmarshal(raw, &s) == nil {
			b, err := hex.DecodeString(s)
			if err != nil || len(b) != 32 {
				return wrong("an identifier (64 hex digits)")
			}
			return protocol.Value{Set: true, Bytes: b}, nil
		}
		var b []uint8
		if !byteArray(raw, &b) || len(b) != 32 {
			return wrong("an identifier (64 hex digits or 32 bytes)")
		}
		return protocol.Value{Set: true, Bytes: b}, nil
	}
	var b []uint8
	if !byteArray(raw, &b) {
		return wrong("an array of bytes")
	}
	return protocol.Value{Set: true, Bytes: b}, nil
}

// byteArray reads a JSON array of integers 0..255 (encoding/json would take a base64
// string for a []byte).
func byteArray(raw json.RawMessage, out *[]uint8) bool {
	var items []int64
	if json.Unmarshal(raw, &items) != nil || items == nil {
		return false
	}
	b := make([]uint8, len(items))
	for i, n := range items {
		if n < 0 || n > 255 {
			return false
		}
		b[i] = uint8(n)
	}
	*out = b
	return true
}

// compareValues orders two set values of one field: integers numerically, booleans
// false first, bytes and strings bytewise. It is the order of the index encoding
// (docs/STATE.md, "Index key parts").
func compareValues(a, b protocol.Value) int {
	switch {
	case a.Int != b.Int:
		if a.Int < b.Int {
			return -1
		}
		return 1
	case a.Bool != b.Bool:
		if b.Bool {
			return -1
		}
		return 1
	}
	return bytes.Compare(a.Bytes, b.Bytes)
}

// fieldValue returns the value of field name (a property or a system field) of d, a
// document of type t.
func fieldValue(t protocol.DocumentType, d protocol.Document, name string) (protocol.Value, bool) {
	if v, ok := d.SystemFieldValue(name); ok {
		return v, true
	}
	p, ok := t.Property(name)
	if !ok {
		return protocol.Value{}, false
	}
	return d.Value(p.Position), true
}

// Matches reports whether d satisfies every where clause of q. An unset value
// satisfies none.
func (q Query) Matches(d protocol.Document) bool {
	for _, c := range q.Where {
		v, ok := fieldValue(q.Type, d, c.Field)
		if !ok || !v.Set {
			return false
		}
		cmp := compareValues(v, c.Values[0])
		var m bool
		switch c.Op {
		case Equal:
			m = cmp == 0
		case In:
			m = slices.ContainsFunc(c.Values, func(w protocol.Value) bool { return compareValues(v, w) == 0 })
		case Less:
			m = cmp < 0
		case LessOrEqual:
			m = cmp <= 0
		case Greater:
			m = cmp > 0
		case GreaterOrEqual:
			m = cmp >= 0
		case StartsWith:
			m = bytes.HasPrefix(v.Bytes, c.Values[0].Bytes)
		}
		if !m {
			return false
		}
	}
	return true
}
