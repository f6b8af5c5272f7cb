package thirdparty

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
	rpcclient "github.com/cometbft/cometbft/rpc/client"
	rpchttp "github.com/cometbft/cometbft/rpc/client/http"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/protocol"
)

// market is a node holding docs/examples/market.json and six listings, created in two
// blocks, that the document tests query over RPC.
type market struct {
	t        *testing.T
	ctx      context.Context
	env      *e2e.Env
	rpc      *rpchttp.HTTP
	contract [32]byte
	owner    [32]byte
	ids      map[string][32]byte // listing name -> id
	sellers  [2]string           // the sellers' ids, hex
}

func newMarket(t *testing.T) *market {
	env := e2e.StartNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	dev := env.Dev
	send := func(tr protocol.Transition) {
		tx, err := env.Client.Sign(ctx, tr, dev.Priv)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := env.Client.Broadcast(ctx, tx, true); err != nil || res.Refused() {
			t.Fatalf("%T: %+v %v", tr, res, err)
		}
	}
	create := &protocol.IdentityCreate{PubKey: dev.Pub, Amount: 500_000_000_000, Keys: []ed25519.PublicKey{dev.Pub}}
	send(create)
	owner := protocol.NewIdentityID(dev.Address(), create.Nonce)
	def, err := os.ReadFile("../../docs/examples/market.json")
	if err != nil {
		t.Fatal(err)
	}
	cc := &protocol.DataContractCreate{Identity: owner, Definition: def}
	send(cc)
	m := &market{t: t, ctx: ctx, env: env, contract: protocol.NewContractID(owner, cc.Nonce), owner: owner, ids: map[string][32]byte{}}
	if m.rpc, err = rpchttp.New(env.RPC, "/websocket"); err != nil {
		t.Fatal(err)
	}
	m.sellers = [2]string{strings.Repeat("07", 32), strings.Repeat("08", 32)}
	sellerJSON := func(i int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(fmt.Sprintf("%d,", 7+i), 32), ",") + "]"
	}
	for block, listings := range [][]struct {
		name, category   string
		quantity, seller int
	}{
		{{"lamp", "home", 3, 0}, {"desk", "home", 1, 0}, {"bike", "sport", 2, 1}},
		{{"chair", "home", 5, 1}, {"ball", "sport", 4, 0}, {"hose", "garden", 2, 0}},
	} {
		batch := &protocol.DocumentsBatch{Identity: owner, Contract: m.contract}
		for i, l := range listings {
			a := protocol.DocumentAction{Kind: protocol.ActionCreate, Type: "listing", Entropy: [32]byte{byte(block), byte(i + 1)},
				Data: []byte(fmt.Sprintf(`{"sku":%q,"category":%q,"quantity":%d,"seller":%s}`, strings.ToUpper(l.name), l.category, l.quantity, sellerJSON(l.seller)))}
			m.ids[l.name] = batch.CreateID(a)
			batch.Actions = append(batch.Actions, a)
		}
		send(batch)
	}
	return m
}

// ask sends a proven abci_query over RPC and returns the answer and the app hash of the
// signed header after it.
func (m *market) ask(path string, data []byte) (abcitypes.ResponseQuery, []byte) {
	m.t.Helper()
	res, err := m.rpc.ABCIQueryWithOptions(m.ctx, path, data, rpcclient.ABCIQueryOptions{Prove: true})
	if err != nil {
		m.t.Fatal(err)
	}
	r := res.Response
	if r.Code != 0 || r.ProofOps == nil {
		m.t.Fatalf("%s %q: code %d %s", path, data, r.Code, r.Log)
	}
	root, _, err := SignedAppHash(m.ctx, m.rpc, e2e.ChainID, m.env.Trusted, r.Height, 10*time.Second)
	if err != nil {
		m.t.Fatal(err)
	}
	return r, root
}

func (m *market) typeData(rest []byte) []byte {
	return append(append(append(m.contract[:0:0], m.contract[:]...), 7), append([]byte("listing"), rest...)...)
}

func (m *market) name(id [32]byte) string {
	for n, i := range m.ids {
		if i == id {
			return n
		}
	}
	return hex.EncodeToString(id[:])
}

// byID orders listing names by id, the order of entries with equal index values.
func (m *market) byID(names ...string) []string {
	slices.SortFunc(names, func(a, b string) int { x, y := m.ids[a], m.ids[b]; return bytes.Compare(x[:], y[:]) })
	return names
}

// TestThirdPartyDocuments checks the document paths of a real node holding the
// market contract with this package's verifier alone, the app hash from the header
// after each answer signed by the genesis validators.
func TestThirdPartyDocuments(t *testing.T) {
	t.Parallel()
	m := newMarket(t)
	checkDocument(t, m)
	checkDocuments(t, m)
	checkCount(t, m)
}

// checkDocument: a document row read with /document, present and absent, proven with
// this package alone and decoded with the type of the contract read with /contract at
// the same height.
func checkDocument(t *testing.T, m *market) {
	for _, q := range []struct {
		id      [32]byte
		present bool
	}{{m.ids["chair"], true}, {[32]byte{1}, false}} {
		data := m.typeData(q.id[:])
		r, root := m.ask("/document", data)
		target, err := TargetOf("/document", data)
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifySingle(root, target.Key, r.Value, r.ProofOps.Ops); err != nil {
			t.Fatal(err)
		}
		if (len(r.Value) > 0) != q.present {
			t.Fatalf("%X: present %t", q.id, len(r.Value) > 0)
		}
		if err := VerifySingle(root, target.Key, append(bytes.Clone(r.Value), 1), r.ProofOps.Ops); err == nil {
			t.Fatal("a changed row verifies")
		}
		if !q.present {
			continue
		}
		res, err := m.rpc.ABCIQueryWithOptions(m.ctx, "/contract", m.contract[:], rpcclient.ABCIQueryOptions{Prove: true, Height: r.Height})
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifySingle(root, ContractKey(m.contract), res.Response.Value, res.Response.ProofOps.Ops); err != nil || res.Response.Height != r.Height {
			t.Fatalf("contract at %d: %v", res.Response.Height, err)
		}
		c, err := DecodeContract(res.Response.Value)
		if err != nil {
			t.Fatal(err)
		}
		d, err := DecodeRow(c.Types["listing"], r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if d.ID != q.id || !bytes.Equal(d.Fields["category"], partOf(KindString, []byte("home"))) || !bytes.Equal(d.Fields["quantity"], []byte{1, 0x80, 0, 0, 0, 0, 0, 0, 5}) || d.Fields["photo"][0] != 0 {
			t.Fatalf("document: %+v", d)
		}
	}
}

// checkDocuments: /documents answers, each verified complete with this package alone
// (the ranges derived here from the query and the index), and tampered answers refused.
func checkDocuments(t *testing.T, m *market) {
	// the $createdAt of the first block's listings
	r, root := m.ask("/documents", m.typeData([]byte(`{"where":[["category","==","home"]],"orderBy":[["$createdAt","asc"]],"limit":1}`)))
	first, err := VerifyDocuments(root, m.typeData([]byte(`{"where":[["category","==","home"]],"orderBy":[["$createdAt","asc"]],"limit":1}`)), r.Value, r.ProofOps.Ops)
	if err != nil || len(first.Documents) != 1 {
		t.Fatalf("%+v %v", first, err)
	}
	t1 := new(big.Int).SetBytes(first.Documents[0].Fields["$createdAt"][1:]).String()

	home := append([]string{"chair"}, m.byID("lamp", "desk")...) // $createdAt desc, then id
	backward := slices.Clone(home)
	slices.Reverse(backward)
	for _, q := range []struct {
		query, index string
		want         []string
	}{
		{`{"where":[["category","==","home"]]}`, "byCategory", home},
		{`{"where":[["category","==","home"]],"orderBy":[["$createdAt","desc"]]}`, "byCategory", home},
		{`{"where":[["category","==","home"]],"orderBy":[["category","desc"],["$createdAt","asc"]]}`, "byCategory", backward},
		{`{"where":[["category","==","home"],["$createdAt",">",` + t1 + `]]}`, "byCategory", []string{"chair"}},
		{`{"where":[["category","==","home"],["$createdAt","<=",` + t1 + `]],"orderBy":[["$createdAt","asc"]]}`, "byCategory", backward[:2]},
		{`{"where":[["category","==","home"],["$createdAt",">=",` + t1 + `],["$createdAt","<",` + t1 + `]]}`, "byCategory", nil},
		{`{"where":[["category","==","home"]],"limit":2}`, "byCategory", home[:2]},
		{`{"where":[["category","==","home"]],"orderBy":[["$createdAt","asc"]],"limit":2}`, "byCategory", backward[:2]},
		{`{"where":[["category","==","toys"]]}`, "byCategory", nil},
		{`{"where":[["category","in",["sport","garden"]]]}`, "byCategory", append([]string{"hose", "ball"}, "bike")},
		{`{"where":[["category","in",["sport","garden"]]],"orderBy":[["category","desc"]]}`, "byCategory", []string{"bike", "ball", "hose"}},
		{`{"where":[["category","startsWith","ga"]]}`, "byCategory", []string{"hose"}},
		{`{"where":[["category",">=","home"]]}`, "byCategory", append(slices.Clone(home), "ball", "bike")},
		{`{"where":[["seller","==","` + m.sellers[1] + `"]]}`, "stockBySeller", m.byID("bike", "chair")},
		{`{}`, "stockBySeller", append(m.byID("lamp", "desk", "ball", "hose"), m.byID("bike", "chair")...)},
		{`{"where":[["$ownerId","==","` + hex.EncodeToString(m.owner[:]) + `"],["sku","startsWith","B"]]}`, "ownerSku", []string{"ball", "bike"}},
	} {
		data := m.typeData([]byte(q.query))
		r, root := m.ask("/documents", data)
		got, err := VerifyDocuments(root, data, r.Value, r.ProofOps.Ops)
		if err != nil {
			t.Fatalf("%s: %v", q.query, err)
		}
		var names []string
		for _, d := range got.Documents {
			names = append(names, m.name(d.ID))
		}
		if got.Query.Index.Name != q.index || !slices.Equal(names, q.want) {
			t.Errorf("%s: %s %v, want %s %v", q.query, got.Query.Index.Name, names, q.index, q.want)
		}
		m.tamper(q.query, data, r, root)
	}

	// pages of one document with startAfter, each at the height of the first, both ways
	for _, dir := range []struct {
		order string
		want  []string
	}{{"desc", home}, {"asc", backward}} {
		var names []string
		var height int64
		after := ""
		for range 5 {
			query := `{"where":[["category","==","home"]],"orderBy":[["$createdAt","` + dir.order + `"]],"limit":1` + after + `}`
			data := m.typeData([]byte(query))
			res, err := m.rpc.ABCIQueryWithOptions(m.ctx, "/documents", data, rpcclient.ABCIQueryOptions{Prove: true, Height: height})
			if err != nil || res.Response.Code != 0 {
				t.Fatalf("%s: %+v %v", query, res, err)
			}
			r := res.Response
			height = r.Height
			root, _, err := SignedAppHash(m.ctx, m.rpc, e2e.ChainID, m.env.Trusted, r.Height, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			got, err := VerifyDocuments(root, data, r.Value, r.ProofOps.Ops)
			if err != nil {
				t.Fatalf("%s: %v", query, err)
			}
			m.tamper(query, data, r, root)
			if len(got.Documents) == 0 {
				break
			}
			names = append(names, m.name(got.Documents[0].ID))
			after = `,"startAfter":"` + hex.EncodeToString(got.Documents[0].ID[:]) + `"`
		}
		if !slices.Equal(names, dir.want) {
			t.Errorf("pages %s: %v, want %v", dir.order, names, dir.want)
		}
	}
}

// tamper changes a verified answer in the ways a node could and requires each to fail.
func (m *market) tamper(query string, data []byte, r abcitypes.ResponseQuery, root []byte) {
	m.t.Helper()
	var a DocumentsAnswer
	if err := json.Unmarshal(r.Value, &a); err != nil {
		m.t.Fatal(err)
	}
	ops := r.ProofOps.Ops
	rows := len(ops) - len(a.Documents)
	try := func(what string, a DocumentsAnswer, ops []cmtcrypto.ProofOp) {
		m.t.Helper()
		v, err := json.Marshal(a)
		if err != nil {
			m.t.Fatal(err)
		}
		if _, err := VerifyDocuments(root, data, v, ops); err == nil {
			m.t.Errorf("%s: %s verifies", query, what)
		}
	}
	if n := len(a.Documents); n > 0 {
		b := a
		b.Documents = a.Documents[:n-1]
		try("the answer without its last document", b, ops[:len(ops)-1])
		b.Documents = slices.Clone(a.Documents)
		b.Documents[n-1] = append(bytes.Clone(a.Documents[n-1]), 0)
		try("a changed row", b, ops)
		if n > 1 {
			b.Documents = slices.Clone(a.Documents)
			b.Documents[0], b.Documents[1] = b.Documents[1], b.Documents[0]
			o := slices.Clone(ops)
			o[rows], o[rows+1] = o[rows+1], o[rows]
			try("two documents swapped", b, o)
		}
		// an entry dropped from its range, with its document and row proof
		b = a
		b.Ranges = slices.Clone(a.Ranges)
		for i, it := range a.Ranges {
			entries, err := DecodeEntries(it.Entries)
			if err != nil || len(entries) == 0 {
				continue
			}
			b.Ranges[i].Entries = encodeEntries(entries[1:])
			break
		}
		b.Documents = a.Documents[1:]
		try("an entry dropped", b, append(slices.Clone(ops[:rows]), ops[rows+1:]...))
	}
	if len(a.Ranges) > 0 {
		b := a
		b.Ranges = slices.Clone(a.Ranges)
		b.Ranges[len(b.Ranges)-1].More = !b.Ranges[len(b.Ranges)-1].More
		try("more flipped", b, ops)
	}
}

// checkCount: /count and /sum answers, the record proven present or absent, count and
// sum decoded, a changed record refused.
func checkCount(t *testing.T, m *market) {
	for _, q := range []struct {
		path, index, where string
		wantIndex          string
		count, sum         int64
		present            bool
	}{
		{"/count", "", `{"where":[["category","==","home"]]}`, "byCategory", 3, 0, true},
		{"/count", "", ``, "stockBySeller", 6, 17, true}, // the fewest properties
		{"/count", "", `{"where":[["category","==","toys"]]}`, "byCategory", 0, 0, false},
		{"/count", "stockBySeller", `{"where":[["seller","==","` + m.sellers[0] + `"]]}`, "stockBySeller", 4, 10, true},
		{"/sum", "", `{"where":[["seller","==","` + m.sellers[1] + `"]]}`, "stockBySeller", 2, 7, true},
		{"/sum", "stockBySeller", ``, "stockBySeller", 6, 17, true},
		{"/sum", "", `{"where":[["seller","==","` + strings.Repeat("09", 32) + `"]]}`, "stockBySeller", 0, 0, false},
	} {
		data := m.typeData(append(append([]byte{byte(len(q.index))}, q.index...), q.where...))
		r, root := m.ask(q.path, data)
		got, err := VerifyCount(root, data, r.Value, q.path == "/sum", r.ProofOps.Ops)
		if err != nil {
			t.Fatalf("%s %s: %v", q.path, q.where, err)
		}
		if got.Index != q.wantIndex || got.Present != q.present || got.Count != uint64(q.count) || got.Sum.Int64() != q.sum {
			t.Errorf("%s %s: %+v", q.path, q.where, got)
		}
		var a DocumentsAnswer
		if err := json.Unmarshal(r.Value, &a); err != nil {
			t.Fatal(err)
		}
		if q.present {
			a.Record = bytes.Clone(a.Record)
			a.Record[7]++
		} else {
			a.Record = make([]byte, 24)
		}
		v, _ := json.Marshal(a)
		if _, err := VerifyCount(root, data, v, q.path == "/sum", r.ProofOps.Ops); err == nil {
			t.Errorf("%s %s: a changed record verifies", q.path, q.where)
		}
	}
}
