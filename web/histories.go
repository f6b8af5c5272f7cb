package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web/check"
)

// historyRow is one row of an account's or a document's history: a transaction, or a
// block whose own events touched the subject (an epoch's payout, a document's expiry).
type historyRow struct {
	Height int64     `json:"height"`
	Time   time.Time `json:"time"`
	// Tx is the transaction; nil for a block's own events.
	Tx *txRow `json:"transaction,omitempty"`
	// What says what happened to the subject, in a few words.
	What string `json:"what"`
	// An account's credits: in, out (besides the fee) and the fee it paid.
	In  uint64 `json:"in,omitempty"`
	Out uint64 `json:"out,omitempty"`
	Fee uint64 `json:"fee,omitempty"`
	// A document's owner and revision after the action.
	Owner    string `json:"owner,omitempty"`
	OwnerTo  string `json:"-"`
	Revision string `json:"revision,omitempty"`
}

type historyPage struct {
	// Subject is what the history is of (an address, an identity or a document), To
	// its page and Kind its kind, as the title says it.
	Subject string       `json:"subject"`
	To      string       `json:"-"`
	Kind    string       `json:"kind"`
	Rows    []historyRow `json:"rows"`
	Next    string       `json:"next,omitempty"`
	// Unavailable says why there are no rows: the node keeps no index.
	Unavailable string `json:"unavailable,omitempty"`
	// path and query make the next page's link.
	path  string
	query url.Values
}

// NextHref is the link to the page after this one, "" when there is none.
func (p historyPage) NextHref() string { return nextHref(p.path, p.query, p.Next) }

// accountSearches are the searches of what touched account (an address or an
// identity, lower-case hex): what it signed (and paid the fee of), what was credited
// to it, for an identity its creation and its epochs' payouts.
func accountSearches(account string, identity bool) []search {
	out := []search{
		{query: signerQuery(account)},
		{query: fmt.Sprintf("%s='%s'", searchRecipient.Query(), account)},
	}
	if identity {
		out = append(out,
			search{query: fmt.Sprintf("%s='%s'", searchCreated.Query(), account)},
			search{blocks: true, query: fmt.Sprintf("%s='%s'", searchPayout.Query(), account)})
	}
	return out
}

// accountHistory lists everything that touched the address or identity of the path,
// newest first: what it sent, what it received, the fees it paid and (an identity)
// the payouts it got.
func (s *Server) accountHistory(identity bool) func(r *http.Request) (any, error) {
	return func(r *http.Request) (any, error) {
		var account string
		var p historyPage
		if identity {
			id, err := protocol.ParseIdentityID(r.PathValue("id"))
			if err != nil {
				return nil, errBadInput{"identity", r.PathValue("id"), "64 hex digits"}
			}
			account, p.Kind = id.String(), "identity"
		} else {
			a, err := protocol.ParseAddress(r.PathValue("address"))
			if err != nil {
				return nil, errBadInput{"address", r.PathValue("address"), "40 hex digits"}
			}
			account, p.Kind = a.String(), "address"
		}
		p.Subject, p.To = account, accountHref(account)
		p.path = p.To + "/history"
		return s.historyOf(r, p, accountSearches(account, identity), func(row *historyRow, events []abcitypes.Event) {
			accountRow(row, account, events)
		})
	}
}

// accountRow fills in what events (a transaction's, with the row's Tx, or a block's)
// did to account.
func accountRow(row *historyRow, account string, events []abcitypes.Event) {
	var what []string
	if row.Tx != nil && row.Tx.Signer == account {
		row.Fee = row.Tx.Fee
		what = append(what, "signed "+row.Tx.Kind)
	}
	for _, e := range events {
		attrs := attrsOf(e)
		amount, _ := strconv.ParseUint(attrs[protocol.AttrAmount], 10, 64)
		switch {
		case e.Type == protocol.EventTransfer && attrs[protocol.AttrTo] == account:
			row.In += amount
			what = append(what, "received from "+check.Short(attrs[protocol.AttrFrom]))
		case e.Type == protocol.EventTransfer && attrs[protocol.AttrFrom] == account:
			row.Out += amount
		case e.Type == protocol.EventIdentityCreated && attrs[protocol.AttrIdentity] == account:
			row.In += amount
			what = append(what, "created, funded by "+check.Short(attrs[protocol.AttrFunder]))
		case e.Type == protocol.EventIdentityCreated && attrs[protocol.AttrFunder] == account:
			row.Out += amount
		case e.Type == protocol.EventEpochPayout && attrs[protocol.AttrIdentity] == account:
			credits, _ := strconv.ParseUint(attrs[protocol.AttrCredits], 10, 64)
			row.In += credits
			what = append(what, "payout of epoch "+attrs[protocol.AttrEpoch])
		}
	}
	row.What = joinWhat(what)
}

// documentSearches are the searches of what touched a document: each action kind's
// transactions, and the block that expired it.
func documentSearches(id string) []search {
	var out []search
	for _, k := range protocol.DocumentActionKinds() {
		out = append(out, search{query: fmt.Sprintf("%s='%s'", searchAction(k).Query(), id)})
	}
	return append(out, search{blocks: true, query: fmt.Sprintf("%s='%s'", searchExpired.Query(), id)})
}

// documentHistory lists what happened to the document of the path, newest first: the
// transaction that created it, each revision, transfer, sale, price change, renewal,
// its deletion or its expiry.
func (s *Server) documentHistory(r *http.Request) (any, error) {
	c, typeName, id, err := documentOf(r)
	if err != nil {
		return nil, err
	}
	p := historyPage{Subject: id.String(), Kind: "document", To: documentHref(c.String(), typeName, id.String())}
	p.path = p.To + "/history"
	return s.historyOf(r, p, documentSearches(id.String()), func(row *historyRow, events []abcitypes.Event) {
		var what []string
		for _, e := range events {
			attrs := attrsOf(e)
			if attrs[protocol.AttrID] != id.String() {
				continue
			}
			switch {
			case e.Type == protocol.EventDocumentExpired:
				what = append(what, "expired")
			case strings.HasPrefix(e.Type, protocol.EventDocumentPrefix):
				what = append(what, strings.TrimPrefix(e.Type, protocol.EventDocumentPrefix))
			default:
				continue
			}
			row.Owner, row.OwnerTo, row.Revision = attrs[protocol.AttrOwner], accountHref(attrs[protocol.AttrOwner]), attrs[protocol.AttrRevision]
		}
		row.What = joinWhat(what)
	})
}

// historyOf reads the page of p's history the request's cursor and limit name, from
// searches, each row described by describe from the events of its transaction or
// block.
func (s *Server) historyOf(r *http.Request, p historyPage, searches []search, describe func(*historyRow, []abcitypes.Event)) (any, error) {
	p.query = url.Values{}
	c, limit, err := listArgs(r, len(searches), p.query)
	if err != nil {
		return nil, err
	}
	hits, next, err := s.history(r.Context(), searches, c, limit, nil)
	if err != nil {
		p.Unavailable, err = unavailable(err)
		return p, err
	}
	p.Next = next
	now := time.Now()
	for _, h := range hits {
		row := historyRow{Height: h.height}
		var events []abcitypes.Event
		if h.tx != nil {
			tx, err := s.searchRow(r.Context(), h, now)
			if err != nil {
				return nil, err
			}
			row.Tx, row.Time, events = &tx, tx.Time, tx.events
		} else {
			if row.Time, err = s.timeAt(r.Context(), h.height); err != nil {
				return nil, err
			}
			res, err := s.rpc.BlockResults(r.Context(), &h.height)
			if err != nil {
				return nil, err
			}
			events = res.FinalizeBlockEvents
		}
		describe(&row, events)
		p.Rows = append(p.Rows, row)
	}
	return p, nil
}

// attrsOf is an event's attributes by key.
func attrsOf(e abcitypes.Event) map[string]string {
	out := make(map[string]string, len(e.Attributes))
	for _, a := range e.Attributes {
		out[a.Key] = a.Value
	}
	return out
}

// joinWhat joins the words of a row's What.
func joinWhat(what []string) string { return strings.Join(what, "; ") }

// searchRow is the transaction row of hit h.
func (s *Server) searchRow(ctx context.Context, h hit, now time.Time) (txRow, error) {
	at, err := s.timeAt(ctx, h.height)
	if err != nil {
		return txRow{}, err
	}
	dec, err := s.decoderAt(ctx, h.height, at)
	if err != nil {
		return txRow{}, err
	}
	return dec.row(h.index, h.tx.Tx, &h.tx.TxResult, now), nil
}
