package web_test

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/protocol"
)

// benchDocuments is how many documents BenchmarkPages writes before it reads.
var benchDocuments = flag.Int("bench-documents", 100_000, "documents BenchmarkPages writes first")

// postDefinition is BenchmarkPages' contract: one type, a short text indexed and
// counted, living a day.
const postDefinition = `{"documentSchemas":{"post":{"type":"object","ttl":86400,` +
	`"properties":{"text":{"type":"string","maxLength":63,"position":0}},"required":["$createdAt","text"],"additionalProperties":false,` +
	`"indices":[{"name":"byText","properties":[{"text":"asc"}],"countable":true}]}}}`

// BenchmarkPages measures each kind of page of the web view, and the JSON form of a
// proven one and of a history, on a node (in process, its own web view, CometBFT's kv
// index on) that holds -bench-documents documents, written by one identity in batches
// of the protocol's most actions, each batch a transaction: the time of one GET,
// answered in full, and the bytes it answers.
func BenchmarkPages(b *testing.B) {
	env := e2e.StartNode(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	create := &protocol.IdentityCreate{PubKey: env.Dev.Pub, Amount: 10_000_000_000_000, Keys: []ed25519.PublicKey{env.Dev.Pub}}
	env.Commit(b, create)
	id := protocol.NewIdentityID(env.Dev.Address(), create.Nonce)
	contract := &protocol.DataContractCreate{Identity: id, Nonce: 1, Definition: []byte(postDefinition)}
	env.Commit(b, contract)
	c := contract.ContractID()
	start := time.Now()
	last, first := writePosts(ctx, b, env, id, c, *benchDocuments)
	b.Logf("%d documents written in %s, blocks %d to %d", *benchDocuments, time.Since(start).Round(time.Second), first, last)
	if _, err := env.Client.WaitForHeight(ctx, last+2); err != nil {
		b.Fatal(err)
	}

	base := strings.TrimSuffix(env.Node.WebAddress(), "/")
	blk, err := env.Client.RPC().Block(ctx, &last)
	if err != nil {
		b.Fatal(err)
	}
	hash := fmt.Sprintf("%X", blk.Block.Txs[0].Hash())
	doc := firstPost(b, base, c)
	docPath := "/document/" + c.String() + "/post/" + doc
	validator := env.Trusted.Validators[0].Address.String()
	addr := env.Dev.Address().String()
	for _, p := range []struct{ name, path string }{
		{"overview", "/"}, {"stats", "/stats"}, {"blocks", "/blocks"}, {"blocks-nonempty", "/blocks?nonempty=1"},
		{"block", "/block/" + strconv.FormatInt(last, 10)}, {"txs", "/txs"}, {"txs-kind-create", "/txs?kind=document_create"},
		{"txs-kind-batch", "/txs?kind=documents_batch"}, {"tx", "/tx/" + hash + "?height=" + strconv.FormatInt(last, 10)},
		{"identity", "/identity/" + id.String()}, {"identity-history", "/identity/" + id.String() + "/history"},
		{"address", "/address/" + addr}, {"address-history", "/address/" + addr + "/history"}, {"contracts", "/contracts"},
		{"contract", "/contract/" + c.String()}, {"documents", "/documents/" + c.String() + "/post"}, {"document", docPath},
		{"document-history", docPath + "/history"}, {"validators", "/validators"}, {"validator", "/validator/" + validator},
		{"epochs", "/epochs"}, {"api-identity", "/api/identity/" + id.String()}, {"api-identity-history", "/api/identity/" + id.String() + "/history"},
	} {
		path := p.path
		b.Run(p.name, func(b *testing.B) {
			var size int
			for i := 0; i < b.N; i++ {
				size = getOK(b, base+path)
			}
			b.ReportMetric(float64(size), "bytes")
		})
	}
}

// benchTxsPerBlock is how many batches writePosts sends before it waits for a block:
// blocks of about a thousand documents, as a chain under a steady heavy load makes.
const benchTxsPerBlock = 100

// writePosts writes n posts of contract c as identity id, in batches of the
// protocol's most actions, benchTxsPerBlock of them a block, and returns the last
// block that holds one and the first.
func writePosts(ctx context.Context, b *testing.B, env *e2e.Env, id protocol.IdentityID, c protocol.ContractID, n int) (last, first int64) {
	limits, err := protocol.LimitsFor(protocol.Latest)
	if err != nil {
		b.Fatal(err)
	}
	per := limits.MaxDocumentActions
	from, err := env.Client.LatestHeight(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var nonce uint64 = 1
	var hashes [][]byte
	for done := 0; done < n; done += per {
		nonce++
		batch := &protocol.DocumentsBatch{Identity: id, Nonce: nonce, Contract: c}
		for i := done; i < min(done+per, n); i++ {
			var entropy [32]byte
			binary.BigEndian.PutUint64(entropy[:], uint64(i))
			data, err := json.Marshal(map[string]string{"text": fmt.Sprintf("post %09d", i)})
			if err != nil {
				b.Fatal(err)
			}
			a := protocol.DocumentAction{Kind: protocol.ActionCreate, Type: "post", Entropy: entropy, Data: data}
			a.ID = batch.CreateID(a)
			batch.Actions = append(batch.Actions, a)
		}
		if len(hashes)%benchTxsPerBlock == 0 && len(hashes) > 0 {
			// A block at most of benchTxsPerBlock batches: the next block first.
			h, err := env.Client.LatestHeight(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := env.Client.WaitForHeight(ctx, h+1); err != nil {
				b.Fatal(err)
			}
		}
		tx := protocol.Sign(e2e.ChainID, batch, env.Dev.Priv)
		for {
			res, err := env.Client.Broadcast(ctx, tx, false)
			if err != nil {
				b.Fatal(err)
			}
			if !res.Refused() {
				hashes = append(hashes, res.Hash)
				break
			}
			if !res.ByNode() {
				b.Fatalf("batch %d refused: %+v", nonce, res)
			}
			// The mempool is full: the next block empties some of it.
			h, err := env.Client.LatestHeight(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := env.Client.WaitForHeight(ctx, h+1); err != nil {
				b.Fatal(err)
			}
		}
	}
	out, err := env.Client.Await(ctx, from, [][]byte{hashes[0], hashes[len(hashes)-1]})
	if err != nil {
		b.Fatal(err)
	}
	for _, o := range out {
		if !o.Committed || o.Code != protocol.CodeOK {
			b.Fatalf("a batch: %+v", o)
		}
	}
	return out[1].Height, out[0].Height
}

// firstPost is the id of the first post the contract's documents page lists.
func firstPost(b *testing.B, base string, c protocol.ContractID) string {
	res, err := http.Get(base + "/api/documents/" + c.String() + "/post?q=" + url.QueryEscape(`{"limit":1}`))
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var page struct{ IDs []string }
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil || len(page.IDs) != 1 {
		b.Fatalf("the first post: %v %v", page, err)
	}
	return page.IDs[0]
}

// getOK gets url, fails unless it answers 200, and returns the bytes it answered.
func getOK(b *testing.B, url string) int {
	res, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v %.300s", url, res.StatusCode, err, body)
	}
	return len(body)
}
