package proofs

import (
	"bytes"
	"fmt"
	"sort"
	"testing"

	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
	ics23 "github.com/cosmos/ics23/go"
)

// laxStatements decodes data as a third party with cosmos/ics23 alone would (plain
// protobuf decoding, no canonical-encoding check) and returns every statement the
// proofs in it make that ics23 accepts against root: "present k v" for an existence
// proof, "absent between l and r" for a non-existence proof (nil when it does not
// decode). A statement is what a verifier can learn from a proof whatever key it asks
// about, so a change that keeps the list keeps every verdict.
func laxStatements(root, data []byte) []string {
	p := &ics23.CommitmentProof{}
	if err := p.Unmarshal(data); err != nil {
		return nil
	}
	var exist []*ics23.ExistenceProof
	var nonexist []*ics23.NonExistenceProof
	switch {
	case p.GetExist() != nil:
		exist = append(exist, p.GetExist())
	case p.GetNonexist() != nil:
		nonexist = append(nonexist, p.GetNonexist())
	case p.GetBatch() != nil:
		for _, e := range p.GetBatch().Entries {
			if e.GetExist() != nil {
				exist = append(exist, e.GetExist())
			} else if e.GetNonexist() != nil {
				nonexist = append(nonexist, e.GetNonexist())
			}
		}
	}
	var out []string
	for _, ep := range exist {
		if ep.Verify(ics23.IavlSpec, root, ep.Key, ep.Value) == nil {
			out = append(out, fmt.Sprintf("present %X %X", ep.Key, ep.Value))
		}
	}
	for _, np := range nonexist {
		// ask about a key strictly between the neighbours: np.Key itself is not
		// bound by ics23 (see below), so take the neighbours' own keys
		var l, r []byte
		if np.Left != nil {
			l = np.Left.Key
		}
		if np.Right != nil {
			r = np.Right.Key
		}
		probe := successor(l)
		if l == nil {
			probe = []byte{}
			if len(r) > 0 && r[0] == 0 && len(r) == 1 {
				continue
			}
		}
		if r != nil && bytes.Compare(probe, r) >= 0 {
			continue
		}
		if np.Verify(ics23.IavlSpec, root, probe) == nil {
			out = append(out, fmt.Sprintf("absent between %X and %X", l, r))
		}
	}
	sort.Strings(out)
	return out
}

// trueInTree reports whether statement s (from laxStatements) holds in tt.
func trueInTree(tt testTree, s string) bool {
	for i, e := range tt.kvs {
		if s == fmt.Sprintf("present %X %X", e.Key, e.Value) {
			return true
		}
		var next []byte
		if i+1 < len(tt.kvs) {
			next = tt.kvs[i+1].Key
		}
		if s == fmt.Sprintf("absent between %X and %X", e.Key, next) {
			return true
		}
	}
	return len(tt.kvs) > 0 && s == fmt.Sprintf("absent between %X and %X", []byte(nil), tt.kvs[0].Key)
}

// TestProofMalleability changes every byte of representative proofs (single-key
// proofs: to each of the 255 other values; the range proof, whose batch entries are
// such proofs: each bit flipped, and the byte set to 0x00 and to 0xff) and sorts the
// results:
//   - our verifier (strict: canonical encoding, the non-existence proof's key bound)
//     accepts none of them;
//   - a lax third-party check with cosmos/ics23 alone accepts some, and every one it
//     accepts makes exactly the statements of the original proof: no change lets
//     another key, another value, the absence of a present key or another range
//     verify. Every statement any variant makes is true in the tree.
//
// It also logs which byte ranges are malleable under the lax check (docs/PROOFS.md
// records the finding).
func TestProofMalleability(t *testing.T) {
	t.Parallel()
	tt := rangeTree(t)
	type sample struct {
		name       string
		ops        *cmtcrypto.ProofOps
		strict     func(*cmtcrypto.ProofOps) error
		exhaustive bool
	}
	single := func(key string) sample {
		value, ops, err := Prove(tt.tree, []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		name := "absence of " + key
		strict := func(o *cmtcrypto.ProofOps) error { return VerifyAbsence(tt.root, []byte(key), o) }
		if value != nil {
			name = "presence of " + key
			strict = func(o *cmtcrypto.ProofOps) error { return VerifyPresence(tt.root, []byte(key), value, o) }
		}
		return sample{name, ops, strict, true}
	}
	start, end := []byte("c"), []byte("i")
	entries, more, rangeOps, err := ProveRange(tt.tree, start, end, 0)
	if err != nil {
		t.Fatal(err)
	}
	samples := []sample{
		single("d"), single("c"), single("a"), single("z"),
		{"range [c, i)", rangeOps, func(o *cmtcrypto.ProofOps) error { return VerifyRange(tt.root, start, end, entries, more, o) }, false},
	}
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			data := s.ops.Ops[0].Data
			want := laxStatements(tt.root, data)
			if len(want) == 0 || s.strict(s.ops) != nil {
				t.Fatalf("the untouched proof does not verify (statements %q)", want)
			}
			for _, st := range want {
				if !trueInTree(tt, st) {
					t.Fatalf("the untouched proof states %q, false in the tree", st)
				}
			}
			var malleable []int
			for i := range data {
				values := map[byte]bool{0x00: true, 0xff: true}
				for bit := 0; bit < 8; bit++ {
					values[data[i]^1<<bit] = true
				}
				if s.exhaustive {
					for v := 0; v < 256; v++ {
						values[byte(v)] = true
					}
				}
				delete(values, data[i])
				laxOK := false
				for v := range values {
					changed := cloneOps(s.ops)
					changed.Ops[0].Data[i] = v
					if err := s.strict(changed); err == nil {
						t.Fatalf("byte %d set to %#02x: our verifier accepts it", i, v)
					}
					got := laxStatements(tt.root, changed.Ops[0].Data)
					for _, st := range got {
						if !trueInTree(tt, st) {
							t.Fatalf("byte %d set to %#02x: ics23 accepts the false statement %q", i, v, st)
						}
					}
					if len(got) > 0 && fmt.Sprint(got) != fmt.Sprint(want) {
						// fewer statements is a proof that says less, never something else
						for _, st := range got {
							if !contains(want, st) {
								t.Fatalf("byte %d set to %#02x: states %q, the proof states %q", i, v, got, want)
							}
						}
					}
					laxOK = laxOK || fmt.Sprint(got) == fmt.Sprint(want)
				}
				if laxOK {
					malleable = append(malleable, i)
				}
			}
			keyFields := nonExistenceKeyFields(t, data)
			for _, i := range malleable {
				in := false
				for _, f := range keyFields {
					in = in || (f[0] <= i && i < f[1])
				}
				if !in {
					t.Fatalf("byte %d is malleable under a lax check and outside every non-existence proof's key field %v", i, keyFields)
				}
			}
			t.Logf("%d of %d bytes can change with every statement kept under a lax ics23 check: %v(non-existence key fields at %v)", len(malleable), len(data), spans(malleable), keyFields)
		})
	}
}

// TestNonCanonicalEncodings: encodings protobuf decodes to the same proof (an unknown
// field appended, a length written as a padded varint, a field repeated) are accepted
// by a lax decoder and refused by ours.
func TestNonCanonicalEncodings(t *testing.T) {
	tt := rangeTree(t)
	value, ops, err := Prove(tt.tree, []byte("d"))
	if err != nil {
		t.Fatal(err)
	}
	data := ops.Ops[0].Data
	// CommitmentProof field 1 (exist) is data[0] = 0x0a, then its length as a varint.
	if data[0] != 0x0a || data[1]&0x80 == 0 {
		t.Fatalf("unexpected proof layout %X", data[:4])
	}
	padded := append([]byte{data[0], data[1], data[2] | 0x80, 0x00}, data[3:]...)
	for name, variant := range map[string][]byte{
		"unknown field appended":    append(bytes.Clone(data), 0x78, 0x01), // field 15, varint 1
		"length as a padded varint": padded,
		"field repeated":            append(bytes.Clone(data), data...),
	} {
		want := laxStatements(tt.root, data)
		if got := laxStatements(tt.root, variant); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: a lax decoder reads %q, want %q", name, got, want)
		}
		changed := cloneOps(ops)
		changed.Ops[0].Data = variant
		err := VerifyPresence(tt.root, []byte("d"), value, changed)
		expectAs[ErrMalformedProof](t, err)
	}
}

// nonExistenceKeyFields returns the byte spans [from, to) of data that encode the key
// field (tag, length and key) of each non-existence proof in it.
func nonExistenceKeyFields(t *testing.T, data []byte) [][2]int {
	t.Helper()
	p := &ics23.CommitmentProof{}
	if err := p.Unmarshal(data); err != nil {
		t.Fatal(err)
	}
	var nps []*ics23.NonExistenceProof
	if np := p.GetNonexist(); np != nil {
		nps = append(nps, np)
	}
	for _, e := range p.GetBatch().GetEntries() {
		if np := e.GetNonexist(); np != nil {
			nps = append(nps, np)
		}
	}
	var out [][2]int
	for _, np := range nps {
		enc, err := np.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		at := bytes.Index(data, enc)
		if at < 0 || enc[0] != 0x0a {
			t.Fatalf("non-existence proof of %X not found as a message starting with its key", np.Key)
		}
		keyField := (&ics23.NonExistenceProof{Key: np.Key}).Size()
		out = append(out, [2]int{at, at + keyField})
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// spans renders sorted offsets as ranges "a-b".
func spans(offsets []int) string {
	var b bytes.Buffer
	for i := 0; i < len(offsets); {
		j := i
		for j+1 < len(offsets) && offsets[j+1] == offsets[j]+1 {
			j++
		}
		fmt.Fprintf(&b, "%d-%d ", offsets[i], offsets[j])
		i = j + 1
	}
	return b.String()
}
