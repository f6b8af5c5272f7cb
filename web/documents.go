package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	rpcclient "github.com/cometbft/cometbft/rpc/client"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web/check"
)

type documentsPage struct {
	proofBox `json:"proof"`
	Contract string `json:"contract"`
	Type     string `json:"type"`
	// Query is the query asked, which the form offers to change.
	Query string `json:"query"`
	// NextQuery is the query of the next page: Query starting after the last document
	// listed ("" when there is none).
	NextQuery string `json:"next_query,omitempty"`
	// IDs and Owners are the listed documents' ids and owners.
	IDs    []string `json:"ids"`
	Owners []string `json:"owners"`
	// PrevHref and NextHref are the pages before and after this one ("" when none):
	// the next starts after the last document listed, the previous is the one this
	// page was reached from (?back=).
	PrevHref string `json:"-"`
	NextHref string `json:"-"`
	// NoCount says why the box holds no count of the query's documents.
	NoCount string `json:"no_count,omitempty"`
}

// Paging through a query's documents: the next page asks again with startAfter the
// last document listed; ?back= remembers, oldest first and dot-separated, where each
// page before this one started: "-" from the query's beginning, an id for startAfter
// that id, "@" and an id for startAt it.
const (
	// MaxPagesBack is how many pages back ?back= remembers; going further back starts
	// from the oldest it kept.
	MaxPagesBack = 50
	startNone    = "-"
	startAtMark  = "@"
)

// documents lists the documents a query returns, in one proof box: the answer (which
// carries the contract and the protocol version it is decoded under), the last block
// record, whose time each expiry is said against, and, when a countable index serves
// the query's where clauses, their count.
func (s *Server) documents(r *http.Request) (any, error) {
	ctx := r.Context()
	c, typeName, err := contractAndType(r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query().Get("q")
	if q == "" {
		q = `{"limit":20}`
	}
	if len(q) > MaxQueryBytes || !json.Valid([]byte(q)) {
		return nil, errBadInput{"q", q, fmt.Sprintf("a document query's JSON of at most %d bytes", MaxQueryBytes)}
	}
	back, err := trailOf(r.URL.Query().Get("back"))
	if err != nil {
		return nil, err
	}
	h, err := s.provenHeight(ctx)
	if err != nil {
		return nil, err
	}
	ans, err := s.c.Documents(ctx, c, typeName, []byte(q), h, false)
	if err != nil {
		var qe client.ErrQuery
		switch {
		case errors.As(err, &qe) && qe.Code == proofs.QueryCodeNotFound:
			return nil, errNotFound{fmt.Sprintf("contract %s or its type %q", c, typeName)}
		case errors.As(err, &qe):
			return nil, errQueryRefused{qe.Code, qe.Log}
		}
		return nil, err
	}
	p := documentsPage{Contract: c.String(), Type: typeName, Query: q}
	path := "/documents/" + p.Contract + "/" + url.PathEscape(typeName)
	if n := len(ans.Documents); n > 0 && ans.Query.Limit > 0 && n == int(ans.Query.Limit) {
		p.NextQuery = withStart(q, ans.Documents[n-1].ID.String())
		p.NextHref = pageHref(path, p.NextQuery, append(append([]string(nil), back...), startOf(q)))
	}
	if len(back) > 0 {
		p.PrevHref = pageHref(path, withStart(q, back[len(back)-1]), back[:len(back)-1])
	}
	for _, d := range ans.Documents {
		p.IDs, p.Owners = append(p.IDs, d.ID.String()), append(p.Owners, d.Owner.String())
	}
	answers, err := s.rawReads(ctx, ans.Height, read{proofs.PathDocuments, proofs.DocumentsData(c, typeName, []byte(q))}, read{proofs.PathKey, drive.LastBlockKey()})
	if err != nil {
		return nil, err
	}
	count, why, err := s.count(ctx, c, typeName, []byte(q), ans.Height)
	if err != nil {
		return nil, err
	}
	if p.NoCount = why; why == "" {
		answers = append(answers, count)
	}
	p.proofBox, err = s.proofBox(ctx, answers, "ttld query documents "+c.String()+" "+typeName+" --prove")
	return p, err
}

// count reads at height the count of the documents query q lists (check.CountQuery);
// when the node refuses it (no countable index serves the where clauses), why says so.
func (s *Server) count(ctx context.Context, c protocol.ContractID, typeName string, q []byte, height int64) (a check.Answer, why string, err error) {
	where, ok := check.CountQuery(q)
	if !ok {
		return a, "the query is not a JSON object", nil
	}
	data := proofs.CountData(c, typeName, "", where)
	res, err := s.rpc.ABCIQueryWithOptions(ctx, proofs.PathCount, data, rpcclient.ABCIQueryOptions{Height: height})
	if err != nil {
		return a, "", err
	}
	if res.Response.Code != 0 {
		return a, check.Visible(res.Response.Log), nil
	}
	return check.AnswerOf(proofs.PathCount, data, res.Response), "", nil
}

// trailOf reads ?back=.
func trailOf(v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	trail := strings.Split(v, ".")
	for _, t := range trail {
		if _, err := protocol.ParseDocumentID(strings.TrimPrefix(t, startAtMark)); err != nil && t != startNone {
			return nil, errBadInput{"back", v, `the starts of the pages before, dot-separated: "-", a document id, or "@" and one`}
		}
	}
	if len(trail) > MaxPagesBack {
		trail = trail[len(trail)-MaxPagesBack:]
	}
	return trail, nil
}

// startOf is where query q starts, as ?back= writes it.
func startOf(q string) string {
	var m map[string]json.RawMessage
	var id string
	if json.Unmarshal([]byte(q), &m) == nil {
		if json.Unmarshal(m["startAfter"], &id) == nil && id != "" {
			return id
		}
		if json.Unmarshal(m["startAt"], &id) == nil && id != "" {
			return startAtMark + id
		}
	}
	return startNone
}

// withStart is query q starting where start (as ?back= writes it) says: its startAfter
// and startAt replaced.
func withStart(q, start string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(q), &m) != nil {
		return q
	}
	delete(m, "startAfter")
	delete(m, "startAt")
	switch {
	case start == startNone:
	case strings.HasPrefix(start, startAtMark):
		m["startAt"], _ = json.Marshal(strings.TrimPrefix(start, startAtMark))
	default:
		m["startAfter"], _ = json.Marshal(start)
	}
	out, _ := json.Marshal(m)
	return string(out)
}

// pageHref is the documents page at path asking q, reached through the pages trail.
func pageHref(path, q string, trail []string) string {
	v := url.Values{"q": {q}}
	if len(trail) > 0 {
		if len(trail) > MaxPagesBack {
			trail = trail[len(trail)-MaxPagesBack:]
		}
		v.Set("back", strings.Join(trail, "."))
	}
	return path + "?" + v.Encode()
}
