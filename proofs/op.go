package proofs

import (
	"bytes"
	"fmt"

	"github.com/cometbft/cometbft/crypto/merkle"
	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
	ics23 "github.com/cosmos/ics23/go"
)

// ProofOpType is the type of the one proof operation of a single-key answer: one ICS23
// commitment proof (existence or non-existence) against an IAVL root, in the form
// CometBFT's ProofOps convention and the Cosmos SDK use, so it also verifies through a
// merkle.ProofRuntime (NewProofRuntime).
const ProofOpType = "ics23:iavl"

// RangeOpType is the type of the one proof operation of a range answer: its Key is the
// range start and its Data one ICS23 CommitmentProof holding an uncompressed BatchProof
// whose entries, in order, prove the range start and then the successor of each
// returned key (see ProveRange). It is a distinct type on purpose: under CometBFT's
// ProofOps convention several ProofOpType operations are a chain, each proving the
// root of the next, which a range answer's proofs are not; a ProofRuntime that does not
// know this type refuses it instead of misreading it.
const RangeOpType = "ttld:ics23-range"

// Op is one proof operation: Proof shows that Key is present in an IAVL tree (an
// existence proof, which carries the value) or absent from it (a non-existence proof,
// which carries the key's neighbours). Op implements merkle.ProofOperator, so a
// single-key answer also verifies through NewProofRuntime with KeyPath(key).
type Op struct {
	Key   []byte
	Proof *ics23.CommitmentProof
}

var _ merkle.ProofOperator = Op{}

// GetKey implements merkle.ProofOperator.
func (o Op) GetKey() []byte { return o.Key }

// ProofOp implements merkle.ProofOperator: the operation as it travels in ProofOps.
func (o Op) ProofOp() cmtcrypto.ProofOp {
	data, err := o.Proof.Marshal()
	if err != nil {
		// NB: gogoproto marshalling of a message held in memory only fails on a
		// broken generated type, never on content.
		panic(fmt.Sprintf("proofs: marshalling a commitment proof: %v", err))
	}
	return cmtcrypto.ProofOp{Type: ProofOpType, Key: o.Key, Data: data}
}

// Run implements merkle.ProofOperator. With one argument (the value) the operation must
// prove the key present with that value; with none, absent. It returns the root the
// proof computes.
func (o Op) Run(args [][]byte) ([][]byte, error) {
	var root []byte
	var err error
	switch len(args) {
	case 0:
		root, err = o.absenceRoot(0)
	case 1:
		root, err = o.presenceRoot(0, args[0])
	default:
		err = ErrMalformedProof{Reason: fmt.Sprintf("an %s operation takes 0 or 1 values, got %d", ProofOpType, len(args))}
	}
	if err != nil {
		return nil, err
	}
	return [][]byte{root}, nil
}

// DecodeOp is the merkle.OpDecoder of ProofOpType operations.
func DecodeOp(pop cmtcrypto.ProofOp) (merkle.ProofOperator, error) {
	return decodeOp(0, pop)
}

// NewProofRuntime returns a merkle.ProofRuntime that knows ProofOpType operations.
// Verify a single key with rt.VerifyValue(ops, appHash, KeyPath(key), value) or
// rt.VerifyAbsence(ops, appHash, KeyPath(key)).
func NewProofRuntime() *merkle.ProofRuntime {
	rt := merkle.NewProofRuntime()
	rt.RegisterOpDecoder(ProofOpType, DecodeOp)
	return rt
}

// KeyPath is the merkle key path of key in our single-tree state: "/x:" and the key in
// hex, which survives any byte in the key.
func KeyPath(key []byte) string {
	return merkle.KeyPath{}.AppendKey(key, merkle.KeyEncodingHex).String()
}

func decodeOp(index int, pop cmtcrypto.ProofOp) (Op, error) {
	if pop.Type != ProofOpType {
		return Op{}, ErrMalformedProof{Index: index, Reason: fmt.Sprintf("type %q, want %q", pop.Type, ProofOpType)}
	}
	proof, err := decodeCommitmentProof(index, pop.Data)
	if err != nil {
		return Op{}, err
	}
	return Op{Key: pop.Key, Proof: proof}, nil
}

// decodeCommitmentProof decodes data and requires it to be the canonical encoding of
// what it decodes to.
//
// NB: protobuf decoding accepts many encodings of one message (unknown fields, a field
// repeated with the last one winning, varints padded with 0x80 bytes, fields out of
// order). None of them changes what a proof proves, but each would let one answer
// travel as several byte strings. Re-encoding and comparing makes a proof's bytes
// unique, so "which bytes can change and still verify" has the answer none (see
// docs/PROOFS.md, malleability).
func decodeCommitmentProof(index int, data []byte) (*ics23.CommitmentProof, error) {
	proof := &ics23.CommitmentProof{}
	if err := proof.Unmarshal(data); err != nil {
		return nil, ErrMalformedProof{Index: index, Reason: fmt.Sprintf("decoding the commitment proof: %v", err)}
	}
	canonical, err := proof.Marshal()
	if err != nil || !bytes.Equal(canonical, data) {
		return nil, ErrMalformedProof{Index: index, Reason: "the commitment proof is not in its canonical encoding"}
	}
	return proof, nil
}

// rangeOp builds the RangeOpType operation for the range starting at start from the
// single-key proofs of the range's links, in order.
func rangeOp(start []byte, links []Op) cmtcrypto.ProofOp {
	batch := &ics23.BatchProof{Entries: make([]*ics23.BatchEntry, len(links))}
	for i, l := range links {
		switch p := l.Proof.Proof.(type) {
		case *ics23.CommitmentProof_Exist:
			batch.Entries[i] = &ics23.BatchEntry{Proof: &ics23.BatchEntry_Exist{Exist: p.Exist}}
		case *ics23.CommitmentProof_Nonexist:
			batch.Entries[i] = &ics23.BatchEntry{Proof: &ics23.BatchEntry_Nonexist{Nonexist: p.Nonexist}}
		default:
			panic(fmt.Sprintf("proofs: a range link of kind %T", p))
		}
	}
	data, err := (&ics23.CommitmentProof{Proof: &ics23.CommitmentProof_Batch{Batch: batch}}).Marshal()
	if err != nil {
		panic(fmt.Sprintf("proofs: marshalling a batch proof: %v", err))
	}
	return cmtcrypto.ProofOp{Type: RangeOpType, Key: bytes.Clone(start), Data: data}
}

// decodeRangeOp decodes a RangeOpType operation into its links, each an Op for the key
// its proof is about (the existence proof's key, or the key a non-existence proof
// names), in the batch's order.
func decodeRangeOp(pop cmtcrypto.ProofOp) ([]Op, error) {
	if pop.Type != RangeOpType {
		return nil, ErrMalformedProof{Reason: fmt.Sprintf("type %q, want %q", pop.Type, RangeOpType)}
	}
	proof, err := decodeCommitmentProof(0, pop.Data)
	if err != nil {
		return nil, err
	}
	batch := proof.GetBatch()
	if batch == nil {
		return nil, ErrMalformedProof{Reason: fmt.Sprintf("a range proof holds an uncompressed batch, got %T", proof.Proof)}
	}
	links := make([]Op, len(batch.Entries))
	for i, e := range batch.Entries {
		switch p := e.GetProof().(type) {
		case *ics23.BatchEntry_Exist:
			if p.Exist == nil {
				return nil, ErrMalformedProof{Index: i, Reason: "empty existence proof"}
			}
			links[i] = Op{Key: p.Exist.Key, Proof: &ics23.CommitmentProof{Proof: &ics23.CommitmentProof_Exist{Exist: p.Exist}}}
		case *ics23.BatchEntry_Nonexist:
			if p.Nonexist == nil {
				return nil, ErrMalformedProof{Index: i, Reason: "empty non-existence proof"}
			}
			links[i] = Op{Key: p.Nonexist.Key, Proof: &ics23.CommitmentProof{Proof: &ics23.CommitmentProof_Nonexist{Nonexist: p.Nonexist}}}
		default:
			return nil, ErrMalformedProof{Index: i, Reason: fmt.Sprintf("batch entry %d is neither an existence nor a non-existence proof", i)}
		}
	}
	return links, nil
}

// proven is what one operation shows about its key, once checked.
type proven struct {
	root    []byte
	present bool
	// value is the key's value when present.
	value []byte
	// left and right are the key's neighbours when absent (nil: none on that side).
	left, right *ics23.ExistenceProof
}

// check verifies the operation against the IAVL proof spec and returns the root it
// computes and what it shows. index only labels errors.
func (o Op) check(index int) (proven, error) {
	malformed := func(format string, args ...any) (proven, error) {
		return proven{}, ErrMalformedProof{Index: index, Reason: fmt.Sprintf(format, args...)}
	}
	if o.Proof == nil {
		return malformed("no commitment proof")
	}
	switch p := o.Proof.Proof.(type) {
	case *ics23.CommitmentProof_Exist:
		ep := p.Exist
		if ep == nil {
			return malformed("empty existence proof")
		}
		if !bytes.Equal(ep.Key, o.Key) {
			return malformed("existence proof of key %X in an operation for key %X", ep.Key, o.Key)
		}
		root, err := ep.Calculate()
		if err != nil {
			return malformed("existence proof: %v", err)
		}
		if err := ep.Verify(ics23.IavlSpec, root, o.Key, ep.Value); err != nil {
			return malformed("existence proof: %v", err)
		}
		return proven{root: root, present: true, value: ep.Value}, nil
	case *ics23.CommitmentProof_Nonexist:
		np := p.Nonexist
		if np == nil {
			return malformed("empty non-existence proof")
		}
		if !bytes.Equal(np.Key, o.Key) {
			return malformed("non-existence proof of key %X in an operation for key %X", np.Key, o.Key)
		}
		root, err := np.Calculate()
		if err != nil {
			return malformed("non-existence proof: %v", err)
		}
		// Verify checks both neighbours against the same root, that they enclose the
		// key and that they are adjacent leaves (or the tree's edge).
		if err := np.Verify(ics23.IavlSpec, root, o.Key); err != nil {
			return malformed("non-existence proof: %v", err)
		}
		return proven{root: root, left: np.Left, right: np.Right}, nil
	default:
		return malformed("neither an existence nor a non-existence proof (%T)", o.Proof.Proof)
	}
}

// presenceRoot checks that the operation proves its key present with value and
// returns the root it computes.
func (o Op) presenceRoot(index int, value []byte) ([]byte, error) {
	p, err := o.check(index)
	if err != nil {
		return nil, err
	}
	if !p.present {
		return nil, ErrPresenceMismatch{Key: o.Key, Present: false}
	}
	if !bytes.Equal(p.value, value) {
		return nil, ErrValueMismatch{Key: o.Key, Want: value, Got: p.value}
	}
	return p.root, nil
}

// absenceRoot checks that the operation proves its key absent and returns the root it
// computes.
func (o Op) absenceRoot(index int) ([]byte, error) {
	p, err := o.check(index)
	if err != nil {
		return nil, err
	}
	if p.present {
		return nil, ErrPresenceMismatch{Key: o.Key, Present: true}
	}
	return p.root, nil
}
