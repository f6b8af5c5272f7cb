package query

import (
	"fmt"
	"slices"

	"github.com/ttld-dev/ttld/protocol"
)

// NB: the index choice is a contract between the node and every deployed verifier, not
// a detail of the node. A verifier does not take the node's word for the index that
// answered: it re-derives it from the query (proofs.VerifyDocuments and VerifyCount, the
// client, any verifier written from docs/PROOFS.md "The query"), and from the index the
// key ranges whose proofs a complete answer must carry, or the count record whose
// presence or absence is proven. A node that chose another index would give answers
// every such verifier refuses, and a verifier that chose another would refuse every
// honest answer.
//
// So the rules are versioned with the protocol, as its limits are: indexChoices names
// the rules each protocol version chooses by, and the version an answer is read under is
// the one proven with it (the state's protocol version at the answer's height), so node
// and verifier apply the same rules at any height. A change to the rules is a new
// protocol version with its own entry here and its own text in docs/PROOFS.md; an entry
// once released is never edited. TestEveryVersionChoosesIndexes fails for a version
// without an entry.

// indexChoice is one set of rules for choosing the index that answers a query.
type indexChoice struct {
	// documents plans document query q (its where clauses parsed, its limit and start
	// set) on the index that serves q's clauses and order, the window's index for a
	// window query, or refuses it with FieldNotIndexed.
	documents func(q Query, order []protocol.IndexProperty, windowed *protocol.Index) (Query, error)
	// count picks the index whose count record answers the equalities equal (field ->
	// value) of a count (sum false) or a sum: the one named, or any when index is "".
	count func(t protocol.DocumentType, equal map[string]protocol.Value, index string, sum bool, window *Window) (Count, bool)
}

// indexChoices are the index choice rules of each protocol version.
var indexChoices = map[protocol.Version]indexChoice{
	protocol.V13: fewestProperties,
	protocol.V14: fewestProperties,
	protocol.V15: fewestProperties,
	protocol.V16: fewestProperties,
}

// fewestProperties are docs/PROOFS.md's rules ("The query"): among the indexes that
// serve a query, the one with the fewest properties, then the first by name (the
// stored contract lists its indexes by name); a time-range index only for a query of
// one of its windows.
var fewestProperties = indexChoice{documents: choose, count: chooseCount}

// indexChoiceFor returns the index choice rules of version v.
func indexChoiceFor(v protocol.Version) (indexChoice, error) {
	c, ok := indexChoices[v]
	if !ok {
		return indexChoice{}, fmt.Errorf("query: no index choice rules for protocol version %d", v)
	}
	return c, nil
}

// choose picks the index that answers q's where clauses and order (the fewest
// properties first, then by name) and fills in the plan.
func choose(q Query, order []protocol.IndexProperty, windowed *protocol.Index) (Query, error) {
	candidates := slices.Clone(q.Type.Indices)
	if windowed != nil {
		candidates = []protocol.Index{*windowed} // a window query reads its window's index
	}
	slices.SortStableFunc(candidates, func(a, b protocol.Index) int { return len(a.Properties) - len(b.Properties) })
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
	return Query{}, ErrInvalid{Kind: FieldNotIndexed, Field: field, Reason: fmt.Sprintf("no index of type %q serves these where and orderBy clauses", q.Type.Name)}
}

// fit plans q on index ix, when ix serves it.
func fit(q Query, ix protocol.Index, order []protocol.IndexProperty) (Query, bool) {
	equal := map[string]protocol.Value{}
	ranged := map[string][]Clause{}
	for _, c := range q.Where {
		if c.Op == Equal || (c.Op == In && len(c.Values) == 1) {
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
func rangeOf(field string, cs []Clause) (*Range, bool) {
	r := &Range{Field: field}
	for _, c := range cs {
		v := c.Values[0]
		switch c.Op {
		case In:
			if len(cs) != 1 {
				return nil, false
			}
			r.In = c.Values
		case StartsWith:
			if len(cs) != 1 {
				return nil, false
			}
			r.Prefix = &v
		case Greater, GreaterOrEqual:
			if r.Lower != nil {
				return nil, false
			}
			r.Lower, r.LowerIncluded = &v, c.Op == GreaterOrEqual
		case Less, LessOrEqual:
			if r.Upper != nil {
				return nil, false
			}
			r.Upper, r.UpperIncluded = &v, c.Op == LessOrEqual
		}
	}
	return r, true
}

// chooseCount picks the index of a count: among t's indexes that keep counts
// (countable or summable; for a sum, summable ones only), time-range ones exactly when
// the count is of a window, and only the one called index unless index is "", the
// first whose leading properties are the fields of equal, fewest properties first, then
// by name.
func chooseCount(t protocol.DocumentType, equal map[string]protocol.Value, index string, sum bool, window *Window) (Count, bool) {
	candidates := slices.Clone(t.Indices)
	slices.SortStableFunc(candidates, func(a, b protocol.Index) int { return len(a.Properties) - len(b.Properties) })
	for _, ix := range candidates {
		if (index != "" && ix.Name != index) || ix.Summable == "" && (sum || !ix.Countable) || (ix.TimeRange != nil) != (window != nil) {
			continue
		}
		q := Count{Type: t, Index: ix, Window: window}
		for _, p := range ix.Properties {
			v, ok := equal[p.Name]
			if !ok {
				break
			}
			q.Equal = append(q.Equal, v)
		}
		if len(q.Equal) == len(equal) {
			return q, true
		}
	}
	return Count{}, false
}
