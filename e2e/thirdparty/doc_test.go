package thirdparty

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
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

// docChain is the fixed chain the examples are answered from: alice is funded at
// genesis, creates an identity in block 1 and sends bob 1,000 credits in each of
// blocks 2 to 66, so that blocks 1..64 are compacted into one record and blocks 65
// and 66 keep theirs.
type docChain struct {
	app   *abci.Application
	alice ed25519.PrivateKey
	bob   protocol.Address
	id    protocol.IdentityID
}

const docChainID = "ttld-doc"

func docKey(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("docs/PROOFS.md/" + name))
	return ed25519.NewKeyFromSeed(seed[:])
}

func newDocChain(t *testing.T) *docChain {
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
	c := &docChain{app: app, alice: alice, bob: protocol.AddressOf(docKey("bob").Public().(ed25519.PublicKey))}
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	state := genesis.AppState{EpochTimeLengthS: genesis.DefaultEpochLengthS, Addresses: []genesis.Address{{Address: aliceAddr.String(), Balance: 1_000_000_000_000}}}
	if _, err := app.InitChain(ctx, &abcitypes.RequestInitChain{ChainId: docChainID, Time: t0, InitialHeight: 1, AppStateBytes: state.Encode()}); err != nil {
		t.Fatal(err)
	}
	create := &protocol.IdentityCreate{PubKey: alicePub, Nonce: 1, Amount: 50_000_000, Keys: []ed25519.PublicKey{docKey("identity").Public().(ed25519.PublicKey)}}
	c.id = protocol.NewIdentityID(aliceAddr, 1)
	for h := int64(1); h <= 66; h++ {
		var tr protocol.Transition = create
		if h > 1 {
			tr = &protocol.AddressFundsTransfer{PubKey: alicePub, Nonce: uint64(h), Recipient: c.bob, Amount: 1_000}
		}
		res, err := app.FinalizeBlock(ctx, &abcitypes.RequestFinalizeBlock{Height: h, Time: t0.Add(time.Duration(h) * time.Second), Txs: [][]byte{protocol.Sign(docChainID, tr, alice)}})
		if err != nil {
			t.Fatal(err)
		}
		if code := res.TxResults[0].Code; code != 0 {
			t.Fatalf("block %d refused its transition with code %d", h, code)
		}
		if _, err := app.Commit(ctx, &abcitypes.RequestCommit{}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// example is one worked example: a query and how the node answered it.
type example struct {
	name string
	path string
	data []byte
}

func (c *docChain) examples() []example {
	aliceAddr := protocol.AddressOf(c.alice.Public().(ed25519.PublicKey))
	nobody := protocol.AddressOf(docKey("nobody").Public().(ed25519.PublicKey))
	noID := protocol.NewIdentityID(nobody, 1)
	return []example{
		{"key", "/key", []byte{104, 's'}},
		{"address-present", "/address", aliceAddr[:]},
		{"address-absent", "/address", nobody[:]},
		{"identity-present", "/identity", c.id[:]},
		{"identity-absent", "/identity", noID[:]},
		{"address-changes-compacted", "/address-changes/compacted", binary.BigEndian.AppendUint64(nil, 0)},
		{"address-changes-blocks", "/address-changes/blocks", binary.BigEndian.AppendUint64(nil, 66)},
		{"epoch-present", "/epoch", binary.BigEndian.AppendUint32(nil, 0)},
		{"pools-present", "/pools", nil},
		{"pending-refunds", "/pending-refunds", nil},
		{"total-credits", "/total-credits", nil},
	}
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
	field("value", hex.EncodeToString(res.Value))
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

// parsed is an example as read back from the document.
type parsed map[string]string

func (p parsed) hex(t *testing.T, name string) []byte {
	t.Helper()
	b, err := hex.DecodeString(p[name])
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

func parse(text string) parsed {
	p := parsed{}
	last := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			p[last] += strings.TrimSpace(line)
			continue
		}
		name, value, _ := strings.Cut(line, " ")
		last = name
		p[name] = strings.TrimSpace(value)
	}
	return p
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
// chain, requires the document to show exactly that answer (-rewrite regenerates it),
// then checks each example as printed in the document with this package's
// verifier, which uses cosmos/ics23 alone.
func TestProofsDocExamples(t *testing.T) {
	c := newDocChain(t)
	ctx := context.Background()
	info, err := c.app.Info(ctx, &abcitypes.RequestInfo{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
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
	if *rewrite {
		if err := os.WriteFile(docPath, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Check every example as the document prints it.
	for _, ex := range c.examples() {
		text, _, _, ok := section(doc, ex.name)
		if !ok {
			continue
		}
		p := parse(text)
		if p["path"] != ex.path {
			t.Fatalf("%s: path %q", ex.name, p["path"])
		}
		target, err := TargetOf(p["path"], p.hex(t, "data"))
		if err != nil {
			t.Fatalf("%s: %v", ex.name, err)
		}
		ops := []cmtcrypto.ProofOp{{Type: p["op.type"], Key: p.hex(t, "op.key"), Data: p.hex(t, "op.data")}}
		root, value := p.hex(t, "app_hash"), p.hex(t, "value")
		if target.Key != nil {
			if !bytes.Equal(p.hex(t, "key"), target.Key) {
				t.Fatalf("%s: answer for key %s, the path targets %X", ex.name, p["key"], target.Key)
			}
			if err := VerifySingle(root, target.Key, value, ops); err != nil {
				t.Fatalf("%s: %v", ex.name, err)
			}
			continue
		}
		entries, err := VerifyRange(root, target.Start, target.End, value, p["info"] == "more", ops)
		if err != nil {
			t.Fatalf("%s: %v", ex.name, err)
		}
		if len(entries) == 0 && strings.HasSuffix(ex.name, "present") {
			t.Fatalf("%s: no entries", ex.name)
		}
		// and a changed value does not verify
		if len(entries) > 0 {
			entries[0].Value = append(bytes.Clone(entries[0].Value), 0)
			if _, err := VerifyRange(root, target.Start, target.End, encodeEntries(entries), false, ops); err == nil {
				t.Fatalf("%s: a changed value verifies", ex.name)
			}
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
