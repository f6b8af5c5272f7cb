package client

import (
	"context"
	"errors"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/query"
)

// DocumentState is one document as read at Height.
type DocumentState struct {
	Contract protocol.ContractID
	Type     protocol.DocumentType
	protocol.Document
	// Present: the document exists; when false only ID is set.
	Present bool
	// ExpiresAtMs is when a document of a type with a ttl expires (0: no ttl), and
	// Expired whether BlockTimeMs, the time of the block whose state was read (proven
	// with it), is at or past it: an expired document stays until the cleanup reaches
	// it.
	ExpiresAtMs uint64
	Expired     bool
	BlockTimeMs uint64
	Height      int64
	Verified    bool
}

// DocumentsAnswer is the answer to a document query at Height: the documents in the
// query's order. Verified: proven complete against the signed header after Height.
type DocumentsAnswer struct {
	Type      protocol.DocumentType
	Query     query.Query
	Documents []protocol.Document
	Height    int64
	Verified  bool
}

// CountAnswer is the answer to a count or sum query at Height: how many documents
// have the where clauses' values in Index, and the sum of its summable property.
type CountAnswer struct {
	Index string
	// Window is the window counted, resolved, for a count of a time-range index.
	Window   *query.Window
	Count    uint64
	Sum      drive.Int128
	Height   int64
	Verified bool
}

// Document reads document id of type typeName in contract at height (0: the latest
// saved state), then the contract at the height the first answered, to decode it.
// With prove, both answers (the document's presence or absence) are checked against
// the signed header after that height.
func (c *Client) Document(ctx context.Context, contract protocol.ContractID, typeName string, id protocol.DocumentID, height int64, prove bool) (DocumentState, error) {
	return c.DocumentRevision(ctx, contract, typeName, id, 0, height, prove)
}

// DocumentRevision is Document for one revision (0: the document as it is) of a
// document of a type that keeps history (documentsKeepHistory): its history row,
// present while the document is.
func (c *Client) DocumentRevision(ctx context.Context, contract protocol.ContractID, typeName string, id protocol.DocumentID, revision uint64, height int64, prove bool) (DocumentState, error) {
	data, key := proofs.DocumentData(contract, typeName, id), drive.DocumentKey(contract, typeName, id)
	if revision != 0 {
		data, key = proofs.DocumentRevisionData(contract, typeName, id, revision), drive.DocumentHistoryKey(contract, typeName, id, revision)
	}
	value, h, err := c.single(ctx, proofs.PathDocument, data, height, prove)
	if err != nil {
		return DocumentState{}, err
	}
	out := DocumentState{Contract: contract, Document: protocol.Document{ID: id}, Height: h, Verified: prove}
	cs, err := c.Contract(ctx, contract, h, prove)
	if err != nil {
		return DocumentState{}, err
	}
	t, ok := cs.DocumentType(typeName)
	if !cs.Present || !ok {
		if value != nil {
			return DocumentState{}, ErrInconsistentAnswer{Path: proofs.PathDocument, Reason: "a document of a type the contract does not have"}
		}
		return out, nil
	}
	out.Type = t
	if value == nil {
		return out, nil
	}
	d, err := drive.DecodeStoredDocument(key, value, t)
	if err != nil {
		return DocumentState{}, ErrCorruptValue{Key: key, Err: err}
	}
	if d.ID != id || (revision != 0 && d.Revision != revision) {
		return DocumentState{}, ErrInconsistentAnswer{Path: proofs.PathDocument, Reason: "the stored document names another id or revision"}
	}
	out.Document, out.Present = d.Document, true
	if at, ok := t.ExpiresAtMs(d.Document); ok {
		if out.BlockTimeMs, err = c.blockTime(ctx, h, prove); err != nil {
			return DocumentState{}, err
		}
		out.ExpiresAtMs, out.Expired = at, out.BlockTimeMs >= at
	}
	return out, nil
}

// SplitExpired splits the answer's documents, in order, into those that have not
// expired at blockTimeMs (a type without a ttl never does) and those at or past their
// expiry that the cleanup has not deleted yet: what a reader that hides expired
// documents keeps and leaves out.
func (a DocumentsAnswer) SplitExpired(blockTimeMs uint64) (live, expired []protocol.Document) {
	live = make([]protocol.Document, 0, len(a.Documents))
	for _, d := range a.Documents {
		if at, ok := a.Type.ExpiresAtMs(d); ok && blockTimeMs >= at {
			expired = append(expired, d)
			continue
		}
		live = append(live, d)
	}
	return live, expired
}

// BlockTime reads the time of the block whose state is height's, proven with prove.
func (c *Client) BlockTime(ctx context.Context, height int64, prove bool) (uint64, error) {
	return c.blockTime(ctx, height, prove)
}

// blockTime reads the time of the block whose state is height's (the last block
// record, 104/l), proven with prove.
func (c *Client) blockTime(ctx context.Context, height int64, prove bool) (uint64, error) {
	key := drive.LastBlockKey()
	v, _, err := c.single(ctx, proofs.PathKey, key, height, prove)
	if err != nil {
		return 0, err
	}
	b, ok, err := drive.GetLastBlock(proofs.SingleKV(key, v))
	if err != nil || !ok {
		return 0, ErrCorruptValue{Key: key, Err: errors.Join(err, errors.New("no last block record"))}
	}
	return b.TimeMs, nil
}

// Documents runs queryJSON (the platform's JSON: where, orderBy, limit, startAt or
// startAfter) on type typeName of contract at height (0: the latest saved state).
// With prove, the answer is checked complete against the signed header after its
// height: the index ranges the query reads re-derived here, every entry in them up to
// the limit accounted for, and each document's index entry re-derived from its row.
func (c *Client) Documents(ctx context.Context, contract protocol.ContractID, typeName string, queryJSON []byte, height int64, prove bool) (DocumentsAnswer, error) {
	data := proofs.DocumentsData(contract, typeName, queryJSON)
	resp, err := c.query(ctx, proofs.PathDocuments, data, height, prove)
	if err != nil {
		return DocumentsAnswer{}, err
	}
	if prove {
		v, err := c.Verifier(ctx)
		if err != nil {
			return DocumentsAnswer{}, err
		}
		r, checked, err := v.VerifyDocumentsQuery(ctx, resp, data)
		if err != nil {
			return DocumentsAnswer{}, err
		}
		if err := c.fresh(proofs.PathDocuments, height, checked.Height, checked.Time); err != nil {
			return DocumentsAnswer{}, err
		}
		out := DocumentsAnswer{Type: r.Query.Type, Query: r.Query, Height: resp.Height, Verified: true}
		for _, d := range r.Documents {
			out.Documents = append(out.Documents, d.Document)
		}
		return out, nil
	}
	a, err := proofs.DecodeDocumentsAnswer(resp.Value)
	if err != nil {
		return DocumentsAnswer{}, err
	}
	t, v, err := answerType(contract, typeName, a.ProtocolVersion, a.Contract)
	if err != nil {
		return DocumentsAnswer{}, err
	}
	q, err := query.Parse(t, queryJSON, v)
	if err != nil {
		return DocumentsAnswer{}, err
	}
	if err := resolveWindow(q.ResolveWindow, q.Window != nil, a.LastBlock); err != nil {
		return DocumentsAnswer{}, err
	}
	out := DocumentsAnswer{Type: t, Query: q, Height: resp.Height}
	for _, row := range a.Documents {
		d, err := drive.DecodeStoredDocument(nil, row, t)
		if err != nil {
			return DocumentsAnswer{}, ErrCorruptValue{Key: drive.DocumentsPrefix(contract, typeName), Err: err}
		}
		out.Documents = append(out.Documents, d.Document)
	}
	return out, nil
}

// Reasons of an ErrCorruptValue in a document answer.
var (
	errNotVersion     = errors.New("not a 4-byte protocol version")
	errNotCountRecord = errors.New("not a count record")
)

// answerType decodes the version and contract an unproven document answer carries
// and returns the type typeName.
func answerType(contract protocol.ContractID, typeName string, version, stored []byte) (protocol.DocumentType, protocol.Version, error) {
	v, err := drive.DecodeProtocolVersion(version)
	if err != nil {
		return protocol.DocumentType{}, 0, ErrCorruptValue{Key: drive.ProtocolVersionKey(), Err: errNotVersion}
	}
	ct, err := protocol.DecodeContract(stored, v)
	if err != nil {
		return protocol.DocumentType{}, 0, ErrCorruptValue{Key: drive.ContractKey(contract), Err: err}
	}
	t, ok := ct.DocumentType(typeName)
	if !ok || ct.ID != contract {
		return protocol.DocumentType{}, 0, ErrInconsistentAnswer{Path: proofs.PathDocuments, Reason: "the contract in the answer is not the one asked, or lacks the type"}
	}
	return t, v, nil
}

// Count counts the documents of type typeName in contract whose values equal the where
// clauses' (where: {"where": [[field, "==", value], ...]}, or nil for all), from the
// count record of index (""): the first countable or summable index whose leading
// properties they name). With prove, the record's presence or absence (0) is checked
// against the signed header after the answer's height.
func (c *Client) Count(ctx context.Context, contract protocol.ContractID, typeName, index string, where []byte, height int64, prove bool) (CountAnswer, error) {
	return c.count(ctx, proofs.PathCount, contract, typeName, index, where, height, prove)
}

// Sum is Count on a summable index, whose record also holds the sum of its summable
// property over the documents counted.
func (c *Client) Sum(ctx context.Context, contract protocol.ContractID, typeName, index string, where []byte, height int64, prove bool) (CountAnswer, error) {
	return c.count(ctx, proofs.PathSum, contract, typeName, index, where, height, prove)
}

func (c *Client) count(ctx context.Context, path string, contract protocol.ContractID, typeName, index string, where []byte, height int64, prove bool) (CountAnswer, error) {
	data := proofs.CountData(contract, typeName, index, where)
	resp, err := c.query(ctx, path, data, height, prove)
	if err != nil {
		return CountAnswer{}, err
	}
	if prove {
		v, err := c.Verifier(ctx)
		if err != nil {
			return CountAnswer{}, err
		}
		r, checked, err := v.VerifyCountQuery(ctx, resp, path, data)
		if err != nil {
			return CountAnswer{}, err
		}
		if err := c.fresh(path, height, checked.Height, checked.Time); err != nil {
			return CountAnswer{}, err
		}
		return CountAnswer{Index: r.Query.Index.Name, Window: r.Query.Window, Count: r.Count, Sum: r.Sum, Height: resp.Height, Verified: true}, nil
	}
	a, err := proofs.DecodeCountAnswer(resp.Value)
	if err != nil {
		return CountAnswer{}, err
	}
	t, v, err := answerType(contract, typeName, a.ProtocolVersion, a.Contract)
	if err != nil {
		return CountAnswer{}, err
	}
	q, err := query.ParseCount(t, where, v, index, path == proofs.PathSum)
	if err != nil {
		return CountAnswer{}, err
	}
	if err := resolveWindow(q.ResolveWindow, q.Window != nil, a.LastBlock); err != nil {
		return CountAnswer{}, err
	}
	out := CountAnswer{Index: q.Index.Name, Height: resp.Height, Window: q.Window}
	if len(a.Record) > 0 {
		rec, ok := drive.DecodeIndexCount(a.Record)
		if !ok {
			return CountAnswer{}, ErrCorruptValue{Key: drive.CountKey(contract, q), Err: errNotCountRecord}
		}
		out.Count, out.Sum = rec.Count, rec.Sum
	}
	return out, nil
}

// resolveWindow resolves a window query read without proofs at the answer's last
// block time, as the node did (the record travels with the answer).
func resolveWindow(resolve func(uint64) error, windowed bool, lastBlock []byte) error {
	if !windowed {
		return nil
	}
	b, ok := drive.DecodeLastBlock(lastBlock)
	if !ok {
		return ErrCorruptValue{Key: drive.LastBlockKey(), Err: errNotLastBlock}
	}
	return resolve(b.TimeMs)
}

var errNotLastBlock = errors.New("not a last block record")

// RankedAnswer is a page of a ranked time-range index's groups in one window at
// Height, most counted first.
type RankedAnswer struct {
	Type     protocol.DocumentType
	Query    query.Ranked
	Groups   []proofs.RankedGroup
	More     bool
	Height   int64
	Verified bool
}

// Ranked reads a page of a ranked time-range index's groups in one window (queryJSON:
// the ranked query's JSON, query.ParseRanked); with prove, checked complete against
// the header after the answer's height, and fresh.
func (c *Client) Ranked(ctx context.Context, contract protocol.ContractID, typeName string, queryJSON []byte, height int64, prove bool) (RankedAnswer, error) {
	data := proofs.DocumentsData(contract, typeName, queryJSON)
	resp, err := c.query(ctx, proofs.PathRanked, data, height, prove)
	if err != nil {
		return RankedAnswer{}, err
	}
	if prove {
		v, err := c.Verifier(ctx)
		if err != nil {
			return RankedAnswer{}, err
		}
		r, checked, err := v.VerifyRankedQuery(ctx, resp, data)
		if err != nil {
			return RankedAnswer{}, err
		}
		if err := c.fresh(proofs.PathRanked, height, checked.Height, checked.Time); err != nil {
			return RankedAnswer{}, err
		}
		return RankedAnswer{Type: r.Query.Type, Query: r.Query, Groups: r.Groups, More: r.More, Height: resp.Height, Verified: true}, nil
	}
	a, err := proofs.DecodeRankedAnswer(resp.Value)
	if err != nil {
		return RankedAnswer{}, err
	}
	t, v, err := answerType(contract, typeName, a.ProtocolVersion, a.Contract)
	if err != nil {
		return RankedAnswer{}, err
	}
	q, err := query.ParseRanked(t, queryJSON, v)
	if err != nil {
		return RankedAnswer{}, err
	}
	if err := resolveWindow(q.ResolveWindow, true, a.LastBlock); err != nil {
		return RankedAnswer{}, err
	}
	entries, err := proofs.DecodeEntries(a.Ranks.Entries)
	if err != nil {
		return RankedAnswer{}, err
	}
	groups, err := proofs.RankedGroups(contract, q, entries)
	if err != nil {
		return RankedAnswer{}, err
	}
	return RankedAnswer{Type: t, Query: q, Groups: groups, More: a.Ranks.More, Height: resp.Height}, nil
}

// Removals reads the removal records of contract (of type typeName, or of every type
// when it is "") at height (0: the latest), every page at the height the first answered;
// with prove, each page is proven complete against the signed header after it, so an
// empty answer is proven to hold no record.
func (c *Client) Removals(ctx context.Context, contract protocol.ContractID, typeName string, height int64, prove bool) ([]drive.StoredRemoval, int64, error) {
	next := func(last proofs.KV) ([]byte, error) {
		_, t, id, ok := drive.ParseRemovalKey(last.Key)
		if !ok {
			return nil, ErrCorruptValue{Key: last.Key, Err: errNotRemovalKey}
		}
		return proofs.RemovalsData(contract, typeName, &drive.RemovalRef{Type: t, ID: id}), nil
	}
	entries, h, err := c.rangeRead(ctx, proofs.PathRemovals, proofs.RemovalsData(contract, typeName, nil), height, prove, next)
	if err != nil {
		return nil, 0, err
	}
	out := make([]drive.StoredRemoval, 0, len(entries))
	for _, e := range entries {
		r, err := drive.DecodeRemovalValue(e.Key, e.Value)
		if err != nil {
			return nil, 0, ErrCorruptValue{Key: e.Key, Err: err}
		}
		out = append(out, r)
	}
	return out, h, nil
}
