package web

import (
	"net/http"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web/check"
)

type identityPage struct {
	proofBox
	ID string
}

func (s *Server) identity(r *http.Request) (any, error) {
	id, err := protocol.ParseIdentityID(r.PathValue("id"))
	if err != nil {
		return nil, errBadInput{"identity", r.PathValue("id"), "64 hex digits"}
	}
	h, err := s.provenHeight(r.Context())
	if err != nil {
		return nil, err
	}
	a, err := s.rawRead(r.Context(), proofs.PathIdentity, id[:], h)
	if err != nil {
		return nil, err
	}
	p := identityPage{ID: id.String()}
	p.proofBox, err = s.proofBox(r.Context(), []check.Answer{a}, "ttld query identity "+id.String()+" --prove")
	return p, err
}
