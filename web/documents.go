package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

type documentsPage struct {
	proofBox
	Contract, Type string
	// Query is the query asked, which the form offers to change.
	Query string
	// IDs and Owners are the listed documents' ids and owners, for their links.
	IDs, Owners []string
	// Next is the query of the next page (startAfter the last document), "" when the
	// page is not full.
	Next string
}

// documents lists the documents a query returns, in one proof box: the answer (which
// carries the contract and the protocol version it is decoded under) and the last
// block record, whose time each expiry is said against.
func (s *Server) documents(r *http.Request) (any, error) {
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
	h, err := s.provenHeight(r.Context())
	if err != nil {
		return nil, err
	}
	ans, err := s.c.Documents(r.Context(), c, typeName, []byte(q), h, false)
	if err != nil {
		var qe client.ErrQuery
		switch {
		case errors.As(err, &qe) && qe.Code == proofs.QueryCodeNotFound:
			return nil, errNotFound{fmt.Sprintf("contract %s or its type %q", c, typeName)}
		case errors.As(err, &qe):
			return nil, errBadInput{"q", q, "a query the type's indexes serve: " + qe.Log}
		}
		return nil, err
	}
	p := documentsPage{Contract: c.String(), Type: typeName, Query: q}
	if n := len(ans.Documents); n > 0 && ans.Query.Limit > 0 && n == int(ans.Query.Limit) {
		p.Next = nextPage(q, ans.Documents[n-1].ID)
	}
	for _, d := range ans.Documents {
		p.IDs, p.Owners = append(p.IDs, d.ID.String()), append(p.Owners, d.Owner.String())
	}
	answers, err := s.rawReads(r.Context(), ans.Height, read{proofs.PathDocuments, proofs.DocumentsData(c, typeName, []byte(q))}, read{proofs.PathKey, drive.LastBlockKey()})
	if err != nil {
		return nil, err
	}
	p.proofBox, err = s.proofBox(r.Context(), answers, "ttld query documents "+c.String()+" "+typeName+" --prove")
	return p, err
}

// nextPage is query q to continue after document last: q with its startAfter set (and
// startAt dropped).
func nextPage(q string, last protocol.DocumentID) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(q), &m) != nil {
		return ""
	}
	delete(m, "startAt")
	m["startAfter"], _ = json.Marshal(last.String())
	out, _ := json.Marshal(m)
	return string(out)
}
