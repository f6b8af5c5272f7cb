package web

import (
	"net/http"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web/check"
)

type identityPage struct {
	proofBox `json:"proof"`
	ID       string `json:"id"`
	// The first IdentityRows of the contracts it owns and of the transactions it
	// signed, from the transaction index (not proven), and whether there are more;
	// Unavailable says why there are none when the node keeps no index.
	Contracts     []contractRow `json:"contracts"`
	MoreContracts bool          `json:"more_contracts"`
	Txs           []txRow       `json:"transactions"`
	MoreTxs       bool          `json:"more_transactions"`
	Unavailable   string        `json:"unavailable,omitempty"`
}

// identity shows an identity in one proof box (its balance, nonce and keys), and,
// from the transaction index, the contracts it owns and the transactions it signed.
func (s *Server) identity(r *http.Request) (any, error) {
	ctx := r.Context()
	id, err := protocol.ParseIdentityID(r.PathValue("id"))
	if err != nil {
		return nil, errBadInput{"identity", r.PathValue("id"), "64 hex digits"}
	}
	h, err := s.provenHeight(ctx)
	if err != nil {
		return nil, err
	}
	a, err := s.rawRead(ctx, proofs.PathIdentity, id[:], h)
	if err != nil {
		return nil, err
	}
	p := identityPage{ID: id.String()}
	if p.proofBox, err = s.proofBox(ctx, []check.Answer{a}, "ttld query identity "+id.String()+" --prove"); err != nil {
		return nil, err
	}
	top := cursor{skip: []int{0}}
	contracts, next, err := s.history(ctx, []search{{query: contractsQuery(p.ID)}}, top, IdentityRows, nil)
	if err != nil {
		p.Unavailable, err = unavailable(err)
		return p, err
	}
	if p.Contracts, err = s.contractRows(ctx, txsOf(contracts)); err != nil {
		return nil, err
	}
	p.MoreContracts = next != ""
	txs, next, err := s.history(ctx, []search{{query: signerQuery(p.ID)}}, top, IdentityRows, nil)
	if err != nil {
		return nil, err
	}
	p.MoreTxs = next != ""
	p.Txs, err = s.hitRows(r, txs)
	return p, err
}
