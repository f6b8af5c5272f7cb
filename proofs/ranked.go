//go:build !js

package proofs

import (
	"bytes"
	"context"
	"fmt"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
	"github.com/cosmos/iavl"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/query"
)

// RankedAnswer is the value of a PathRanked answer, in JSON: the version, the contract
// and the last block record (whose time resolves the window), each proven present,
// then the page: the ranks of drive.RankedRange up to the limit, one range proven
// complete.
type RankedAnswer struct {
	ProtocolVersion []byte      `json:"protocol_version"`
	Contract        []byte      `json:"contract"`
	LastBlock       []byte      `json:"last_block"`
	Ranks           RangeAnswer `json:"ranks"`
}

// RankedGroup is one group of a ranked page: how many documents of the window have
// the group's values, and those values as index parts (drive.AppendIndexPart).
type RankedGroup struct {
	Count uint64
	Group []byte
	// Cursor is what a query's "after" takes (hex) to continue after this group.
	Cursor []byte
}

// RankedResult is a checked ranked page.
type RankedResult struct {
	Version  protocol.Version
	Contract protocol.Contract
	Query    query.Ranked
	Groups   []RankedGroup
	// More: the window ranks further groups after the page.
	More bool
}

// AnswerRanked answers a PathRanked request on saved version tree.
func AnswerRanked(tree *iavl.ImmutableTree, data []byte) (RankedAnswer, *cmtcrypto.ProofOps, error) {
	r, err := parseDocumentsData(PathRanked, data)
	if err != nil {
		return RankedAnswer{}, nil, err
	}
	s, err := readDocState(tree, r)
	if err != nil {
		return RankedAnswer{}, nil, err
	}
	q, err := query.ParseRanked(s.typ.DocumentType, r.query, s.version)
	if err != nil {
		return RankedAnswer{}, nil, err
	}
	op, last, err := proveWindow(tree, q.ResolveWindow)
	if err != nil {
		return RankedAnswer{}, nil, err
	}
	kr := drive.RankedRange(r.contract, q)
	entries, more, rops, err := ProveRange(tree, kr.Start, kr.End, q.Limit)
	if err != nil {
		return RankedAnswer{}, nil, err
	}
	a := RankedAnswer{ProtocolVersion: s.vValue, Contract: s.cValue, LastBlock: last, Ranks: RangeAnswer{Entries: EncodeEntries(entries), More: more}}
	ops := append(append(append([]cmtcrypto.ProofOp{}, s.ops...), op), rops.Ops...)
	return a, &cmtcrypto.ProofOps{Ops: ops}, nil
}

// VerifyRanked checks answer a to the PathRanked request data against root: the
// version, the contract, the last block record, the window resolved (and judged) at
// its time as the node does, and the page: exactly the ranks of drive.RankedRange, in
// order, up to the limit, with More proven.
func VerifyRanked(root, data []byte, a RankedAnswer, proof *cmtcrypto.ProofOps) (RankedResult, error) {
	if proof == nil || len(proof.Ops) == 0 {
		return RankedResult{}, ErrNotProven
	}
	r, err := parseDocumentsData(PathRanked, data)
	if err != nil {
		return RankedResult{}, err
	}
	o := &opsReader{ops: proof.Ops}
	s, err := checkDocState(root, r, a.ProtocolVersion, a.Contract, o)
	if err != nil {
		return RankedResult{}, err
	}
	q, err := query.ParseRanked(s.typ.DocumentType, r.query, s.version)
	if err != nil {
		return RankedResult{}, err
	}
	if err := verifyWindow(root, true, q.ResolveWindow, a.LastBlock, o); err != nil {
		return RankedResult{}, err
	}
	entries, err := DecodeEntries(a.Ranks.Entries)
	if err != nil {
		return RankedResult{}, ErrAnswerMismatch{Index: 0, Reason: err.Error()}
	}
	if len(entries) > q.Limit || (a.Ranks.More && len(entries) != q.Limit) {
		return RankedResult{}, ErrAnswerMismatch{Index: 0, Reason: fmt.Sprintf("%d ranks for a limit of %d (more: %v)", len(entries), q.Limit, a.Ranks.More)}
	}
	ops, err := o.next()
	if err != nil {
		return RankedResult{}, err
	}
	kr := drive.RankedRange(r.contract, q)
	if err := VerifyRange(root, kr.Start, kr.End, entries, a.Ranks.More, ops); err != nil {
		return RankedResult{}, err
	}
	if o.i != len(o.ops) {
		return RankedResult{}, ErrMalformedProof{Index: o.i, Reason: "proof operations beyond the answer's items"}
	}
	groups, err := RankedGroups(r.contract, q, entries)
	if err != nil {
		return RankedResult{}, err
	}
	return RankedResult{Version: s.version, Contract: s.contract, Query: q, Groups: groups, More: a.Ranks.More}, nil
}

// DecodeRankedAnswer reads the value of a PathRanked answer.
func DecodeRankedAnswer(value []byte) (RankedAnswer, error) {
	var a RankedAnswer
	return a, strictJSON(value, &a)
}

// VerifyRankedQuery checks a PathRanked response for request data against the header
// after its height, as VerifyDocumentsQuery does for a document query.
func (v *Verifier) VerifyRankedQuery(ctx context.Context, resp abci.ResponseQuery, data []byte) (RankedResult, Checked, error) {
	if resp.Code != 0 {
		return RankedResult{}, Checked{}, ErrQueryFailed{Code: resp.Code, Codespace: resp.Codespace, Log: resp.Log}
	}
	a, err := DecodeRankedAnswer(resp.Value)
	if err != nil {
		return RankedResult{}, Checked{}, err
	}
	header, err := v.headerAfter(ctx, resp.Height)
	if err != nil {
		return RankedResult{}, Checked{}, err
	}
	res, err := VerifyRanked(header.AppHash, data, a, resp.ProofOps)
	if err != nil {
		return RankedResult{}, Checked{}, err
	}
	return res, Checked{Height: resp.Height, AppHash: header.AppHash, Time: header.Time}, nil
}

// RankedGroups reads the groups of a page's rank keys (entries of contract's window of
// q, its window resolved), refusing a key that is no rank of that window.
func RankedGroups(contract protocol.ContractID, q query.Ranked, entries []KV) ([]RankedGroup, error) {
	prefix := drive.WindowRanksPrefix(contract, q.Type.Name, q.Index.TimeRange.Grid(), q.Window.StartMs, q.Index.Name)
	var out []RankedGroup
	for i, e := range entries {
		p, ok := drive.ParseDocumentKey(e.Key)
		if !ok || p.Window == nil || p.Window.Part != 'r' || !bytes.HasPrefix(e.Key, prefix) {
			return nil, ErrAnswerMismatch{Index: i, Reason: "a key of the ranks that is no rank of the window"}
		}
		out = append(out, RankedGroup{Count: p.Window.Count, Group: p.Window.Values, Cursor: e.Key[len(prefix):]})
	}
	return out, nil
}
