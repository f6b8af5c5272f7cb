package thirdparty

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Clause is one where clause, its values as ascending index key parts (for
// startsWith: the part without its end marker).
type Clause struct {
	Field, Op string
	Values    [][]byte
}

// Query is a /documents query as docs/PROOFS.md ("The query") gives it, with the
// index that serves it.
type Query struct {
	Where    []Clause
	Index    Index
	Equal    int  // the leading index properties the where clauses fix
	Backward bool // the answer runs against the index's order
	Limit    int
	Start    *[32]byte
	After    bool // Start is startAfter (else startAt)
}

// MaxLimit is protocol.Limits.MaxQueryLimit of docs/PROOFS.md.
const MaxLimit = 100

// ErrUnsupported marks a query this verifier does not check: it refuses it rather
// than guessing.
var ErrUnsupported = errors.New("outside the query subset this verifier checks")

// ParseQuery reads the query JSON against type t and picks the index that serves it:
// among those that do, the one with the fewest properties, then the first by name; a
// time-range index never serves a query without a window. Subset: no window, at most
// one clause per field; an `in` without repeated values.
func ParseQuery(t DocType, raw []byte) (Query, error) {
	var q struct {
		Where      [][]json.RawMessage `json:"where"`
		OrderBy    [][2]string         `json:"orderBy"`
		Limit      *int                `json:"limit"`
		StartAt    string              `json:"startAt"`
		StartAfter string              `json:"startAfter"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return Query{}, err
	}
	out := Query{Limit: MaxLimit}
	if q.Limit != nil && *q.Limit != 0 {
		if *q.Limit < 1 || *q.Limit > MaxLimit {
			return Query{}, errors.New("limit outside 0..100")
		}
		out.Limit = *q.Limit
	}
	switch {
	case q.StartAt != "" && q.StartAfter != "":
		return Query{}, errors.New("both startAt and startAfter")
	case q.StartAt != "" || q.StartAfter != "":
		id, err := hex.DecodeString(q.StartAt + q.StartAfter)
		if err != nil || len(id) != 32 {
			return Query{}, errors.New("the start is not a document id")
		}
		out.Start, out.After = new([32]byte), q.StartAfter != ""
		copy(out.Start[:], id)
	}
	seen := map[string]Clause{}
	for _, w := range q.Where {
		c, err := parseClause(t, w)
		if err != nil {
			return Query{}, err
		}
		// two clauses on a field: a lower and an upper bound
		if o, ok := seen[c.Field]; ok && (bound(o.Op) == 0 || bound(c.Op) == 0 || bound(o.Op) == bound(c.Op)) {
			return Query{}, fmt.Errorf("%w: two clauses on %s that are not a lower and an upper bound", ErrUnsupported, c.Field)
		}
		seen[c.Field] = c
		out.Where = append(out.Where, c)
	}
	var best *Query
	for _, ix := range t.Indexes {
		if ix.TimeRange != nil { // read only by a query that names its window
			continue
		}
		equal, backward, ok := serves(ix, out.Where, q.OrderBy)
		if ok && (best == nil || len(ix.Properties) < len(best.Index.Properties)) {
			cand := out
			cand.Index, cand.Equal, cand.Backward = ix, equal, backward
			best = &cand
		}
	}
	if best == nil {
		return Query{}, errors.New("no index serves the query")
	}
	return *best, nil
}

// bound is 1 for a lower bound operator, -1 for an upper one, 0 otherwise.
func bound(op string) int {
	switch op {
	case ">", ">=":
		return 1
	case "<", "<=":
		return -1
	}
	return 0
}

// parseClause reads [field, operator, value].
func parseClause(t DocType, w []json.RawMessage) (Clause, error) {
	var c Clause
	if len(w) != 3 || json.Unmarshal(w[0], &c.Field) != nil || json.Unmarshal(w[1], &c.Op) != nil {
		return Clause{}, errors.New("a where clause is [field, operator, value]")
	}
	k, ok := t.Kind(c.Field)
	if !ok {
		return Clause{}, fmt.Errorf("no field %q", c.Field)
	}
	if k == KindIdentifierList {
		return Clause{}, fmt.Errorf("%s is an identifier list, which no index holds", c.Field)
	}
	switch c.Op {
	case "==", "<", "<=", ">", ">=":
		if k == KindBoolean && c.Op != "==" {
			return Clause{}, errors.New("a range on a boolean")
		}
		v, err := parseValue(k, w[2])
		if err != nil {
			return Clause{}, err
		}
		c.Values = [][]byte{v}
	case "in":
		var vs []json.RawMessage
		if err := json.Unmarshal(w[2], &vs); err != nil || len(vs) == 0 || len(vs) > 100 {
			return Clause{}, errors.New("in takes an array of 1..100 values")
		}
		for _, raw := range vs {
			v, err := parseValue(k, raw)
			if err != nil {
				return Clause{}, err
			}
			for _, o := range c.Values {
				if bytes.Equal(o, v) {
					return Clause{}, fmt.Errorf("%w: a value repeated in an in", ErrUnsupported)
				}
			}
			c.Values = append(c.Values, v)
		}
		if len(c.Values) == 1 {
			c.Op = "=="
		}
	case "startsWith":
		if k != KindString {
			return Clause{}, errors.New("startsWith on a non-string")
		}
		v, err := parseValue(k, w[2])
		if err != nil || len(v) == 3 {
			return Clause{}, errors.New("startsWith takes a non-empty string")
		}
		c.Values = [][]byte{v[:len(v)-2]}
	default:
		return Clause{}, fmt.Errorf("no operator %q", c.Op)
	}
	return c, nil
}

// parseValue reads a where value of kind k and returns its ascending part.
func parseValue(k Kind, raw json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	bad := fmt.Errorf("value %s is not of its field's type", raw)
	switch k {
	case KindString:
		s, ok := v.(string)
		if !ok {
			return nil, bad
		}
		return partOf(k, []byte(s)), nil
	case KindInteger, KindTimestamp:
		n, ok := v.(json.Number)
		if !ok {
			return nil, bad
		}
		i, err := n.Int64()
		if err != nil || (k == KindTimestamp && i < 0) {
			return nil, bad
		}
		return partOf(k, binary.BigEndian.AppendUint64(nil, uint64(i))), nil
	case KindBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, bad
		}
		if b {
			return []byte{1, 1}, nil
		}
		return []byte{1, 0}, nil
	}
	// byte arrays and identifiers
	if s, ok := v.(string); ok && k == KindIdentifier {
		b, err := hex.DecodeString(s)
		if err != nil || len(b) != 32 {
			return nil, bad
		}
		return partOf(k, b), nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, bad
	}
	var b []byte
	for _, e := range arr {
		n, ok := e.(json.Number)
		i, err := n.Int64()
		if !ok || err != nil || i < 0 || i > math.MaxUint8 {
			return nil, bad
		}
		b = append(b, byte(i))
	}
	if k == KindIdentifier && len(b) != 32 {
		return nil, bad
	}
	return partOf(k, b), nil
}

// serves tells whether ix serves the where clauses and orderBy: equality on its
// leading properties, then at most one range, in or startsWith on the next; orderBy
// names its properties from there on, all in its directions (forward) or all
// reversed (backward); an equality property may be named too, in either direction,
// and decides nothing (named alone, the answer runs forward).
func serves(ix Index, where []Clause, orderBy [][2]string) (equal int, backward bool, ok bool) {
	byField := map[string]Clause{}
	for _, c := range where {
		byField[c.Field] = c
	}
	for equal < len(ix.Properties) {
		c, ok := byField[ix.Properties[equal].Field]
		if !ok || c.Op != "==" {
			break
		}
		equal++
	}
	used := 0
	for _, c := range where {
		for j, p := range ix.Properties {
			if p.Field == c.Field && (j < equal || (j == equal && c.Op != "==")) {
				used++
			}
		}
	}
	if used != len(where) {
		return 0, false, false
	}
	next, directed := equal, false
	for _, o := range orderBy {
		if o[1] != "asc" && o[1] != "desc" {
			return 0, false, false
		}
		pos := -1
		for j, p := range ix.Properties {
			if p.Field == o[0] {
				pos = j
			}
		}
		switch {
		case pos < 0:
			return 0, false, false
		case pos < equal: // an equality property: its direction orders nothing
			continue
		case pos != next:
			return 0, false, false
		}
		next++
		rev := (o[1] == "desc") != ix.Properties[pos].Desc
		if directed && rev != backward {
			return 0, false, false
		}
		directed, backward = true, rev
	}
	return equal, backward, true
}

// Range is a key range [Start, End).
type Range struct{ Start, End []byte }

// Ranges derives the key ranges q reads under index prefix prefix, in the answer's
// order, before any start document cuts them (docs/PROOFS.md, "The ranges a query
// reads").
func (q Query) Ranges(prefix []byte) []Range {
	byField := map[string]Clause{}
	for _, c := range q.Where {
		byField[c.Field] = c
	}
	p := bytes.Clone(prefix)
	for _, ip := range q.Index.Properties[:q.Equal] {
		p = append(p, directed(byField[ip.Field].Values[0], ip.Desc)...)
	}
	var out []Range
	var next *Clause
	var desc bool
	if q.Equal < len(q.Index.Properties) {
		ip := q.Index.Properties[q.Equal]
		if c, ok := byField[ip.Field]; ok {
			next, desc = &c, ip.Desc
		}
	}
	at := func(part []byte) []byte { return append(bytes.Clone(p), directed(part, desc)...) }
	switch {
	case next == nil:
		out = []Range{{p, prefixEnd(p)}}
	case next.Op == "in" || next.Op == "startsWith":
		for _, v := range next.Values {
			k := at(v)
			out = append(out, Range{k, prefixEnd(k)})
		}
	default:
		set := at([]byte{1})
		r := Range{set, prefixEnd(set)}
		for _, c := range q.Where {
			if c.Field != next.Field {
				continue
			}
			k := at(c.Values[0])
			lower := c.Op == ">" || c.Op == ">="
			inclusive := strings.HasSuffix(c.Op, "=")
			if lower != desc { // a bound on the key's start
				s := k
				if !inclusive {
					s = prefixEnd(k)
				}
				if bytes.Compare(s, r.Start) > 0 {
					r.Start = s
				}
			} else {
				e := prefixEnd(k)
				if !inclusive {
					e = k
				}
				if bytes.Compare(e, r.End) < 0 {
					r.End = e
				}
			}
		}
		out = []Range{r}
	}
	var kept []Range
	for _, r := range out {
		if bytes.Compare(r.Start, r.End) < 0 {
			kept = append(kept, r)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return bytes.Compare(kept[i].Start, kept[j].Start) < 0 })
	if q.Backward {
		for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
			kept[i], kept[j] = kept[j], kept[i]
		}
	}
	return kept
}

// Cut narrows ranges to what follows the start document's entry key k in the answer's
// order, dropping the ranges it empties.
func (q Query) Cut(ranges []Range, k []byte) []Range {
	after := append(bytes.Clone(k), 0)
	var out []Range
	for _, r := range ranges {
		switch {
		case !q.Backward && q.After:
			r.Start = maxKey(r.Start, after)
		case !q.Backward:
			r.Start = maxKey(r.Start, k)
		case q.After:
			r.End = minKey(r.End, k)
		default:
			r.End = minKey(r.End, after)
		}
		if bytes.Compare(r.Start, r.End) < 0 {
			out = append(out, r)
		}
	}
	return out
}

func maxKey(a, b []byte) []byte {
	if bytes.Compare(a, b) >= 0 {
		return a
	}
	return b
}

func minKey(a, b []byte) []byte {
	if bytes.Compare(a, b) <= 0 {
		return a
	}
	return b
}

// Matches tells whether document d satisfies clause c.
func (c Clause) Matches(d Document) bool {
	v := d.Fields[c.Field]
	if len(v) == 0 || v[0] != 1 {
		return false // unset satisfies no clause
	}
	cmp := bytes.Compare(v, c.Values[0])
	switch c.Op {
	case "==":
		return cmp == 0
	case "<":
		return cmp < 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	case ">=":
		return cmp >= 0
	case "startsWith":
		return bytes.HasPrefix(v, c.Values[0])
	}
	for _, o := range c.Values { // in
		if bytes.Equal(v, o) {
			return true
		}
	}
	return false
}
