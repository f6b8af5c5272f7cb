package proofs

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
	ics23 "github.com/cosmos/ics23/go"
)

// rangeTree holds b d d\x00 f h j: d\x00 is d's successor, so the link after d is an
// existence proof.
func rangeTree(t *testing.T) testTree {
	t.Helper()
	return newTree(t, kv("f", "6"), kv("b", "2"), kv("j", "10"), kv("d", "4"), kv("h", "8"), kv("d\x00", "40"))
}

func TestProveRange(t *testing.T) {
	tt := rangeTree(t)
	b := func(s string) []byte { return []byte(s) }
	for _, c := range []struct {
		name       string
		start, end []byte
		limit      int
	}{
		{"whole tree", nil, nil, 0},
		{"whole tree from the empty key", b(""), nil, 0},
		{"start before the first key", b("a"), b("z"), 0},
		{"start is the first key", b("b"), nil, 0},
		{"start between keys", b("c"), b("g"), 0},
		{"start present, end present", b("d"), b("h"), 0},
		{"key and its successor", b("d"), b("d\x01"), 0},
		{"only the successor", b("d\x00"), b("e"), 0},
		{"empty range between keys", b("e"), b("f"), 0},
		{"empty range before the first key", b("a"), b("b"), 0},
		{"end right after the first key", nil, b("b\x00"), 0},
		{"range at the very end", b("j"), nil, 0},
		{"empty range past the last key", b("j\x00"), nil, 0},
		{"empty range far past the last key", b("x"), b("z"), 0},
		{"limit 1 from nil", nil, nil, 1},
		{"limit 2 through the successor", b("c"), nil, 2},
		{"limit 3", b("c"), b("i"), 3},
		{"limit equals the answer", b("c"), b("i"), 4},
		{"limit above the answer", b("c"), b("i"), 5},
		{"limit cuts before end of tree", b("h"), nil, 1},
		{"limit reaches the last key", b("h"), nil, 2},
		{"limit on an empty range", b("e"), b("f"), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkRange(t, tt, c.start, c.end, c.limit)
		})
	}
}

// checkRange proves a range, compares the answer with the reference and verifies it.
func checkRange(t *testing.T, tt testTree, start, end []byte, limit int) ([]KV, bool, *cmtcrypto.ProofOps) {
	t.Helper()
	entries, more, ops, err := ProveRange(tt.tree, start, end, limit)
	if err != nil {
		t.Fatalf("ProveRange(%q, %q, %d): %v", start, end, limit, err)
	}
	wantEntries, wantMore := tt.refRange(start, end, limit)
	if !sameEntries(entries, wantEntries) || more != wantMore {
		t.Fatalf("ProveRange(%q, %q, %d) = %q more=%t, want %q more=%t", start, end, limit, entries, more, wantEntries, wantMore)
	}
	if len(ops.Ops) != 1 || ops.Ops[0].Type != RangeOpType || len(batchOf(t, ops)) != len(entries)+1 {
		t.Fatalf("ProveRange(%q, %q, %d) has %d operations (%d proofs in the first) for %d entries", start, end, limit, len(ops.Ops), len(batchOf(t, ops)), len(entries))
	}
	if err := VerifyRange(tt.root, start, end, entries, more, ops); err != nil {
		t.Fatalf("VerifyRange(%q, %q, %d): %v", start, end, limit, err)
	}
	var mm ErrMoreMismatch
	if err := VerifyRange(tt.root, start, end, entries, !more, ops); !errors.As(err, &mm) || mm.Proven != more {
		t.Fatalf("VerifyRange(%q, %q, %d) with more flipped = %v, want ErrMoreMismatch", start, end, limit, err)
	}
	return entries, more, ops
}

func TestProveRangeRejectsEmptyBounds(t *testing.T) {
	tt := rangeTree(t)
	for _, c := range []struct{ start, end []byte }{
		{[]byte("d"), []byte("d")},
		{[]byte("f"), []byte("d")},
		{nil, []byte{}},
	} {
		var ir ErrInvalidRange
		if _, _, _, err := ProveRange(tt.tree, c.start, c.end, 0); !errors.As(err, &ir) {
			t.Fatalf("ProveRange(%q, %q) = %v, want ErrInvalidRange", c.start, c.end, err)
		}
		_, _, ops, err := ProveRange(tt.tree, nil, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifyRange(tt.root, c.start, c.end, nil, false, ops); !errors.As(err, &ir) {
			t.Fatalf("VerifyRange(%q, %q) = %v, want ErrInvalidRange", c.start, c.end, err)
		}
	}
}

// TestTamperedRangeAnswersFail changes a correct answer in every way a dishonest node
// could and checks each change is caught, with the error that names it.
func TestTamperedRangeAnswersFail(t *testing.T) {
	tt := rangeTree(t)
	start, end := []byte("c"), []byte("i")
	entries, more, ops, err := ProveRange(tt.tree, start, end, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 || more {
		t.Fatalf("answer %q more=%t, want d d\\x00 f h", entries, more)
	}
	cut, cutMore, cutOps, err := ProveRange(tt.tree, start, end, 2)
	if err != nil || !cutMore {
		t.Fatalf("cut answer more=%t err=%v", cutMore, err)
	}
	clone := func(es []KV) []KV { return append([]KV(nil), es...) }
	without := func(es []KV, i int) []KV { return append(clone(es[:i]), es[i+1:]...) }
	withoutOp := func(ops *cmtcrypto.ProofOps, i int) *cmtcrypto.ProofOps {
		b := batchOf(t, ops)
		return withBatch(ops, append(b[:i:i], b[i+1:]...))
	}
	otherRoot := bytes.Clone(tt.root)
	otherRoot[3] ^= 0x80
	batch := batchOf(t, ops)
	fakeOp := withBatch(ops, append(batch[:len(batch):len(batch)], batch[len(batch)-1]))
	swappedBatch := batchOf(t, ops)
	swappedBatch[1], swappedBatch[2] = swappedBatch[2], swappedBatch[1]
	swapped := withBatch(ops, swappedBatch)
	startBatch := batchOf(t, ops)
	startBatch[0] = batchOf(t, mustProveRange(t, tt, []byte("a"), end))[0]
	absentStart := withBatch(ops, startBatch)
	twoOps := cloneOps(ops)
	twoOps.Ops = append(twoOps.Ops, twoOps.Ops[0])
	chained := cloneOps(ops)
	chained.Ops[0].Type = ProofOpType
	rekeyed := cloneOps(ops)
	rekeyed.Ops[0].Key = []byte("b")
	// the batch's proofs as a chain of single-key operations: what the answer was
	// before RangeOpType, which a ProofRuntime would read as a chain
	asChain := &cmtcrypto.ProofOps{}
	for _, e := range batchOf(t, ops) {
		var op Op
		if ex := e.GetExist(); ex != nil {
			op = Op{Key: ex.Key, Proof: &ics23.CommitmentProof{Proof: &ics23.CommitmentProof_Exist{Exist: ex}}}
		} else {
			op = Op{Key: e.GetNonexist().Key, Proof: &ics23.CommitmentProof{Proof: &ics23.CommitmentProof_Nonexist{Nonexist: e.GetNonexist()}}}
		}
		asChain.Ops = append(asChain.Ops, op.ProofOp())
	}
	compressed := cloneOps(ops)
	{
		p := &ics23.CommitmentProof{}
		if err := p.Unmarshal(ops.Ops[0].Data); err != nil {
			t.Fatal(err)
		}
		if compressed.Ops[0].Data, err = ics23.Compress(p).Marshal(); err != nil {
			t.Fatal(err)
		}
	}

	type tamper struct {
		name       string
		start, end []byte
		entries    []KV
		more       bool
		ops        *cmtcrypto.ProofOps
		root       []byte
		want       any
	}
	cases := []tamper{
		{name: "other root", entries: entries, ops: ops, root: otherRoot, want: &ErrRootMismatch{}},
		{name: "no proof", entries: entries, ops: nil, want: nil},
		{name: "entry added at the end without an operation", entries: append(clone(entries), kv("h\x00", "x")), ops: ops, want: &ErrMalformedProof{}},
		{name: "entry added at the end with a repeated operation", entries: append(clone(entries), kv("h\x00", "x")), ops: fakeOp, want: &ErrRangeGap{}},
		{name: "entry inserted", entries: append([]KV{kv("c", "3")}, entries[:3]...), ops: ops, want: &ErrRangeGap{}},
		{name: "value changed", entries: append(clone(entries[:2]), kv("f", "7"), entries[3]), ops: ops, want: &ErrValueMismatch{}},
		{name: "key changed", entries: append(clone(entries[:2]), kv("f\x01", "6"), entries[3]), ops: ops, want: &ErrRangeGap{}},
		{name: "proofs swapped", entries: entries, ops: swapped, want: &ErrKeyMismatch{}},
		{name: "operation repeated", entries: entries, ops: twoOps, want: &ErrMalformedProof{}},
		{name: "range operation typed as a single-key operation", entries: entries, ops: chained, want: &ErrMalformedProof{}},
		{name: "range operation keyed by another start", entries: entries, ops: rekeyed, want: &ErrKeyMismatch{}},
		{name: "proofs as a chain of single-key operations", entries: entries, ops: asChain, want: &ErrMalformedProof{}},
		{name: "batch compressed", entries: entries, ops: compressed, want: &ErrMalformedProof{}},
		{name: "start proof replaced", entries: entries, ops: absentStart, want: &ErrKeyMismatch{}},
		{name: "asked for another start", start: []byte("b"), entries: entries, ops: ops, want: &ErrKeyMismatch{}},
		{name: "asked for a narrower end", end: []byte("g"), entries: entries, ops: ops, want: &ErrRangeGap{}},
		{name: "asked for a wider end", end: []byte("z"), entries: entries, ops: ops, want: &ErrMoreMismatch{}},
		{name: "cut answer claimed complete", entries: cut, more: false, ops: cutOps, want: &ErrMoreMismatch{}},
		{name: "cut answer with its last entry dropped, claimed complete", entries: cut[:1], more: false, ops: withoutOp(cutOps, 2), want: &ErrMoreMismatch{}},
	}
	for i := range entries {
		cases = append(cases,
			tamper{name: fmt.Sprintf("entry %d dropped", i), entries: without(entries, i), ops: ops, want: &ErrMalformedProof{}},
			tamper{name: fmt.Sprintf("entry %d dropped with its operation", i), entries: without(entries, i), ops: withoutOp(ops, i+1), want: &ErrRangeGap{}},
		)
	}
	// the last entry dropped with its operation leaves a chain that is whole but
	// shows h follows: that answer must claim more, and claiming more is honest.
	cases[len(cases)-1].want = &ErrMoreMismatch{}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, e, root := start, end, tt.root
			if c.start != nil {
				s = c.start
			}
			if c.end != nil {
				e = c.end
			}
			if c.root != nil {
				root = c.root
			}
			err := VerifyRange(root, s, e, c.entries, c.more, c.ops)
			if err == nil {
				t.Fatal("verified, want an error")
			}
			if c.want == nil {
				if !errors.Is(err, ErrNotProven) {
					t.Fatalf("error %v, want ErrNotProven", err)
				}
				return
			}
			if !errors.As(err, c.want) {
				t.Fatalf("error %v (%T), want %T", err, err, c.want)
			}
		})
	}
	// the honest prefix of a complete answer, with more, verifies: a shorter page is
	// still a correct page.
	if err := VerifyRange(tt.root, start, end, entries[:3], true, withoutOp(ops, 4)); err != nil {
		t.Fatalf("honest prefix with more: %v", err)
	}
}

// TestRangePaging follows NextStart until more is false and gets the whole range.
func TestRangePaging(t *testing.T) {
	tt := rangeTree(t)
	for limit := 1; limit <= 7; limit++ {
		var got []KV
		start := []byte("c")
		for page := 0; ; page++ {
			if page > len(tt.kvs) {
				t.Fatalf("limit %d: paging does not end", limit)
			}
			entries, more, _ := checkRange(t, tt, start, nil, limit)
			got = append(got, entries...)
			if !more {
				break
			}
			start = NextStart(entries)
		}
		if want, _ := tt.refRange([]byte("c"), nil, 0); !sameEntries(got, want) {
			t.Fatalf("limit %d: pages give %q, want %q", limit, got, want)
		}
	}
	if NextStart(nil) != nil {
		t.Fatal("NextStart of no entries is not nil")
	}
}

// TestRandomRanges compares ProveRange with the sorted-slice reference on random trees
// (keys over a tiny alphabet so that keys, their prefixes and their successors k++0x00
// all occur) and checks every answer verifies, and that a random change does not.
func TestRandomRanges(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(20240601, 7))
	alphabet := []byte{0x00, 0x01, 'a', 0xff}
	randKey := func() []byte {
		k := make([]byte, 1+rng.IntN(3))
		for i := range k {
			k[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return k
	}
	for round := 0; round < 40; round++ {
		var writes [][]KV
		for v := 0; v < 2; v++ {
			var set []KV
			for n := 1 + rng.IntN(40); n > 0; n-- {
				k := randKey()
				if v > 0 && rng.IntN(3) == 0 {
					set = append(set, KV{Key: k})
					continue
				}
				set = append(set, KV{Key: k, Value: []byte(fmt.Sprintf("v%d.%d", round, rng.IntN(1000)))})
			}
			writes = append(writes, set)
		}
		versions := newVersions(t, writes...)
		tt := versions[rng.IntN(len(versions))]
		if len(tt.kvs) == 0 {
			continue
		}
		for q := 0; q < 30; q++ {
			var start, end []byte
			if rng.IntN(4) > 0 {
				start = randKey()
			}
			if rng.IntN(3) > 0 {
				end = randKey()
				if bytes.Compare(start, end) >= 0 {
					start, end = end, start
				}
				if bytes.Equal(start, end) {
					end = append(end, 0)
				}
			}
			limit := rng.IntN(5)
			entries, more, ops := checkRange(t, tt, start, end, limit)
			mutateAndExpectFailure(t, rng, tt, start, end, entries, more, ops)
		}
	}
}

// batchOf returns the batch entries of a range answer's one operation.
func batchOf(t testing.TB, ops *cmtcrypto.ProofOps) []*ics23.BatchEntry {
	t.Helper()
	p := &ics23.CommitmentProof{}
	if err := p.Unmarshal(ops.Ops[0].Data); err != nil {
		t.Fatal(err)
	}
	return p.GetBatch().GetEntries()
}

// withBatch returns ops with the batch of its one operation replaced by entries.
func withBatch(ops *cmtcrypto.ProofOps, entries []*ics23.BatchEntry) *cmtcrypto.ProofOps {
	out := cloneOps(ops)
	data, err := (&ics23.CommitmentProof{Proof: &ics23.CommitmentProof_Batch{Batch: &ics23.BatchProof{Entries: entries}}}).Marshal()
	if err != nil {
		panic(err)
	}
	out.Ops[0].Data = data
	return out
}

func mustProveRange(t testing.TB, tt testTree, start, end []byte) *cmtcrypto.ProofOps {
	t.Helper()
	_, _, ops, err := ProveRange(tt.tree, start, end, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// mutateAndExpectFailure applies one random change to a verified answer and requires
// the verification to fail.
func mutateAndExpectFailure(t *testing.T, rng *rand.Rand, tt testTree, start, end []byte, entries []KV, more bool, ops *cmtcrypto.ProofOps) {
	t.Helper()
	es := append([]KV(nil), entries...)
	o := cloneOps(ops)
	var what string
	switch m := rng.IntN(4); {
	case m == 0 && len(es) > 0:
		i := rng.IntN(len(es))
		es[i].Value = append(bytes.Clone(es[i].Value), '!')
		what = fmt.Sprintf("value %d changed", i)
	case m == 1 && len(es) > 0:
		i := rng.IntN(len(es))
		es = append(es[:i], es[i+1:]...)
		b := batchOf(t, o)
		o = withBatch(o, append(b[:i+1], b[i+2:]...))
		if i == len(es) {
			// dropping the last entry and its operation leaves an honest shorter
			// page: it verifies when it announces more, and only then.
			if err := VerifyRange(tt.root, start, end, es, true, o); err != nil {
				t.Fatalf("honest shorter page of [%q, %q): %v", start, end, err)
			}
			more = false
		}
		what = fmt.Sprintf("entry %d dropped with its proof", i)
	case m == 2:
		i := rng.IntN(len(o.Ops[0].Data))
		o.Ops[0].Data[i] ^= byte(1 << rng.IntN(8))
		what = fmt.Sprintf("proof byte %d flipped", i)
	default:
		k := append(bytes.Clone(start), 0x01)
		if _, present := tt.get(k); present {
			return
		}
		es = append(es, KV{Key: k, Value: []byte("x")})
		what = "entry added"
	}
	if err := VerifyRange(tt.root, start, end, es, more, o); err == nil {
		t.Fatalf("[%q, %q) answer with %s verifies", start, end, what)
	}
}
