package web

import (
	"net/http"
	"time"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web/check"
)

type identityPage struct {
	proofBox `json:"proof"`
	ID       string `json:"id"`
	// The first IdentityRows of the contracts it owns and of the transactions it
	// signed, from the transaction index (not proven), with how many there are;
	// Unavailable says why there are none when the node keeps no index.
	Contracts      []contractRow `json:"contracts"`
	ContractsTotal int           `json:"contracts_total"`
	Txs            []txRow       `json:"transactions"`
	TxsTotal       int           `json:"txs_total"`
	Unavailable    string        `json:"unavailable,omitempty"`
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
	contracts, total, err := s.txSearch(ctx, contractsQuery(p.ID), 1, IdentityRows)
	if err != nil {
		p.Unavailable, err = unavailable(err)
		return p, err
	}
	if p.Contracts, err = s.contractRows(ctx, contracts); err != nil {
		return nil, err
	}
	p.ContractsTotal = total
	txs, total, err := s.txSearch(ctx, signerQuery(p.ID), 1, IdentityRows)
	if err != nil {
		return nil, err
	}
	p.TxsTotal = total
	p.Txs, err = s.searchRows(ctx, txs, time.Now())
	return p, err
}
