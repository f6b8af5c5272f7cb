package web

import (
	"net/http"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web/check"
)

type contractPage struct {
	proofBox `json:"proof"`
	ID       string `json:"id"`
}

// contract shows a contract, its types with their ttl, flags, properties and indexes,
// and its definition, decoded under the protocol version of the state read: one proof
// box of the contract and the version.
func (s *Server) contract(r *http.Request) (any, error) {
	id, err := protocol.ParseContractID(r.PathValue("id"))
	if err != nil {
		return nil, errBadInput{"contract", r.PathValue("id"), "64 hex digits"}
	}
	h, err := s.provenHeight(r.Context())
	if err != nil {
		return nil, err
	}
	c, err := s.rawRead(r.Context(), proofs.PathContract, id[:], h)
	if err != nil {
		return nil, err
	}
	if len(c.Value) == 0 {
		return nil, errNotFound{"contract " + id.String()}
	}
	v, err := s.rawRead(r.Context(), proofs.PathKey, drive.ProtocolVersionKey(), c.Height)
	if err != nil {
		return nil, err
	}
	p := contractPage{ID: id.String()}
	p.proofBox, err = s.proofBox(r.Context(), []check.Answer{c, v}, "ttld query contract "+id.String()+" --prove")
	return p, err
}
