package web

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	coretypes "github.com/cometbft/cometbft/rpc/core/types"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// search sends what was typed to its page: a height to its block; 40 hex digits to a
// validator's page when a validator has that consensus address, to the address's page
// otherwise; 64 to the first of a transaction of that hash, an identity, a contract or
// a document of that id that exists (transactions and documents are found through the
// transaction index). What matches nothing is not found.
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("q")))
	target, err := s.searchTarget(r.Context(), q)
	if err != nil {
		s.page("error.html", func(*http.Request) (any, error) { return nil, err })(w, r)
		return
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// searchTarget is the page search sends q to.
func (s *Server) searchTarget(ctx context.Context, q string) (string, error) {
	switch {
	case isHexOf(q, protocol.AddressLen):
		validator, err := s.isValidator(ctx, q)
		if err != nil {
			return "", err
		}
		if validator {
			return validatorHref(q), nil
		}
		return "/address/" + q, nil
	case isHexOf(q, protocol.IdentityIDLen):
		return s.searchID(ctx, q)
	}
	if h, err := strconv.ParseInt(q, 10, 64); err == nil && h > 0 {
		return "/block/" + strconv.FormatInt(h, 10), nil
	}
	return "", errBadInput{"search", q, "a block height, a transaction hash, a 64-hex document, contract or identity id, or a 40-hex address"}
}

// isValidator reports whether a validator of the genesis set, or of the first 100 of
// the latest set, has consensus address q (hex).
func (s *Server) isValidator(ctx context.Context, q string) (bool, error) {
	if t := s.opts.Trusted; t != nil {
		for _, v := range t.Validators {
			if strings.EqualFold(v.Address.String(), q) {
				return true, nil
			}
		}
	}
	// CometBFT answers at most 100 validators a page: a set of more would need pages.
	perPage := 100
	vals, err := s.rpc.Validators(ctx, nil, nil, &perPage)
	if err != nil {
		return false, err
	}
	for _, v := range vals.Validators {
		if strings.EqualFold(v.Address.String(), q) {
			return true, nil
		}
	}
	return false, nil
}

// searchID is the page of 64 hex digits: a transaction's, an identity's, a contract's
// or a document's, the first that exists in that order.
func (s *Server) searchID(ctx context.Context, q string) (string, error) {
	h, err := s.provenHeight(ctx)
	if err != nil {
		return "", err
	}
	tx, found, err := s.findTx(ctx, strings.ToUpper(q))
	indexed := !errors.Is(err, errNoIndex)
	if err != nil && indexed {
		return "", err
	}
	if found {
		return txRow{Hash: strings.ToUpper(q), Height: tx}.Href(), nil
	}
	id, _ := protocol.ParseIdentityID(q)
	identity, err := s.c.Identity(ctx, id, h, false)
	if err != nil {
		return "", err
	}
	if identity.Present {
		return "/identity/" + q, nil
	}
	contract, err := s.rawRead(ctx, proofs.PathContract, id[:], h)
	if err != nil {
		return "", err
	}
	if len(contract.Value) > 0 {
		return "/contract/" + q, nil
	}
	if !indexed {
		return "", errNotFound{"an identity or a contract of id " + q + " (this node keeps no transaction index, so transactions and documents are not searched)"}
	}
	txs, _, err := s.txSearch(ctx, fmt.Sprintf("%s='%s'", searchDocument.Query(), q), 1, 1)
	if err != nil {
		return "", err
	}
	if href := createdDocument(txs, q); href != "" {
		return href, nil
	}
	return "", errNotFound{"a transaction, an identity, a contract or a document of id " + q}
}

// createdDocument is the page of document id, from the event of the transaction that
// created it (among txs), which names its contract and type; "" when none does.
func createdDocument(txs []*coretypes.ResultTx, id string) string {
	for _, t := range txs {
		for _, e := range t.TxResult.Events {
			values := map[string]string{}
			for _, a := range e.Attributes {
				values[a.Key] = a.Value
			}
			if e.Type == protocol.EventDocumentAction(protocol.ActionCreate) && values[protocol.AttrID] == id {
				return documentHref(values[protocol.AttrContract], values[protocol.AttrType], id)
			}
		}
	}
	return ""
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}
