package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ttld-dev/ttld/protocol"
)

// txKind is a choice of the transaction list's kind filter: the transactions any of
// its conditions match (each a search, docs/ARCHITECTURE.md "The web view").
type txKind struct {
	Name, Label string
	conditions  []string
	// event, for a document action, is its event's type: the kind's rows are the
	// documents batches that hold one. It is a filter of the rows found rather than a
	// condition: CometBFT's index matches the conditions of one search within one
	// event (the transition event, where the signer and the code are), and a search for
	// every action's event would read a key of every document the chain ever wrote.
	event string
}

// txKinds are the kind filter's choices, in the order the form offers them: groups of
// transition types, each type, and each document action (a batch is listed under
// each action kind it holds).
var txKinds = kindsOf()

func kindsOf() []txKind {
	typ := func(names ...string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = fmt.Sprintf("%s='%s'", searchType.Query(), n)
		}
		return out
	}
	out := []txKind{
		{"transfers", "credit transfers", typ("address_funds_transfer", "identity_credit_transfer", "identity_credit_transfer_to_address"), ""},
		{"identities", "identities created and topped up", typ("identity_create", "identity_top_up"), ""},
		{"contracts", "contracts created and updated", typ("data_contract_create", "data_contract_update"), ""},
		{"documents", "documents batches", typ("documents_batch"), ""},
		{"validators", "validator set proposals and approvals", typ("validator_set_proposal", "validator_set_approval"), ""},
	}
	for _, k := range protocol.Kinds() {
		out = append(out, txKind{k.Name, k.Name, typ(k.Name), ""})
	}
	for _, a := range protocol.DocumentActionKinds() {
		ev := protocol.EventDocumentAction(a)
		out = append(out, txKind{ev, "document action " + a.String(), typ("documents_batch"), ev})
	}
	return out
}

// kindNamed is the kind filter's choice name.
func kindNamed(name string) (txKind, bool) {
	for _, k := range txKinds {
		if k.Name == name {
			return k, true
		}
	}
	return txKind{}, false
}

type txsPage struct {
	// The filters: the kind's name, the result code (nil: any), and the signing
	// account ("" for any), with its page.
	Kind     string  `json:"kind,omitempty"`
	Code     *uint64 `json:"code,omitempty"`
	Signer   string  `json:"signer,omitempty"`
	SignerTo string  `json:"-"`
	Rows     []txRow `json:"transactions"`
	// Next is the cursor of the rows after these ("" when there are none).
	Next string `json:"next,omitempty"`
	// Unavailable says why there are no rows: the node keeps no index.
	Unavailable string `json:"unavailable,omitempty"`
	// Kinds are the kind filter's choices.
	Kinds []txKind `json:"-"`
	// Query are the filters as the next link carries them.
	Query url.Values `json:"-"`
}

// NextHref is the link to the page after this one, "" when there is none.
func (p txsPage) NextHref() string { return nextHref("/txs", p.Query, p.Next) }

// txs lists the chain's transactions, newest first, as the transaction index finds
// them: every one, or those of ?kind=, ?code= and ?signer= (an address or an
// identity that signed and was charged).
func (s *Server) txs(r *http.Request) (any, error) {
	q := r.URL.Query()
	p := txsPage{Kinds: txKinds, Query: url.Values{}}
	var and []string
	if v := q.Get("signer"); v != "" {
		signer, err := accountOf(v)
		if err != nil {
			return nil, err
		}
		p.Signer, p.SignerTo = signer, accountHref(signer)
		p.Query.Set("signer", signer)
		and = append(and, signerQuery(signer))
	}
	if v := q.Get("code"); v != "" {
		code, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return nil, errBadInput{"code", v, "a result code, a number"}
		}
		p.Code = &code
		p.Query.Set("code", v)
		and = append(and, fmt.Sprintf("%s=%d", searchCode.Query(), code))
	}
	alternatives := []string{""}
	var keep func(hit) bool
	if v := q.Get("kind"); v != "" {
		k, ok := kindNamed(v)
		if !ok {
			return nil, errBadInput{"kind", v, "a kind the list's filter offers"}
		}
		p.Kind, alternatives = k.Name, k.conditions
		p.Query.Set("kind", v)
		if k.event != "" {
			keep = func(h hit) bool { return hasEvent(h, k.event) }
		}
	}
	searches := make([]search, len(alternatives))
	for i, alt := range alternatives {
		conds := and
		if alt != "" {
			conds = append([]string{alt}, and...)
		}
		searches[i] = search{query: strings.Join(conds, " AND ")}
	}
	c, limit, err := listArgs(r, len(searches), p.Query)
	if err != nil {
		return nil, err
	}
	if len(and) == 0 && p.Kind == "" {
		p.Rows, p.Next, err = s.chainTxs(r.Context(), c, limit)
		return p, err
	}
	hits, next, err := s.history(r.Context(), searches, c, limit, keep)
	if err != nil {
		p.Unavailable, err = unavailable(err)
		return p, err
	}
	p.Next = next
	p.Rows, err = s.hitRows(r, hits)
	return p, err
}

// MaxScanHeights bounds the heights a page of every transaction walks down: a page
// that finds fewer transactions than asked in that many blocks ends there, with the
// cursor of the heights below.
const MaxScanHeights = 2000

// chainTxs are up to limit of the chain's transactions from c on, newest first, and
// the cursor of those after them: read from the blocks themselves, whose headers
// count their transactions, so that no index is needed and a page decodes its rows
// alone, however many a block holds.
func (s *Server) chainTxs(ctx context.Context, c cursor, limit int) ([]txRow, string, error) {
	latest, err := s.latestHeight(ctx)
	if err != nil {
		return nil, "", err
	}
	top := c.height
	if top == 0 || top > latest {
		top, c = latest, cursor{skip: []int{0}} // a cursor past the chain's top is its top
	}
	now := time.Now()
	var out []txRow
	h := top // the highest height not yet read
	for h >= 1 && len(out) < limit && top-h < MaxScanHeights {
		metas, err := s.metas(ctx, max(1, h-BlocksPerPage+1), h)
		if err != nil {
			return nil, "", err
		}
		for _, m := range metas {
			height := m.Header.Height
			shown := 0 // of this block's transactions, the last ones shown already
			if height == c.height {
				shown = c.skip[0]
			}
			left := m.NumTxs - shown
			if left <= 0 || len(out) == limit {
				if len(out) < limit {
					h = height - 1
				}
				continue
			}
			b, err := s.blockTxsAt(ctx, height)
			if err != nil && height == latest && c.height == 0 {
				h = height - 1 // stored and not yet executed (executedHeight)
				continue
			}
			if err != nil {
				return nil, "", err
			}
			take := min(left, limit-len(out))
			rows, err := s.txRows(ctx, b, left-take, left, now)
			if err != nil {
				return nil, "", err
			}
			for i := len(rows) - 1; i >= 0; i-- {
				out = append(out, rows[i])
			}
			if take < left {
				return out, cursor{height: height, skip: []int{shown + take}}.String(), nil
			}
			h = height - 1
		}
	}
	if h < 1 {
		return out, "", nil
	}
	return out, cursor{height: h, skip: []int{0}}.String(), nil
}

// hasEvent reports whether the transaction of h reports an event of type typ.
func hasEvent(h hit, typ string) bool {
	if h.tx == nil {
		return false
	}
	for _, e := range h.tx.TxResult.Events {
		if e.Type == typ {
			return true
		}
	}
	return false
}

// hitRows are the transaction rows of hits (which are all transactions).
func (s *Server) hitRows(r *http.Request, hits []hit) ([]txRow, error) {
	now := time.Now()
	out := make([]txRow, 0, len(hits))
	for _, h := range hits {
		if h.tx == nil {
			continue
		}
		row, err := s.searchRow(r.Context(), h, now)
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, nil
}

// nextHref is the link to path with query q and the cursor next, "" when next is.
func nextHref(path string, q url.Values, next string) string {
	if next == "" {
		return ""
	}
	v := url.Values{}
	for k, vs := range q {
		v[k] = vs
	}
	v.Set("cursor", next)
	return path + "?" + v.Encode()
}
