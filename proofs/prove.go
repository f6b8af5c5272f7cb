//go:build !js

package proofs

import (
	"bytes"
	"fmt"

	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
	"github.com/cosmos/iavl"
	ics23 "github.com/cosmos/ics23/go"
)

// Prove returns the value of key in tree (nil when absent, never nil when present) and
// one ProofOpType operation proving it: an existence proof when present, a
// non-existence proof otherwise. tree must be a saved version (GetImmutable), whose
// root is the app hash committed for that height.
//
// NB: ICS23 cannot prove a leaf with an empty key or an empty value, so the tree must
// hold none: Prove returns ErrUnprovable when the proof would need such a leaf (the
// key itself, or a neighbour of an absent key).
func Prove(tree *iavl.ImmutableTree, key []byte) (value []byte, ops *cmtcrypto.ProofOps, err error) {
	op, value, err := proveKey(tree, key)
	if err != nil {
		return nil, nil, err
	}
	return value, &cmtcrypto.ProofOps{Ops: []cmtcrypto.ProofOp{op.ProofOp()}}, nil
}

// ProveRange returns the entries of tree with keys in [start, end) in key order (end
// nil: to the end of the tree; start nil: from the first key), at most limit of them
// when limit > 0, whether the range holds more keys after the last returned one, and
// the proof that no key of the covered part of the range is missing.
//
// The proof is one RangeOpType operation whose batch has len(entries)+1 entries: entry
// 0 proves start present or absent (locating the first key at or after it); entry i+1
// proves successor(entries[i].Key) = entries[i].Key ++ 0x00 present or absent
// (locating the key right after entries[i]). When more is true the answer is complete
// up to and including its last key and the caller continues at NextStart(entries).
func ProveRange(tree *iavl.ImmutableTree, start, end []byte, limit int) (entries []KV, more bool, ops *cmtcrypto.ProofOps, err error) {
	if end != nil && bytes.Compare(start, end) >= 0 {
		return nil, false, nil, ErrInvalidRange{Start: start, End: end}
	}
	if start == nil {
		start = []byte{}
	}
	first, _, err := proveKey(tree, start)
	if err != nil {
		return nil, false, nil, err
	}
	links := []Op{first}

	it, err := tree.Iterator(start, end, true)
	if err != nil {
		return nil, false, nil, fmt.Errorf("proofs: iterating [%X, %X): %w", start, end, err)
	}
	for ; it.Valid(); it.Next() {
		if limit > 0 && len(entries) == limit {
			more = true
			break
		}
		entries = append(entries, KV{Key: bytes.Clone(it.Key()), Value: nonNil(bytes.Clone(it.Value()))})
	}
	if err := it.Error(); err != nil {
		_ = it.Close()
		return nil, false, nil, fmt.Errorf("proofs: iterating [%X, %X): %w", start, end, err)
	}
	if err := it.Close(); err != nil {
		return nil, false, nil, fmt.Errorf("proofs: closing the iterator: %w", err)
	}

	for _, e := range entries {
		op, _, err := proveKey(tree, successor(e.Key))
		if err != nil {
			return nil, false, nil, err
		}
		links = append(links, op)
	}
	return entries, more, &cmtcrypto.ProofOps{Ops: []cmtcrypto.ProofOp{rangeOp(start, links)}}, nil
}

// NextStart is where a range query cut by its limit continues: the smallest key after
// the last entry. It is nil when there are no entries.
func NextStart(entries []KV) []byte {
	if len(entries) == 0 {
		return nil
	}
	return successor(entries[len(entries)-1].Key)
}

// proveKey builds the operation proving key present (returning its value) or absent.
func proveKey(tree *iavl.ImmutableTree, key []byte) (Op, []byte, error) {
	has, err := tree.Has(key)
	if err != nil {
		return Op{}, nil, fmt.Errorf("proofs: looking up %X: %w", key, err)
	}
	if !has {
		proof, err := tree.GetNonMembershipProof(key)
		if err != nil {
			return Op{}, nil, fmt.Errorf("proofs: proving %X absent: %w", key, err)
		}
		np := proof.GetNonexist()
		for _, leaf := range []*ics23.ExistenceProof{np.GetLeft(), np.GetRight()} {
			if err := provableLeaf(leaf); err != nil {
				return Op{}, nil, err
			}
		}
		return Op{Key: bytes.Clone(key), Proof: proof}, nil, nil
	}
	value, err := tree.Get(key)
	if err != nil {
		return Op{}, nil, fmt.Errorf("proofs: reading %X: %w", key, err)
	}
	proof, err := tree.GetMembershipProof(key)
	if err != nil {
		return Op{}, nil, fmt.Errorf("proofs: proving %X present: %w", key, err)
	}
	if err := provableLeaf(proof.GetExist()); err != nil {
		return Op{}, nil, err
	}
	return Op{Key: bytes.Clone(key), Proof: proof}, nonNil(bytes.Clone(value)), nil
}

// provableLeaf rejects the leaves ICS23 refuses to hash (nil: no leaf, nothing to check).
func provableLeaf(leaf *ics23.ExistenceProof) error {
	switch {
	case leaf == nil:
		return nil
	case len(leaf.Key) == 0:
		return ErrUnprovable{Key: leaf.Key, Reason: "empty key"}
	case len(leaf.Value) == 0:
		return ErrUnprovable{Key: leaf.Key, Reason: "empty value"}
	}
	return nil
}
