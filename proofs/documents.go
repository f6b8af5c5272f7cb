package proofs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/query"
)

// Document queries (PathDocuments, PathCount, PathSum) are answered by several proofs
// against one root, since a complete answer is more than one key or one range: the
// protocol version in force and the contract (the client decodes the contract, and
// the query, under them), the query's start document (startAt, startAfter: its place
// in the index is where the answer starts), the index entries of every range the
// answer read, each proven complete, and the row of every document the entries name.
// The client derives the ranges itself from the query, the contract and the start
// document (drive.QueryRanges, the function the node reads them with), so a node can
// neither choose other ranges nor leave an entry out; and it re-derives each
// document's index entry from the document's row, so a node cannot put another
// document behind an entry.

// DocumentsAnswer is the value of a PathDocuments answer, in JSON (byte strings in
// base64).
type DocumentsAnswer struct {
	// ProtocolVersion is the value at drive.ProtocolVersionKey: u32 big-endian.
	ProtocolVersion []byte `json:"protocol_version"`
	// Contract is the value at drive.ContractKey of the query's contract.
	Contract []byte `json:"contract"`
	// Start is the row (drive.DocumentKey) of the query's start document; empty when
	// the query has none.
	Start []byte `json:"start,omitempty"`
	// Ranges are the index entry ranges the answer read, in the order of
	// drive.QueryRanges; a range after the one where the limit was reached is not read.
	Ranges []RangeAnswer `json:"ranges"`
	// Documents are the rows of the documents the entries name, in the answer's order.
	Documents [][]byte `json:"documents"`
	// LastBlock is the value at drive.LastBlockKey (height u64 ++ block time ms u64)
	// for a window query: the block time its window is resolved and judged at; empty
	// otherwise.
	LastBlock []byte `json:"last_block,omitempty"`
}

// RangeAnswer is one range read by a document query: its entries (EncodeEntries, in
// key order whatever the answer's order) and whether the range holds entries after
// them (a forward range cut by the limit).
type RangeAnswer struct {
	Entries []byte `json:"entries"`
	More    bool   `json:"more"`
}

// CountAnswer is the value of a PathCount or PathSum answer, in JSON.
type CountAnswer struct {
	ProtocolVersion []byte `json:"protocol_version"`
	Contract        []byte `json:"contract"`
	// Record is the value of the count record (drive.EncodeIndexCount), empty when
	// it is absent: no document has the values.
	Record []byte `json:"record,omitempty"`
	// LastBlock is as in DocumentsAnswer: present for a count of a window.
	LastBlock []byte `json:"last_block,omitempty"`
}

// ErrNotFound: a document query names a contract, a type or a start document that
// does not exist at the answer's height.
type ErrNotFound struct{ What string }

func (e ErrNotFound) Error() string { return "query: no such " + e.What }

// QueryCodeOf is the query code of an error answering a document path.
func QueryCodeOf(err error) uint32 {
	var iq query.ErrInvalid
	var bq ErrBadQuery
	var nf ErrNotFound
	switch {
	case errors.As(err, &iq):
		return queryCodes[iq.Kind]
	case errors.As(err, &bq):
		return QueryCodeBadRequest
	case errors.As(err, &nf):
		return QueryCodeNotFound
	}
	return QueryCodeInternal
}

var queryCodes = map[query.ErrorKind]uint32{
	query.NotJSON:             QueryCodeNotJSON,
	query.UnknownField:        QueryCodeUnknownField,
	query.FieldNotIndexed:     QueryCodeFieldNotIndexed,
	query.UnsupportedOperator: QueryCodeUnsupportedOperator,
	query.WrongValueType:      QueryCodeWrongValueType,
	query.LimitTooLarge:       QueryCodeLimitTooLarge,
	query.BothStarts:          QueryCodeBothStarts,
	query.WindowExpired:       QueryCodeWindowExpired,
}

// docState is what every document answer starts from: the version, the contract and
// the type, each with its proof.
type docState struct {
	version  protocol.Version
	contract protocol.Contract
	typ      drive.DocumentType
	vValue   []byte
	cValue   []byte
	ops      []cmtcrypto.ProofOp
}

// ErrAnswerMismatch: a document answer whose proofs hold but which is not the answer
// to its query: Reason says how (an entry or a range left out or added, a document
// that is not the one its entry names or does not match the query, ...). Index is the
// entry, range or document it is about, or -1.
type ErrAnswerMismatch struct {
	Index  int
	Reason string
}

func (e ErrAnswerMismatch) Error() string {
	return fmt.Sprintf("proofs: document answer item %d: %s", e.Index, e.Reason)
}

// DocumentsResult is a checked document answer.
type DocumentsResult struct {
	Version  protocol.Version
	Contract protocol.Contract
	Query    query.Query
	// Documents are the answer, in the query's order.
	Documents []drive.StoredDocument
}

// CountResult is a checked count or sum answer.
type CountResult struct {
	Version  protocol.Version
	Contract protocol.Contract
	Query    query.Count
	drive.IndexCount
}

// opsReader hands out a document answer's proof operations in order.
type opsReader struct {
	ops []cmtcrypto.ProofOp
	i   int
}

func (o *opsReader) next() (*cmtcrypto.ProofOps, error) {
	if o.i >= len(o.ops) {
		return nil, ErrMalformedProof{Index: o.i, Reason: "the answer has fewer proof operations than its items"}
	}
	o.i++
	return &cmtcrypto.ProofOps{Ops: o.ops[o.i-1 : o.i]}, nil
}

func (o *opsReader) present(root, key, value []byte) error {
	ops, err := o.next()
	if err != nil {
		return err
	}
	return VerifyPresence(root, key, value, ops)
}

// checkDocState verifies the version and the contract of a document answer and
// returns the type the request names.
func checkDocState(root []byte, r documentsRequest, version, contract []byte, o *opsReader) (docState, error) {
	var s docState
	if err := o.present(root, drive.ProtocolVersionKey(), version); err != nil {
		return s, err
	}
	var err error
	if s.version, err = drive.DecodeProtocolVersion(version); err != nil {
		return s, ErrAnswerMismatch{Index: -1, Reason: "the protocol version is not 4 bytes"}
	}
	if err := o.present(root, drive.ContractKey(r.contract), contract); err != nil {
		return s, err
	}
	c, err := protocol.DecodeContract(contract, s.version)
	if err != nil {
		return s, ErrAnswerMismatch{Index: -1, Reason: "the contract does not decode: " + err.Error()}
	}
	if c.ID != r.contract {
		return s, ErrAnswerMismatch{Index: -1, Reason: "the stored contract names another id"}
	}
	t, ok := c.DocumentType(r.typeName)
	if !ok {
		return s, ErrAnswerMismatch{Index: -1, Reason: fmt.Sprintf("the contract has no type %q", r.typeName)}
	}
	s.contract, s.typ = c, drive.DocumentType{Contract: r.contract, DocumentType: t}
	return s, nil
}

// VerifyDocuments checks answer a to the PathDocuments request data against root:
// every proof, that the ranges are exactly the ones the query, the contract and the
// start document give (drive.QueryRanges) read in order up to the limit, each complete
// from its start to its end or, where the limit was reached, to its last returned
// entry, and that each document's row is proven and is the document its entry names
// (its index values re-derived from the row) and matches the where clauses.
func VerifyDocuments(root, data []byte, a DocumentsAnswer, proof *cmtcrypto.ProofOps) (DocumentsResult, error) {
	if proof == nil || len(proof.Ops) == 0 {
		return DocumentsResult{}, ErrNotProven
	}
	r, err := parseDocumentsData(PathDocuments, data)
	if err != nil {
		return DocumentsResult{}, err
	}
	o := &opsReader{ops: proof.Ops}
	s, err := checkDocState(root, r, a.ProtocolVersion, a.Contract, o)
	if err != nil {
		return DocumentsResult{}, err
	}
	q, err := query.Parse(s.typ.DocumentType, r.query, s.version)
	if err != nil {
		return DocumentsResult{}, err
	}
	if err := verifyWindow(root, q.Window != nil, q.ResolveWindow, a.LastBlock, o); err != nil {
		return DocumentsResult{}, err
	}
	var start *protocol.Document
	switch {
	case q.Start == nil && len(a.Start) != 0:
		return DocumentsResult{}, ErrAnswerMismatch{Index: -1, Reason: "a start document for a query without one"}
	case q.Start != nil:
		key := drive.DocumentKey(r.contract, r.typeName, *q.Start)
		if len(a.Start) == 0 {
			return DocumentsResult{}, ErrAnswerMismatch{Index: -1, Reason: "no start document"}
		}
		if err := o.present(root, key, a.Start); err != nil {
			return DocumentsResult{}, err
		}
		d, err := drive.DecodeStoredDocument(key, a.Start, s.typ.DocumentType)
		if err != nil || d.ID != *q.Start {
			return DocumentsResult{}, ErrAnswerMismatch{Index: -1, Reason: "the start document's row is not that document"}
		}
		start = &d.Document
	}

	var keys [][]byte // the answer's entries, in its order
	remaining, read := q.Limit, 0
	for i, kr := range drive.QueryRanges(r.contract, q, start) {
		if remaining == 0 {
			break
		}
		if i >= len(a.Ranges) {
			return DocumentsResult{}, ErrAnswerMismatch{Index: i, Reason: "a range the answer must read is missing"}
		}
		ra := a.Ranges[i]
		read++
		entries, err := DecodeEntries(ra.Entries)
		if err != nil {
			return DocumentsResult{}, err
		}
		if len(entries) > remaining {
			return DocumentsResult{}, ErrAnswerMismatch{Index: i, Reason: fmt.Sprintf("%d entries where %d remain of the limit", len(entries), remaining)}
		}
		ops, err := o.next()
		if err != nil {
			return DocumentsResult{}, err
		}
		from := kr.Start
		if q.Reverse {
			if ra.More {
				return DocumentsResult{}, ErrAnswerMismatch{Index: i, Reason: "a backward range is never cut at its end"}
			}
			if len(entries) == remaining {
				// cut by the limit: complete from the last returned entry on
				from = entries[0].Key
				if bytes.Compare(from, kr.Start) < 0 {
					return DocumentsResult{}, ErrAnswerMismatch{Index: i, Reason: "an entry before the range"}
				}
			}
		}
		if err := VerifyRange(root, from, kr.End, entries, ra.More, ops); err != nil {
			return DocumentsResult{}, err
		}
		if ra.More && len(entries) < remaining {
			return DocumentsResult{}, ErrAnswerMismatch{Index: i, Reason: "the range holds further entries the limit leaves room for"}
		}
		if q.Reverse {
			slices.Reverse(entries)
		}
		for _, e := range entries {
			keys = append(keys, e.Key)
		}
		remaining -= len(entries)
	}
	if read != len(a.Ranges) {
		return DocumentsResult{}, ErrAnswerMismatch{Index: read, Reason: fmt.Sprintf("the answer reads %d ranges, the query %d", len(a.Ranges), read)}
	}
	if len(a.Documents) != len(keys) {
		return DocumentsResult{}, ErrAnswerMismatch{Index: len(keys), Reason: fmt.Sprintf("%d documents for %d entries", len(a.Documents), len(keys))}
	}
	res := DocumentsResult{Version: s.version, Contract: s.contract, Query: q}
	for j, k := range keys {
		id := drive.EntryDocumentID(k)
		key := drive.DocumentKey(r.contract, r.typeName, id)
		if err := o.present(root, key, a.Documents[j]); err != nil {
			return DocumentsResult{}, err
		}
		d, err := drive.DecodeStoredDocument(key, a.Documents[j], s.typ.DocumentType)
		if err != nil {
			return DocumentsResult{}, ErrAnswerMismatch{Index: j, Reason: "a document row does not decode: " + err.Error()}
		}
		if d.ID != id || !bytes.Equal(drive.EntryKey(r.contract, q, d.Document), k) {
			return DocumentsResult{}, ErrAnswerMismatch{Index: j, Reason: "the document is not the one its index entry names"}
		}
		if !q.Matches(d.Document) {
			return DocumentsResult{}, ErrAnswerMismatch{Index: j, Reason: "the document does not match the where clauses"}
		}
		res.Documents = append(res.Documents, d)
	}
	if o.i != len(o.ops) {
		return DocumentsResult{}, ErrMalformedProof{Index: o.i, Reason: fmt.Sprintf("%d proof operations beyond the answer's items", len(o.ops)-o.i)}
	}
	return res, nil
}

// VerifyCount checks answer a to the PathCount or PathSum request data against root:
// the version, the contract, and the presence (with the record) or absence (count 0,
// sum 0) of the count record the query names.
func VerifyCount(root []byte, path string, data []byte, a CountAnswer, proof *cmtcrypto.ProofOps) (CountResult, error) {
	if proof == nil || len(proof.Ops) == 0 {
		return CountResult{}, ErrNotProven
	}
	r, err := parseDocumentsData(path, data)
	if err != nil {
		return CountResult{}, err
	}
	o := &opsReader{ops: proof.Ops}
	s, err := checkDocState(root, r, a.ProtocolVersion, a.Contract, o)
	if err != nil {
		return CountResult{}, err
	}
	q, err := query.ParseCount(s.typ.DocumentType, r.query, s.version, r.index, path == PathSum)
	if err != nil {
		return CountResult{}, err
	}
	if err := verifyWindow(root, q.Window != nil, q.ResolveWindow, a.LastBlock, o); err != nil {
		return CountResult{}, err
	}
	key := drive.CountKey(r.contract, q)
	ops, err := o.next()
	if err != nil {
		return CountResult{}, err
	}
	res := CountResult{Version: s.version, Contract: s.contract, Query: q}
	if len(a.Record) == 0 {
		err = VerifyAbsence(root, key, ops)
	} else {
		err = VerifyPresence(root, key, a.Record, ops)
		var ok bool
		if res.IndexCount, ok = drive.DecodeIndexCount(a.Record); err == nil && !ok {
			err = ErrAnswerMismatch{Index: -1, Reason: "not a count record"}
		}
	}
	if err != nil {
		return CountResult{}, err
	}
	if o.i != len(o.ops) {
		return CountResult{}, ErrMalformedProof{Index: o.i, Reason: "proof operations beyond the answer's items"}
	}
	return res, nil
}

// verifyWindow checks the window part of an answer: a query with a window has the
// proven last block record, whose time resolves the window (resolve), refusing a
// window past its horizon as the node does; one without has none.
func verifyWindow(root []byte, windowed bool, resolve func(uint64) error, lastBlock []byte, o *opsReader) error {
	if !windowed {
		if len(lastBlock) != 0 {
			return ErrAnswerMismatch{Index: -1, Reason: "a last block record for a query without a window"}
		}
		return nil
	}
	// The block time the client judges the horizon at (Time-Range Index TTL: "on the verifier from
	// the quorum-signed response time_ms").
	if err := o.present(root, drive.LastBlockKey(), lastBlock); err != nil {
		return err
	}
	b, ok := drive.DecodeLastBlock(lastBlock)
	if !ok {
		return ErrAnswerMismatch{Index: -1, Reason: "the last block record does not decode"}
	}
	return resolve(b.TimeMs)
}

// DecodeDocumentsAnswer reads the value of a PathDocuments answer.
func DecodeDocumentsAnswer(value []byte) (DocumentsAnswer, error) {
	var a DocumentsAnswer
	return a, strictJSON(value, &a)
}

// DecodeCountAnswer reads the value of a PathCount or PathSum answer.
func DecodeCountAnswer(value []byte) (CountAnswer, error) {
	var a CountAnswer
	return a, strictJSON(value, &a)
}

func strictJSON(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return ErrAnswerMismatch{Index: -1, Reason: "the answer is not JSON of its form: " + err.Error()}
	}
	if d.More() {
		return ErrAnswerMismatch{Index: -1, Reason: "trailing data after the answer"}
	}
	return nil
}

// Checked names the signed header a document answer was checked against: header
// Height+1, with its app hash and time.
type Checked struct {
	Height  int64
	AppHash []byte
	Time    time.Time
}

// VerifyDocumentsQuery checks a PathDocuments abci_query answer (prove=true) to the
// request data end to end: VerifyDocuments against the signed app hash of the state
// resp.Height.
func (v *Verifier) VerifyDocumentsQuery(ctx context.Context, resp abci.ResponseQuery, data []byte) (DocumentsResult, Checked, error) {
	if resp.Code != 0 {
		return DocumentsResult{}, Checked{}, ErrQueryFailed{Code: resp.Code, Codespace: resp.Codespace, Log: resp.Log}
	}
	a, err := DecodeDocumentsAnswer(resp.Value)
	if err != nil {
		return DocumentsResult{}, Checked{}, err
	}
	header, err := v.headerAfter(ctx, resp.Height)
	if err != nil {
		return DocumentsResult{}, Checked{}, err
	}
	res, err := VerifyDocuments(header.AppHash, data, a, resp.ProofOps)
	if err != nil {
		return DocumentsResult{}, Checked{}, err
	}
	return res, Checked{Height: resp.Height, AppHash: header.AppHash, Time: header.Time}, nil
}

// VerifyCountQuery checks a PathCount or PathSum abci_query answer (prove=true) to the
// request data end to end: VerifyCount against the signed app hash of the state
// resp.Height.
func (v *Verifier) VerifyCountQuery(ctx context.Context, resp abci.ResponseQuery, path string, data []byte) (CountResult, Checked, error) {
	if resp.Code != 0 {
		return CountResult{}, Checked{}, ErrQueryFailed{Code: resp.Code, Codespace: resp.Codespace, Log: resp.Log}
	}
	a, err := DecodeCountAnswer(resp.Value)
	if err != nil {
		return CountResult{}, Checked{}, err
	}
	header, err := v.headerAfter(ctx, resp.Height)
	if err != nil {
		return CountResult{}, Checked{}, err
	}
	res, err := VerifyCount(header.AppHash, path, data, a, resp.ProofOps)
	if err != nil {
		return CountResult{}, Checked{}, err
	}
	return res, Checked{Height: resp.Height, AppHash: header.AppHash, Time: header.Time}, nil
}
