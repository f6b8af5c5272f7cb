package web

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ttld-dev/ttld/protocol"
)

type blockPage struct {
	Height   int64      `json:"height"`
	Time     time.Time  `json:"time"`
	Proposer string     `json:"proposer"`
	AppHash  string     `json:"app_hash"`
	Txs      []txRow    `json:"transactions"`
	Events   []eventRow `json:"events"`
	Expired  int        `json:"expired"` // documents the block's cleanup deleted
	Prev     int64      `json:"prev"`
	Next     int64      `json:"next"`
}

// block shows a block: its header, its transactions with their results and events,
// and the block's own events, all the node's word.
func (s *Server) block(r *http.Request) (any, error) {
	ctx := r.Context()
	v := r.PathValue("height")
	h, err := strconv.ParseInt(v, 10, 64)
	if err != nil || h < 1 {
		return nil, errBadInput{"height", v, "a block height of 1 or more"}
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
	if p.Txs, err = s.txRows(ctx, s.keepBlockTxs(b.Block, res.TxsResults), now); err != nil {
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
