package web

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	rpcclient "github.com/cometbft/cometbft/rpc/client"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

type docRow struct {
	ID, Owner string
	Revision  uint64
	CreatedAt time.Time
	Data      string
	Expiry    string
}

type documentsPage struct {
	proofBox
	Contract, Type string
	Query          string
	// Next is the query of the next page (startAfter the last document), "" when the
	// page is not full.
	Next      string
	Documents []docRow
	Height    int64
	BlockTime time.Time
}

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
	at, err := s.c.BlockTime(r.Context(), ans.Height, false)
	if err != nil {
		return nil, err
	}
	p := documentsPage{Contract: c.String(), Type: typeName, Query: q, Height: ans.Height, BlockTime: time.UnixMilli(int64(at)).UTC()}
	// The answer's JSON at the same height: what the list was decoded from, which the
	// browser checks (every document present, none of the ranges read left out).
	data := proofs.DocumentsData(c, typeName, []byte(q))
	raw, err := s.rpc.ABCIQueryWithOptions(r.Context(), proofs.PathDocuments, data, rpcclient.ABCIQueryOptions{Height: ans.Height})
	if err != nil {
		return nil, err
	}
	shown := ""
	if len(ans.Documents) > 0 {
		shown = hex.EncodeToString(raw.Response.Value)
	}
	if n := len(ans.Documents); n > 0 && ans.Query.Limit > 0 && n == int(ans.Query.Limit) {
		p.Next = nextPage(q, ans.Documents[n-1].ID)
	}
	if p.proofBox, err = s.proofBox(r.Context(), proofs.PathDocuments, data, ans.Height, shown, "ttld query documents "+c.String()+" "+typeName+" --prove"); err != nil {
		return nil, err
	}
	for _, d := range ans.Documents {
		row := docRow{ID: d.ID.String(), Owner: d.Owner.String(), Revision: d.Revision, CreatedAt: time.UnixMilli(int64(d.CreatedAt)).UTC(),
			Data: string(client.ReadableDocumentData(ans.Type, d))}
		if exp, ok := ans.Type.ExpiresAtMs(d); ok {
			row.Expiry = expiryText(exp, at)
		}
		p.Documents = append(p.Documents, row)
	}
	return p, nil
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
