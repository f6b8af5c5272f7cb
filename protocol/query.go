package protocol

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A document query, as a client writes it (the platform's form):
//
//	{"where": [["category", "==", "home"], ["$createdAt", ">", 1767225600000]],
//	 "orderBy": [["$createdAt", "desc"]], "limit": 10, "startAfter": "<hex id>"}
//
// ParseQuery reads it against a document type and chooses the index that answers it:
// equality (== or an `in` of one value) on the index's leading properties, then at most
// one range, `in` or startsWith clause (a lower and an upper bound on the same property
// count as one) on the next property, and an orderBy that follows the index from there,
// every direction the index's or every one reversed. Nothing else is answered: a query
// no index serves is refused, never scanned.

// QueryOperator is the operator of one where clause.
type QueryOperator uint8

const (
	QueryEqual          QueryOperator = iota + 1 // ==
	QueryIn                                      // in: one of a list
	QueryLess                                    // <
	QueryLessOrEqual                             // <=
	QueryGreater                                 // >
	QueryGreaterOrEqual                          // >=
	QueryStartsWith                              // startsWith: a string prefix
)

// operatorNames are the operators as a query writes them.
var operatorNames = [...]string{QueryEqual: "==", QueryIn: "in", QueryLess: "<", QueryLessOrEqual: "<=",
	QueryGreater: ">", QueryGreaterOrEqual: ">=", QueryStartsWith: "startsWith"}

// operatorOf reads an operator as a query writes it.
func operatorOf(s string) (QueryOperator, bool) {
	for o := QueryEqual; o <= QueryStartsWith; o++ {
		if operatorNames[o] == s {
			return o, true
		}
	}
	return 0, false
}

func (o QueryOperator) String() string {
	if o >= QueryEqual && o <= QueryStartsWith {
		return operatorNames[o]
	}
	return fmt.Sprintf("QueryOperator(%d)", uint8(o))
}

// MaxQueryInValues bounds the values of one `in` clause.
const MaxQueryInValues = 100

// WhereClause is one condition of a query: Field Op Values (one value except for
// QueryIn, whose values are sorted ascending and distinct).
type WhereClause struct {
	Field  string
	Op     QueryOperator
	Values []Value
}

// Query is a parsed document query with the index that answers it.
type Query struct {
	Type DocumentType
	// Index answers the query; every where clause is on one of its properties.
	Index Index
	// Equal holds the values of the index's first len(Equal) properties.
	Equal []Value
	// Range restricts the index's property len(Equal); nil: no restriction.
	Range *QueryRange
	// Reverse: the answer runs against the index's order (the orderBy reversed every
	// direction of the index).
	Reverse bool
	// Limit is 1..MaxQueryLimit.
	Limit int
	// Start: the answer starts at (StartIncluded, startAt) or right after (startAfter)
	// this document's place in the index; nil: from the beginning.
	Start         *DocumentID
	StartIncluded bool
	// Where are the clauses as given, for Matches.
	Where []WhereClause
	// Window is the window a query on a time-range index reads (nil: an ordinary
	// index); its start is set by ResolveWindow.
	Window *QueryWindow
}

// QueryWindow selects one window of a time-range index (seed 002): by its start, or
// the newest or the oldest that can be queried, judged at a block time.
type QueryWindow struct {
	Index string
	// ByStart is the window's start in ms; nil with Newest or Oldest.
	ByStart        *uint64
	Newest, Oldest bool
	// StartMs is the start resolved, by ResolveWindow.
	StartMs uint64
}

// windowJSON is a window selector's form: {"index": I, "byStart": T | "newest": true |
// "oldest": true}.
type windowJSON struct {
	Index   string  `json:"index"`
	ByStart *uint64 `json:"byStart"`
	Newest  bool    `json:"newest"`
	Oldest  bool    `json:"oldest"`
}

// parseWindow reads a query's window member against type t: the index a time-range
// index of t, exactly one selector.
func parseWindow(t DocumentType, raw json.RawMessage) (*QueryWindow, Index, error) {
	var wj windowJSON
	if err := decodeQuery(raw, &wj, "index", "byStart", "newest", "oldest"); err != nil {
		return nil, Index{}, err
	}
	i := slices.IndexFunc(t.Indices, func(x Index) bool { return x.Name == wj.Index })
	if i < 0 || t.Indices[i].TimeRange == nil {
		return nil, Index{}, ErrInvalidQuery{Kind: QueryFieldNotIndexed, Field: "window", Reason: fmt.Sprintf("type %q has no time-range index %q", t.Name, wj.Index)}
	}
	n := 0
	for _, set := range []bool{wj.ByStart != nil, wj.Newest, wj.Oldest} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, Index{}, ErrInvalidQuery{Kind: QueryNotJSON, Field: "window", Reason: "a window is selected by exactly one of byStart, newest and oldest"}
	}
	return &QueryWindow{Index: wj.Index, ByStart: wj.ByStart, Newest: wj.Newest, Oldest: wj.Oldest}, t.Indices[i], nil
}

// resolveWindow sets w's start for index ix at block time nowMs:
//
//   - byStart: the start of one of the grid's windows (QueryWrongValueType otherwise),
//     and on a ttl'd index one still queryable at nowMs (QueryWindowExpired
//     otherwise: seed 002, "An expired window is not queryable at all — byStart
//     rejects starts past the horizon");
//   - newest: the latest window begun at nowMs;
//   - oldest: on a ttl'd index, the earliest window still queryable at nowMs ("The
//     relative selectors (newest / oldest) can never address an expired window at all
//     (ttl >= range guarantees it)"); a permanent index has no such bound, and oldest
//     is refused there (QueryUnsupportedOperator).
func resolveWindow(w *QueryWindow, ix Index, nowMs uint64) error {
	r := *ix.TimeRange
	g := r.Grid()
	switch {
	case w.ByStart != nil:
		if !g.IsStart(*w.ByStart) {
			return ErrInvalidQuery{Kind: QueryWrongValueType, Field: "byStart", Reason: fmt.Sprintf("%d is no window start of index %q", *w.ByStart, ix.Name)}
		}
		if !r.Queryable(*w.ByStart, nowMs) {
			return ErrInvalidQuery{Kind: QueryWindowExpired, Field: "byStart", Reason: fmt.Sprintf("the window at %d of index %q is past its ttl of %d s at %d", *w.ByStart, ix.Name, r.TTL, nowMs)}
		}
		w.StartMs = *w.ByStart
	case w.Newest:
		start, ok := g.Newest(nowMs)
		if !ok {
			return ErrInvalidQuery{Kind: QueryWrongValueType, Field: "newest", Reason: "no window of the index has begun"}
		}
		w.StartMs = start
	default:
		if r.TTL == 0 {
			return ErrInvalidQuery{Kind: QueryUnsupportedOperator, Field: "oldest", Reason: fmt.Sprintf("index %q has no ttl, so no oldest window to select", ix.Name)}
		}
		step, phase, ttl := uint64(g.Step)*1000, uint64(g.Phase)*1000, uint64(r.TTL)*1000
		start := phase
		if nowMs > ttl+phase {
			// The first start at or after now - ttl: the earliest one not expired.
			start = phase + (nowMs-ttl-phase+step-1)/step*step
		}
		w.StartMs = start
	}
	return nil
}

// ResolveWindow sets the start of q's window at block time nowMs (resolveWindow); a
// query without one is left as it is.
func (q *Query) ResolveWindow(nowMs uint64) error {
	if q.Window == nil {
		return nil
	}
	return resolveWindow(q.Window, q.Index, nowMs)
}

// QueryRange is the restriction of one index property: bounds, a list of values, or a
// string prefix (exactly one kind is set).
type QueryRange struct {
	Field string
	// Lower and Upper bound the values (nil: unbounded on that side).
	Lower, Upper                 *Value
	LowerIncluded, UpperIncluded bool
	// In lists the values, sorted ascending and distinct (at least two).
	In []Value
	// Prefix is the start of every string value (startsWith).
	Prefix *Value
}

// QueryErrorKind says what is wrong with a query; proofs.QueryCodeOf gives each its
// stable query code.
type QueryErrorKind uint8

const (
	QueryNotJSON             QueryErrorKind = iota + 1 // the request is not JSON of the query's form
	QueryUnknownField                                  // a field the type does not have
	QueryFieldNotIndexed                               // no index serves the where and orderBy clauses
	QueryUnsupportedOperator                           // an operator that does not exist or not on that field
	QueryWrongValueType                                // a value that is not of its field's type
	QueryLimitTooLarge                                 // limit outside 0..MaxQueryLimit
	QueryBothStarts                                    // startAt and startAfter together
	// QueryWindowExpired: a window of a ttl'd time-range index past its horizon
	// (seed 002: "byStart rejects starts past the horizon").
	QueryWindowExpired
)

// ErrInvalidQuery refuses a query. Field names the field it is about, when one is.
type ErrInvalidQuery struct {
	Kind   QueryErrorKind
	Field  string
	Reason string
}

func (e ErrInvalidQuery) Error() string {
	if e.Field == "" {
		return "invalid query: " + e.Reason
	}
	return fmt.Sprintf("invalid query: %s: %s", e.Field, e.Reason)
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

// decodeQuery reads one JSON object into v after checking it has no member but the
// known ones.
func decodeQuery(raw []byte, v any, known ...string) error {
	var members map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(raw))
	if err := d.Decode(&members); err != nil {
		return ErrInvalidQuery{Kind: QueryNotJSON, Reason: err.Error()}
	}
	if d.More() {
		return ErrInvalidQuery{Kind: QueryNotJSON, Reason: "trailing data after the query"}
	}
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(known, name) {
			return ErrInvalidQuery{Kind: QueryUnknownField, Field: name, Reason: "not a member of a query"}
		}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return ErrInvalidQuery{Kind: QueryNotJSON, Reason: err.Error()}
	}
	return nil
}

// queryField is a field a query may name: a property of the type or a system field.
type queryField struct {
	typ       PropertyType
	timestamp bool
}

func fieldOf(t DocumentType, name string) (queryField, bool) {
	switch name {
	case "$id", "$ownerId":
		return queryField{typ: PropertyIdentifier}, true
	case "$createdAt", "$updatedAt", "$transferredAt":
		return queryField{typ: PropertyInteger, timestamp: true}, true
	}
	p, ok := t.Property(name)
	return queryField{typ: p.Type}, ok
}

// ParseQuery reads a query (JSON) of document type t under limits l and chooses its
// index. Every refusal is ErrInvalidQuery.
func ParseQuery(t DocumentType, raw []byte, l Limits) (Query, error) {
	var qj queryJSON
	if err := decodeQuery(raw, &qj, "where", "orderBy", "limit", "startAfter", "startAt", "window"); err != nil {
		return Query{}, err
	}
	q := Query{Type: t, Limit: l.MaxQueryLimit}
	var windowed *Index
	if qj.Window != nil {
		w, ix, err := parseWindow(t, qj.Window)
		if err != nil {
			return Query{}, err
		}
		q.Window, windowed = w, &ix
	}
	if qj.Limit != nil {
		if *qj.Limit < 0 || *qj.Limit > int64(l.MaxQueryLimit) {
			return Query{}, ErrInvalidQuery{Kind: QueryLimitTooLarge, Reason: fmt.Sprintf("limit %d is outside 0..%d", *qj.Limit, l.MaxQueryLimit)}
		}
		if *qj.Limit > 0 {
			q.Limit = int(*qj.Limit)
		}
	}
	switch {
	case qj.StartAfter != nil && qj.StartAt != nil:
		return Query{}, ErrInvalidQuery{Kind: QueryBothStarts, Reason: "startAt and startAfter exclude each other"}
	case qj.StartAfter != nil || qj.StartAt != nil:
		s, field := qj.StartAfter, "startAfter"
		if s == nil {
			s, field, q.StartIncluded = qj.StartAt, "startAt", true
		}
		id, err := ParseDocumentID(*s)
		if err != nil {
			return Query{}, ErrInvalidQuery{Kind: QueryWrongValueType, Field: field, Reason: err.Error()}
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
	var order []IndexProperty
	for _, o := range qj.OrderBy {
		if len(o) != 2 || (o[1] != "asc" && o[1] != "desc") {
			return Query{}, ErrInvalidQuery{Kind: QueryNotJSON, Reason: fmt.Sprintf("an orderBy clause is [field, \"asc\" or \"desc\"], got %q", o)}
		}
		if _, ok := fieldOf(t, o[0]); !ok {
			return Query{}, ErrInvalidQuery{Kind: QueryUnknownField, Field: o[0], Reason: "no such property"}
		}
		order = append(order, IndexProperty{Name: o[0], Descending: o[1] == "desc"})
	}
	return choose(q, order, windowed)
}

// parseWhere reads one clause [field, operator, value].
func parseWhere(t DocumentType, w []json.RawMessage) (WhereClause, error) {
	if len(w) != 3 {
		return WhereClause{}, ErrInvalidQuery{Kind: QueryNotJSON, Reason: fmt.Sprintf("a where clause is [field, operator, value], got %d items", len(w))}
	}
	var name, op string
	if json.Unmarshal(w[0], &name) != nil || json.Unmarshal(w[1], &op) != nil {
		return WhereClause{}, ErrInvalidQuery{Kind: QueryNotJSON, Reason: "a where clause's field and operator are strings"}
	}
	f, ok := fieldOf(t, name)
	if !ok {
		return WhereClause{}, ErrInvalidQuery{Kind: QueryUnknownField, Field: name, Reason: "no such property"}
	}
	c := WhereClause{Field: name}
	if c.Op, ok = operatorOf(op); !ok {
		return WhereClause{}, ErrInvalidQuery{Kind: QueryUnsupportedOperator, Field: name, Reason: fmt.Sprintf("unknown operator %q", op)}
	}
	switch c.Op {
	case QueryStartsWith:
		if f.typ != PropertyString {
			return WhereClause{}, ErrInvalidQuery{Kind: QueryUnsupportedOperator, Field: name, Reason: "startsWith applies to strings only"}
		}
	case QueryLess, QueryLessOrEqual, QueryGreater, QueryGreaterOrEqual:
		if f.typ == PropertyBoolean {
			return WhereClause{}, ErrInvalidQuery{Kind: QueryUnsupportedOperator, Field: name, Reason: fmt.Sprintf("%s does not apply to booleans", op)}
		}
	}
	if c.Op != QueryIn {
		v, err := parseQueryValue(f, name, w[2])
		if err != nil {
			return WhereClause{}, err
		}
		if c.Op == QueryStartsWith && len(v.Bytes) == 0 {
			return WhereClause{}, ErrInvalidQuery{Kind: QueryWrongValueType, Field: name, Reason: "startsWith needs a non-empty prefix"}
		}
		c.Values = []Value{v}
		return c, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(w[2], &items); err != nil || len(items) == 0 {
		return WhereClause{}, ErrInvalidQuery{Kind: QueryWrongValueType, Field: name, Reason: "in takes a non-empty array"}
	}
	if len(items) > MaxQueryInValues {
		return WhereClause{}, ErrInvalidQuery{Kind: QueryWrongValueType, Field: name, Reason: fmt.Sprintf("in takes at most %d values", MaxQueryInValues)}
	}
	for _, it := range items {
		v, err := parseQueryValue(f, name, it)
		if err != nil {
			return WhereClause{}, err
		}
		c.Values = append(c.Values, v)
	}
	slices.SortFunc(c.Values, compareValues)
	c.Values = slices.CompactFunc(c.Values, func(a, b Value) bool { return compareValues(a, b) == 0 })
	return c, nil
}

// parseQueryValue reads a value of field f: a string, an integer (a timestamp is not
// negative), a boolean, a byte array as an array of integers 0..255, an identifier as
// 64 hex digits or as such an array of 32.
func parseQueryValue(f queryField, name string, raw json.RawMessage) (Value, error) {
	wrong := func(want string) (Value, error) {
		return Value{}, ErrInvalidQuery{Kind: QueryWrongValueType, Field: name, Reason: fmt.Sprintf("want %s, got %s", want, raw)}
	}
	switch f.typ {
	case PropertyString:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return wrong("a string")
		}
		return Value{Set: true, Bytes: []byte(s)}, nil
	case PropertyInteger:
		n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
		if err != nil || (f.timestamp && n < 0) {
			if f.timestamp {
				return wrong("a timestamp in milliseconds")
			}
			return wrong("an integer")
		}
		return Value{Set: true, Int: n}, nil
	case PropertyBoolean:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return wrong("a boolean")
		}
		return Value{Set: true, Bool: b}, nil
	case PropertyIdentifier:
		var s string
		if json.Unmarshal(raw, &s) == nil {
			b, err := hex.DecodeString(s)
			if err != nil || len(b) != 32 {
				return wrong("an identifier (64 hex digits)")
			}
			return Value{Set: true, Bytes: b}, nil
		}
		var b []uint8
		if !byteArray(raw, &b) || len(b) != 32 {
			return wrong("an identifier (64 hex digits or 32 bytes)")
		}
		return Value{Set: true, Bytes: b}, nil
	}
	var b []uint8
	if !byteArray(raw, &b) {
		return wrong("an array of bytes")
	}
	return Value{Set: true, Bytes: b}, nil
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
// false first, bytes and strings bytewise. It is the order of the index encoding.
func compareValues(a, b Value) int {
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

// choose picks the index that answers q's where clauses and order (the fewest
// properties first, then by name) and fills in the plan.
func choose(q Query, order []IndexProperty, windowed *Index) (Query, error) {
	candidates := slices.Clone(q.Type.Indices)
	if windowed != nil {
		candidates = []Index{*windowed} // a window query reads its window's index
	}
	slices.SortStableFunc(candidates, func(a, b Index) int { return len(a.Properties) - len(b.Properties) })
	for _, ix := range candidates {
		if ix.TimeRange != nil && windowed == nil {
			continue // its entries are under its windows: a window query reads them
		}
		if plan, ok := fit(q, ix, order); ok {
			return plan, nil
		}
	}
	field := ""
	if len(q.Where) > 0 {
		field = q.Where[len(q.Where)-1].Field
	} else if len(order) > 0 {
		field = order[0].Name
	}
	return Query{}, ErrInvalidQuery{Kind: QueryFieldNotIndexed, Field: field, Reason: fmt.Sprintf("no index of type %q serves these where and orderBy clauses", q.Type.Name)}
}

// fit plans q on index ix, when ix serves it.
func fit(q Query, ix Index, order []IndexProperty) (Query, bool) {
	equal := map[string]Value{}
	ranged := map[string][]WhereClause{}
	for _, c := range q.Where {
		if c.Op == QueryEqual || (c.Op == QueryIn && len(c.Values) == 1) {
			if prev, ok := equal[c.Field]; ok && compareValues(prev, c.Values[0]) != 0 {
				return Query{}, false
			}
			equal[c.Field] = c.Values[0]
			continue
		}
		ranged[c.Field] = append(ranged[c.Field], c)
	}
	if len(ranged) > 1 || len(equal)+len(ranged) > len(ix.Properties) {
		return Query{}, false
	}
	n := 0
	for n < len(ix.Properties) {
		v, ok := equal[ix.Properties[n].Name]
		if !ok {
			break
		}
		q.Equal = append(q.Equal, v)
		n++
	}
	if n != len(equal) {
		return Query{}, false
	}
	if len(ranged) == 1 {
		if n == len(ix.Properties) {
			return Query{}, false
		}
		cs, on := ranged[ix.Properties[n].Name]
		if !on {
			return Query{}, false
		}
		r, ok := rangeOf(ix.Properties[n].Name, cs)
		if !ok {
			return Query{}, false
		}
		q.Range = r
	}
	// orderBy: properties of the index from n on (an equality property may be
	// named too: it orders nothing), all in the index's direction or all reversed.
	rest := ix.Properties[n:]
	i := 0
	for _, o := range order {
		if _, eq := equal[o.Name]; eq {
			continue
		}
		if i >= len(rest) || rest[i].Name != o.Name {
			return Query{}, false
		}
		rev := rest[i].Descending != o.Descending
		if i > 0 && rev != q.Reverse {
			return Query{}, false
		}
		q.Reverse = rev
		i++
	}
	q.Index = ix
	return q, true
}

// rangeOf merges the non-equality clauses on one field: one in, one startsWith, or at
// most one lower and one upper bound.
func rangeOf(field string, cs []WhereClause) (*QueryRange, bool) {
	r := &QueryRange{Field: field}
	for _, c := range cs {
		v := c.Values[0]
		switch c.Op {
		case QueryIn:
			if len(cs) != 1 {
				return nil, false
			}
			r.In = c.Values
		case QueryStartsWith:
			if len(cs) != 1 {
				return nil, false
			}
			r.Prefix = &v
		case QueryGreater, QueryGreaterOrEqual:
			if r.Lower != nil {
				return nil, false
			}
			r.Lower, r.LowerIncluded = &v, c.Op == QueryGreaterOrEqual
		case QueryLess, QueryLessOrEqual:
			if r.Upper != nil {
				return nil, false
			}
			r.Upper, r.UpperIncluded = &v, c.Op == QueryLessOrEqual
		}
	}
	return r, true
}

// FieldValue returns the value of field name (a property or a system field) of d.
func (t DocumentType) FieldValue(d Document, name string) (Value, bool) {
	if v, ok := d.SystemFieldValue(name); ok {
		return v, true
	}
	p, ok := t.Property(name)
	if !ok {
		return Value{}, false
	}
	return d.Value(p.Position), true
}

// Matches reports whether d satisfies every where clause of q. An unset value
// satisfies none.
func (q Query) Matches(d Document) bool {
	for _, c := range q.Where {
		v, ok := q.Type.FieldValue(d, c.Field)
		if !ok || !v.Set {
			return false
		}
		cmp := compareValues(v, c.Values[0])
		var m bool
		switch c.Op {
		case QueryEqual:
			m = cmp == 0
		case QueryIn:
			m = slices.ContainsFunc(c.Values, func(w Value) bool { return compareValues(v, w) == 0 })
		case QueryLess:
			m = cmp < 0
		case QueryLessOrEqual:
			m = cmp <= 0
		case QueryGreater:
			m = cmp > 0
		case QueryGreaterOrEqual:
			m = cmp >= 0
		case QueryStartsWith:
			m = bytes.HasPrefix(v.Bytes, c.Values[0].Bytes)
		}
		if !m {
			return false
		}
	}
	return true
}

// CountQuery is a count or sum query: equality on the leading properties of a
// countable or summable index, answered by that index's one count record for the values.
type CountQuery struct {
	Type  DocumentType
	Index Index
	// Equal holds the values of the index's first len(Equal) properties.
	Equal []Value
	// Window is the window of a time-range index the count is of (nil: an ordinary
	// index); its start is set by ResolveWindow.
	Window *QueryWindow
}

// ResolveWindow sets the start of q's window at block time nowMs (resolveWindow).
func (q *CountQuery) ResolveWindow(nowMs uint64) error {
	if q.Window == nil {
		return nil
	}
	return resolveWindow(q.Window, q.Index, nowMs)
}

// countJSON is a count or sum request's form: where clauses, and the window of a
// time-range index.
type countJSON struct {
	Where  [][]json.RawMessage `json:"where"`
	Window json.RawMessage     `json:"window"`
}

// ParseCountQuery reads a count (sum false) or sum (sum true) query of type t: where
// clauses of == (or an `in` of one value) that name the leading properties of an index
// that keeps counts (countable or summable) or, for a sum, a summable index. index
// names the index to use ("": the first that fits, fewest properties first). Every
// refusal is ErrInvalidQuery.
func ParseCountQuery(t DocumentType, raw []byte, index string, sum bool) (CountQuery, error) {
	var cj countJSON
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := decodeQuery(raw, &cj, "where", "window"); err != nil {
			return CountQuery{}, err
		}
	}
	var window *QueryWindow
	if cj.Window != nil {
		w, ix, err := parseWindow(t, cj.Window)
		if err != nil {
			return CountQuery{}, err
		}
		if index != "" && index != ix.Name {
			return CountQuery{}, ErrInvalidQuery{Kind: QueryFieldNotIndexed, Field: "window", Reason: fmt.Sprintf("the window is of index %q, the count of %q", ix.Name, index)}
		}
		window, index = w, ix.Name
	}
	equal := map[string]Value{}
	field := ""
	for _, w := range cj.Where {
		c, err := parseWhere(t, w)
		if err != nil {
			return CountQuery{}, err
		}
		if c.Op != QueryEqual && (c.Op != QueryIn || len(c.Values) != 1) {
			return CountQuery{}, ErrInvalidQuery{Kind: QueryUnsupportedOperator, Field: c.Field, Reason: "a count or sum takes == clauses only"}
		}
		if prev, ok := equal[c.Field]; ok && compareValues(prev, c.Values[0]) != 0 {
			return CountQuery{}, ErrInvalidQuery{Kind: QueryFieldNotIndexed, Field: c.Field, Reason: "two different values for one field"}
		}
		equal[c.Field] = c.Values[0]
		field = c.Field
	}
	candidates := slices.Clone(t.Indices)
	slices.SortStableFunc(candidates, func(a, b Index) int { return len(a.Properties) - len(b.Properties) })
	for _, ix := range candidates {
		if (index != "" && ix.Name != index) || ix.Summable == "" && (sum || !ix.Countable) || (ix.TimeRange != nil) != (window != nil) {
			continue
		}
		q := CountQuery{Type: t, Index: ix, Window: window}
		for _, p := range ix.Properties {
			v, ok := equal[p.Name]
			if !ok {
				break
			}
			q.Equal = append(q.Equal, v)
		}
		if len(q.Equal) == len(equal) {
			return q, nil
		}
	}
	what := "countable"
	if sum {
		what = "summable"
	}
	if index != "" {
		what += " index " + strconv.Quote(index)
	} else {
		what += " index"
	}
	return CountQuery{}, ErrInvalidQuery{Kind: QueryFieldNotIndexed, Field: field, Reason: fmt.Sprintf("type %q has no %s whose leading properties are the where clauses' fields", t.Name, what)}
}

// RankedQuery is a page of a ranked time-range index's groups in one window, most
// counted first (seed 002: "ranked top-N"), after a cursor.
type RankedQuery struct {
	Type   DocumentType
	Index  Index
	Window *QueryWindow
	// Limit is 1..MaxQueryLimit groups.
	Limit int
	// After is the cursor: the rank (count inverted u64 ++ the group's index parts)
	// the previous page ended with; the page starts right after it. Nil: from the top.
	After []byte
}

// rankedJSON is a ranked query's form: {"window": {...}, "limit": N, "after": hex}.
type rankedJSON struct {
	Window json.RawMessage `json:"window"`
	Limit  *int64          `json:"limit"`
	After  *string         `json:"after"`
}

// ParseRankedQuery reads a ranked query of type t under limits l: the window names a
// ranked time-range index of t. Every refusal is ErrInvalidQuery.
func ParseRankedQuery(t DocumentType, raw []byte, l Limits) (RankedQuery, error) {
	var rj rankedJSON
	if err := decodeQuery(raw, &rj, "window", "limit", "after"); err != nil {
		return RankedQuery{}, err
	}
	if rj.Window == nil {
		return RankedQuery{}, ErrInvalidQuery{Kind: QueryNotJSON, Field: "window", Reason: "a ranked query names its window"}
	}
	w, ix, err := parseWindow(t, rj.Window)
	if err != nil {
		return RankedQuery{}, err
	}
	if !ix.Ranked {
		return RankedQuery{}, ErrInvalidQuery{Kind: QueryFieldNotIndexed, Field: "window", Reason: fmt.Sprintf("index %q is not ranked", ix.Name)}
	}
	q := RankedQuery{Type: t, Index: ix, Window: w, Limit: l.MaxQueryLimit}
	if rj.Limit != nil {
		if *rj.Limit < 0 || *rj.Limit > int64(l.MaxQueryLimit) {
			return RankedQuery{}, ErrInvalidQuery{Kind: QueryLimitTooLarge, Reason: fmt.Sprintf("limit %d is outside 0..%d", *rj.Limit, l.MaxQueryLimit)}
		}
		if *rj.Limit > 0 {
			q.Limit = int(*rj.Limit)
		}
	}
	if rj.After != nil {
		after, err := hex.DecodeString(*rj.After)
		if err != nil || len(after) < 8 {
			return RankedQuery{}, ErrInvalidQuery{Kind: QueryWrongValueType, Field: "after", Reason: "want the hex of a rank: 8 bytes of count, then the group"}
		}
		q.After = after
	}
	return q, nil
}

// ResolveWindow sets the start of q's window at block time nowMs (resolveWindow).
func (q *RankedQuery) ResolveWindow(nowMs uint64) error {
	return resolveWindow(q.Window, q.Index, nowMs)
}
