package proofs

import (
	"bytes"
	"fmt"

	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
)

// VerifyPresence checks that ops proves key present with value under root.
func VerifyPresence(root []byte, key, value []byte, ops *cmtcrypto.ProofOps) error {
	got, err := presenceRoot(key, value, ops)
	if err != nil {
		return err
	}
	return sameRoot(root, got)
}

// VerifyAbsence checks that ops proves key absent under root.
func VerifyAbsence(root []byte, key []byte, ops *cmtcrypto.ProofOps) error {
	got, err := absenceRoot(key, ops)
	if err != nil {
		return err
	}
	return sameRoot(root, got)
}

// VerifyRange checks that entries are exactly the keys of [start, end) under root
// (end nil: to the end of the tree; start nil: from the first key), in key order with
// their values, and, when more is true, that the range holds further keys after the
// last entry, entries then being complete up to and including their last key.
func VerifyRange(root []byte, start, end []byte, entries []KV, more bool, ops *cmtcrypto.ProofOps) error {
	r, err := rangeRoot(start, end, entries, ops)
	if err != nil {
		return err
	}
	if err := sameRoot(root, r.root); err != nil {
		return err
	}
	if more != r.more {
		return ErrMoreMismatch{More: more, Proven: r.more, Next: r.next}
	}
	return nil
}

func sameRoot(want, got []byte) error {
	if !bytes.Equal(want, got) {
		return ErrRootMismatch{Want: want, Got: got}
	}
	return nil
}

// singleOp decodes the one operation of a single-key answer and checks it is for key.
func singleOp(key []byte, ops *cmtcrypto.ProofOps) (Op, error) {
	if ops == nil || len(ops.Ops) == 0 {
		return Op{}, ErrNotProven
	}
	if len(ops.Ops) != 1 {
		return Op{}, ErrMalformedProof{Index: 1, Reason: fmt.Sprintf("a single-key answer has one operation, got %d", len(ops.Ops))}
	}
	op, err := decodeOp(0, ops.Ops[0])
	if err != nil {
		return Op{}, err
	}
	if !bytes.Equal(op.Key, key) {
		return Op{}, ErrKeyMismatch{Index: 0, Want: key, Got: op.Key}
	}
	return op, nil
}

func presenceRoot(key, value []byte, ops *cmtcrypto.ProofOps) ([]byte, error) {
	op, err := singleOp(key, ops)
	if err != nil {
		return nil, err
	}
	return op.presenceRoot(0, value)
}

func absenceRoot(key []byte, ops *cmtcrypto.ProofOps) ([]byte, error) {
	op, err := singleOp(key, ops)
	if err != nil {
		return nil, err
	}
	return op.absenceRoot(0)
}

// provenRange is what a range proof shows once its chain is checked.
type provenRange struct {
	root []byte
	// more: the range holds a key after the last entry (after start when there are no
	// entries), namely next; next is nil when more is false.
	more bool
	next []byte
}

// rangeRoot walks the chain described at ProveRange: it keeps the key the proofs show
// comes next (cursor) and requires each entry to be that key, with that value, inside
// the range, and every proof of the batch to compute the same root.
func rangeRoot(start, end []byte, entries []KV, ops *cmtcrypto.ProofOps) (provenRange, error) {
	if end != nil && bytes.Compare(start, end) >= 0 {
		return provenRange{}, ErrInvalidRange{Start: start, End: end}
	}
	if ops == nil || len(ops.Ops) == 0 {
		return provenRange{}, ErrNotProven
	}
	if start == nil {
		start = []byte{}
	}
	if len(ops.Ops) != 1 {
		return provenRange{}, ErrMalformedProof{Index: 1, Reason: fmt.Sprintf("a range answer has one operation, got %d", len(ops.Ops))}
	}
	if !bytes.Equal(ops.Ops[0].Key, start) {
		return provenRange{}, ErrKeyMismatch{Index: 0, Want: start, Got: ops.Ops[0].Key}
	}
	links, err := decodeRangeOp(ops.Ops[0])
	if err != nil {
		return provenRange{}, err
	}
	if len(links) != len(entries)+1 {
		return provenRange{}, ErrMalformedProof{
			Index:  len(links),
			Reason: fmt.Sprintf("an answer of %d entries has %d proofs in its batch, got %d", len(entries), len(entries)+1, len(links)),
		}
	}

	// link checks batch entry i, which must be for key, and returns the key and value
	// it shows come first at or after key (nil: none).
	var root []byte
	link := func(i int, key, after []byte) (*KV, error) {
		op := links[i]
		if !bytes.Equal(op.Key, key) {
			return nil, ErrKeyMismatch{Index: i, Want: key, Got: op.Key}
		}
		p, err := op.check(i)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			root = p.root
		} else if !bytes.Equal(p.root, root) {
			return nil, ErrMalformedProof{Index: i, Reason: fmt.Sprintf("computes root %X, batch entry 0 computes %X", p.root, root)}
		}
		switch {
		case p.present:
			return &KV{Key: key, Value: p.value}, nil
		case after != nil && (p.left == nil || !bytes.Equal(p.left.Key, after)):
			// The absence of after++0x00 says what follows after only when after
			// is its left neighbour.
			return nil, ErrMalformedProof{Index: i, Reason: fmt.Sprintf("the left neighbour of %X is not %X", key, after)}
		case p.right == nil:
			return nil, nil
		default:
			return &KV{Key: p.right.Key, Value: p.right.Value}, nil
		}
	}
	inRange := func(k []byte) bool { return end == nil || bytes.Compare(k, end) < 0 }

	cursor, err := link(0, start, nil)
	if err != nil {
		return provenRange{}, err
	}
	for i, e := range entries {
		if cursor == nil || !inRange(cursor.Key) {
			return provenRange{}, ErrRangeGap{Index: i, Got: e.Key}
		}
		if !bytes.Equal(cursor.Key, e.Key) {
			return provenRange{}, ErrRangeGap{Index: i, Want: cursor.Key, Got: e.Key}
		}
		if !bytes.Equal(cursor.Value, e.Value) {
			return provenRange{}, ErrValueMismatch{Key: e.Key, Want: e.Value, Got: cursor.Value}
		}
		if cursor, err = link(i+1, successor(e.Key), e.Key); err != nil {
			return provenRange{}, err
		}
	}
	r := provenRange{root: root}
	if cursor != nil && inRange(cursor.Key) {
		r.more, r.next = true, cursor.Key
	}
	return r, nil
}

// successor is the smallest key greater than k in byte order.
func successor(k []byte) []byte {
	s := make([]byte, len(k)+1)
	copy(s, k)
	return s
}

// nonNil keeps a present empty value distinguishable from an absent one.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
