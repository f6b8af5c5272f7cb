//go:build !js

package proofs

import (
	"errors"
	"fmt"
	"slices"

	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
	"github.com/cosmos/iavl"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/query"
)

// proveWindow resolves a window query on saved version tree: it proves the last block
// record, resolves the window at its time (resolve refuses a window past its horizon)
// and returns the record's operation and value.
func proveWindow(tree *iavl.ImmutableTree, resolve func(uint64) error) (cmtcrypto.ProofOp, []byte, error) {
	op, v, err := proveKey(tree, drive.LastBlockKey())
	if err != nil {
		return cmtcrypto.ProofOp{}, nil, err
	}
	b, ok := drive.DecodeLastBlock(v)
	if !ok {
		return cmtcrypto.ProofOp{}, nil, drive.ErrCorrupt{Key: drive.LastBlockKey(), Reason: "no last block record"}
	}
	return op.ProofOp(), v, resolve(b.TimeMs)
}

func readDocState(tree *iavl.ImmutableTree, r documentsRequest) (docState, error) {
	var s docState
	vop, vv, err := proveKey(tree, drive.ProtocolVersionKey())
	if err != nil {
		return s, err
	}
	cop, cv, err := proveKey(tree, drive.ContractKey(r.contract))
	if err != nil {
		return s, err
	}
	if cv == nil {
		return s, ErrNotFound{What: "contract " + r.contract.String()}
	}
	if s.version, err = drive.DecodeProtocolVersion(vv); err != nil {
		return s, err
	}
	if s.contract, err = protocol.DecodeContract(cv, s.version); err != nil {
		return s, drive.ErrCorrupt{Key: drive.ContractKey(r.contract), Reason: err.Error()}
	}
	t, ok := s.contract.DocumentType(r.typeName)
	if !ok {
		return s, ErrNotFound{What: fmt.Sprintf("document type %q in contract %s", r.typeName, r.contract)}
	}
	s.typ = drive.DocumentType{Contract: r.contract, DocumentType: t}
	s.vValue, s.cValue = vv, cv
	s.ops = []cmtcrypto.ProofOp{vop.ProofOp(), cop.ProofOp()}
	return s, nil
}

// AnswerDocuments answers a PathDocuments request on saved version tree: the answer
// and its proof operations (ProofOpType for the version, the contract, the start
// document and each document row, RangeOpType for each range, in DocumentsAnswer's
// order: version, contract, start, ranges, documents).
func AnswerDocuments(tree *iavl.ImmutableTree, data []byte) (DocumentsAnswer, *cmtcrypto.ProofOps, error) {
	r, err := parseDocumentsData(PathDocuments, data)
	if err != nil {
		return DocumentsAnswer{}, nil, err
	}
	s, err := readDocState(tree, r)
	if err != nil {
		return DocumentsAnswer{}, nil, err
	}
	q, err := query.Parse(s.typ.DocumentType, r.query, s.version)
	if err != nil {
		return DocumentsAnswer{}, nil, err
	}
	ops := s.ops
	var lastBlock []byte
	if q.Window != nil {
		op, v, err := proveWindow(tree, q.ResolveWindow)
		if err != nil {
			return DocumentsAnswer{}, nil, err
		}
		ops, lastBlock = append(slices.Clone(ops), op), v
	}
	res, err := drive.QueryDocuments(drive.ReadTree(tree), s.typ, q)
	var sn drive.ErrStartNotFound
	if errors.As(err, &sn) {
		return DocumentsAnswer{}, nil, ErrNotFound{What: "start document " + sn.ID.String()}
	}
	if err != nil {
		return DocumentsAnswer{}, nil, err
	}
	a := DocumentsAnswer{ProtocolVersion: s.vValue, Contract: s.cValue, Ranges: []RangeAnswer{}, Documents: [][]byte{}, LastBlock: lastBlock}
	if res.Start != nil {
		op, v, err := proveKey(tree, drive.DocumentKey(r.contract, r.typeName, res.Start.ID))
		if err != nil {
			return DocumentsAnswer{}, nil, err
		}
		a.Start = v
		ops = append(ops, op.ProofOp())
	}
	for _, sr := range res.Ranges {
		start, limit := sr.Start, 0
		switch {
		case sr.Cut && !q.Reverse:
			limit = len(sr.Keys)
		case sr.Cut:
			start = sr.Keys[len(sr.Keys)-1]
		}
		entries, more, rops, err := ProveRange(tree, start, sr.End, limit)
		if err != nil {
			return DocumentsAnswer{}, nil, err
		}
		a.Ranges = append(a.Ranges, RangeAnswer{Entries: EncodeEntries(entries), More: more})
		ops = append(ops, rops.Ops...)
	}
	for _, d := range res.Documents {
		op, v, err := proveKey(tree, drive.DocumentKey(r.contract, r.typeName, d.ID))
		if err != nil {
			return DocumentsAnswer{}, nil, err
		}
		a.Documents = append(a.Documents, v)
		ops = append(ops, op.ProofOp())
	}
	return a, &cmtcrypto.ProofOps{Ops: ops}, nil
}

// AnswerCount answers a PathCount (sum false) or PathSum request on saved version
// tree: the count record and the proofs of the version, the contract and the record's
// presence or absence, in that order.
func AnswerCount(tree *iavl.ImmutableTree, path string, data []byte) (CountAnswer, *cmtcrypto.ProofOps, error) {
	r, err := parseDocumentsData(path, data)
	if err != nil {
		return CountAnswer{}, nil, err
	}
	s, err := readDocState(tree, r)
	if err != nil {
		return CountAnswer{}, nil, err
	}
	q, err := query.ParseCount(s.typ.DocumentType, r.query, s.version, r.index, path == PathSum)
	if err != nil {
		return CountAnswer{}, nil, err
	}
	a := CountAnswer{ProtocolVersion: s.vValue, Contract: s.cValue}
	ops := s.ops
	if q.Window != nil {
		op, v, err := proveWindow(tree, q.ResolveWindow)
		if err != nil {
			return CountAnswer{}, nil, err
		}
		ops, a.LastBlock = append(slices.Clone(ops), op), v
	}
	op, v, err := proveKey(tree, drive.CountKey(r.contract, q))
	if err != nil {
		return CountAnswer{}, nil, err
	}
	a.Record = v
	return a, &cmtcrypto.ProofOps{Ops: append(ops, op.ProofOp())}, nil
}
