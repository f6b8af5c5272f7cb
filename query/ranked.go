package query

import (
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/ttld-dev/ttld/protocol"
)

// Ranked is a page of a ranked time-range index's groups in one window, most counted
// first (Time-Range Index TTL: "ranked top-N"), after a cursor.
type Ranked struct {
	Type   protocol.DocumentType
	Index  protocol.Index
	Window *Window
	// Limit is 1..MaxQueryLimit groups of the query's protocol version.
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

// ParseRanked reads a ranked query of type t under protocol version v (its limit is
// bounded by v's MaxQueryLimit): the window names a ranked time-range index of t, so
// there is no index to choose. Every refusal of the query is ErrInvalid; a version this
// build does not know is another error.
func ParseRanked(t protocol.DocumentType, raw []byte, v protocol.Version) (Ranked, error) {
	l, err := protocol.LimitsFor(v)
	if err != nil {
		return Ranked{}, err
	}
	var rj rankedJSON
	if err := decode(raw, &rj, "window", "limit", "after"); err != nil {
		return Ranked{}, err
	}
	if rj.Window == nil {
		return Ranked{}, ErrInvalid{Kind: NotJSON, Field: "window", Reason: "a ranked query names its window"}
	}
	w, ix, err := parseWindow(t, rj.Window)
	if err != nil {
		return Ranked{}, err
	}
	if !ix.Ranked {
		return Ranked{}, ErrInvalid{Kind: FieldNotIndexed, Field: "window", Reason: fmt.Sprintf("index %q is not ranked", ix.Name)}
	}
	q := Ranked{Type: t, Index: ix, Window: w, Limit: l.MaxQueryLimit}
	if rj.Limit != nil {
		if *rj.Limit < 0 || *rj.Limit > int64(l.MaxQueryLimit) {
			return Ranked{}, ErrInvalid{Kind: LimitTooLarge, Reason: fmt.Sprintf("limit %d is outside 0..%d", *rj.Limit, l.MaxQueryLimit)}
		}
		if *rj.Limit > 0 {
			q.Limit = int(*rj.Limit)
		}
	}
	if rj.After != nil {
		after, err := hex.DecodeString(*rj.After)
		if err != nil || len(after) < 8 {
			return Ranked{}, ErrInvalid{Kind: WrongValueType, Field: "after", Reason: "want the hex of a rank: 8 bytes of count, then the group"}
		}
		q.After = after
	}
	return q, nil
}
