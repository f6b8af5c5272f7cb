package web

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	cmttypes "github.com/cometbft/cometbft/types"
)

// blockRow is a block as the lists show it, from its header.
type blockRow struct {
	Height   int64     `json:"height"`
	Time     time.Time `json:"time"`
	Txs      int       `json:"tx_count"`
	Proposer string    `json:"proposer"`
	AppHash  string    `json:"app_hash"`
}

func blockRowOf(m *cmttypes.BlockMeta) blockRow {
	return blockRow{m.Header.Height, m.Header.Time.UTC(), m.NumTxs, m.Header.ProposerAddress.String(), m.Header.AppHash.String()}
}

type blocksPage struct {
	Blocks       []blockRow `json:"blocks"`
	Older, Newer int64      `json:"-"` // the before= of the next pages; 0: none
	LatestHeight int64      `json:"latest_height"`
	FirstListed  int64      `json:"-"`
	// NonEmpty: the list holds the blocks with transactions alone, from the node's
	// block index; Next is then the cursor of the blocks after these ("" when none),
	// and Unavailable says why there are none when the node keeps no index.
	NonEmpty      bool   `json:"nonempty,omitempty"`
	Next          string `json:"next,omitempty"`
	Unavailable   string `json:"unavailable,omitempty"`
	BlocksPerPage int    `json:"-"`
	// query is what the next page's link carries.
	query url.Values
}

// NextHref is the link to the older blocks with transactions, "" when there are none.
func (p blocksPage) NextHref() string {
	return nextHref("/blocks", p.query, p.Next)
}

// blocks lists the blocks, newest first: every one (?before= a height: those below
// it), or (?nonempty=1) those that hold transactions, as the node's block index finds
// them (?cursor=, ?limit=).
func (s *Server) blocks(r *http.Request) (any, error) {
	ctx := r.Context()
	switch v := r.URL.Query().Get("nonempty"); v {
	case "":
	case "1":
		return s.nonEmptyBlocks(r)
	default:
		return nil, errBadInput{"nonempty", v, "1 (the blocks with transactions alone) or nothing"}
	}
	st, err := s.rpc.Status(ctx)
	if err != nil {
		return nil, err
	}
	latest := st.SyncInfo.LatestBlockHeight
	top := latest
	if v := r.URL.Query().Get("before"); v != "" {
		b, err := strconv.ParseInt(v, 10, 64)
		if err != nil || b < 2 {
			return nil, errBadInput{"before", v, "a height of 2 or more"}
		}
		top = min(b-1, latest)
	}
	p := blocksPage{LatestHeight: latest, BlocksPerPage: BlocksPerPage}
	if top < 1 {
		return p, nil
	}
	bottom := max(1, top-BlocksPerPage+1)
	metas, err := s.metas(ctx, bottom, top)
	if err != nil {
		return nil, err
	}
	for _, m := range metas {
		p.Blocks = append(p.Blocks, blockRowOf(m))
	}
	if bottom > 1 {
		p.Older = bottom
	}
	if top < latest {
		p.Newer = min(latest+1, top+BlocksPerPage+1)
	}
	p.FirstListed = top
	return p, nil
}

// nonEmptyBlocks lists the blocks that hold transactions, newest first: those whose
// block_transactions event the node's block index holds.
func (s *Server) nonEmptyBlocks(r *http.Request) (any, error) {
	p := blocksPage{NonEmpty: true, BlocksPerPage: BlocksPerPage, query: url.Values{"nonempty": {"1"}}}
	c, limit, err := listArgs(r, 1, p.query)
	if err != nil {
		return nil, err
	}
	if p.LatestHeight, err = s.latestHeight(r.Context()); err != nil {
		return nil, err
	}
	hits, next, err := s.history(r.Context(), []search{{blocks: true, query: searchBlockTxs.Query() + " EXISTS"}}, c, limit, nil)
	if err != nil {
		p.Unavailable, err = unavailable(err)
		return p, err
	}
	p.Next = next
	for _, h := range hits {
		m, err := s.metas(r.Context(), h.height, h.height)
		if err != nil {
			return nil, err
		}
		for _, m := range m {
			p.Blocks = append(p.Blocks, blockRowOf(m))
		}
	}
	return p, nil
}
