package proofs

import (
	"bytes"
	"fmt"

	"github.com/cometbft/cometbft/crypto/merkle"
	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
	ics23 "github.com/cosmos/ics23/go"
)

// ProofOpType is the type of every proof operation this package writes and reads: one
// ICS23 commitment proof (existence or non-existence) against an IAVL root.
const ProofOpType = "ics23:iavl"

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
	proof := &ics23.CommitmentProof{}
	if err := proof.Unmarshal(pop.Data); err != nil {
		return Op{}, ErrMalformedProof{Index: index, Reason: fmt.Sprintf("decoding the commitment proof: %v", err)}
	}
	return Op{Key: pop.Key, Proof: proof}, nil
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
