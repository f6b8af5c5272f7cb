package web

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	rpcclient "github.com/cometbft/cometbft/rpc/client"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// blockTxs is what a committed block holds that its transaction rows are drawn from:
// its time, its transactions and their results, in block order.
type blockTxs struct {
	Height  int64
	Time    time.Time
	Txs     cmttypes.Txs
	Results []*abcitypes.ExecTxResult
}

// blockTxsAt reads block h's transactions and their results, or takes them from the
// kept ones.
func (s *Server) blockTxsAt(ctx context.Context, h int64) (blockTxs, error) {
	if b, ok := s.heights.blocks.Get(h); ok {
		return b, nil
	}
	b, err := s.rpc.Block(ctx, &h)
	if err != nil {
		return blockTxs{}, err
	}
	res, err := s.rpc.BlockResults(ctx, &h)
	if err != nil {
		return blockTxs{}, err
	}
	return s.keepBlockTxs(b.Block, res.TxsResults), nil
}

// keepBlockTxs keeps what block b and its results hold for the transaction rows.
func (s *Server) keepBlockTxs(b *cmttypes.Block, results []*abcitypes.ExecTxResult) blockTxs {
	out := blockTxs{Height: b.Height, Time: b.Time.UTC(), Txs: b.Txs, Results: results}
	s.heights.blocks.Add(b.Height, out)
	return out
}

// versionAt is the protocol version block h executed under, as the state after it
// holds it (the version changes only at the start of a block, docs/ARCHITECTURE.md);
// kept is false when the node holds that state no longer (pruned) or not yet (a block
// whose commit is under way), and the version is then the latest state's.
func (s *Server) versionAt(ctx context.Context, h int64) (v protocol.Version, kept bool, err error) {
	if v, ok := s.heights.versions.Get(h); ok {
		return v, true, nil
	}
	res, err := s.rpc.ABCIQueryWithOptions(ctx, proofs.PathKey, drive.ProtocolVersionKey(), rpcclient.ABCIQueryOptions{Height: h})
	if err != nil {
		return 0, false, err
	}
	kept = res.Response.Code == 0
	if res.Response.Code == proofs.QueryCodeVersionMissing {
		if res, err = s.rpc.ABCIQueryWithOptions(ctx, proofs.PathKey, drive.ProtocolVersionKey(), rpcclient.ABCIQueryOptions{}); err != nil {
			return 0, false, err
		}
	}
	if res.Response.Code != 0 {
		return 0, false, fmt.Errorf("the protocol version at %d: query code %d: %s", h, res.Response.Code, res.Response.Log)
	}
	if v, err = drive.DecodeProtocolVersion(res.Response.Value); err != nil {
		return 0, false, err
	}
	if kept {
		s.heights.versions.Add(h, v)
	}
	return v, kept, nil
}

// txRow is a transaction as the pages list it: decoded under the protocol version of
// its block, with its result (not proven: the node's word).
type txRow struct {
	Height int64     `json:"height"`
	Index  int       `json:"index"`
	Time   time.Time `json:"time"`
	Hash   string    `json:"hash"`
	// Kind is the transition's kind, "undecodable" when it does not decode.
	Kind string `json:"kind"`
	// Signer is the signer's id, SignerTo its page.
	Signer   string     `json:"signer"`
	SignerTo string     `json:"-"`
	Nonce    uint64     `json:"nonce"`
	Code     uint32     `json:"code"`
	CodeName string     `json:"code_name"`
	Fee      uint64     `json:"fee"`
	Log      string     `json:"log"`
	Events   []eventRow `json:"events"`
	Size     int        `json:"size"`
	// Version is the protocol version the transaction was decoded under; VersionKept
	// is false when the node no longer holds its block's state and that version is the
	// latest one (versionAt).
	Version     protocol.Version `json:"version"`
	VersionKept bool             `json:"version_kept"`
	// signed is the decoded transition, nil when it does not decode (decodeErr).
	signed    *protocol.Signed
	decodeErr error
	// events are the result's events as the node reports them.
	events []abcitypes.Event
}

// Href is the transaction's page; it names the block, so that the page is found with
// no transaction index.
func (r txRow) Href() string { return "/tx/" + r.Hash + "?height=" + strconv.FormatInt(r.Height, 10) }

// txRows are block b's transactions from index from up to to (cut to the block's),
// decoded under the protocol version b executed under, with their results; now is
// what their events' times are said against. Only those are decoded: a block may hold
// thousands.
func (s *Server) txRows(ctx context.Context, b blockTxs, from, to int, now time.Time) ([]txRow, error) {
	from, to = max(0, from), min(to, len(b.Txs))
	if from >= to {
		return nil, nil
	}
	dec, err := s.decoderAt(ctx, b.Height, b.Time)
	if err != nil {
		return nil, err
	}
	out := make([]txRow, 0, to-from)
	for i := from; i < to; i++ {
		var res *abcitypes.ExecTxResult
		if i < len(b.Results) {
			res = b.Results[i]
		}
		out = append(out, dec.row(i, b.Txs[i], res, now))
	}
	return out, nil
}

// timeAt is the time of block h, from its header.
func (s *Server) timeAt(ctx context.Context, h int64) (time.Time, error) {
	m, err := s.metas(ctx, h, h)
	if err != nil {
		return time.Time{}, err
	}
	if len(m) != 1 {
		return time.Time{}, fmt.Errorf("no header of block %d", h)
	}
	return m[0].Header.Time.UTC(), nil
}

// decoder decodes the transactions of one block under the rules they executed under.
type decoder struct {
	height int64
	time   time.Time
	rules  protocol.Context
	kept   bool
}

// decoderAt is the decoder of block h, of time t.
func (s *Server) decoderAt(ctx context.Context, h int64, t time.Time) (decoder, error) {
	v, kept, err := s.versionAt(ctx, h)
	if err != nil {
		return decoder{}, err
	}
	rules, err := protocol.ContextFor(v, protocol.BlockTimeMs(t))
	if err != nil {
		return decoder{}, err
	}
	local, err := s.localLimits(ctx)
	if err != nil {
		return decoder{}, err
	}
	rules.Limits = rules.Limits.WithLocal(local)
	return decoder{height: h, time: t, rules: rules, kept: kept}, nil
}

// localLimits are the limits a local chain's genesis lowered, which its blocks
// executed under as the app's rules do (protocol.LocalLimits). Only the genesis writes
// them, so the view reads them once, from the latest state.
func (s *Server) localLimits(ctx context.Context) (protocol.LocalLimits, error) {
	s.local.Lock()
	defer s.local.Unlock()
	if s.local.read {
		return s.local.limits, nil
	}
	a, err := s.rawRead(ctx, proofs.PathKey, drive.LocalLimitsKey(), 0)
	if err != nil {
		return protocol.LocalLimits{}, err
	}
	limits, err := drive.GetLocalLimits(proofs.SingleKV(drive.LocalLimitsKey(), a.Value))
	if err != nil {
		return protocol.LocalLimits{}, err
	}
	s.local.limits, s.local.read = limits, true
	return limits, nil
}

// row is transaction i of the block, tx, with its result res (nil: none reported).
func (d decoder) row(i int, tx cmttypes.Tx, res *abcitypes.ExecTxResult, now time.Time) txRow {
	row := txRow{Height: d.height, Index: i, Time: d.time, Hash: fmt.Sprintf("%X", tx.Hash()), Kind: "undecodable", Size: len(tx),
		Version: d.rules.Version, VersionKept: d.kept}
	if row.signed, row.decodeErr = protocol.Decode(tx, d.rules); row.decodeErr == nil {
		row.Kind, row.Nonce = row.signed.Type().String(), row.signed.GetNonce()
		switch sg := row.signed.Signer(); sg.Kind {
		case protocol.SignerIdentity:
			row.Signer = sg.Identity.String()
		default:
			row.Signer = sg.Address().String()
		}
		row.SignerTo = accountHref(row.Signer)
	}
	if res != nil {
		row.Code, row.CodeName, row.Fee, row.Log = res.Code, protocol.Code(res.Code).String(), uint64(max(res.GasUsed, 0)), res.Log
		row.events, row.Events = res.Events, eventRows(res.Events, now)
	}
	return row
}

// feePart is one part of a transaction's fee, or its refunds.
type feePart struct {
	Name    string `json:"name"`
	Credits uint64 `json:"credits"`
}

// txPage is a transaction: its row, its decoded transition's fields and its fee by
// parts, all the node's word.
type txPage struct {
	txRow
	Fields []field `json:"fields"`
	// Parts are the fee's parts and the refunds, from the transition event; none for
	// a transaction that was not charged (an unpaid refusal).
	Parts []feePart `json:"parts"`
	// DecodeError says why the transaction does not decode.
	DecodeError string `json:"decode_error,omitempty"`
}

// tx shows transaction {hash}: through the node's transaction index, which holds it
// under its hash, or, when the index does not, in block ?height= (the links name it).
func (s *Server) tx(r *http.Request) (any, error) {
	ctx := r.Context()
	v := r.PathValue("hash")
	hash, err := hex.DecodeString(v)
	if err != nil || len(hash) != 32 {
		return nil, errBadInput{"transaction", v, "a transaction hash of 64 hex digits"}
	}
	upper := strings.ToUpper(v)
	var h int64
	if hv := r.URL.Query().Get("height"); hv != "" {
		if h, err = strconv.ParseInt(hv, 10, 64); err != nil || h < 1 {
			return nil, errBadInput{"height", hv, "a block height of 1 or more"}
		}
	}
	if on, err := s.indexing(ctx); err != nil {
		return nil, err
	} else if on {
		if res, err := s.rpc.Tx(ctx, hash, false); err == nil && (h == 0 || res.Height == h) {
			row, err := s.searchRow(ctx, hit{height: res.Height, index: int(res.Index), tx: res}, time.Now())
			if err != nil {
				return nil, err
			}
			return txPageOf(row)
		}
	}
	if h == 0 {
		if h, err = s.txHeight(ctx, upper); err != nil {
			return nil, err
		}
	}
	latest, err := s.latestHeight(ctx)
	if err != nil {
		return nil, err
	}
	if h > latest {
		return nil, errNotFound{fmt.Sprintf("block %d (the latest is %d)", h, latest)}
	}
	b, err := s.blockTxsAt(ctx, h)
	if err != nil {
		return nil, err
	}
	for i, tx := range b.Txs {
		if bytes.Equal(tx.Hash(), hash) {
			rows, err := s.txRows(ctx, b, i, i+1, time.Now())
			if err != nil {
				return nil, err
			}
			return txPageOf(rows[0])
		}
	}
	return nil, errNotFound{fmt.Sprintf("transaction %s in block %d", upper, h)}
}

// txHeight is the block of the transaction of hash (upper-case hex), through the
// node's transaction index.
func (s *Server) txHeight(ctx context.Context, hash string) (int64, error) {
	h, found, err := s.findTx(ctx, hash)
	switch {
	case errors.Is(err, errNoIndex):
		return 0, errNotFound{"transaction " + hash + ": this node keeps no transaction index, so a transaction is found from its block"}
	case err != nil:
		return 0, err
	case !found:
		return 0, errNotFound{"transaction " + hash}
	}
	return h, nil
}

// txPageOf is the page of row: its transition's fields and its fee by parts.
func txPageOf(row txRow) (txPage, error) {
	p := txPage{txRow: row}
	if row.decodeErr != nil {
		p.DecodeError = row.decodeErr.Error()
	} else {
		var err error
		if p.Fields, err = describe(row.signed.Transition); err != nil {
			return p, err
		}
	}
	p.Parts = feeParts(row.events)
	return p, nil
}

// feeParts are the fee's parts and the refunds that the transition event of events
// reports (docs/TX.md, "Events"); none without one.
func feeParts(events []abcitypes.Event) []feePart {
	names := []struct{ key, name string }{
		{protocol.AttrFeeProcessing, "processing"},
		{protocol.AttrFeePerpetualStorage, "perpetual storage"},
		{protocol.AttrFeeLifetimeStorage, "lifetime storage"},
		{protocol.AttrFeeDeletionPrepay, "deletion prepay"},
		{protocol.AttrRefunds, "refunds to the owners of removed storage"},
	}
	for _, e := range events {
		if e.Type != protocol.EventTransition {
			continue
		}
		values := map[string]uint64{}
		for _, a := range e.Attributes {
			if n, err := strconv.ParseUint(a.Value, 10, 64); err == nil {
				values[a.Key] = n
			}
		}
		var out []feePart
		for _, n := range names {
			if credits, ok := values[n.key]; ok {
				out = append(out, feePart{n.name, credits})
			}
		}
		return out
	}
	return nil
}
