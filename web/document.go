package web

import (
	"net/http"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/web/check"
)

type documentPage struct {
	proofBox `json:"proof"`
	ID       string `json:"id"`
	// History is the page of what happened to the document (not proven).
	History string `json:"history"`
}

// document shows a document in one proof box of four answers at one state: the
// document, its contract and the protocol version the contract is decoded under (its
// type gives the document's values and ttl), and the last block record, whose time
// the expiry is said against.
func (s *Server) document(r *http.Request) (any, error) {
	c, typeName, id, err := documentOf(r)
	if err != nil {
		return nil, err
	}
	h, err := s.provenHeight(r.Context())
	if err != nil {
		return nil, err
	}
	d, err := s.rawRead(r.Context(), proofs.PathDocument, proofs.DocumentData(c, typeName, id), h)
	if err != nil {
		return nil, err
	}
	rest, err := s.rawReads(r.Context(), d.Height, read{proofs.PathContract, c[:]},
		read{proofs.PathKey, drive.ProtocolVersionKey()}, read{proofs.PathKey, drive.LastBlockKey()})
	if err != nil {
		return nil, err
	}
	p := documentPage{ID: id.String(), History: documentHref(c.String(), typeName, id.String()) + "/history"}
	if p.proofBox, err = s.proofBox(r.Context(), append([]check.Answer{d}, rest...),
		"ttld query document "+c.String()+" "+typeName+" "+id.String()+" --prove"); err != nil {
		return nil, err
	}
	return p, nil
}
