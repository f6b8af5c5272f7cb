package web

import (
	"net/http"
	"strconv"
	"time"

	cmttypes "github.com/cometbft/cometbft/types"
)

// blockRow is a block as the lists show it, from its header.
type blockRow struct {
	Height   int64
	Time     time.Time
	Txs      int
	Proposer string
	AppHash  string
}

func blockRowOf(m *cmttypes.BlockMeta) blockRow {
	return blockRow{m.Header.Height, m.Header.Time.UTC(), m.NumTxs, m.Header.ProposerAddress.String(), m.Header.AppHash.String()}
}

type blocksPage struct {
	Blocks        []blockRow
	Older, Newer  int64 // the before= of the next pages; 0: none
	LatestHeight  int64
	FirstListed   int64
	BlocksPerPage int
}

func (s *Server) blocks(r *http.Request) (any, error) {
	ctx := r.Context()
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
