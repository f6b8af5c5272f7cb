package query

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/ttld-dev/ttld/protocol"
)

// Count is a count or sum query: equality on the leading properties of a countable or
// summable index, answered by that index's one count record for the values.
type Count struct {
	Type  protocol.DocumentType
	Index protocol.Index
	// Equal holds the values of the index's first len(Equal) properties.
	Equal []protocol.Value
	// Window is the window of a time-range index the count is of (nil: an ordinary
	// index); its start is set by ResolveWindow.
	Window *Window
}

// countJSON is a count or sum request's form: where clauses, and the window of a
// time-range index.
type countJSON struct {
	Where  [][]json.RawMessage `json:"where"`
	Window json.RawMessage     `json:"window"`
}

// ParseCount reads a count (sum false) or sum (sum true) query of type t under protocol
// version v: where clauses of == (or an `in` of one value) that name the leading
// properties of an index that keeps counts (countable or summable) or, for a sum, a
// summable index. index names the index to use ("": the one v's rules choose, the first
// that fits, fewest properties first). Every refusal of the query is ErrInvalid; a
// version this build does not know is another error.
func ParseCount(t protocol.DocumentType, raw []byte, v protocol.Version, index string, sum bool) (Count, error) {
	choice, err := indexChoiceFor(v)
	if err != nil {
		return Count{}, err
	}
	var cj countJSON
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := decode(raw, &cj, "where", "window"); err != nil {
			return Count{}, err
		}
	}
	var window *Window
	if cj.Window != nil {
		w, ix, err := parseWindow(t, cj.Window)
		if err != nil {
			return Count{}, err
		}
		if index != "" && index != ix.Name {
			return Count{}, ErrInvalid{Kind: FieldNotIndexed, Field: "window", Reason: fmt.Sprintf("the window is of index %q, the count of %q", ix.Name, index)}
		}
		window, index = w, ix.Name
	}
	equal := map[string]protocol.Value{}
	field := ""
	for _, w := range cj.Where {
		c, err := parseWhere(t, w)
		if err != nil {
			return Count{}, err
		}
		if c.Op != Equal && (c.Op != In || len(c.Values) != 1) {
			return Count{}, ErrInvalid{Kind: UnsupportedOperator, Field: c.Field, Reason: "a count or sum takes == clauses only"}
		}
		if prev, ok := equal[c.Field]; ok && compareValues(prev, c.Values[0]) != 0 {
			return Count{}, ErrInvalid{Kind: FieldNotIndexed, Field: c.Field, Reason: "two different values for one field"}
		}
		equal[c.Field] = c.Values[0]
		field = c.Field
	}
	if q, ok := choice.count(t, equal, index, sum, window); ok {
		return q, nil
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
	return Count{}, ErrInvalid{Kind: FieldNotIndexed, Field: field, Reason: fmt.Sprintf("type %q has no %s whose leading properties are the where clauses' fields", t.Name, what)}
}
