package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// TestBatchFieldsAreTheCommandsFlags: a batch file's action takes the fields the
// command of its kind takes, and no other: its arguments (CONTRACT TYPE, ID, DATA, as
// the command's usage names them) and its flags, but the signer's and --save, which
// belong to the command line.
func TestBatchFieldsAreTheCommandsFlags(t *testing.T) {
	root := newRootCmd()
	group, _, err := root.Find([]string{"tx", "document"})
	if err != nil {
		t.Fatal(err)
	}
	commands := 0
	for _, cmd := range group.Commands() {
		k, err := documentKindNamed(cmd.Name())
		if err != nil {
			continue
		}
		commands++
		var fields []string
		for _, arg := range strings.Fields(cmd.Use)[1:] {
			if strings.HasPrefix(arg, "-") || strings.HasPrefix(arg, "[") {
				break
			}
			if arg != "CONTRACT" && arg != "TYPE" {
				fields = append(fields, strings.ToLower(arg))
			}
		}
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "identity" && f.Name != "key-index" && f.Name != "save" {
				fields = append(fields, f.Name)
			}
		})
		slices.Sort(fields)
		takes := slices.Sorted(slices.Values(k.Takes))
		if !slices.Equal(fields, takes) {
			t.Errorf("ttld tx document %s takes %v, its batch action %v", k.Name, fields, takes)
		}
	}
	if commands != len(documentKinds) {
		t.Errorf("%d commands under tx document have a kind, want one for each of the %d kinds", commands, len(documentKinds))
	}
}

// TestBatchInDocumentHelp: `ttld tx document --help` says that batch sends a file's
// actions several to a transaction, and lists it.
func TestBatchInDocumentHelp(t *testing.T) {
	out, err := runCLI(t, "tx", "document", "--help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "`batch FILE`") || !strings.Contains(out, "\n  batch ") {
		t.Fatalf("tx document --help does not mention batch:\n%s", out)
	}
}

// batchFile writes the lines of a batch file into a new file and returns its name.
func batchFile(t *testing.T, lines ...string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "actions.json")
	if err := os.WriteFile(name, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestBatchMalformedRefusedBeforeSigning: a malformed action is refused at its line
// (or array element) before anything is signed or the node asked (--node is closed).
func TestBatchMalformedRefusedBeforeSigning(t *testing.T) {
	home := t.TempDir()
	if _, err := keyring.Open(home).Add("dev"); err != nil {
		t.Fatal(err)
	}
	closed := "http://" + freeAddr(t)
	contract, id := strings.Repeat("cd", 32), strings.Repeat("ab", 32)
	ok := `{"action":"delete","contract":"` + contract + `","type":"note","id":"` + id + `"}`
	// bad and missing: the refusal is an errField of the field named, malformed or
	// missing.
	bad := func(field string) func(error) bool {
		return func(err error) bool { var f errField; return errors.As(err, &f) && f.Field == field && !f.Missing }
	}
	missing := func(field string) func(error) bool {
		return func(err error) bool { var f errField; return errors.As(err, &f) && f.Field == field && f.Missing }
	}
	notAnAction := func(err error) bool { return errors.As(err, new(errNotAnAction)) }
	for _, tc := range []struct {
		name  string
		lines []string
		at    actionAt
		// is reports whether the refusal is the one expected.
		is func(error) bool
	}{
		{"unknown kind", []string{ok, `{"action":"frobnicate","contract":"` + contract + `","type":"note"}`}, actionAt{Index: 1, Line: 2}, bad("action")},
		{"no kind", []string{`{"contract":"` + contract + `","type":"note"}`}, actionAt{Line: 1}, missing("action")},
		{"missing id", []string{ok, "", `{"action":"delete","contract":"` + contract + `","type":"note"}`}, actionAt{Index: 1, Line: 3}, missing("id")},
		{"bad hex", []string{`{"action":"delete","contract":"` + contract[:60] + `zz","type":"note","id":"` + id + `"}`}, actionAt{Line: 1}, bad("contract")},
		{"data not JSON", []string{ok, `{"action":"create","contract":"` + contract + `","type":"note","data":{text:"x"}}`}, actionAt{Index: 1, Line: 2}, notAnAction},
		{"a field the kind does not take", []string{`{"action":"create","contract":"` + contract + `","type":"note","data":{},"price":5}`}, actionAt{Line: 1},
			func(err error) bool { var f errFieldNotTaken; return errors.As(err, &f) && f.Field == "price" }},
		{"a key no action has", []string{`{"action":"delete","contract":"` + contract + `","type":"note","id":"` + id + `","revison":2}`}, actionAt{Line: 1}, notAnAction},
		{"a revision that is no number", []string{`{"action":"replace","contract":"` + contract + `","type":"note","id":"` + id + `","data":{},"revision":"2"}`}, actionAt{Line: 1}, bad("revision")},
		{"set-price without a price", []string{`{"action":"set-price","contract":"` + contract + `","type":"note","id":"` + id + `"}`}, actionAt{Line: 1}, missing("price")},
		{"bad entropy", []string{`{"action":"create","contract":"` + contract + `","type":"note","data":{},"entropy":"abcd"}`}, actionAt{Line: 1}, bad("entropy")},
		{"a document named twice", []string{ok, `{"action":"set-price","contract":"` + contract + `","type":"note","id":"` + id + `","price":1}`}, actionAt{Index: 1, Line: 2},
			func(err error) bool {
				var d errDocumentTwice
				return errors.As(err, &d) && d.First == (actionAt{Line: 1})
			}},
		{"an array's bad element", []string{"[", "  " + ok + ",", "  " + `{"action":"delete","contract":"` + contract + `","type":"$note","id":"` + id + `"}`, "]"}, actionAt{Index: 1, Line: 3, Array: true}, bad("type")},
		{"an array's element that is not JSON", []string{"[", "  " + ok + ",", "  {\"action\":", "]"}, actionAt{Index: 1, Line: 4, Array: true}, notAnAction},
		{"an array not closed", []string{"[", "  " + ok}, actionAt{Index: 1, Line: 3, Array: true}, notAnAction},
	} {
		_, err := runCLI(t, "tx", "document", "batch", batchFile(t, tc.lines...), "--identity", id, "--from", "dev", "--home", home, "--node", closed)
		var at errBatchAction
		if !errors.As(err, &at) || at.At != tc.at || !tc.is(err) {
			t.Errorf("%s: err = %v (%T), want it at %v", tc.name, err, err, tc.at)
		}
	}
	_, err := runCLI(t, "tx", "document", "batch", batchFile(t, "", "  "), "--identity", id, "--from", "dev", "--home", home, "--node", closed)
	if !errors.As(err, new(errNoActions)) {
		t.Errorf("a file of blank lines: err = %v, want errNoActions", err)
	}
}

// batchEnv is what the batch tests against a node share: the CLI and reads of the
// state the batches leave (unproven: the proofs are other tests' subject).
type batchEnv struct{ cli }

// signer is the flags of a committed send signed by identity id.
func (b batchEnv) signer(id string) []string {
	return []string{"--identity", id, "--from", node.DevKeyName, "--commit"}
}

// batch runs `tx document batch FILE` with args and decodes its output.
func (b batchEnv) batch(file string, args ...string) (batchOutput, error) {
	b.t.Helper()
	var out batchOutput
	err := b.json(&out, append([]string{"tx", "document", "batch", file}, args...)...)
	return out, err
}

// contract registers the contract of definition file, owned by identity id.
func (b batchEnv) contract(file, id string) string {
	b.t.Helper()
	var tx txOutput
	if err := b.json(&tx, append([]string{"tx", "contract", "create", file}, b.signer(id)...)...); err != nil || tx.Code != 0 {
		b.t.Fatalf("contract create %s: %+v %v", file, tx, err)
	}
	return tx.Contract
}

// document reads document id (hex) of type typ of contract.
func (b batchEnv) document(contract, typ, id string) (protocol.Document, bool) {
	b.t.Helper()
	cid, err := protocol.ParseContractID(contract)
	if err != nil {
		b.t.Fatal(err)
	}
	did, err := protocol.ParseDocumentID(id)
	if err != nil {
		b.t.Fatal(err)
	}
	st, err := b.env.Client.Document(context.Background(), cid, typ, did, 0, false)
	if err != nil {
		b.t.Fatal(err)
	}
	return st.Document, st.Present
}

// nonces reads identity id's last nonce, committed and in the node's check state.
func (b batchEnv) nonces(id string) (committed, pending uint64) {
	b.t.Helper()
	pid, err := protocol.ParseIdentityID(id)
	if err != nil {
		b.t.Fatal(err)
	}
	st, err := b.env.Client.Identity(context.Background(), pid, 0, false)
	if err != nil {
		b.t.Fatal(err)
	}
	pending, err = b.env.Client.PendingIdentityNonce(context.Background(), pid)
	if err != nil {
		b.t.Fatal(err)
	}
	return st.Nonce.Last, pending
}

// committedAlone checks that out is the one transaction a file made, committed with code 0
// on contract, and returns its actions.
func committedAlone(t *testing.T, out batchOutput, err error, contract string) []batchActionOutput {
	t.Helper()
	if err != nil || out.Transactions != 1 || len(out.Sent) != 1 || len(out.NotSent) != 0 {
		t.Fatalf("batch: %+v %v", out, err)
	}
	if s := out.Sent[0]; s.Status != txCommitted || s.Code != 0 || s.Fee == nil || s.Contract != contract {
		t.Fatalf("batch transaction: %+v", s)
	}
	return out.Sent[0].Actions
}

// TestBatchFileMixedActions: docs/examples/market.json's listings written by batch
// files against a node: a JSON array over several lines (two creates, a replace and a
// set-price, the revisions read from the node) and a JSON-lines file with a blank line
// (a transfer, a delete and a replace at a given revision) each committed as one
// transaction, then a purchase read from standard input by another identity; the
// stored documents hold what each file did. Then two listings with photos that fit a
// transaction each but not together: refused at the second without --split, sent as two
// transactions with it.
func TestBatchFileMixedActions(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	b := batchEnv{cli{t: t, env: env}}
	seller, buyer := b.newIdentity(), b.newIdentity()
	sellerID, _ := protocol.ParseIdentityID(seller)
	buyerID, _ := protocol.ParseIdentityID(buyer)
	market := b.contract("../../docs/examples/market.json", seller)
	cid, _ := protocol.ParseContractID(market)
	listing := func(sku string, quantity int) string {
		return fmt.Sprintf(`{"sku":%q,"category":"home","quantity":%d,"seller":%q}`, sku, quantity, seller)
	}
	action := func(kind, fields string) string {
		return `{"action":"` + kind + `","contract":"` + market + `","type":"listing",` + fields + `}`
	}
	create := func(sku string) string {
		var tx txOutput
		if err := b.json(&tx, append([]string{"tx", "document", "create", market, "listing", listing(sku, 1)}, b.signer(seller)...)...); err != nil || tx.Code != 0 {
			t.Fatalf("create %s: %+v %v", sku, tx, err)
		}
		return tx.Document
	}
	listingOf := func(id string) (protocol.Document, bool) { return b.document(market, "listing", id) }
	lamp, desk := create("LAMP-1"), create("DESK-1")

	before, _ := b.nonces(seller)
	entropy := [32]byte(bytes.Repeat([]byte{9}, 32))
	out, err := b.batch(batchFile(t, "[",
		"  "+action("create", `"data":`+listing("CHAIR-1", 4)+`,"entropy":"`+hex.EncodeToString(entropy[:])+`"`)+",",
		"  "+action("create", `"data":`+listing("SOFA-1", 1))+",",
		"  "+action("replace", `"id":"`+lamp+`","data":`+listing("LAMP-1", 10))+",",
		"  "+action("set-price", `"id":"`+desk+`","price":5000`),
		"]"), b.signer(seller)...)
	acts := committedAlone(t, out, err, market)
	chair := protocol.NewDocumentID(cid, sellerID, "listing", entropy).String()
	if len(acts) != 4 || acts[0].Document != chair || acts[0].Action != "create" || acts[1].Action != "create" || acts[2].Document != lamp || acts[3].Document != desk {
		t.Fatalf("actions %+v, want the chair %s first", acts, chair)
	}
	if acts[0].Element == nil || *acts[0].Element != 0 || *acts[3].Element != 3 || acts[0].Line != 2 || acts[3].Line != 5 {
		t.Fatalf("actions placed at %+v", acts)
	}
	if after, _ := b.nonces(seller); after != before+1 || out.Sent[0].Nonce != after {
		t.Fatalf("nonce %d -> %d, the batch signed with %d: want one nonce", before, after, out.Sent[0].Nonce)
	}
	sofa := acts[1].Document
	if d, ok := listingOf(chair); !ok || d.Revision != 1 || d.Owner != sellerID || d.Value(2).Int != 4 {
		t.Fatalf("chair: %+v %v", d, ok)
	}
	if d, ok := listingOf(sofa); !ok || d.Revision != 1 || string(d.Value(0).Bytes) != "SOFA-1" {
		t.Fatalf("sofa: %+v %v", d, ok)
	}
	if d, ok := listingOf(lamp); !ok || d.Revision != 2 || d.Value(2).Int != 10 {
		t.Fatalf("lamp: %+v %v", d, ok)
	}
	if d, ok := listingOf(desk); !ok || d.Revision != 2 || d.Price != 5000 {
		t.Fatalf("desk: %+v %v", d, ok)
	}

	out, err = b.batch(batchFile(t,
		action("transfer", `"id":"`+sofa+`","to":"`+buyer+`"`),
		"",
		action("delete", `"id":"`+chair+`"`),
		action("replace", `"id":"`+lamp+`","data":`+listing("LAMP-1", 7)+`,"revision":3`),
	), b.signer(seller)...)
	acts = committedAlone(t, out, err, market)
	if len(acts) != 3 || acts[0].Element != nil || acts[0].Line != 1 || acts[1].Line != 3 || acts[2].Line != 4 {
		t.Fatalf("actions %+v", acts)
	}
	if d, ok := listingOf(sofa); !ok || d.Owner != buyerID || d.Revision != 2 {
		t.Fatalf("sofa after the transfer: %+v %v", d, ok)
	}
	if _, ok := listingOf(chair); ok {
		t.Fatal("the chair is still stored")
	}
	if d, ok := listingOf(lamp); !ok || d.Revision != 3 || d.Value(2).Int != 7 {
		t.Fatalf("lamp after the second replace: %+v %v", d, ok)
	}

	b.stdin = action("purchase", `"id":"`+desk+`"`)
	out, err = b.batch("-", b.signer(buyer)...)
	b.stdin = ""
	committedAlone(t, out, err, market)
	if d, ok := listingOf(desk); !ok || d.Owner != buyerID || d.Revision != 3 || d.Price != 0 {
		t.Fatalf("desk after the purchase: %+v %v", d, ok)
	}

	// Each listing's photo is 2,040 bytes, written as some 8 KB of integers.
	photo := func(sku string) string {
		return action("create", `"data":{"sku":"`+sku+`","category":"art","quantity":1,"seller":"`+seller+`","photo":"0x`+strings.Repeat("ff", 2040)+`"}`)
	}
	big := batchFile(t, photo("ART-1"), photo("ART-2"))
	before, _ = b.nonces(seller)
	_, err = b.run(append([]string{"tx", "document", "batch", big}, b.signer(seller)...)...)
	lim, _ := protocol.LimitsFor(protocol.Latest)
	var at errBatchAction
	var large errBatchTooLarge
	var tooLarge protocol.ErrTxTooLarge
	if !errors.As(err, &at) || at.At.Line != 2 || !errors.As(err, &large) || large.Before != 1 ||
		!errors.As(err, &tooLarge) || tooLarge.Max != lim.MaxTxBytes || tooLarge.Size <= lim.MaxTxBytes {
		t.Fatalf("two listings over MaxTxBytes together: err = %v", err)
	}
	if after, pending := b.nonces(seller); after != before || pending != before {
		t.Fatalf("a refused file moved the nonce from %d to %d (pending %d)", before, after, pending)
	}
	out, err = b.batch(big, append(b.signer(seller), "--split")...)
	if err != nil || out.Transactions != 2 || len(out.Sent) != 2 || out.Sent[0].Nonce != before+1 || out.Sent[1].Nonce != before+2 {
		t.Fatalf("the same with --split: %+v %v", out, err)
	}
	for _, s := range out.Sent {
		if s.Status != txCommitted || s.Code != 0 || len(s.Actions) != 1 {
			t.Fatalf("a photo's transaction: %+v", s)
		}
		if d, ok := listingOf(s.Actions[0].Document); !ok || len(d.Value(4).Bytes) != 2040 {
			t.Fatalf("listing %s: %+v %v", s.Actions[0].Document, d, ok)
		}
	}
}

// TestBatchLimitsAndSplit: a file of 25 notes (docs/examples/note.json) is refused
// without --split, at its 11th action and before anything is signed (the identity's
// nonce stays); its --dry-run --split reports the first batch's fee and changes
// nothing; with --split it goes as ceil(25/10) = 3 transactions with consecutive
// nonces, and every note is stored. A file on two contracts, an action too large for
// any transaction, and a run that stops at a refusal complete the limits.
func TestBatchLimitsAndSplit(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	b := batchEnv{cli{t: t, env: env}}
	owner := b.newIdentity()
	ownerID, _ := protocol.ParseIdentityID(owner)
	notes, other := b.contract("../../docs/examples/note.json", owner), b.contract("../../docs/examples/note.json", owner)
	lim, _ := protocol.LimitsFor(protocol.Latest)
	// note is the create of a note of contract whose entropy is i, with the id it
	// makes.
	note := func(contract string, i int) (string, string) {
		cid, _ := protocol.ParseContractID(contract)
		var e [32]byte
		e[0], e[1] = byte(i>>8), byte(i)
		id := protocol.NewDocumentID(cid, ownerID, "note", e)
		return fmt.Sprintf(`{"action":"create","contract":"%s","type":"note","data":{"text":"note %d"},"entropy":"%x"}`, contract, i, e), id.String()
	}
	n := 2*lim.MaxDocumentActions + 5
	var lines, ids []string
	for i := range n {
		line, id := note(notes, i)
		lines, ids = append(lines, line), append(ids, id)
	}
	file := batchFile(t, lines...)
	stored := func(ids []string) (count int) {
		for _, id := range ids {
			if _, ok := b.document(notes, "note", id); ok {
				count++
			}
		}
		return count
	}
	before, _ := b.nonces(owner)
	unchanged := func(what string) {
		t.Helper()
		if after, pending := b.nonces(owner); after != before || pending != before {
			t.Fatalf("%s moved the nonce from %d to %d (pending %d)", what, before, after, pending)
		}
	}

	_, err := b.run(append([]string{"tx", "document", "batch", file}, b.signer(owner)...)...)
	var at errBatchAction
	var many errTooManyActions
	if !errors.As(err, &at) || at.At.Line != lim.MaxDocumentActions+1 || !errors.As(err, &many) || many.Max != lim.MaxDocumentActions || many.Count != n {
		t.Fatalf("%d actions without --split: err = %v", n, err)
	}
	unchanged("a file over the action limit")

	var dry batchDryRunOutput
	if err := b.json(&dry, "tx", "document", "batch", file, "--split", "--dry-run", "--identity", owner, "--from", node.DevKeyName); err != nil ||
		dry.Status != "dry_run" || dry.Code != 0 || dry.Fee == 0 || dry.MaxFee < dry.Fee || dry.Nonce != before+1 || dry.Transactions != 3 ||
		len(dry.Actions) != lim.MaxDocumentActions || dry.Actions[0].Document != ids[0] {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	unchanged("a dry run")
	if got := stored(ids); got != 0 {
		t.Fatalf("a dry run stored %d notes", got)
	}

	text, err := b.run(append([]string{"tx", "document", "batch", file, "--split"}, b.signer(owner)...)...)
	if err != nil || !strings.Contains(text, "transaction 3 of 3 (5 actions)") || !strings.Contains(text, "transactions sent: 3 of 3") {
		t.Fatalf("--split: %v\n%s", err, text)
	}
	for _, id := range ids {
		if !strings.Contains(text, "create note "+id) {
			t.Fatalf("the output does not name the created note %s:\n%s", id, text)
		}
	}
	if got := stored(ids); got != n {
		t.Fatalf("%d of %d notes stored", got, n)
	}
	if after, _ := b.nonces(owner); after != before+3 {
		t.Fatalf("nonce %d -> %d, want 3 transactions", before, after)
	}
	before += 3

	first, _ := note(notes, 100)
	second, _ := note(other, 101)
	mixed := batchFile(t, first, second)
	_, err = b.run(append([]string{"tx", "document", "batch", mixed}, b.signer(owner)...)...)
	var mix errMixedContracts
	if !errors.As(err, &at) || at.At.Line != 2 || !errors.As(err, &mix) || mix.Contract.String() != other || mix.Batch.String() != notes {
		t.Fatalf("two contracts without --split: err = %v", err)
	}
	unchanged("a file on two contracts")
	out, err := b.batch(mixed, append(b.signer(owner), "--split")...)
	if err != nil || out.Transactions != 2 || len(out.Sent) != 2 || out.Sent[0].Contract != notes || out.Sent[1].Contract != other || out.Sent[1].Code != 0 {
		t.Fatalf("two contracts with --split: %+v %v", out, err)
	}
	before += 2

	small, _ := note(notes, 200)
	huge := batchFile(t, small, `{"action":"create","contract":"`+notes+`","type":"note","data":{"text":"`+strings.Repeat("a", lim.MaxTxBytes)+`"}}`)
	for _, split := range []bool{false, true} {
		args := append([]string{"tx", "document", "batch", huge}, b.signer(owner)...)
		if split {
			args = append(args, "--split")
		}
		_, err = b.run(args...)
		var large errBatchTooLarge
		if !errors.As(err, &at) || at.At.Line != 2 || !errors.As(err, &large) || large.Before != 0 || !errors.As(err, new(protocol.ErrTxTooLarge)) {
			t.Fatalf("an action over MaxTxBytes (--split %v): err = %v", split, err)
		}
		unchanged("a file with an action over MaxTxBytes")
	}

	// The 15th action replaces a note that does not exist: the node refuses the second
	// transaction (CheckTx: nothing is charged) and the third is not sent.
	lines, ids = nil, nil
	for i := range n {
		line, id := note(notes, 300+i)
		if i == 14 {
			line = `{"action":"replace","contract":"` + notes + `","type":"note","id":"` + strings.Repeat("ee", 32) + `","data":{"text":"x"},"revision":2}`
		}
		lines, ids = append(lines, line), append(ids, id)
	}
	out, err = b.batch(batchFile(t, lines...), append(b.signer(owner), "--split")...)
	var re errRefused
	if !errors.As(err, &re) || re.Code != protocol.CodeDocumentNotFound {
		t.Fatalf("a run with a refused transaction: err = %v", err)
	}
	if len(out.Sent) != 2 || out.Sent[0].Code != 0 || out.Sent[1].Status != txRefused || out.Sent[1].Code != uint32(protocol.CodeDocumentNotFound) ||
		len(out.NotSent) != 5 || out.NotSent[0].Line != 21 || out.NotSent[0].Document != ids[20] {
		t.Fatalf("a run with a refused transaction: %+v", out)
	}
	if stored(ids[:10]) != 10 || stored(ids[10:]) != 0 {
		t.Fatalf("stored: %d of the first transaction's 10, %d of the rest", stored(ids[:10]), stored(ids[10:]))
	}
	if after, _ := b.nonces(owner); after != before+1 {
		t.Fatalf("nonce %d -> %d, want the first transaction's alone", before, after)
	}
}
