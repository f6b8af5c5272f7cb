package web

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ttld-dev/ttld/protocol"
)

type blockPage struct {
	Height   int64     `json:"height"`
	Time     time.Time `json:"time"`
	Proposer string    `json:"proposer"`
	AppHash  string    `json:"app_hash"`
	// TxCount is how many transactions the block holds; Txs are those of page Page
	// of Pages, BlockTxsPerPage a page.
	TxCount int        `json:"tx_count"`
	Txs     []txRow    `json:"transactions"`
	Page    int        `json:"page"`
	Pages   int        `json:"pages"`
	Events  []eventRow `json:"events"`
	Expired int        `json:"expired"` // documents the block's cleanup deleted
	Prev    int64      `json:"prev"`
	Next    int64      `json:"next"`
}

// BlockTxsPerPage is how many of a block's transactions a block page shows.
const BlockTxsPerPage = 50

// PageHref is the link to page n of the block's transactions.
func (p blockPage) PageHref(n int) string { return fmt.Sprintf("/block/%d?page=%d", p.Height, n) }

// block shows a block: its header, its transactions with their results and events, a
// page at a time (?page=), and the block's own events, all the node's word.
func (s *Server) block(r *http.Request) (any, error) {
	ctx := r.Context()
	v := r.PathValue("height")
	h, err := strconv.ParseInt(v, 10, 64)
	if err != nil || h < 1 {
		return nil, errBadInput{"height", v, "a block height of 1 or more"}
	}
	page := 1
	if pv := r.URL.Query().Get("page"); pv != "" {
		if page, err = strconv.Atoi(pv); err != nil || page < 1 {
			return nil, errBadInput{"page", pv, "a page number of 1 or more"}
		}
	}
	latest, err := s.latestHeight(ctx)
	if err != nil {
		return nil, err
	}
	if h > latest {
		return nil, errNotFound{fmt.Sprintf("block %d (the latest is %d)", h, latest)}
	}
	b, err := s.rpc.Block(ctx, &h)
	if err != nil {
		return nil, err
	}
	res, err := s.rpc.BlockResults(ctx, &h)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	p := blockPage{Height: h, Time: b.Block.Time.UTC(), Proposer: b.Block.ProposerAddress.String(), AppHash: b.Block.AppHash.String(), Prev: h - 1}
	if h < latest {
		p.Next = h + 1
	}
	p.TxCount, p.Page = len(b.Block.Txs), page
	p.Pages = max(1, (p.TxCount+BlockTxsPerPage-1)/BlockTxsPerPage)
	if page > p.Pages {
		return nil, errNotFound{fmt.Sprintf("page %d of block %d's transactions (the last is %d)", page, h, p.Pages)}
	}
	from := (page - 1) * BlockTxsPerPage
	if p.Txs, err = s.txRows(ctx, s.keepBlockTxs(b.Block, res.TxsResults), from, from+BlockTxsPerPage, now); err != nil {
		return nil, err
	}
	p.Events = eventRows(res.FinalizeBlockEvents, now)
	for _, e := range p.Events {
		if e.Type == protocol.EventDocumentExpired {
			p.Expired++
		}
	}
	return p, nil
}
