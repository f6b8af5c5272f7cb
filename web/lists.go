package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	coretypes "github.com/cometbft/cometbft/rpc/core/types"

	"github.com/ttld-dev/ttld/protocol"
)

// The lists drawn from the transaction index: the contracts (all, or an owner's) and
// the transactions an account signed, newest first, a page at a time. They are the
// node's word, not proven; a node without the index serves them saying so.

// ListPerPage is how many rows a list's page shows; an identity's page shows the first
// IdentityRows of each of its lists.
const (
	ListPerPage  = 20
	IdentityRows = 10
)

// pager is a list's place among its pages: its page (from 1), how many pages and rows
// there are, and the links to the pages around it.
type pager struct {
	Page, Pages, Total int
	PrevHref, NextHref string
}

// pagerOf is the pager of page of a list at path with query q, of total rows.
func pagerOf(path string, q url.Values, page, total int) pager {
	p := pager{Page: page, Pages: max(1, (total+ListPerPage-1)/ListPerPage), Total: total}
	href := func(n int) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("page", strconv.Itoa(n))
		return path + "?" + v.Encode()
	}
	if page > 1 {
		p.PrevHref = href(page - 1)
	}
	if page < p.Pages {
		p.NextHref = href(page + 1)
	}
	return p
}

// pageOf reads ?page= (absent: 1).
func pageOf(r *http.Request) (int, error) {
	v := r.URL.Query().Get("page")
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, errBadInput{"page", v, "a page number of 1 or more"}
	}
	return n, nil
}

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
	ID, Owner, Version string
	// IDTo and OwnerTo are the pages of the contract and its owner, "" when the event
	// does not name them as ids.
	IDTo, OwnerTo string
	Height        int64
	Time          time.Time
	// Tx is the creating transaction's page.
	Tx string
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
			row := contractRow{Height: t.Height, Time: at, Tx: txRow{Hash: t.Hash.String(), Height: t.Height}.Href()}
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
	Owner string
	Rows  []contractRow
	Pager pager
	// Unavailable says why there are no rows: the node keeps no index.
	Unavailable string
}

// contracts lists the contracts created (?owner=: by that identity), newest first.
func (s *Server) contracts(r *http.Request) (any, error) {
	var p contractsPage
	q := url.Values{}
	if v := r.URL.Query().Get("owner"); v != "" {
		id, err := protocol.ParseIdentityID(v)
		if err != nil {
			return nil, errBadInput{"owner", v, "an identity id of 64 hex digits"}
		}
		p.Owner = id.String()
		q.Set("owner", p.Owner)
	}
	page, err := pageOf(r)
	if err != nil {
		return nil, err
	}
	txs, total, err := s.txSearch(r.Context(), contractsQuery(p.Owner), page, ListPerPage)
	if err != nil {
		p.Unavailable, err = unavailable(err)
		return p, err
	}
	p.Pager = pagerOf("/contracts", q, page, total)
	p.Rows, err = s.contractRows(r.Context(), txs)
	return p, err
}

type txsPage struct {
	// Signer is the account whose transactions are listed, SignerTo its page.
	Signer, SignerTo string
	Rows             []txRow
	Pager            pager
	Unavailable      string
}

// txs lists the transactions account ?signer= (an address or an identity) signed and
// was charged for, newest first.
func (s *Server) txs(r *http.Request) (any, error) {
	v := r.URL.Query().Get("signer")
	signer, err := accountOf(v)
	if err != nil {
		return nil, err
	}
	page, err := pageOf(r)
	if err != nil {
		return nil, err
	}
	p := txsPage{Signer: signer, SignerTo: accountHref(signer)}
	txs, total, err := s.txSearch(r.Context(), signerQuery(signer), page, ListPerPage)
	if err != nil {
		p.Unavailable, err = unavailable(err)
		return p, err
	}
	p.Pager = pagerOf("/txs", url.Values{"signer": {signer}}, page, total)
	p.Rows, err = s.searchRows(r.Context(), txs, time.Now())
	return p, err
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
