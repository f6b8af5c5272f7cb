package thirdparty

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
)

// VersionKey is the key of the protocol version in force: 104 || 'v'.
var VersionKey = []byte{104, 'v'}

// DocumentRequest splits the data of /documents, /count and /sum: contract id (32) ||
// type name length u8 || type name || rest.
func DocumentRequest(data []byte) (contract [32]byte, typeName string, rest []byte, err error) {
	if len(data) < 33 || len(data) < 33+int(data[32]) {
		return contract, "", nil, errors.New("want contract (32) || type name length u8 || type name")
	}
	copy(contract[:], data)
	n := int(data[32])
	return contract, string(data[33 : 33+n]), data[33+n:], nil
}

// DocumentsAnswer is the JSON value of a /documents, /count or /sum answer; byte
// strings are base64 in it.
type DocumentsAnswer struct {
	ProtocolVersion []byte `json:"protocol_version"`
	Contract        []byte `json:"contract"`
	Start           []byte `json:"start,omitempty"`
	Ranges          []struct {
		Entries []byte `json:"entries"`
		More    bool   `json:"more"`
	} `json:"ranges,omitempty"`
	Documents [][]byte `json:"documents,omitempty"`
	Record    []byte   `json:"record,omitempty"`
}

// answerHead checks operations 1 and 2 of a document answer (the protocol version and
// the contract, present) and returns the type asked and the operations left.
func answerHead(root []byte, contract [32]byte, typeName string, a DocumentsAnswer, ops []cmtcrypto.ProofOp) (DocType, []cmtcrypto.ProofOp, error) {
	if len(ops) < 2 || len(a.ProtocolVersion) != 4 || len(a.Contract) == 0 {
		return DocType{}, nil, errors.New("want the protocol version and the contract, proven")
	}
	if err := VerifySingle(root, VersionKey, a.ProtocolVersion, ops[:1]); err != nil {
		return DocType{}, nil, fmt.Errorf("protocol version: %w", err)
	}
	if err := VerifySingle(root, ContractKey(contract), a.Contract, ops[1:2]); err != nil {
		return DocType{}, nil, fmt.Errorf("contract: %w", err)
	}
	c, err := DecodeContract(a.Contract)
	if err != nil {
		return DocType{}, nil, err
	}
	t, ok := c.Types[typeName]
	if c.ID != contract || !ok {
		return DocType{}, nil, fmt.Errorf("the contract is not the one asked or has no type %q", typeName)
	}
	return t, ops[2:], nil
}

// VerifiedDocuments is a /documents answer proven complete: the documents the query
// selects, in its order, and how it was read.
type VerifiedDocuments struct {
	Query     Query
	Documents []Document
}

// VerifyDocuments checks a /documents answer (value, operations) to request data under
// root, as docs/PROOFS.md ("Document queries") says: every range the query reads is
// derived here from the query and the index, proven complete up to the limit, and
// every document proven at the row of its entry's id, its entry key rebuilt from its
// row and each where clause checked.
func VerifyDocuments(root, data, value []byte, ops []cmtcrypto.ProofOp) (VerifiedDocuments, error) {
	contract, typeName, raw, err := DocumentRequest(data)
	if err != nil {
		return VerifiedDocuments{}, err
	}
	var a DocumentsAnswer
	if err := json.Unmarshal(value, &a); err != nil {
		return VerifiedDocuments{}, err
	}
	t, ops, err := answerHead(root, contract, typeName, a, ops)
	if err != nil {
		return VerifiedDocuments{}, err
	}
	q, err := ParseQuery(t, raw)
	if err != nil {
		return VerifiedDocuments{}, err
	}
	prefix := IndexPrefix(contract, typeName, q.Index.Name)
	ranges := q.Ranges(prefix)
	if q.Start != nil {
		if len(ops) == 0 || len(a.Start) == 0 {
			return VerifiedDocuments{}, errors.New("no start document")
		}
		if err := VerifySingle(root, RowKey(contract, typeName, *q.Start), a.Start, ops[:1]); err != nil {
			return VerifiedDocuments{}, fmt.Errorf("start document: %w", err)
		}
		ops = ops[1:]
		start, err := DecodeRow(t, a.Start)
		if err != nil || start.ID != *q.Start {
			return VerifiedDocuments{}, fmt.Errorf("the start row is not document %X: %v", q.Start[:], err)
		}
		ranges = q.Cut(ranges, EntryKey(prefix, q.Index, start))
	} else if len(a.Start) != 0 {
		return VerifiedDocuments{}, errors.New("a start document the query does not name")
	}

	// the entries, in the answer's order
	var keys [][]byte
	remaining := q.Limit
	item := 0
	for _, r := range ranges {
		if remaining == 0 {
			break
		}
		if item >= len(a.Ranges) || item >= len(ops) {
			return VerifiedDocuments{}, fmt.Errorf("no proof of range %d", item)
		}
		it := a.Ranges[item]
		entries, err := DecodeEntries(it.Entries)
		if err != nil {
			return VerifiedDocuments{}, fmt.Errorf("range %d: %w", item, err)
		}
		if len(entries) > remaining {
			return VerifiedDocuments{}, fmt.Errorf("range %d: more entries than the limit leaves", item)
		}
		full := len(entries) == remaining
		opRange := ops[item : item+1]
		if !q.Backward {
			if it.More && !full {
				return VerifiedDocuments{}, fmt.Errorf("range %d: cut short of the limit", item)
			}
			if _, err := VerifyRange(root, r.Start, r.End, it.Entries, it.More, opRange); err != nil {
				return VerifiedDocuments{}, fmt.Errorf("range %d: %w", item, err)
			}
			for _, e := range entries {
				keys = append(keys, e.Key)
			}
		} else {
			if it.More {
				return VerifiedDocuments{}, fmt.Errorf("range %d: a backward range says more", item)
			}
			from := r.Start
			if full {
				from = entries[0].Key
				if bytes.Compare(from, r.Start) < 0 {
					return VerifiedDocuments{}, fmt.Errorf("range %d: an entry below the range", item)
				}
			}
			if _, err := VerifyRange(root, from, r.End, it.Entries, false, opRange); err != nil {
				return VerifiedDocuments{}, fmt.Errorf("range %d: %w", item, err)
			}
			for i := len(entries) - 1; i >= 0; i-- {
				keys = append(keys, entries[i].Key)
			}
		}
		remaining -= len(entries)
		item++
	}
	if item != len(a.Ranges) {
		return VerifiedDocuments{}, errors.New("ranges the query does not read")
	}
	ops = ops[item:]
	if len(a.Documents) != len(keys) || len(ops) != len(keys) {
		return VerifiedDocuments{}, fmt.Errorf("%d entries, %d documents, %d row proofs", len(keys), len(a.Documents), len(ops))
	}
	out := VerifiedDocuments{Query: q}
	for i, k := range keys {
		var id [32]byte
		if len(k) < len(prefix)+32 || !bytes.HasPrefix(k, prefix) {
			return VerifiedDocuments{}, fmt.Errorf("entry %d is not of the index", i)
		}
		copy(id[:], k[len(k)-32:])
		if err := VerifySingle(root, RowKey(contract, typeName, id), a.Documents[i], ops[i:i+1]); err != nil || len(a.Documents[i]) == 0 {
			return VerifiedDocuments{}, fmt.Errorf("document %d: not proven at the row of %X: %v", i, id, err)
		}
		d, err := DecodeRow(t, a.Documents[i])
		if err != nil {
			return VerifiedDocuments{}, fmt.Errorf("document %d: %w", i, err)
		}
		if d.ID != id || !bytes.Equal(EntryKey(prefix, q.Index, d), k) {
			return VerifiedDocuments{}, fmt.Errorf("document %d does not rebuild its entry", i)
		}
		for _, c := range q.Where {
			if !c.Matches(d) {
				return VerifiedDocuments{}, fmt.Errorf("document %d fails where %s %s", i, c.Field, c.Op)
			}
		}
		out.Documents = append(out.Documents, d)
	}
	return out, nil
}

// VerifiedCount is a /count or /sum answer proven: the record read and what it holds.
type VerifiedCount struct {
	Index   string
	Key     []byte
	Present bool
	Count   uint64
	Sum     *big.Int
}

// VerifyCount checks a /count or /sum (sum true) answer to request data under root:
// the index is the one named, or among the countable or summable ones (for /sum: the
// summable ones) whose leading properties the where equalities name, the one with the
// fewest properties, then the first by name; the record key is derived from them and
// proven present or absent (count 0, sum 0). Subset: no window, so no time-range index.
func VerifyCount(root, data, value []byte, sum bool, ops []cmtcrypto.ProofOp) (VerifiedCount, error) {
	contract, typeName, rest, err := DocumentRequest(data)
	if err != nil {
		return VerifiedCount{}, err
	}
	if len(rest) < 1 || len(rest) < 1+int(rest[0]) {
		return VerifiedCount{}, errors.New("want index name length u8 || index name")
	}
	named, raw := string(rest[1:1+int(rest[0])]), rest[1+int(rest[0]):]
	var a DocumentsAnswer
	if err := json.Unmarshal(value, &a); err != nil {
		return VerifiedCount{}, err
	}
	t, ops, err := answerHead(root, contract, typeName, a, ops)
	if err != nil {
		return VerifiedCount{}, err
	}
	var where []Clause
	if len(raw) > 0 {
		var q struct {
			Where [][]json.RawMessage `json:"where"`
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil {
			return VerifiedCount{}, err
		}
		for _, w := range q.Where {
			c, err := parseClause(t, w)
			if err != nil {
				return VerifiedCount{}, err
			}
			if c.Op != "==" {
				return VerifiedCount{}, errors.New("a count takes equalities only")
			}
			where = append(where, c)
		}
	}
	var ix *Index
	for i, cand := range t.Indexes {
		ok := (named == "" || cand.Name == named) && (cand.Summable != "" || !sum && cand.Countable) && cand.TimeRange == nil && fits(cand, where)
		if ok && (ix == nil || len(cand.Properties) < len(ix.Properties)) {
			ix = &t.Indexes[i]
		}
	}
	if ix == nil {
		return VerifiedCount{}, errors.New("no countable or summable index fits")
	}
	key := CountPrefix(contract, typeName, ix.Name)
	for _, p := range ix.Properties[:len(where)] {
		for _, c := range where {
			if c.Field == p.Field {
				key = append(key, directed(c.Values[0], p.Desc)...)
			}
		}
	}
	if err := VerifySingle(root, key, a.Record, ops); err != nil {
		return VerifiedCount{}, fmt.Errorf("record %X (op %X): %w", key, ops[0].Key, err)
	}
	out := VerifiedCount{Index: ix.Name, Key: key, Present: len(a.Record) > 0, Sum: new(big.Int)}
	if out.Present {
		if len(a.Record) != 24 {
			return VerifiedCount{}, errors.New("a count record is count u64 || sum i128")
		}
		out.Count = binary.BigEndian.Uint64(a.Record)
		out.Sum.SetBytes(a.Record[8:])
		if a.Record[8]&0x80 != 0 { // two's complement
			out.Sum.Sub(out.Sum, new(big.Int).Lsh(big.NewInt(1), 128))
		}
	}
	return out, nil
}

// fits: the where equalities name exactly the first len(where) properties of ix.
func fits(ix Index, where []Clause) bool {
	if len(where) > len(ix.Properties) {
		return false
	}
	for _, p := range ix.Properties[:len(where)] {
		n := 0
		for _, c := range where {
			if c.Field == p.Field {
				n++
			}
		}
		if n != 1 {
			return false
		}
	}
	return true
}
