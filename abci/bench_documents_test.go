package abci

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// benchPostContract is the benchmarks' document type: three properties, two indexes
// (one of two properties), documents of about 200 bytes.
const benchPostContract = `{"documentSchemas":{"post":{"type":"object","properties":{` +
	`"author":{"type":"array","byteArray":true,"minItems":32,"maxItems":32,"contentMediaType":"application/x.dash.dpp.identifier","position":0},` +
	`"title":{"type":"string","maxLength":63,"position":1},` +
	`"body":{"type":"string","maxLength":200,"position":2}},` +
	`"required":["author","title","body"],"additionalProperties":false,` +
	`"indices":[{"name":"byAuthor","properties":[{"author":"asc"},{"$createdAt":"desc"}]},{"name":"byTitle","properties":[{"title":"asc"}]}]}}}`

// benchAuthors is how many identities wrote the existing posts: 100 posts each.
func benchAuthors(existing int) int { return max(1, existing/100) }

// benchSeq numbers the benchmark's creates, so every run of benchCreates makes new ids.
var benchSeq uint64

// benchBody is the body of every benchmark post.
var benchBody = strings.Repeat("lorem ipsum ", 8)

// benchPosts starts benchChain, registers benchPostContract (owned by the first
// identity) and stores existing posts, written through drive's document path
// (InsertDocument: row, index entries, storage flags) and committed 20,000 at a time;
// their fees are not charged, which no benchmark reads. It returns the contract's
// post type.
func benchPosts(b *testing.B, existing int) (*harness, []benchIdentity, drive.DocumentType) {
	h, ids := benchChain(b)
	owner := &ids[0]
	owner.nonce++
	res := h.block(genesisTime.Add(2*time.Second), [][]byte{protocol.Sign(testChainID, &protocol.DataContractCreate{Identity: owner.id, Nonce: owner.nonce, Definition: []byte(benchPostContract)}, owner.key)})
	if res.TxResults[0].Code != 0 {
		b.Fatalf("contract refused: %s", res.TxResults[0].Log)
	}
	c, ok, err := drive.GetContract(h.store.Working(), protocol.NewContractID(owner.id, owner.nonce), protocol.Latest)
	if err != nil || !ok {
		b.Fatal(err)
	}
	dt, _ := c.DocumentType("post")
	t := drive.DocumentType{Contract: c.ID, DocumentType: dt}
	const chunk = 20_000
	for done := 0; done < existing; done += chunk {
		kv := h.store.Working()
		for i := done; i < min(done+chunk, existing); i++ {
			d := existingPost(ids, t, existing, i)
			if err := drive.InsertDocument(kv, &drive.Storage{Payer: d.Owner, PerByte: 27_000}, t, d); err != nil {
				b.Fatal(err)
			}
		}
		if _, _, err := h.store.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	h.open() // the application again, over the versions committed beside it
	return h, ids, t
}

// existingPost is post i of the existing posts benchPosts stores: written by author i
// mod benchAuthors(existing).
func existingPost(ids []benchIdentity, t drive.DocumentType, existing, i int) protocol.Document {
	author := ids[i%benchAuthors(existing)]
	var entropy [32]byte
	binary.BigEndian.PutUint64(entropy[:], uint64(i))
	return protocol.Document{
		ID: protocol.NewDocumentID(t.Contract, author.id, t.Name, entropy), Owner: author.id, Revision: 1,
		CreatedAt: uint64(genesisTime.UnixMilli()) + uint64(i), UpdatedAt: uint64(genesisTime.UnixMilli()) + uint64(i),
		Values: []protocol.Value{{Set: true, Bytes: author.id[:]}, {Set: true, Bytes: []byte(fmt.Sprintf("existing post %09d", i))}, {Set: true, Bytes: []byte(benchBody)}},
	}
}

// BenchmarkDocuments measures, with 10,000 and with 1,000,000 documents of the type
// stored already (benchPosts): document creates per second through FinalizeBlock and
// Commit (one create per documents batch, blocks of 1,000, signed before the timer),
// then proven range queries of 50 results (one author's latest posts, of the 100 each
// author wrote: equality on the byAuthor index's first property, newest first), each generated through Query from
// the saved version and verified as a client does, with the answer's size (the value
// and its proof operations) reported.
func BenchmarkDocuments(b *testing.B) {
	for _, existing := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("existing=%d", existing), func(b *testing.B) {
			h, ids, t := benchPosts(b, existing)
			b.Run("creates", func(b *testing.B) { benchCreates(b, h, ids, t) })
			b.Run("query50", func(b *testing.B) { benchQuery50(b, h, ids[:benchAuthors(existing)], t) })
		})
	}
}

func benchCreates(b *testing.B, h *harness, ids []benchIdentity, t drive.DocumentType) {
	const perBlock = 1000
	all := make([][][]byte, (b.N+perBlock-1)/perBlock)
	for n := 0; n < b.N; n++ {
		all[n/perBlock] = append(all[n/perBlock], postCreate(&ids[n%len(ids)], t))
	}
	at := genesisTime.Add(time.Hour + time.Duration(h.height)*time.Second)
	b.ResetTimer()
	start := time.Now()
	for i, txs := range all {
		res := h.block(at.Add(time.Duration(i)*time.Second), txs)
		for _, r := range res.TxResults {
			if r.Code != 0 {
				b.Fatalf("create refused: %d %s", r.Code, r.Log)
			}
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "creates/s")
}

func benchQuery50(b *testing.B, h *harness, ids []benchIdentity, t drive.DocumentType) {
	root := h.rootAt(0)
	var size int
	b.ResetTimer()
	start := time.Now()
	for n := 0; n < b.N; n++ {
		author := ids[(n*7919)%len(ids)].id
		q := fmt.Sprintf(`{"where":[["author","==",[%s]]],"orderBy":[["$createdAt","desc"]],"limit":50}`, byteList(author[:]))
		data := proofs.DocumentsData(t.Contract, "post", []byte(q))
		res, err := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathDocuments, Data: data, Prove: true})
		if err != nil || res.Code != 0 {
			b.Fatalf("query: %v %d %s", err, res.Code, res.Log)
		}
		a, err := proofs.DecodeDocumentsAnswer(res.Value)
		if err != nil {
			b.Fatal(err)
		}
		r, err := proofs.VerifyDocuments(root, data, a, res.ProofOps)
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Documents) != 50 {
			b.Fatalf("%d documents, want 50", len(r.Documents))
		}
		size = len(res.Value)
		for _, op := range res.ProofOps.Ops {
			size += len(op.Type) + len(op.Key) + len(op.Data)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "answers/s")
	b.ReportMetric(float64(size), "answer-bytes")
}

// postCreate is w's next transaction: a documents batch of one create of a new post,
// numbered by benchSeq.
func postCreate(w *benchIdentity, t drive.DocumentType) []byte {
	w.nonce++
	benchSeq++
	data := fmt.Sprintf(`{"author":[%s],"title":"new post %09d","body":%q}`, byteList(w.id[:]), benchSeq, benchBody)
	var entropy [32]byte
	binary.BigEndian.PutUint64(entropy[:], benchSeq+1<<40)
	return protocol.Sign(testChainID, &protocol.DocumentsBatch{Identity: w.id, Nonce: w.nonce, Contract: t.Contract, Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionCreate, Type: t.Name, Entropy: entropy, Data: []byte(data)},
	}}, w.key)
}

// byteList writes bs as the JSON array items of a byte array.
func byteList(bs []byte) string {
	s := make([]string, len(bs))
	for i, c := range bs {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, ",")
}
