package proofs

import (
	"bytes"
	"errors"
	"testing"

	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
	ics23 "github.com/cosmos/ics23/go"
)

// twoVersions is version 1 {b, d, d\x00, f, h} and version 2 where d changed and f is
// gone, so that a proof of one version never verifies against the other.
func twoVersions(t *testing.T) (v1, v2 testTree) {
	t.Helper()
	vs := newVersions(t,
		[]KV{kv("d", "4"), kv("b", "2"), kv("h", "8"), kv("f", "6"), kv("d\x00", "40")},
		[]KV{kv("d", "44"), {Key: []byte("f")}},
	)
	return vs[0], vs[1]
}

func TestProvePresenceAndAbsence(t *testing.T) {
	v1, v2 := twoVersions(t)
	for _, tt := range []testTree{v1, v2} {
		for _, key := range []string{"", "a", "b", "b\x00", "c", "d", "d\x00", "d\x00\x00", "e", "f", "g", "h", "h\x00", "z"} {
			want, present := tt.get([]byte(key))
			value, ops, err := Prove(tt.tree, []byte(key))
			if err != nil {
				t.Fatalf("version %d, Prove(%q): %v", tt.tree.Version(), key, err)
			}
			if present != (value != nil) || !bytes.Equal(value, want) {
				t.Fatalf("version %d, Prove(%q) = %q (present %t), want %q (present %t)", tt.tree.Version(), key, value, value != nil, want, present)
			}
			if present {
				if err := VerifyPresence(tt.root, []byte(key), value, ops); err != nil {
					t.Fatalf("version %d, VerifyPresence(%q): %v", tt.tree.Version(), key, err)
				}
				var pm ErrPresenceMismatch
				if err := VerifyAbsence(tt.root, []byte(key), ops); !errors.As(err, &pm) || !pm.Present {
					t.Fatalf("VerifyAbsence(%q) of a present key = %v, want ErrPresenceMismatch{Present: true}", key, err)
				}
			} else {
				if err := VerifyAbsence(tt.root, []byte(key), ops); err != nil {
					t.Fatalf("version %d, VerifyAbsence(%q): %v", tt.tree.Version(), key, err)
				}
				var pm ErrPresenceMismatch
				if err := VerifyPresence(tt.root, []byte(key), nil, ops); !errors.As(err, &pm) || pm.Present {
					t.Fatalf("VerifyPresence(%q) of an absent key = %v, want ErrPresenceMismatch{Present: false}", key, err)
				}
			}
		}
	}
}

// TestProofIsBoundToItsVersion: a proof of version 1 does not verify against the root
// of version 2, even for a key whose value did not change.
func TestProofIsBoundToItsVersion(t *testing.T) {
	v1, v2 := twoVersions(t)
	value, ops, err := Prove(v1.tree, []byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	var rm ErrRootMismatch
	if err := VerifyPresence(v2.root, []byte("b"), value, ops); !errors.As(err, &rm) || !bytes.Equal(rm.Want, v2.root) || !bytes.Equal(rm.Got, v1.root) {
		t.Fatalf("VerifyPresence against the next version = %v, want ErrRootMismatch{Want: v2, Got: v1}", err)
	}
	_, ops, err = Prove(v2.tree, []byte("f"))
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyAbsence(v1.root, []byte("f"), ops); !errors.As(err, &rm) {
		t.Fatalf("VerifyAbsence of a deleted key against the version that had it = %v, want ErrRootMismatch", err)
	}
}

func cloneOps(ops *cmtcrypto.ProofOps) *cmtcrypto.ProofOps {
	out := &cmtcrypto.ProofOps{}
	for _, op := range ops.Ops {
		out.Ops = append(out.Ops, cmtcrypto.ProofOp{Type: op.Type, Key: bytes.Clone(op.Key), Data: bytes.Clone(op.Data)})
	}
	return out
}

func mustProve(t *testing.T, tt testTree, key string) *cmtcrypto.ProofOps {
	t.Helper()
	_, ops, err := Prove(tt.tree, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// opFromProof packs a hand-built commitment proof as an operation for key.
func opFromProof(key []byte, p *ics23.CommitmentProof) *cmtcrypto.ProofOps {
	op := Op{Key: key, Proof: p}
	return &cmtcrypto.ProofOps{Ops: []cmtcrypto.ProofOp{op.ProofOp()}}
}

func TestTamperedSingleKeyAnswersFail(t *testing.T) {
	v1, _ := twoVersions(t)
	presentOps := mustProve(t, v1, "d")
	absentOps := mustProve(t, v1, "c")

	// forged non-existence proof of the present key d, from its real neighbours b and
	// d\x00: they are not adjacent (d lies between), which ICS23 must catch.
	left, err := v1.tree.GetMembershipProof([]byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	right, err := v1.tree.GetMembershipProof([]byte("d\x00"))
	if err != nil {
		t.Fatal(err)
	}
	forged := &ics23.CommitmentProof{Proof: &ics23.CommitmentProof_Nonexist{Nonexist: &ics23.NonExistenceProof{
		Key: []byte("d"), Left: left.GetExist(), Right: right.GetExist(),
	}}}
	// forged existence proof: d's real proof relabelled as key c.
	dProof, err := v1.tree.GetMembershipProof([]byte("d"))
	if err != nil {
		t.Fatal(err)
	}
	dProof.GetExist().Key = []byte("c")

	typed := cloneOps(presentOps)
	typed.Ops[0].Type = "iavl:v"
	twoOps := cloneOps(presentOps)
	twoOps.Ops = append(twoOps.Ops, absentOps.Ops...)
	relabelled := cloneOps(presentOps)
	relabelled.Ops[0].Key = []byte("c")
	otherRoot := bytes.Clone(v1.root)
	otherRoot[0] ^= 1

	for _, c := range []struct {
		name  string
		check func() error
		want  any // a sentinel error for errors.Is or a pointer to an error type for errors.As
	}{
		{"presence: other value", func() error { return VerifyPresence(v1.root, []byte("d"), []byte("5"), presentOps) }, &ErrValueMismatch{}},
		{"presence: empty value", func() error { return VerifyPresence(v1.root, []byte("d"), nil, presentOps) }, &ErrValueMismatch{}},
		{"presence: other key", func() error { return VerifyPresence(v1.root, []byte("b"), []byte("4"), presentOps) }, &ErrKeyMismatch{}},
		{"presence: other root", func() error { return VerifyPresence(otherRoot, []byte("d"), []byte("4"), presentOps) }, &ErrRootMismatch{}},
		{"presence: no proof", func() error { return VerifyPresence(v1.root, []byte("d"), []byte("4"), nil) }, ErrNotProven},
		{"presence: empty proof", func() error { return VerifyPresence(v1.root, []byte("d"), []byte("4"), &cmtcrypto.ProofOps{}) }, ErrNotProven},
		{"presence: two operations", func() error { return VerifyPresence(v1.root, []byte("d"), []byte("4"), twoOps) }, &ErrMalformedProof{}},
		{"presence: wrong op type", func() error { return VerifyPresence(v1.root, []byte("d"), []byte("4"), typed) }, &ErrMalformedProof{}},
		{"presence: op relabelled", func() error { return VerifyPresence(v1.root, []byte("c"), []byte("4"), relabelled) }, &ErrMalformedProof{}},
		{"presence: proof relabelled", func() error {
			return VerifyPresence(v1.root, []byte("c"), []byte("4"), opFromProof([]byte("c"), dProof))
		}, &ErrRootMismatch{}},
		{"absence: other key", func() error { return VerifyAbsence(v1.root, []byte("a"), absentOps) }, &ErrKeyMismatch{}},
		{"absence: other root", func() error { return VerifyAbsence(otherRoot, []byte("c"), absentOps) }, &ErrRootMismatch{}},
		{"absence: present key by non-adjacent neighbours", func() error {
			return VerifyAbsence(v1.root, []byte("d"), opFromProof([]byte("d"), forged))
		}, &ErrMalformedProof{}},
		{"absence: proof of another absent key relabelled", func() error {
			ops := cloneOps(mustProve(t, v1, "g"))
			ops.Ops[0].Key = []byte("c")
			return VerifyAbsence(v1.root, []byte("c"), ops)
		}, &ErrMalformedProof{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.check()
			if err == nil {
				t.Fatal("verified, want an error")
			}
			if c.want == ErrNotProven {
				if !errors.Is(err, ErrNotProven) {
					t.Fatalf("error %v, want %v", err, ErrNotProven)
				}
				return
			}
			if !errors.As(err, c.want) {
				t.Fatalf("error %v (%T), want %T", err, err, c.want)
			}
		})
	}
}

// TestEveryFlippedProofByteFails flips each bit of each proof's bytes: no variant may
// verify.
func TestEveryFlippedProofByteFails(t *testing.T) {
	v1, _ := twoVersions(t)
	for _, key := range []string{"b", "d", "h", "a", "c", "z"} {
		value, ops, err := Prove(v1.tree, []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		verify := func(ops *cmtcrypto.ProofOps) error {
			if value != nil {
				return VerifyPresence(v1.root, []byte(key), value, ops)
			}
			return VerifyAbsence(v1.root, []byte(key), ops)
		}
		if err := verify(ops); err != nil {
			t.Fatalf("untampered proof of %q: %v", key, err)
		}
		for i := range ops.Ops[0].Data {
			for bit := 0; bit < 8; bit++ {
				tampered := cloneOps(ops)
				tampered.Ops[0].Data[i] ^= 1 << bit
				if err := verify(tampered); err == nil {
					t.Fatalf("proof of %q with byte %d bit %d flipped verifies", key, i, bit)
				}
			}
		}
	}
}

func TestProofRuntime(t *testing.T) {
	v1, _ := twoVersions(t)
	rt := NewProofRuntime()
	for _, key := range []string{"b", "d", "d\x00", "h"} {
		value, ops, err := Prove(v1.tree, []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.VerifyValue(ops, v1.root, KeyPath([]byte(key)), value); err != nil {
			t.Fatalf("runtime VerifyValue(%q): %v", key, err)
		}
		if err := rt.VerifyValue(ops, v1.root, KeyPath([]byte(key)), append(bytes.Clone(value), 'x')); err == nil {
			t.Fatalf("runtime VerifyValue(%q) with another value verifies", key)
		}
		if err := rt.VerifyValue(ops, v1.root, KeyPath([]byte("a")), value); err == nil {
			t.Fatalf("runtime VerifyValue(%q) under the key path of a verifies", key)
		}
		if err := rt.VerifyAbsence(ops, v1.root, KeyPath([]byte(key))); err == nil {
			t.Fatalf("runtime VerifyAbsence(%q) of a present key verifies", key)
		}
	}
	for _, key := range []string{"a", "c", "d\x00\x00", "z"} {
		value, ops, err := Prove(v1.tree, []byte(key))
		if err != nil || value != nil {
			t.Fatalf("Prove(%q) = %q, %v", key, value, err)
		}
		if err := rt.VerifyAbsence(ops, v1.root, KeyPath([]byte(key))); err != nil {
			t.Fatalf("runtime VerifyAbsence(%q): %v", key, err)
		}
		other := bytes.Clone(v1.root)
		other[len(other)-1] ^= 1
		if err := rt.VerifyAbsence(ops, other, KeyPath([]byte(key))); err == nil {
			t.Fatalf("runtime VerifyAbsence(%q) against another root verifies", key)
		}
		if err := rt.VerifyValue(ops, v1.root, KeyPath([]byte(key)), []byte("x")); err == nil {
			t.Fatalf("runtime VerifyValue(%q) of an absent key verifies", key)
		}
	}
	// a range answer's operation is not a single-key operation: the runtime, which
	// knows ProofOpType only, refuses it whatever it is asked
	entries, _, rangeOps, err := ProveRange(v1.tree, []byte("b"), []byte("e"), 0)
	if err != nil || len(entries) != 3 {
		t.Fatalf("ProveRange = %q, %v", entries, err)
	}
	if err := rt.VerifyValue(rangeOps, v1.root, KeyPath([]byte("b")), entries[0].Value); err == nil {
		t.Fatal("runtime VerifyValue of a range answer's operation verifies")
	}
	if err := rt.VerifyAbsence(rangeOps, v1.root, KeyPath([]byte("b"))); err == nil {
		t.Fatal("runtime VerifyAbsence of a range answer's operation verifies")
	}
	if got, want := KeyPath([]byte{0x00, 0xab, '/'}), "/x:00AB2F"; got != want {
		t.Fatalf("KeyPath = %q, want %q", got, want)
	}
	op, err := DecodeOp(mustProve(t, v1, "b").Ops[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Run([][]byte{[]byte("2"), []byte("2")}); !errors.As(err, new(ErrMalformedProof)) {
		t.Fatalf("Run with two values = %v, want ErrMalformedProof", err)
	}
	if _, err := DecodeOp(cmtcrypto.ProofOp{Type: ProofOpType, Data: []byte{0xff}}); err == nil {
		t.Fatal("DecodeOp of garbage succeeds")
	}
}

// TestEmptyLeavesAreUnprovable: ICS23 refuses leaves with an empty value, so Prove
// refuses every proof that would need one instead of returning a proof that cannot
// verify.
func TestEmptyLeavesAreUnprovable(t *testing.T) {
	tt := newTree(t, kv("b", "2"), KV{Key: []byte("e"), Value: []byte{}}, kv("h", "8"))
	for _, key := range []string{"e", "d", "f"} {
		var u ErrUnprovable
		if _, _, err := Prove(tt.tree, []byte(key)); !errors.As(err, &u) || !bytes.Equal(u.Key, []byte("e")) {
			t.Fatalf("Prove(%q) next to an empty value = %v, want ErrUnprovable{Key: e}", key, err)
		}
	}
	var u ErrUnprovable
	if _, _, _, err := ProveRange(tt.tree, []byte("a"), nil, 0); !errors.As(err, &u) {
		t.Fatalf("ProveRange over an empty value = %v, want ErrUnprovable", err)
	}
	for _, key := range []string{"a", "b", "h", "z"} {
		value, ops, err := Prove(tt.tree, []byte(key))
		if err != nil {
			t.Fatalf("Prove(%q) away from the empty value: %v", key, err)
		}
		if value != nil {
			err = VerifyPresence(tt.root, []byte(key), value, ops)
		} else {
			err = VerifyAbsence(tt.root, []byte(key), ops)
		}
		if err != nil {
			t.Fatalf("verifying %q: %v", key, err)
		}
	}
}
