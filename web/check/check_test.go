package check_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cometbft/cometbft/crypto/ed25519"
	rpcclient "github.com/cometbft/cometbft/rpc/client"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web/check"
)

// bundleAt is the bundle of the node's proven answer to path and data at height h
// (0: the latest), with the signed header after it.
func bundleAt(t *testing.T, env *e2e.Env, path string, data []byte, h int64) check.Bundle {
	t.Helper()
	ctx := context.Background()
	res, err := env.Client.RPC().ABCIQueryWithOptions(ctx, path, data, rpcclient.ABCIQueryOptions{Prove: true, Height: h})
	if err != nil || res.Response.Code != 0 {
		t.Fatalf("%s at %d: %v %+v", path, h, err, res)
	}
	next := res.Response.Height + 1
	if _, err := env.Client.WaitForHeight(ctx, next); err != nil {
		t.Fatal(err)
	}
	commit, err := env.Client.RPC().(rpcclient.SignClient).Commit(ctx, &next)
	if err != nil {
		t.Fatal(err)
	}
	return check.Bundle{ChainID: e2e.ChainID, Path: path, Data: data, Response: res.Response, SignedHeader: &commit.SignedHeader}
}

// committedHeight is the node's latest height once the application has committed it:
// CometBFT reports a block as its latest before the application has executed it, and a
// read at that height until then finds no saved version; the block after it is stored
// only once it is committed.
func committedHeight(t *testing.T, env *e2e.Env) int64 {
	t.Helper()
	ctx := context.Background()
	h, err := env.Client.LatestHeight(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.WaitForHeight(ctx, h+1); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestCheck: an address's proven answer, bundled with the header after it, checks
// against the genesis set; a byte flipped in the value, in the proof or in the commit's
// signature, a proof of another key, and another validator set are each refused.
func TestCheck(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	addr := env.Dev.Address()
	raw, err := bundleAt(t, env, proofs.PathAddress, addr[:], 0).Encode()
	if err != nil {
		t.Fatal(err)
	}
	again, err := check.DecodeBundle(raw)
	if err != nil {
		t.Fatal(err)
	}
	r, err := check.Check(again, env.Trusted)
	if err != nil || !r.Present {
		t.Fatalf("the node's answer: %+v %v", r, err)
	}
	for name, spoil := range map[string]func(b *check.Bundle){
		"value":     func(b *check.Bundle) { b.Response.Value[0] ^= 1 },
		"proof":     func(b *check.Bundle) { ops := b.Response.ProofOps.Ops; ops[0].Data[len(ops[0].Data)-1] ^= 1 },
		"signature": func(b *check.Bundle) { b.SignedHeader.Commit.Signatures[0].Signature[0] ^= 1 },
		"app hash":  func(b *check.Bundle) { b.SignedHeader.Header.AppHash[0] ^= 1 },
		"key":       func(b *check.Bundle) { b.Data = make([]byte, 20) },
		"chain":     func(b *check.Bundle) { b.ChainID = "other" },
	} {
		c, err := check.DecodeBundle(raw)
		if err != nil {
			t.Fatal(err)
		}
		spoil(&c)
		if _, err := check.Check(c, env.Trusted); err == nil {
			t.Errorf("a bundle with its %s changed was accepted", name)
		}
	}
	if _, err := check.Check(again, nil); err == nil {
		t.Error("a bundle checked against no validator set was accepted")
	}
}

// spoilt is a copy of drawing, changed by change.
func spoilt(t *testing.T, drawing []check.Node, change func([]check.Node) []check.Node) []check.Node {
	t.Helper()
	raw, err := json.Marshal(drawing)
	if err != nil {
		t.Fatal(err)
	}
	var out []check.Node
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return change(out)
}

// figureIn returns the element of nodes that carries figure name, and its parent's
// children it is one of (nil when there is none).
func figureIn(nodes *[]check.Node, name string) (*[]check.Node, int) {
	for i := range *nodes {
		if (*nodes)[i].Attrs["data-figure"] == name {
			return nodes, i
		}
		if list, j := figureIn(&(*nodes)[i].Kids, name); list != nil {
			return list, j
		}
	}
	return nil, -1
}

// setText, drop and twice change figure name in a drawing: its text, its element
// gone, its element written twice; add writes one more figure element at the end.
func setText(name, text string) func([]check.Node) []check.Node {
	return func(d []check.Node) []check.Node {
		list, i := figureIn(&d, name)
		(*list)[i].Kids = []check.Node{{Text: text}}
		return d
	}
}

func drop(name string) func([]check.Node) []check.Node {
	return func(d []check.Node) []check.Node {
		list, i := figureIn(&d, name)
		*list = append((*list)[:i], (*list)[i+1:]...)
		return d
	}
}

func twice(name string) func([]check.Node) []check.Node {
	return func(d []check.Node) []check.Node {
		list, i := figureIn(&d, name)
		*list = append((*list)[:i+1], (*list)[i:]...)
		return d
	}
}

func add(name, text string) func([]check.Node) []check.Node {
	return func(d []check.Node) []check.Node {
		return append(d, check.Node{Tag: "bdi", Attrs: map[string]string{"data-figure": name}, Kids: []check.Node{{Text: text}}})
	}
}

// TestVerify: the figures of a document's proof box (the document, its contract, the
// protocol version and the block time, at one height) are the document's, its text
// with its bidirectional controls escaped and its expiry its $createdAt plus the
// type's ttl; a page drawing the box as the check draws it verifies, and one that shows
// a figure with another text, leaves one out or adds one is refused naming both texts,
// and so is a page of another subject. A header of another chain or validator set than pinned, a changed answer, a
// header older than the bound and answers of two states are refused.
func TestVerify(t *testing.T) {
	t.Parallel()
	env := e2e.StartNodeShortTTL(t, 60)
	ctx := context.Background()
	const text = "price: \u202e0001\u202c credits"
	note := env.SeedNote(t, text)
	h := committedHeight(t, env)
	box := func(h int64) []check.Bundle {
		return []check.Bundle{
			bundleAt(t, env, proofs.PathDocument, proofs.DocumentData(note.Contract, "note", note.Document), h),
			bundleAt(t, env, proofs.PathContract, note.Contract[:], h),
			bundleAt(t, env, proofs.PathKey, drive.ProtocolVersionKey(), h),
			bundleAt(t, env, proofs.PathKey, drive.LastBlockKey(), h),
		}
	}
	bundles := box(h)
	now := bundles[0].SignedHeader.Time.Add(time.Second)
	pin := check.Pin{ChainID: e2e.ChainID, Validators: env.Trusted}

	// A page that shows nothing: every figure is missing, and the verdict holds them
	// and the drawing.
	v, err := check.Verify(bundles, pin, now, 0, "", nil)
	var shown check.ErrShown
	if !errors.As(err, &shown) || v.Figures == nil || v.Drawing == nil {
		t.Fatalf("a page that shows nothing: %v", err)
	}
	doc, err := env.Client.Document(ctx, note.Contract, "note", note.Document, h, true)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		check.FigureChain:  e2e.ChainID,
		check.FigureHeight: v.Figures[check.FigureHeight],
		"type":             "note",
		"field.0.name":     "text",
		"field.0.value":    "price: ⟨U+202E⟩0001⟨U+202C⟩ credits",
		"expiry":           check.Expiry(doc.CreatedAt+120_000, doc.BlockTimeMs),
		"created":          check.When(time.UnixMilli(int64(doc.CreatedAt)), time.UnixMilli(int64(doc.BlockTimeMs))),
		"owner":            note.Identity.String(),
		"protocol-version": strconv.Itoa(int(protocol.Latest)),
	} {
		if got := v.Figures[name]; got != want {
			t.Errorf("figure %s: %q, want %q", name, got, want)
		}
	}
	if v.ChainID != e2e.ChainID || v.Height != h || v.MaxAge != proofs.DefaultMaxAge {
		t.Errorf("verdict: %+v", v)
	}

	// The honest page verifies; a changed, a missing and an added figure do not.
	honest := v.Drawing
	docPage := "/document/" + note.Contract.String() + "/note/" + note.Document.String()
	if _, err := check.Verify(bundles, pin, now, 0, docPage, honest); err != nil {
		t.Fatalf("the honest page: %v", err)
	}
	// On its page, its ids in capitals as the routes read them too; on another, refused.
	if _, err := check.Verify(bundles, pin, now, 0, strings.ToUpper(docPage[:20])+docPage[20:], honest); err != nil {
		t.Errorf("the page with its ids in capitals: %v", err)
	}
	var otherPage check.ErrOtherPage
	for _, page := range []string{"/document/" + note.Contract.String() + "/Note/" + note.Document.String(), "/identity/" + note.Identity.String(), "/"} {
		if _, err := check.Verify(bundles, pin, now, 0, page, honest); !errors.As(err, &otherPage) {
			t.Errorf("the answers on page %s: %v", page, err)
		}
	}
	for name, spoil := range map[string]struct {
		change func([]check.Node) []check.Node
		want   string
	}{
		"text":     {setText("field.0.value", "price: 1000 credits"), `the page showed "price: 1000 credits", the proof says "price: ⟨U+202E⟩0001⟨U+202C⟩ credits"`},
		"expiry":   {setText("expiry", "expires at 2099-01-01 00:00:00 UTC (73 years from now)"), `expiry: the page showed "expires at 2099`},
		"chain":    {add(check.FigureChain, "ttld-fake"), `chain: the page showed "ttld-fake"`},
		"missing":  {drop("expiry"), "expiry: the page does not show it"},
		"twice":    {twice("owner"), "owner: the page shows it 2 times"},
		"unproven": {add("price", "9,999"), `price: the page showed "9,999", which the proof does not have`},
	} {
		_, err := check.Verify(bundles, pin, now, 0, "", spoilt(t, honest, spoil.change))
		if !errors.As(err, &shown) || !strings.Contains(err.Error(), spoil.want) {
			t.Errorf("%s: %v, want ErrShown with %q", name, err, spoil.want)
		}
	}

	// The pin: another chain, another validator set.
	var pinned check.ErrPinned
	if _, err := check.Verify(bundles, check.Pin{ChainID: "ttld-fake", Validators: env.Trusted}, now, 0, "", honest); !errors.As(err, &pinned) ||
		!strings.Contains(err.Error(), "this view pinned chain ttld-fake") {
		t.Errorf("another pinned chain: %v", err)
	}
	other := cmttypes.NewValidatorSet([]*cmttypes.Validator{cmttypes.NewValidator(ed25519.GenPrivKey().PubKey(), 10)})
	if _, err := check.Verify(bundles, check.Pin{ChainID: e2e.ChainID, Validators: other}, now, 0, "", honest); !errors.As(err, &pinned) {
		t.Errorf("another pinned set: %v", err)
	}
	// A bundle whose answer was changed on the way.
	var notProven check.ErrNotProven
	spoiled := append([]check.Bundle(nil), bundles...)
	raw, err := bundles[0].Encode()
	if err != nil {
		t.Fatal(err)
	}
	if spoiled[0], err = check.DecodeBundle(raw); err != nil {
		t.Fatal(err)
	}
	spoiled[0].Response.Value[len(spoiled[0].Response.Value)-1] ^= 1
	if _, err := check.Verify(spoiled, pin, now, 0, "", honest); !errors.As(err, &notProven) || notProven.Bundle != 0 {
		t.Errorf("a changed answer: %v", err)
	}
	// Nothing pinned yet: the header's chain is taken, the set's hash reported.
	if v, err := check.Verify(bundles, check.Pin{Validators: env.Trusted}, now, 0, "", honest); err != nil || v.ChainID != e2e.ChainID ||
		string(v.SetHash) != string(env.Trusted.Hash()) {
		t.Errorf("a first verification: %+v %v", v, err)
	}

	// Freshness: a header older than the bound, or than one given.
	var stale check.ErrStale
	if _, err := check.Verify(bundles, pin, now.Add(proofs.DefaultMaxAge), 0, "", honest); !errors.As(err, &stale) {
		t.Errorf("a header older than the default bound: %v", err)
	}
	if _, err := check.Verify(bundles, pin, now.Add(time.Hour), -1, "", honest); err != nil {
		t.Errorf("no bound: %v", err)
	}

	// Answers of two states in one box.
	var two check.ErrNotOneState
	mixed := append(box(h - 1)[:1], bundles[1:]...)
	if _, err := check.Verify(mixed, pin, now, 0, "", honest); !errors.As(err, &two) {
		t.Errorf("answers of two heights: %v", err)
	}
	// A document without its contract has no figures, nor a box of two subjects.
	var answers check.ErrAnswers
	if _, err := check.Verify([]check.Bundle{bundles[0], bundles[3]}, pin, now, 0, "", honest); !errors.As(err, &answers) {
		t.Errorf("a document without its contract: %v", err)
	}
	var nobody protocol.IdentityID
	subjects := append(bundles, bundleAt(t, env, proofs.PathIdentity, nobody[:], h))
	if _, err := check.Verify(subjects, pin, now, 0, "", honest); !errors.As(err, &answers) || !strings.Contains(err.Error(), "two of the answers show a figure id") {
		t.Errorf("a document and an identity in one box: %v", err)
	}
}

// TestReadOverview: the overview's figures, from answers read at one height without
// proofs as the server reads them; a backlog counted until another time than the block
// time is refused.
func TestReadOverview(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	ctx := context.Background()
	h := committedHeight(t, env)
	read := func(path string, data []byte) check.Answer {
		res, err := env.Client.RPC().ABCIQueryWithOptions(ctx, path, data, rpcclient.ABCIQueryOptions{Height: h})
		if err != nil || res.Response.Code != 0 {
			t.Fatalf("%s: %v %+v", path, err, res)
		}
		return check.AnswerOf(path, data, res.Response)
	}
	last := read(proofs.PathKey, drive.LastBlockKey())
	b, _ := drive.DecodeLastBlock(last.Value)
	answers := []check.Answer{
		read(proofs.PathKey, drive.ProtocolVersionKey()), read(proofs.PathPools, nil), read(proofs.PathUpgrades, nil), read(proofs.PathLifetimePools, nil),
		read(proofs.PathPendingRefunds, nil), read(proofs.PathTotalCredits, nil), read(proofs.PathKey, drive.SupplyKey()), last,
		read(proofs.PathExpirations, proofs.ExpirationsData(b.TimeMs, nil)),
	}
	f, err := check.Read(e2e.ChainID, answers)
	if err != nil {
		t.Fatal(err)
	}
	totals, err := env.Client.TotalCredits(ctx, h, false)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"protocol-version": strconv.Itoa(int(protocol.Latest)), "backlog": "0", "conserved": "conserved", "lifetime-pools": "0", "pending-refunds": "0",
		"next-version": "none decided", "upgrade-signals": fmt.Sprintf("0 of the %d blocks of epoch 0 so far signalled %d or later; 75%% of an epoch's blocks decide", h, protocol.Latest+1),
		"supply": check.Credits(totals.Supply), "block-time": check.When(time.UnixMilli(int64(b.TimeMs)), time.Time{}),
	} {
		if f[name] != want {
			t.Errorf("figure %s: %q, want %q", name, f[name], want)
		}
	}
	answers[len(answers)-1] = read(proofs.PathExpirations, proofs.ExpirationsData(b.TimeMs-1, nil))
	if _, err := check.Read(e2e.ChainID, answers); err == nil {
		t.Error("a backlog counted before the block time was accepted")
	}
}

// TestVisible: every character that is invisible or reorders text is escaped, and so
// is the escape's opening bracket; the rest reads as written.
func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"price: \u202e0001\u202c credits": "price: ⟨U+202E⟩0001⟨U+202C⟩ credits",
		"a\u200bb\u200dc\ufeff":           "a⟨U+200B⟩b⟨U+200D⟩c⟨U+FEFF⟩",
		"\u2066x\u2069 \u200f":            "⟨U+2066⟩x⟨U+2069⟩ ⟨U+200F⟩",
		"1\u00a0000\u3164":                "1⟨U+00A0⟩000⟨U+3164⟩",
		"line\nbreak\ttab":                "line⟨U+000A⟩break⟨U+0009⟩tab",
		"⟨U+202E⟩":                        "⟨U+27E8⟩U+202E⟩",
		"bad \xff byte":                   "bad ⟨0xFF⟩ byte",
		"❤\ufe0f":                         "❤⟨U+FE0F⟩",
		"héllo 世界 שלום <b>":               "héllo 世界 שלום <b>",
	} {
		if got := check.Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReadCountAndPayout: the documents page's count is the count record of the
// listed query's where clauses, proven as /count; a count of other clauses, or without
// the documents it counts, has no figures. A validator's payout identity is read from
// its key, and a validator without one says so.
func TestReadCountAndPayout(t *testing.T) {
	t.Parallel()
	env := e2e.StartNodeShortTTL(t, 60)
	note := env.SeedNote(t, "counted")
	h := committedHeight(t, env)
	q := []byte(`{"limit":5,"orderBy":[["text","asc"]]}`)
	count, ok := check.CountQuery(q)
	if !ok || count != nil {
		t.Fatalf("the count of a query without where clauses: %q %v, want every document", count, ok)
	}
	if where, _ := check.CountQuery([]byte(`{"where":[["text","==","a"]],"limit":5,"startAfter":"00"}`)); string(where) != `{"where":[["text","==","a"]]}` {
		t.Errorf("the count of a query with where clauses: %s", where)
	}
	docs := bundleAt(t, env, proofs.PathDocuments, proofs.DocumentsData(note.Contract, "note", q), h)
	counted := bundleAt(t, env, proofs.PathCount, proofs.CountData(note.Contract, "note", "", count), h)
	last := bundleAt(t, env, proofs.PathKey, drive.LastBlockKey(), h)
	if r, err := check.Check(counted, env.Trusted); err != nil || !r.Present {
		t.Fatalf("the count's bundle: %+v %v", r, err)
	}
	answers := func(bs ...check.Bundle) []check.Answer {
		out := make([]check.Answer, len(bs))
		for i, b := range bs {
			out[i] = check.AnswerOf(b.Path, b.Data, b.Response)
		}
		return out
	}
	f, err := check.Read(e2e.ChainID, answers(docs, counted, last))
	if err != nil || f["count"] != "1" {
		t.Fatalf("the documents' count: %q %v", f["count"], err)
	}
	other := bundleAt(t, env, proofs.PathCount, proofs.CountData(note.Contract, "note", "", []byte(`{"where":[["text","==","x"]]}`)), h)
	var bad check.ErrAnswers
	if _, err := check.Read(e2e.ChainID, answers(docs, other, last)); !errors.As(err, &bad) {
		t.Errorf("a count of other where clauses: %v", err)
	}
	if _, err := check.Read(e2e.ChainID, answers(counted)); !errors.As(err, &bad) {
		t.Errorf("a count without its documents: %v", err)
	}

	validator := env.Trusted.Validators[0].Address
	payout := bundleAt(t, env, proofs.PathKey, drive.PayoutIdentityKey(validator), h)
	f, err = check.Read(e2e.ChainID, answers(payout))
	if err != nil || f["validator"] != validator.String() || f["payout-identity"] != protocol.PayoutIdentityID(validator).String() {
		t.Errorf("the validator's figures %v: %v", f, err)
	}
	none := bundleAt(t, env, proofs.PathKey, drive.PayoutIdentityKey(make([]byte, drive.ConsensusAddressLen)), h)
	if f, err := check.Read(e2e.ChainID, answers(none)); err != nil || f["state"] != "no payout identity" {
		t.Errorf("a validator without a payout identity: %v %v", f, err)
	}
}

// TestWhen: every time is written to the second in UTC, then how far it is from the
// time it is read against, or alone; an expiry says it the same way.
func TestWhen(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	for _, c := range []struct {
		ref  time.Time
		want string
	}{
		{time.Time{}, "2026-01-02 03:04:05 UTC"},
		{at.Add(3 * time.Minute), "2026-01-02 03:04:05 UTC (3 minutes ago)"},
		{at.Add(-2 * time.Hour), "2026-01-02 03:04:05 UTC (2 hours from now)"},
		{at, "2026-01-02 03:04:05 UTC (now)"},
	} {
		if got := check.When(at, c.ref); got != c.want {
			t.Errorf("When(%v, %v) = %q, want %q", at, c.ref, got, c.want)
		}
	}
	ms := uint64(at.UnixMilli())
	if got, want := check.Expiry(ms, ms-90_000), "expires at 2026-01-02 03:04:05 UTC (1 minute from now)"; got != want {
		t.Errorf("Expiry: %q, want %q", got, want)
	}
	if got, want := check.Expiry(ms, ms+1000), "expired at 2026-01-02 03:04:05 UTC (1 second ago), waiting for cleanup"; got != want {
		t.Errorf("Expiry past: %q, want %q", got, want)
	}
}
