package thirdparty

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
	ics23 "github.com/cosmos/ics23/go"
)

// The two proof operation types of docs/PROOFS.md.
const (
	SingleOpType = "ics23:iavl"
	RangeOpType  = "ttld:ics23-range"
)

// Target is the key (Key) or the key range [Start, End) a query path reads.
type Target struct {
	Key        []byte
	Start, End []byte
}

// TargetOf follows the path table of docs/PROOFS.md.
func TargetOf(path string, data []byte) (Target, error) {
	switch path {
	case "/key":
		if len(data) == 0 {
			return Target{}, errors.New("/key: empty key")
		}
		return Target{Key: data}, nil
	case "/address":
		if len(data) != 20 {
			return Target{}, errors.New("/address: want 20 bytes")
		}
		return Target{Key: append([]byte{56}, data...)}, nil
	case "/identity":
		if len(data) != 32 {
			return Target{}, errors.New("/identity: want 32 bytes")
		}
		start := append([]byte{32}, data...)
		return Target{Start: start, End: prefixEnd(start)}, nil
	case "/address-changes/blocks":
		if len(data) != 8 {
			return Target{}, errors.New("want a u64")
		}
		return Target{Start: append([]byte{58, 'b'}, data...), End: []byte{58, 'c'}}, nil
	case "/address-changes/compacted":
		if len(data) != 8 {
			return Target{}, errors.New("want a u64")
		}
		return Target{Start: append([]byte{58, 'c'}, data...), End: []byte{58, 'd'}}, nil
	case "/epoch":
		if len(data) != 4 {
			return Target{}, errors.New("/epoch: want a u32")
		}
		start := append([]byte{48, 'e'}, data...)
		return Target{Start: start, End: prefixEnd(start)}, nil
	case "/pools":
		if len(data) != 0 {
			return Target{}, errors.New("/pools: want no data")
		}
		return Target{Start: []byte{48, 'c'}, End: []byte{48, 'e', 0, 0, 0, 0}}, nil
	case "/pending-refunds":
		if len(data) != 0 && len(data) != 8 {
			return Target{}, errors.New("/pending-refunds: want no data or two u32")
		}
		return Target{Start: append([]byte{48, 'r'}, data...), End: []byte{48, 's'}}, nil
	case "/lifetime-pools":
		if len(data) != 0 {
			return Target{}, errors.New("/lifetime-pools: want no data")
		}
		return Target{Start: []byte{48, 'l'}, End: []byte{48, 'm'}}, nil
	case "/upgrades":
		if len(data) != 0 {
			return Target{}, errors.New("/upgrades: want no data")
		}
		return Target{Start: []byte{104, 'P'}, End: []byte{104, 'Q'}}, nil
	case "/validators":
		if len(data) != 0 {
			return Target{}, errors.New("/validators: want no data")
		}
		return Target{Start: []byte{104, 'V', 's'}, End: []byte{104, 'V', 't'}}, nil
	case "/validator-proposals":
		start := []byte{104, 'V', 'p'}
		switch len(data) {
		case 0, 8:
			start = append(start, data...)
		case 28:
			start = append(append(start, data...), 0)
		default:
			return Target{}, errors.New("/validator-proposals: want no data, a proposal number u64, or one || a consensus address (20)")
		}
		return Target{Start: start, End: []byte{104, 'V', 'q'}}, nil
	case "/misbehavior":
		start := []byte{104, 'V', 'm'}
		switch len(data) {
		case 0, 20:
			start = append(start, data...)
		case 28:
			start = append(append(start, data...), 0)
		default:
			return Target{}, errors.New("/misbehavior: want no data, a consensus address (20), or one || a height u64")
		}
		return Target{Start: start, End: []byte{104, 'V', 'n'}}, nil
	case "/expirations":
		// until u64, optionally an entry's expires_at u64 and document id to read after
		if len(data) != 8 && len(data) != 8+8+32 {
			return Target{}, errors.New("/expirations: want until u64, optionally || expires_at u64 || document id (32)")
		}
		prefix := []byte{104, 'E'}
		start := prefix
		if len(data) > 8 {
			start = append(append(bytes.Clone(prefix), data[8:]...), 0)
		}
		return Target{Start: start, End: prefixEnd(append(bytes.Clone(prefix), data[:8]...))}, nil
	case "/removals":
		return removalsTarget(data)
	case "/contract":
		if len(data) != 32 {
			return Target{}, errors.New("/contract: want 32 bytes")
		}
		return Target{Key: append(append([]byte{64}, data...), 'c')}, nil
	case "/document":
		contract, typeName, id, err := DocumentRequest(data)
		if err != nil || len(id) != 32 {
			return Target{}, errors.New("/document: want contract (32) || type name length u8 || type name || document id (32)")
		}
		return Target{Key: RowKey(contract, typeName, [32]byte(id))}, nil
	case "/total-credits":
		if len(data) != 0 {
			return Target{}, errors.New("/total-credits: want no data")
		}
		return Target{Key: []byte{104, 't'}}, nil
	}
	return Target{}, fmt.Errorf("unknown path %q", path)
}

// removalsTarget reads the data of /removals: contract id (32) || type name length u8 ||
// type name (length 0: every type), optionally || a record's type name length u8 ||
// type name || document id (32) to read after that record, which must be of the type
// asked when one is. The range is [P, P+1), P = 64 || contract || 'r' (|| name_len ||
// name); after a record, it starts right after the record's key.
func removalsTarget(data []byte) (Target, error) {
	bad := errors.New("/removals: want contract (32) || type name length u8 || type name, optionally || type name length u8 || type name || document id (32)")
	if len(data) < 33 || len(data) < 33+int(data[32]) {
		return Target{}, bad
	}
	contract, asked := data[:32], data[33:33+int(data[32])]
	records := append(append([]byte{64}, contract...), 'r')
	p := bytes.Clone(records)
	if len(asked) > 0 {
		p = append(append(p, byte(len(asked))), asked...)
	}
	t := Target{Start: p, End: prefixEnd(p)}
	rest := data[33+len(asked):]
	if len(rest) == 0 {
		return t, nil
	}
	if len(rest) != 1+int(rest[0])+32 {
		return Target{}, bad
	}
	recordType := rest[1 : 1+int(rest[0])]
	if len(asked) > 0 && !bytes.Equal(recordType, asked) {
		return Target{}, errors.New("/removals: a record to read after of another type than the one asked")
	}
	t.Start = append(append(records, rest...), 0)
	return t, nil
}

// prefixEnd is the first key after every key starting with p: p with its last byte
// below 0xff incremented and what follows dropped.
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// VerifySingle checks a single-key answer: one ics23:iavl operation for key, proving
// key present with value (value not empty) or absent (value empty) under root.
func VerifySingle(root, key, value []byte, ops []cmtcrypto.ProofOp) error {
	if len(ops) != 1 || ops[0].Type != SingleOpType || !bytes.Equal(ops[0].Key, key) {
		return errors.New("want one ics23:iavl operation for the key")
	}
	var p ics23.CommitmentProof
	if err := p.Unmarshal(ops[0].Data); err != nil {
		return err
	}
	if len(value) > 0 {
		if !ics23.VerifyMembership(ics23.IavlSpec, root, &p, key, value) {
			return errors.New("membership does not verify")
		}
		return nil
	}
	if !ics23.VerifyNonMembership(ics23.IavlSpec, root, &p, key) {
		return errors.New("non-membership does not verify")
	}
	return nil
}

// KV is one entry of a range answer.
type KV struct{ Key, Value []byte }

// DecodeEntries reads the entries encoding: uvarint count, then per entry uvarint key
// length, key, uvarint value length, value; keys strictly increasing, nothing after.
func DecodeEntries(b []byte) ([]KV, error) {
	next := func() (uint64, error) {
		v, n := binary.Uvarint(b)
		if n <= 0 || n != len(binary.AppendUvarint(nil, v)) {
			return 0, errors.New("bad uvarint")
		}
		b = b[n:]
		return v, nil
	}
	field := func() ([]byte, error) {
		l, err := next()
		if err != nil || l > uint64(len(b)) {
			return nil, errors.New("bad length")
		}
		f := b[:l]
		b = b[l:]
		return f, nil
	}
	n, err := next()
	if err != nil || n > uint64(len(b)) {
		return nil, errors.New("bad count")
	}
	out := make([]KV, 0, n)
	for i := uint64(0); i < n; i++ {
		k, err := field()
		if err != nil {
			return nil, err
		}
		v, err := field()
		if err != nil {
			return nil, err
		}
		if i > 0 && bytes.Compare(out[i-1].Key, k) >= 0 {
			return nil, errors.New("keys out of order")
		}
		out = append(out, KV{k, v})
	}
	if len(b) != 0 {
		return nil, errors.New("trailing bytes")
	}
	return out, nil
}

// VerifyRange checks a range answer for [start, end) (end nil: no end): value is the
// entries encoding, more whether the answer says it was cut (info "more"), ops its one
// ttld:ics23-range operation. It returns the entries, proven to be every key of the
// range from start up to and including the last one, and all of it unless more.
func VerifyRange(root, start, end, value []byte, more bool, ops []cmtcrypto.ProofOp) ([]KV, error) {
	entries, err := DecodeEntries(value)
	if err != nil {
		return nil, err
	}
	if len(ops) != 1 || ops[0].Type != RangeOpType || !bytes.Equal(ops[0].Key, start) {
		return nil, errors.New("want one ttld:ics23-range operation keyed by the range start")
	}
	var p ics23.CommitmentProof
	if err := p.Unmarshal(ops[0].Data); err != nil {
		return nil, err
	}
	batch := p.GetBatch()
	if batch == nil || len(batch.Entries) != len(entries)+1 {
		return nil, errors.New("want a batch of one proof more than the entries")
	}
	inRange := func(k []byte) bool { return end == nil || bytes.Compare(k, end) < 0 }
	// proof i is about key: start, then each entry's key followed by 0x00. It shows
	// which key comes first at or after key (nil: none in the tree).
	for i, e := range batch.Entries {
		key := start
		if i > 0 {
			key = append(bytes.Clone(entries[i-1].Key), 0)
		}
		var next *KV
		switch {
		case e.GetExist() != nil:
			ep := e.GetExist()
			single := &ics23.CommitmentProof{Proof: &ics23.CommitmentProof_Exist{Exist: ep}}
			if !bytes.Equal(ep.Key, key) || !ics23.VerifyMembership(ics23.IavlSpec, root, single, key, ep.Value) {
				return nil, fmt.Errorf("proof %d: membership of %X does not verify", i, key)
			}
			next = &KV{ep.Key, ep.Value}
		case e.GetNonexist() != nil:
			np := e.GetNonexist()
			single := &ics23.CommitmentProof{Proof: &ics23.CommitmentProof_Nonexist{Nonexist: np}}
			if !ics23.VerifyNonMembership(ics23.IavlSpec, root, single, key) {
				return nil, fmt.Errorf("proof %d: non-membership of %X does not verify", i, key)
			}
			// the absence of k ++ 0x00 tells what follows k only with k as its left
			// neighbour (ics23 checked the neighbours are adjacent)
			if i > 0 && (np.Left == nil || !bytes.Equal(np.Left.Key, entries[i-1].Key)) {
				return nil, fmt.Errorf("proof %d: the left neighbour is not entry %d", i, i-1)
			}
			if np.Right != nil {
				next = &KV{np.Right.Key, np.Right.Value}
			}
		default:
			return nil, fmt.Errorf("proof %d: neither existence nor non-existence", i)
		}
		if i < len(entries) {
			if next == nil || !inRange(next.Key) || !bytes.Equal(next.Key, entries[i].Key) || !bytes.Equal(next.Value, entries[i].Value) {
				return nil, fmt.Errorf("entry %d is not the key the proofs show next", i)
			}
		} else if provenMore := next != nil && inRange(next.Key); provenMore != more {
			return nil, fmt.Errorf("the answer says more=%t, the proofs show more=%t", more, provenMore)
		}
	}
	return entries, nil
}
