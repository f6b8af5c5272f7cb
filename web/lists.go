package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	coretypes "github.com/cometbft/cometbft/rpc/core/types"

	"github.com/ttld-dev/ttld/protocol"
)

// The lists drawn from the transaction index: the contracts (all, or an owner's) and
// the transactions an account signed, newest first, a page at a time. They are the
// node's word, not proven; a node without the index serves them saying so.

// ListPerPage is how many rows a list's page shows unless ?limit= says; an
// identity's page shows the first IdentityRows of each of its lists.
const (
	ListPerPage  = 20
	IdentityRows = 10
)

// unavailable is what a list says instead of its rows when the index cannot give them
// (errNoIndex), or err itself for any other failure.
func unavailable(err error) (string, error) {
	if errors.Is(err, errNoIndex) {
		return errNoIndex.Error(), nil
	}
	return "", err
}

// contractRow is a contract as the lists show it, from the event of the transaction
// that created it.
type contractRow struct {
	ID      string `json:"id"`
	Owner   string `json:"owner"`
	Version string `json:"version"`
	// IDTo and OwnerTo are the pages of the contract and its owner, "" when the event
	// does not name them as ids.
	IDTo    string    `json:"-"`
	OwnerTo string    `json:"-"`
	Height  int64     `json:"height"`
	Time    time.Time `json:"time"`
	// TxHash is the creating transaction's hash, Tx its page.
	TxHash string `json:"tx_hash"`
	Tx     string `json:"-"`
}

// contractRows are the contracts the transactions txs created, in their order.
func (s *Server) contractRows(ctx context.Context, txs []*coretypes.ResultTx) ([]contractRow, error) {
	var out []contractRow
	for _, t := range txs {
		at, err := s.timeAt(ctx, t.Height)
		if err != nil {
			return nil, err
		}
		for _, e := range t.TxResult.Events {
			if e.Type != protocol.EventDataContractCreated {
				continue
			}
			row := contractRow{Height: t.Height, Time: at, TxHash: t.Hash.String(), Tx: txRow{Hash: t.Hash.String(), Height: t.Height}.Href()}
			for _, a := range e.Attributes {
				switch a.Key {
				case protocol.AttrContract:
					row.ID, row.IDTo = a.Value, attrHref(e.Type, a.Key, a.Value, nil)
				case protocol.AttrOwner:
					row.Owner, row.OwnerTo = a.Value, accountHref(a.Value)
				case protocol.AttrVersion:
					row.Version = a.Value
				}
			}
			out = append(out, row)
		}
	}
	return out, nil
}

// contractsQuery is the index's query of the contracts owner created, or of every
// contract when owner is "".
func contractsQuery(owner string) string {
	if owner == "" {
		return searchContract.Query() + " EXISTS"
	}
	return fmt.Sprintf("%s='%s'", searchOwner.Query(), owner)
}

type contractsPage struct {
	// Owner is the identity whose contracts are listed; "" for every contract.
	Owner string        `json:"owner,omitempty"`
	Rows  []contractRow `json:"contracts"`
	// Next is the cursor of the rows after these ("" when there are none).
	Next string `json:"next,omitempty"`
	// Unavailable says why there are no rows: the node keeps no index.
	Unavailable string `json:"unavailable,omitempty"`
	query       url.Values
}

// NextHref is the link to the page after this one, "" when there is none.
func (p contractsPage) NextHref() string { return nextHref("/contracts", p.query, p.Next) }

// contracts lists the contracts created (?owner=: by that identity), newest first.
func (s *Server) contracts(r *http.Request) (any, error) {
	p := contractsPage{query: url.Values{}}
	if v := r.URL.Query().Get("owner"); v != "" {
		id, err := protocol.ParseIdentityID(v)
		if err != nil {
			return nil, errBadInput{"owner", v, "an identity id of 64 hex digits"}
		}
		p.Owner = id.String()
		p.query.Set("owner", p.Owner)
	}
	c, limit, err := listArgs(r, 1, p.query)
	if err != nil {
		return nil, err
	}
	hits, next, err := s.history(r.Context(), []search{{query: contractsQuery(p.Owner)}}, c, limit, nil)
	if err != nil {
		p.Unavailable, err = unavailable(err)
		return p, err
	}
	p.Next = next
	p.Rows, err = s.contractRows(r.Context(), txsOf(hits))
	return p, err
}

// txsOf are the transactions of hits.
func txsOf(hits []hit) []*coretypes.ResultTx {
	out := make([]*coretypes.ResultTx, 0, len(hits))
	for _, h := range hits {
		if h.tx != nil {
			out = append(out, h.tx)
		}
	}
	return out
}

// signerQuery is the index's query of the transactions account signed.
func signerQuery(account string) string { return fmt.Sprintf("%s='%s'", searchSigner.Query(), account) }

// accountOf reads an account's id as the events write it: an address (40 hex digits)
// or an identity (64), in lower case.
func accountOf(v string) (string, error) {
	if a, err := protocol.ParseAddress(v); err == nil {
		return a.String(), nil
	}
	if id, err := protocol.ParseIdentityID(v); err == nil {
		return id.String(), nil
	}
	return "", errBadInput{"signer", v, "an address of 40 hex digits or an identity id of 64"}
}
