package web

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/protocol"
)

type eventRow struct {
	Type  string
	Attrs []attrRow
}

type attrRow struct{ Key, Value string }

type txRow struct {
	Index  int
	Hash   string
	Kind   string
	Signer string
	// SignerIdentity is the signing identity's id (empty for an address signer).
	SignerIdentity string
	Nonce          uint64
	Code           uint32
	CodeName       string
	Fee            uint64
	Log            string
	Events         []eventRow
	Size           int
}

type blockPage struct {
	Height     int64
	Time       time.Time
	Proposer   string
	AppHash    string
	Txs        []txRow
	Events     []eventRow
	Expired    int // documents the block's cleanup deleted
	Prev, Next int64
}

func (s *Server) block(r *http.Request) (any, error) {
	ctx := r.Context()
	v := r.PathValue("height")
	h, err := strconv.ParseInt(v, 10, 64)
	if err != nil || h < 1 {
		return nil, errBadInput{"height", v, "a block height of 1 or more"}
	}
	st, err := s.rpc.Status(ctx)
	if err != nil {
		return nil, err
	}
	if h > st.SyncInfo.LatestBlockHeight {
		return nil, errNotFound{fmt.Sprintf("block %d (the latest is %d)", h, st.SyncInfo.LatestBlockHeight)}
	}
	b, err := s.rpc.Block(ctx, &h)
	if err != nil {
		return nil, err
	}
	res, err := s.rpc.BlockResults(ctx, &h)
	if err != nil {
		return nil, err
	}
	p := blockPage{Height: h, Time: b.Block.Time.UTC(), Proposer: b.Block.ProposerAddress.String(), AppHash: b.Block.AppHash.String(), Prev: h - 1}
	if h < st.SyncInfo.LatestBlockHeight {
		p.Next = h + 1
	}
	ctxRules, err := protocol.ContextFor(protocol.Latest, protocol.BlockTimeMs(b.Block.Time))
	if err != nil {
		return nil, err
	}
	for i, tx := range b.Block.Txs {
		row := txRow{Index: i, Hash: fmt.Sprintf("%X", tx.Hash()), Kind: "undecodable", Size: len(tx)}
		if signed, err := protocol.Decode(tx, ctxRules); err == nil {
			k, _ := protocol.KindOf(signed.Type())
			row.Kind, row.Nonce = k.Name, signed.GetNonce()
			switch sg := signed.Signer(); sg.Kind {
			case protocol.SignerIdentity:
				row.Signer, row.SignerIdentity = sg.Identity.String(), sg.Identity.String()
			default:
				row.Signer = sg.Address().String()
			}
		}
		if i < len(res.TxsResults) {
			tr := res.TxsResults[i]
			row.Code, row.CodeName, row.Fee, row.Log = tr.Code, protocol.Code(tr.Code).String(), uint64(max(tr.GasUsed, 0)), tr.Log
			row.Events = eventRows(tr.Events)
		}
		p.Txs = append(p.Txs, row)
	}
	p.Events = eventRows(res.FinalizeBlockEvents)
	for _, e := range p.Events {
		if e.Type == protocol.EventDocumentExpired {
			p.Expired++
		}
	}
	return p, nil
}

func eventRows(in []abcitypes.Event) []eventRow {
	out := make([]eventRow, 0, len(in))
	for _, e := range in {
		row := eventRow{Type: e.Type}
		for _, a := range e.Attributes {
			row.Attrs = append(row.Attrs, attrRow{a.Key, a.Value})
		}
		out = append(out, row)
	}
	return out
}
