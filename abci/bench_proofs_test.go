package abci

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
	ics23 "github.com/cosmos/ics23/go"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
)

// benchProofDocs is the stored documents BenchmarkProofs measures at.
var benchProofDocs = flag.String("bench.docs", "10000,1000000", "stored documents of BenchmarkProofs, comma-separated")

// BenchmarkProofs measures proven answers generated through the ABCI Query path from
// the saved version and verified with the proofs package as a client does, with 10,000
// and 1,000,000 posts stored (benchPosts: 3 keys a post, besides benchChain's 40,000
// identity keys), each sub-benchmark reporting answers (generated and verified) per
// second, the time of each half, and the answer's size (value and proof operations;
// for a single key also the proof operations alone):
//
//   - balance: one identity balance (PathKey), checked by proofs.VerifyPresence;
//   - document: one document row (PathDocument), checked by proofs.VerifyPresence on
//     the key TargetOf names;
//   - query50: one author's 50 newest posts (benchQuery50), checked by
//     proofs.VerifyDocuments; it also reports the bytes of its 50 row proofs, and what
//     the same 50 ICS23 proofs take combined into one compressed batch
//     (ics23.CombineProofs, checked with ics23.BatchVerifyMembership), and the size of
//     all the answer's ICS23 proofs (version, contract, the range's links, the rows)
//     combined so: formats the answers do not use.
func BenchmarkProofs(b *testing.B) {
	var sizes []int
	for _, f := range strings.Split(*benchProofDocs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 100 {
			b.Fatalf("-bench.docs %q: each size must be a number of at least 100", *benchProofDocs)
		}
		sizes = append(sizes, n)
	}
	for _, existing := range sizes {
		b.Run(fmt.Sprintf("docs=%d", existing), func(b *testing.B) {
			start := time.Now()
			h, ids, t := benchPosts(b, existing)
			b.Logf("%d posts written in %s (IAVL node cache %d)", existing, time.Since(start).Round(time.Second), *benchCache)
			root := h.rootAt(0)
			b.Run("balance", func(b *testing.B) {
				benchPointProof(b, h, root, func(n int) (string, []byte) {
					return proofs.PathKey, drive.IdentityBalanceKey(ids[(n*7919)%len(ids)].id)
				})
			})
			b.Run("document", func(b *testing.B) {
				benchPointProof(b, h, root, func(n int) (string, []byte) {
					d := existingPost(ids, t, existing, (n*7919)%existing)
					return proofs.PathDocument, proofs.DocumentData(t.Contract, t.Name, d.ID)
				})
			})
			b.Run("query50", func(b *testing.B) {
				authors := ids[:benchAuthors(existing)]
				benchQuery50(b, h, authors, t)
				benchRowsCombined(b, h, root, authors[0], t)
			})
		})
	}
}

// benchPointProof generates and verifies b.N single-key answers of the path and data
// that query(n) names.
func benchPointProof(b *testing.B, h *harness, root []byte, query func(n int) (string, []byte)) {
	var generate, verify time.Duration
	var size, proofSize int
	b.ResetTimer()
	for n := range b.N {
		path, data := query(n)
		start := time.Now()
		res, err := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: path, Data: data, Prove: true})
		generated := time.Now()
		if err != nil || res.Code != 0 || res.ProofOps == nil || len(res.Value) == 0 {
			b.Fatalf("query %s: %v %d %s", path, err, res.Code, res.Log)
		}
		target, err := proofs.TargetOf(path, data)
		if err == nil {
			err = proofs.VerifyPresence(root, target.Key, res.Value, res.ProofOps)
		}
		verify += time.Since(generated)
		generate += generated.Sub(start)
		if err != nil {
			b.Fatal(err)
		}
		size = len(res.Value) + opsSize(res.ProofOps)
		proofSize = opsSize(res.ProofOps)
	}
	b.StopTimer()
	reportProofs(b, generate, verify, size)
	b.ReportMetric(float64(proofSize), "proof-bytes")
}

// reportProofs reports answers per second and the time of each half.
func reportProofs(b *testing.B, generate, verify time.Duration, size int) {
	n := float64(b.N)
	b.ReportMetric(n/(generate+verify).Seconds(), "answers/s")
	b.ReportMetric(float64(generate.Microseconds())/n, "us/generate")
	b.ReportMetric(float64(verify.Microseconds())/n, "us/verify")
	b.ReportMetric(float64(size), "answer-bytes")
}

// opsSize is what proof operations take: their type, key and data.
func opsSize(ops *cmtcrypto.ProofOps) int {
	size := 0
	for _, op := range ops.Ops {
		size += len(op.Type) + len(op.Key) + len(op.Data)
	}
	return size
}

// benchRowsCombined takes author's 50-post answer and reports the bytes of its 50 row
// proofs as the answer carries them, and as one ICS23 batch proof combining them,
// which it checks against root.
func benchRowsCombined(b *testing.B, h *harness, root []byte, author benchIdentity, t drive.DocumentType) {
	q := fmt.Sprintf(`{"where":[["author","==",[%s]]],"orderBy":[["$createdAt","desc"]],"limit":50}`, byteList(author.id[:]))
	res, err := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathDocuments, Data: proofs.DocumentsData(t.Contract, t.Name, []byte(q)), Prove: true})
	if err != nil || res.Code != 0 || len(res.ProofOps.Ops) < 50 {
		b.Fatalf("query: %v %d %s", err, res.Code, res.Log)
	}
	// The answer's operations end with the rows, one each (proofs.AnswerDocuments).
	rows := res.ProofOps.Ops[len(res.ProofOps.Ops)-50:]
	var separate int
	var list []*ics23.CommitmentProof
	items := map[string][]byte{}
	for _, op := range rows {
		if op.Type != proofs.ProofOpType || !bytes.HasPrefix(op.Key, drive.DocumentsPrefix(t.Contract, t.Name)) {
			b.Fatalf("operation %s on %X is no row proof", op.Type, op.Key)
		}
		separate += len(op.Type) + len(op.Key) + len(op.Data)
		p := &ics23.CommitmentProof{}
		if err := p.Unmarshal(op.Data); err != nil {
			b.Fatal(err)
		}
		list = append(list, p)
		items[string(p.GetExist().Key)] = p.GetExist().Value
	}
	combined, err := ics23.CombineProofs(list)
	if err != nil {
		b.Fatal(err)
	}
	if !ics23.BatchVerifyMembership(ics23.IavlSpec, root, combined, items) {
		b.Fatal("the combined proof does not verify")
	}
	data, err := combined.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	// Every ICS23 proof of the answer (the version, the contract, the range's links and
	// the rows) in one compressed batch: its size only.
	var all []*ics23.CommitmentProof
	for _, op := range res.ProofOps.Ops {
		p := &ics23.CommitmentProof{}
		if err := p.Unmarshal(op.Data); err != nil {
			b.Fatal(err)
		}
		if op.Type != proofs.RangeOpType {
			all = append(all, p)
			continue
		}
		for _, e := range p.GetBatch().GetEntries() {
			if x := e.GetExist(); x != nil {
				all = append(all, &ics23.CommitmentProof{Proof: &ics23.CommitmentProof_Exist{Exist: x}})
			} else {
				all = append(all, &ics23.CommitmentProof{Proof: &ics23.CommitmentProof_Nonexist{Nonexist: e.GetNonexist()}})
			}
		}
	}
	everything, err := ics23.CombineProofs(all)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(separate), "row-proof-bytes")
	b.ReportMetric(float64(len(data)), "rows-combined-bytes")
	b.ReportMetric(float64(everything.Size()), "all-combined-bytes")
	b.ReportMetric(float64(opsSize(res.ProofOps)), "proof-bytes")
	b.ReportMetric(float64(len(res.Value)), "value-bytes")
}
