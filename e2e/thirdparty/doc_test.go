package thirdparty

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/abci"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/protocol"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the worked examples of docs/PROOFS.md from the code (commit only a diff you understand)")

const docPath = "../../docs/PROOFS.md"

// docChain is a fixed chain the examples are answered from: alice is funded at
// genesis and creates an identity in block 1; what follows is its kind's.
type docChain struct {
	kind  chainKind
	app   *abci.Application
	alice ed25519.PrivateKey
	bob   protocol.Address
	id    protocol.IdentityID
	// the market chain (newMarketChain)
	contract protocol.ContractID
	listings map[string]protocol.DocumentID
	// the forum chain (newForumChain): its two contracts, and its documents by name
	forum, likes protocol.ContractID
	docs         map[string]protocol.DocumentID
}

// chainKind names the fixed chains.
type chainKind int

const (
	// transfersChain (newDocChain): alice sends bob 1,000 credits in each of blocks 2
	// to 66, so that blocks 1..64 are compacted into one record and blocks 65 and 66
	// keep theirs.
	transfersChain chainKind = iota
	marketChain              // newMarketChain
	forumChain               // newForumChain
	upgradesChain            // newUpgradesChain
)

const docChainID = "ttld-doc"

func docKey(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("docs/PROOFS.md/" + name))
	return ed25519.NewKeyFromSeed(seed[:])
}

func newDocChain(t *testing.T) *docChain {
	t.Helper()
	return newChain(t, transfersChain)
}

// newChain sets up genesis and block 1 (alice's identity), then, for transfersChain,
// the transfers; the other kinds' blocks are their constructors'.
func newChain(t *testing.T, kind chainKind) *docChain {
	t.Helper()
	store, err := drive.NewStore(dbm.NewMemDB(), drive.Options{CacheSize: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	app, err := abci.New(store, zerolog.Nop(), nil)
	if err != nil {
		t.Fatal(err)
	}
	alice := docKey("alice")
	alicePub := alice.Public().(ed25519.PublicKey)
	aliceAddr := protocol.AddressOf(alicePub)
	c := &docChain{kind: kind, app: app, alice: alice, bob: protocol.AddressOf(docKey("bob").Public().(ed25519.PublicKey))}
	ctx := context.Background()
	state := genesis.AppState{EpochTimeLengthS: genesis.DefaultEpochLengthS, Addresses: []genesis.Address{{Address: aliceAddr.String(), Balance: 1_000_000_000_000}}}
	if kind == upgradesChain {
		state.ProtocolVersion, state.EpochTimeLengthS = protocol.V14, protocol.MinEpochLengthS
	}
	if _, err := app.InitChain(ctx, &abcitypes.RequestInitChain{ChainId: docChainID, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), InitialHeight: 1, AppStateBytes: state.Encode()}); err != nil {
		t.Fatal(err)
	}
	amount := uint64(50_000_000)
	if kind != transfersChain { // documents pay storage fees
		amount = 500_000_000_000
	}
	create := &protocol.IdentityCreate{PubKey: alicePub, Nonce: 1, Amount: amount, Keys: []ed25519.PublicKey{docKey("identity").Public().(ed25519.PublicKey)}}
	c.id = protocol.NewIdentityID(aliceAddr, 1)
	c.block(t, 1, create, alice)
	if kind != transfersChain {
		return c
	}
	for h := int64(2); h <= 66; h++ {
		c.block(t, h, &protocol.AddressFundsTransfer{PubKey: alicePub, Nonce: uint64(h), Recipient: c.bob, Amount: 1_000}, alice)
	}
	return c
}

// block executes and commits block h, h seconds after genesis, of one transition
// signed by key.
func (c *docChain) block(t *testing.T, h int64, tr protocol.Transition, key ed25519.PrivateKey) {
	t.Helper()
	c.blockAt(t, h, time.Duration(h)*time.Second, protocol.Sign(docChainID, tr, key))
}

// blockAt executes and commits block h, at after genesis, of txs.
func (c *docChain) blockAt(t *testing.T, h int64, at time.Duration, txs ...[]byte) {
	t.Helper()
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res, err := c.app.FinalizeBlock(ctx, &abcitypes.RequestFinalizeBlock{Height: h, Time: t0.Add(at), Txs: txs})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.TxResults {
		if r.Code != 0 {
			t.Fatalf("block %d refused its transaction %d with code %d", h, i, r.Code)
		}
	}
	if _, err := c.app.Commit(ctx, &abcitypes.RequestCommit{}); err != nil {
		t.Fatal(err)
	}
}

// newMarketChain is the fixed chain of the document examples: alice's identity (block
// 1) registers docs/examples/market.json (block 2), creates three listings (block 3)
// and one more (block 4).
func newMarketChain(t *testing.T) *docChain {
	t.Helper()
	c := newChain(t, marketChain)
	def, err := os.ReadFile("../../docs/examples/market.json")
	if err != nil {
		t.Fatal(err)
	}
	key := docKey("identity")
	c.block(t, 2, &protocol.DataContractCreate{Identity: c.id, Nonce: 1, Definition: def}, key)
	c.contract = protocol.NewContractID(c.id, 1)
	c.listings = map[string]protocol.DocumentID{}
	seller := "[" + strings.TrimSuffix(strings.Repeat("7,", 32), ",") + "]"
	for i, block := range [][]string{{"lamp:home:3", "desk:home:1", "bike:sport:2"}, {"chair:home:5"}} {
		batch := &protocol.DocumentsBatch{Identity: c.id, Nonce: uint64(2 + i), Contract: c.contract}
		for _, l := range block {
			f := strings.Split(l, ":")
			a := protocol.DocumentAction{Kind: protocol.ActionCreate, Type: "listing", Entropy: sha256.Sum256([]byte(f[0])),
				Data: []byte(`{"sku":"` + strings.ToUpper(f[0]) + `","category":"` + f[1] + `","quantity":` + f[2] + `,"seller":` + seller + `}`)}
			c.listings[f[0]] = batch.CreateID(a)
			batch.Actions = append(batch.Actions, a)
		}
		c.block(t, int64(3+i), batch, key)
	}
	return c
}

// newUpgradesChain is the fixed chain of the protocol upgrade example: genesis on
// version 14 with one-minute epochs; after alice's identity (block 1), the blocks of
// epoch 0 at 2, 3 and 4 s signal version 15, three of its four blocks, so block 5, the
// first of epoch 1 (at 60 s), decides the chain moves to 15 at the next epoch change;
// blocks 5 and 6 (61 s) signal 15 in epoch 1.
func newUpgradesChain(t *testing.T) *docChain {
	t.Helper()
	c := newChain(t, upgradesChain)
	signal := protocol.EncodeVersionSignal(protocol.V15)
	for h := int64(2); h <= 4; h++ {
		c.blockAt(t, h, time.Duration(h)*time.Second, signal)
	}
	c.blockAt(t, 5, time.Minute, signal)
	c.blockAt(t, 6, time.Minute+time.Second, signal)
	return c
}

// forumModerator is the placeholder moderator of docs/examples/forum.json, which a user
// replaces by the identity that moderates.
const forumModerator = "6d6f64657261746f720000000000000000000000000000000000000000000000"

// newForumChain is the fixed chain of the forum examples: alice's identity (block 1)
// registers docs/examples/forum.json with itself as the moderator (block 2) and
// docs/examples/likes.json (block 3); it creates the profiles ann and bo (block 4), the
// thread hello that ann started (block 5), the posts first (mentioning ann and bo),
// second and spam in it (block 6), deletes spam as a moderator (block 7), and likes
// first twice and second once (block 8).
func newForumChain(t *testing.T) *docChain {
	t.Helper()
	c := newChain(t, forumChain)
	key := docKey("identity")
	read := func(name string) []byte {
		def, err := os.ReadFile("../../docs/examples/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return def
	}
	forum := bytes.ReplaceAll(read("forum.json"), []byte(forumModerator), []byte(c.id.String()))
	c.block(t, 2, &protocol.DataContractCreate{Identity: c.id, Nonce: 1, Definition: forum}, key)
	c.block(t, 3, &protocol.DataContractCreate{Identity: c.id, Nonce: 2, Definition: read("likes.json")}, key)
	c.forum, c.likes = protocol.NewContractID(c.id, 1), protocol.NewContractID(c.id, 2)
	c.docs = map[string]protocol.DocumentID{}
	// batch is a documents batch of identity nonce on contract, creating each of
	// type:name:data (entropy: sha256 of the name).
	batch := func(nonce uint64, contract protocol.ContractID, creates ...[3]string) *protocol.DocumentsBatch {
		b := &protocol.DocumentsBatch{Identity: c.id, Nonce: nonce, Contract: contract}
		for _, cr := range creates {
			a := protocol.DocumentAction{Kind: protocol.ActionCreate, Type: cr[0], Entropy: sha256.Sum256([]byte(cr[1])), Data: []byte(cr[2])}
			c.docs[cr[1]] = b.CreateID(a)
			b.Actions = append(b.Actions, a)
		}
		return b
	}
	c.block(t, 4, batch(3, c.forum, [3]string{"profile", "ann", `{"name":"ann"}`}, [3]string{"profile", "bo", `{"name":"bo"}`}), key)
	c.block(t, 5, batch(4, c.forum, [3]string{"thread", "hello", `{"title":"hello","starter":"ann"}`}), key)
	thread := `"thread":` + jsonBytes(c.docs["hello"])
	mentions := `"mentions":[` + jsonBytes(c.docs["ann"]) + `,` + jsonBytes(c.docs["bo"]) + `]`
	c.block(t, 6, batch(5, c.forum,
		[3]string{"post", "first", `{` + thread + `,"text":"first",` + mentions + `}`},
		[3]string{"post", "second", `{` + thread + `,"text":"second"}`},
		[3]string{"post", "spam", `{` + thread + `,"text":"buy pills"}`}), key)
	c.block(t, 7, &protocol.DocumentsBatch{Identity: c.id, Nonce: 6, Contract: c.forum, Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionModerateDelete, Type: "post", ID: c.docs["spam"], Reason: "spam"}}}, key)
	c.block(t, 8, batch(7, c.likes,
		[3]string{"like", "like-1", `{"post":"first"}`}, [3]string{"like", "like-2", `{"post":"first"}`},
		[3]string{"like", "like-3", `{"post":"second"}`}), key)
	return c
}

// jsonBytes writes id as a JSON array of integers, as a document's data holds an
// identifier.
func jsonBytes(id [32]byte) string {
	items := make([]string, len(id))
	for i, x := range id {
		items[i] = strconv.Itoa(int(x))
	}
	return "[" + strings.Join(items, ",") + "]"
}

// example is one worked example: a query and how the node answered it. documents,
// when set, checks the documents a /documents example verifies to; entries, the
// entries a range example verifies to.
type example struct {
	name      string
	path      string
	data      []byte
	documents func(t *testing.T, got VerifiedDocuments)
	entries   func(t *testing.T, got []KV)
}

func (c *docChain) examples() []example {
	switch c.kind {
	case marketChain:
		return c.marketExamples()
	case forumChain:
		return c.forumExamples()
	case upgradesChain:
		return []example{{name: "upgrades-present", path: "/upgrades", entries: upgrades(Upgrades{Next: 15, Signals: []EpochSignals{
			{Epoch: 0, Blocks: 4, Counts: []VersionCount{{Version: 15, Blocks: 3}}},
			{Epoch: 1, Blocks: 0, Counts: []VersionCount{{Version: 15, Blocks: 2}}},
		}})}}
	}
	aliceAddr := protocol.AddressOf(c.alice.Public().(ed25519.PublicKey))
	nobody := protocol.AddressOf(docKey("nobody").Public().(ed25519.PublicKey))
	noID := protocol.NewIdentityID(nobody, 1)
	return []example{
		{name: "key", path: "/key", data: []byte{104, 's'}},
		{name: "address-present", path: "/address", data: aliceAddr[:]},
		{name: "address-absent", path: "/address", data: nobody[:]},
		{name: "identity-present", path: "/identity", data: c.id[:]},
		{name: "identity-absent", path: "/identity", data: noID[:]},
		{name: "address-changes-compacted", path: "/address-changes/compacted", data: binary.BigEndian.AppendUint64(nil, 0)},
		{name: "address-changes-blocks", path: "/address-changes/blocks", data: binary.BigEndian.AppendUint64(nil, 66)},
		{name: "epoch-present", path: "/epoch", data: binary.BigEndian.AppendUint32(nil, 0)},
		{name: "pools-present", path: "/pools", data: nil},
		{name: "pending-refunds", path: "/pending-refunds", data: nil},
		{name: "total-credits", path: "/total-credits", data: nil},
		{name: "upgrades-none", path: "/upgrades", data: nil, entries: upgrades(Upgrades{})},
	}
}

// upgrades checks that an /upgrades example's entries decode to want.
func upgrades(want Upgrades) func(t *testing.T, got []KV) {
	return func(t *testing.T, got []KV) {
		t.Helper()
		u, err := DecodeUpgrades(got)
		if err != nil || !reflect.DeepEqual(u, want) {
			t.Fatalf("/upgrades decodes to %+v, %v; want %+v", u, err, want)
		}
	}
}

// marketExamples are the document examples, on the market chain.
func (c *docChain) marketExamples() []example {
	typeData := func(rest string) []byte {
		return append(append(append([]byte(nil), c.contract[:]...), 7), "listing"+rest...)
	}
	desk := c.listings["desk"]
	// the start of the backward page: of lamp and desk (created in block 3, in index
	// order by id), the one the backward answer meets first
	start := max(c.listings["lamp"].String(), desk.String())
	home := `{"where":[["category","==","home"]],"limit":2}`
	page := `{"where":[["category","==","home"],["$createdAt","<=",1767225603000]],"orderBy":[["$createdAt","asc"]],"limit":1,"startAfter":"` + start + `"}`
	return []example{
		{name: "document-present", path: "/document", data: typeData(string(desk[:]))},
		{name: "documents-forward", path: "/documents", data: typeData(home)},
		{name: "documents-backward-page", path: "/documents", data: typeData(page)},
		{name: "sum-present", path: "/sum", data: typeData("\x00" + `{"where":[["seller","==","` + strings.Repeat("07", 32) + `"]]}`)},
	}
}

// forumExamples are the examples of the forum chain: posts with an identifier list,
// and the range paths its ttl'd posts, removal record and likes fill.
func (c *docChain) forumExamples() []example {
	typeData := func(contract protocol.ContractID, typeName, rest string) []byte {
		return append(append(append([]byte(nil), contract[:]...), byte(len(typeName))), typeName+rest...)
	}
	// the posts were created in block 6, at genesis time + 6 s, and live a week
	const postsExpireMs = 1_767_225_600_000 + 6_000 + 604_800_000
	mentions := func(t *testing.T, got VerifiedDocuments) {
		t.Helper()
		want := [][32]byte{c.docs["ann"], c.docs["bo"]}
		for _, d := range got.Documents {
			list, set := d.Lists["mentions"]
			switch {
			case d.ID == c.docs["first"] && (!set || len(list) != 2 || list[0] != want[0] || list[1] != want[1]):
				t.Fatalf("first's mentions decode to %x, want ann's and bo's ids", list)
			case d.ID == c.docs["second"] && set:
				t.Fatalf("second's mentions decode to %x, want unset", list)
			}
		}
	}
	return []example{
		{name: "documents-identifier-list", path: "/documents", data: typeData(c.forum, "post", `{"where":[["thread","==","`+c.docs["hello"].String()+`"]]}`), documents: mentions},
		{name: "lifetime-pools-present", path: "/lifetime-pools"},
		{name: "expirations-present", path: "/expirations", data: binary.BigEndian.AppendUint64(nil, postsExpireMs)},
		{name: "removals-present", path: "/removals", data: typeData(c.forum, "post", "")},
		{name: "ranked-present", path: "/ranked", data: typeData(c.likes, "like", `{"window":{"index":"trending","newest":true},"limit":1}`)},
	}
}

// jsonValue: the paths whose value the examples show as text.
func jsonValue(path string) bool {
	return path == "/documents" || path == "/count" || path == "/sum" || path == "/ranked"
}

// render writes an example's request, the node's answer and the app hash that proves
// it, as the fenced text docs/PROOFS.md shows.
func render(ex example, res *abcitypes.ResponseQuery, appHash []byte) string {
	var b strings.Builder
	field := func(name, value string) {
		const width = 96
		fmt.Fprintf(&b, "%s\n", strings.TrimRight(fmt.Sprintf("%-10s %s", name, firstN(value, width)), " "))
		for value = rest(value, width); value != ""; value = rest(value, width) {
			fmt.Fprintf(&b, "%-10s %s\n", "", firstN(value, width))
		}
	}
	field("path", ex.path)
	field("data", hex.EncodeToString(ex.data))
	field("height", strconv.FormatInt(res.Height, 10))
	field("key", hex.EncodeToString(res.Key))
	if jsonValue(ex.path) {
		field("value", string(res.Value))
	} else {
		field("value", hex.EncodeToString(res.Value))
	}
	field("info", res.Info)
	for _, op := range res.ProofOps.Ops {
		field("op.type", op.Type)
		field("op.key", hex.EncodeToString(op.Key))
		field("op.data", hex.EncodeToString(op.Data))
	}
	field("app_hash", hex.EncodeToString(appHash))
	return b.String()
}

func firstN(s string, n int) string { return s[:min(n, len(s))] }
func rest(s string, n int) string   { return s[min(n, len(s)):] }

// parsed is an example as read back from the document; repeated op.* fields append
// to ops.
type parsed map[string]string

func (p parsed) hex(t *testing.T, name string) []byte {
	t.Helper()
	b, err := hex.DecodeString(p[name])
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

func parse(text string) (parsed, []parsed) {
	p := parsed{}
	var ops []parsed
	cur := p
	last := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			cur[last] += strings.TrimSpace(line)
			continue
		}
		name, value, _ := strings.Cut(line, " ")
		switch {
		case name == "op.type":
			cur = parsed{}
			ops = append(ops, cur)
		case !strings.HasPrefix(name, "op."):
			cur = p
		}
		last = name
		cur[name] = strings.TrimSpace(value)
	}
	return p, ops
}

// section returns the text between the markers of example name in doc, and its span.
func section(doc, name string) (string, int, int, bool) {
	open, close := "<!-- example "+name+" -->\n```text\n", "```\n<!-- end "+name+" -->"
	i := strings.Index(doc, open)
	if i < 0 {
		return "", 0, 0, false
	}
	j := strings.Index(doc[i:], close)
	if j < 0 {
		return "", 0, 0, false
	}
	from, to := i+len(open), i+j
	return doc[from:to], from, to, true
}

// TestProofsDocExamples answers every worked example of docs/PROOFS.md from the fixed
// chains, requires the document to show exactly that answer (-rewrite regenerates it),
// then checks each example as printed in the document with this package's
// verifier, which uses cosmos/ics23 alone.
func TestProofsDocExamples(t *testing.T) {
	raw, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	ctx := context.Background()
	chains := []*docChain{newDocChain(t), newMarketChain(t), newForumChain(t), newUpgradesChain(t)}
	for _, c := range chains {
		info, err := c.app.Info(ctx, &abcitypes.RequestInfo{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range c.examples() {
			res, err := c.app.Query(ctx, &abcitypes.RequestQuery{Path: ex.path, Data: ex.data, Prove: true})
			if err != nil || res.Code != 0 || res.Height != info.LastBlockHeight {
				t.Fatalf("%s: %+v %v", ex.name, res, err)
			}
			want := render(ex, res, info.LastBlockAppHash)
			got, from, to, ok := section(doc, ex.name)
			switch {
			case !ok:
				t.Errorf("docs/PROOFS.md has no example %q", ex.name)
				continue
			case got != want && *rewrite:
				doc = doc[:from] + want + doc[to:]
			case got != want:
				t.Errorf("docs/PROOFS.md example %q is stale (run go test ./e2e/thirdparty -run TestProofsDocExamples -rewrite):\n%s\nthe code gives:\n%s", ex.name, got, want)
			}
		}
	}
	if *rewrite {
		if err := os.WriteFile(docPath, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Check every example as the document prints it.
	for _, c := range chains {
		for _, ex := range c.examples() {
			text, _, _, ok := section(doc, ex.name)
			if !ok {
				continue
			}
			checkExample(t, ex, text)
		}
	}
}

// checkExample verifies one example as the document prints it, and that a changed
// value does not verify.
func checkExample(t *testing.T, ex example, text string) {
	t.Helper()
	p, parsedOps := parse(text)
	if p["path"] != ex.path {
		t.Fatalf("%s: path %q", ex.name, p["path"])
	}
	var ops []cmtcrypto.ProofOp
	for _, op := range parsedOps {
		ops = append(ops, cmtcrypto.ProofOp{Type: op["op.type"], Key: op.hex(t, "op.key"), Data: op.hex(t, "op.data")})
	}
	root, data := p.hex(t, "app_hash"), p.hex(t, "data")
	switch ex.path {
	case "/documents":
		value := []byte(p["value"])
		got, err := VerifyDocuments(root, data, value, ops)
		if err != nil || len(got.Documents) == 0 {
			t.Fatalf("%s: %d documents, %v", ex.name, len(got.Documents), err)
		}
		if ex.documents != nil {
			ex.documents(t, got)
		}
		var a DocumentsAnswer
		if err := json.Unmarshal(value, &a); err != nil {
			t.Fatal(err)
		}
		a.Documents = a.Documents[1:]
		changed, _ := json.Marshal(a)
		if _, err := VerifyDocuments(root, data, changed, ops[:len(ops)-1]); err == nil {
			t.Fatalf("%s: the answer without a document verifies", ex.name)
		}
		return
	case "/ranked":
		value := []byte(p["value"])
		got, err := VerifyRanked(root, data, value, ops)
		if err != nil || len(got.Groups) == 0 {
			t.Fatalf("%s: %+v %v", ex.name, got, err)
		}
		var a RankedAnswer
		if err := json.Unmarshal(value, &a); err != nil {
			t.Fatal(err)
		}
		a.Ranks.More = !a.Ranks.More
		changed, _ := json.Marshal(a)
		if _, err := VerifyRanked(root, data, changed, ops); err == nil {
			t.Fatalf("%s: the page with more flipped verifies", ex.name)
		}
		return
	case "/count", "/sum":
		value := []byte(p["value"])
		got, err := VerifyCount(root, data, value, ex.path == "/sum", ops)
		if err != nil || !got.Present {
			t.Fatalf("%s: %+v %v", ex.name, got, err)
		}
		var a DocumentsAnswer
		if err := json.Unmarshal(value, &a); err != nil {
			t.Fatal(err)
		}
		a.Record[len(a.Record)-1]++
		changed, _ := json.Marshal(a)
		if _, err := VerifyCount(root, data, changed, ex.path == "/sum", ops); err == nil {
			t.Fatalf("%s: a changed record verifies", ex.name)
		}
		return
	}
	target, err := TargetOf(p["path"], data)
	if err != nil {
		t.Fatalf("%s: %v", ex.name, err)
	}
	value := p.hex(t, "value")
	if target.Key != nil {
		if !bytes.Equal(p.hex(t, "key"), target.Key) {
			t.Fatalf("%s: answer for key %s, the path targets %X", ex.name, p["key"], target.Key)
		}
		if err := VerifySingle(root, target.Key, value, ops); err != nil {
			t.Fatalf("%s: %v", ex.name, err)
		}
		if len(value) > 0 {
			if err := VerifySingle(root, target.Key, append(bytes.Clone(value), 0), ops); err == nil {
				t.Fatalf("%s: a changed value verifies", ex.name)
			}
		}
		return
	}
	entries, err := VerifyRange(root, target.Start, target.End, value, p["info"] == "more", ops)
	if err != nil {
		t.Fatalf("%s: %v", ex.name, err)
	}
	if len(entries) == 0 && strings.HasSuffix(ex.name, "present") {
		t.Fatalf("%s: no entries", ex.name)
	}
	if ex.entries != nil {
		ex.entries(t, entries)
	}
	// and a changed value does not verify
	if len(entries) > 0 {
		entries[0].Value = append(bytes.Clone(entries[0].Value), 0)
		if _, err := VerifyRange(root, target.Start, target.End, encodeEntries(entries), false, ops); err == nil {
			t.Fatalf("%s: a changed value verifies", ex.name)
		}
	}
}

func encodeEntries(entries []KV) []byte {
	out := binary.AppendUvarint(nil, uint64(len(entries)))
	for _, e := range entries {
		out = binary.AppendUvarint(out, uint64(len(e.Key)))
		out = append(out, e.Key...)
		out = binary.AppendUvarint(out, uint64(len(e.Value)))
		out = append(out, e.Value...)
	}
	return out
}
