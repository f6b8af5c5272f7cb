package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rpcclient "github.com/cometbft/cometbft/rpc/client"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/feeschedule"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// provenValue reads key's value (nil: absent) with its proof checked against the
// signed header.
func provenValue(t *testing.T, env *e2e.Env, key []byte) []byte {
	t.Helper()
	ctx := context.Background()
	res, err := env.Client.RPC().ABCIQueryWithOptions(ctx, proofs.PathKey, key, rpcclient.ABCIQueryOptions{Prove: true})
	if err != nil {
		t.Fatal(err)
	}
	v, err := env.Client.Verifier(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := v.VerifyQuery(ctx, res.Response)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.Key, key) {
		t.Fatalf("the answer is keyed %x, want %x", r.Key, key)
	}
	if !r.Present {
		return nil
	}
	return r.Value
}

// provenDocument reads the row of document id of type dt back by its key
// (drive.DocumentKey), proven.
func provenDocument(t *testing.T, env *e2e.Env, dt drive.DocumentType, id protocol.DocumentID) (drive.StoredDocument, bool) {
	t.Helper()
	key := drive.DocumentKey(dt.Contract, dt.Name, id)
	v := provenValue(t, env, key)
	if v == nil {
		return drive.StoredDocument{}, false
	}
	d, err := drive.DecodeStoredDocument(key, v, dt.DocumentType)
	if err != nil {
		t.Fatal(err)
	}
	return d, true
}

// ownerSkuEntry is the key of d's entry in the listing type's unique index ownerSku.
func ownerSkuEntry(t *testing.T, dt drive.DocumentType, d protocol.Document) []byte {
	t.Helper()
	for _, ix := range dt.Indices {
		if ix.Name == "ownerSku" {
			values, _ := drive.IndexValues(drive.IndexFields(dt.DocumentType, ix), d)
			return drive.IndexEntryKey(dt.Contract, dt.Name, ix.Name, values, d.ID)
		}
	}
	t.Fatal("no index ownerSku")
	return nil
}

// paidEntry reads the storage flags of an item that one identity paid for in one
// epoch (docs/STATE.md: count u16, then owner, epoch u32, bytes u32).
func paidEntry(t *testing.T, v []byte) (owner protocol.IdentityID, epoch, n uint32) {
	t.Helper()
	if len(v) < 2+protocol.IdentityIDLen+8 || binary.BigEndian.Uint16(v) != 1 {
		t.Fatalf("flags %x: want one entry", v)
	}
	copy(owner[:], v[2:])
	return owner, binary.BigEndian.Uint32(v[2+protocol.IdentityIDLen:]), binary.BigEndian.Uint32(v[2+protocol.IdentityIDLen+4:])
}

func balanceOf(t *testing.T, env *e2e.Env, id string) uint64 {
	t.Helper()
	pid, err := protocol.ParseIdentityID(id)
	if err != nil {
		t.Fatal(err)
	}
	st, err := env.Client.Identity(context.Background(), pid, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	return st.Balance
}

// TestDocumentCommands: a listing of docs/examples/market.json goes through every
// document command against a node: create -> replace -> set-price -> purchase by
// another identity -> transfer -> delete; after each, the row read back by its key
// (proven) holds what the command did. Byte arrays and identifiers are given as hex
// strings, the data once inline and once as @FILE.
func TestDocumentCommands(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	c := cli{t: t, env: env}

	var tx txOutput
	seller, buyer := c.newIdentity(), c.newIdentity()
	if err := c.json(&tx, "tx", "contract", "create", "../../docs/examples/market.json", "--identity", seller, "--from", node.DevKeyName, "--commit"); err != nil || tx.Code != 0 {
		t.Fatalf("contract create: %+v %v", tx, err)
	}
	contract := tx.Contract
	cid, err := protocol.ParseContractID(contract)
	if err != nil {
		t.Fatal(err)
	}
	st, err := env.Client.Contract(context.Background(), cid, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	lt, ok := st.DocumentType("listing")
	if !ok {
		t.Fatal("no listing type")
	}
	dt := drive.DocumentType{Contract: cid, DocumentType: lt}
	sellerID, _ := protocol.ParseIdentityID(seller)
	buyerID, _ := protocol.ParseIdentityID(buyer)
	signer := func(id string) []string { return []string{"--identity", id, "--from", node.DevKeyName, "--commit"} }
	// check runs a command that must commit with code 0 and name the document.
	check := func(want string, args ...string) {
		t.Helper()
		if err := c.json(&tx, args...); err != nil || tx.Status != txCommitted || tx.Code != 0 || tx.Fee == nil {
			t.Fatalf("ttld %s: %+v %v", strings.Join(args, " "), tx, err)
		}
		if tx.Contract != contract || tx.DocumentType != "listing" || (want != "" && tx.Document != want) {
			t.Fatalf("ttld %s names contract %s, type %s, document %s", strings.Join(args, " "), tx.Contract, tx.DocumentType, tx.Document)
		}
	}

	// A dry run with given entropy names the id NewDocumentID derives, and writes nothing.
	entropy := [32]byte(bytes.Repeat([]byte{7}, 32))
	data := `{"sku":"LAMP-1","category":"home","quantity":3,"seller":"` + seller + `","photo":"0x89504e47"}`
	var dry dryRunOutput
	if err := c.json(&dry, append([]string{"tx", "document", "create", contract, "listing", data, "--entropy", hex.EncodeToString(entropy[:]), "--dry-run"}, signer(seller)...)...); err != nil || dry.Code != 0 {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	dryID := protocol.NewDocumentID(cid, sellerID, "listing", entropy)
	if dry.Document != dryID.String() || dry.DocumentType != "listing" || dry.Contract != contract {
		t.Fatalf("dry run names %+v, want document %s", dry, dryID)
	}

	// create: random entropy; the printed id is the stored document's.
	check("", append([]string{"tx", "document", "create", contract, "listing", data}, signer(seller)...)...)
	id, err := protocol.ParseDocumentID(tx.Document)
	if err != nil || id == dryID {
		t.Fatalf("created document %q: %v", tx.Document, err)
	}
	d, ok := provenDocument(t, env, dt, id)
	if !ok || d.Owner != sellerID || d.Revision != 1 || d.CreatedAt == 0 || d.UpdatedAt != d.CreatedAt || d.Price != 0 ||
		string(d.Value(1).Bytes) != "home" || d.Value(2).Int != 3 || !bytes.Equal(d.Value(3).Bytes, sellerID[:]) || hex.EncodeToString(d.Value(4).Bytes) != "89504e47" {
		t.Fatalf("created: %+v %v", d, ok)
	}
	if _, ok := provenDocument(t, env, dt, dryID); ok {
		t.Fatal("the dry run stored a document")
	}
	idArgs := func(cmd string) []string { return []string{"tx", "document", cmd, contract, "listing", tx.Document} }
	docID := tx.Document

	// replace, the data as @FILE: the photo is dropped, the quantity changes.
	file := filepath.Join(t.TempDir(), "lamp.json")
	if err := os.WriteFile(file, []byte(`{"sku":"LAMP-1","category":"home","quantity":2,"seller":"0x`+seller+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	check(docID, append(append(idArgs("replace"), "@"+file), signer(seller)...)...)
	if d, ok = provenDocument(t, env, dt, id); !ok || d.Revision != 2 || d.Value(2).Int != 2 || d.Value(4).Set || d.UpdatedAt < d.CreatedAt {
		t.Fatalf("replaced: %+v", d)
	}

	// A revision that skips one is refused, and changes nothing.
	_, err = c.run(append(append(idArgs("replace"), "@"+file, "--revision", "9"), signer(seller)...)...)
	var re errRefused
	if !errors.As(err, &re) || re.Code != protocol.CodeInvalidDocumentRevision {
		t.Fatalf("replace at revision 9: %v", err)
	}
	// Only the owner sets the price.
	_, err = c.run(append(append(idArgs("set-price"), "--price", "5000"), signer(buyer)...)...)
	if !errors.As(err, &re) || re.Code != protocol.CodeDocumentOwnerIDMismatch {
		t.Fatalf("set-price by the buyer: %v", err)
	}

	check(docID, append(append(idArgs("set-price"), "--price", "5000"), signer(seller)...)...)
	if d, ok = provenDocument(t, env, dt, id); !ok || d.Revision != 3 || d.Price != 5000 || d.Owner != sellerID {
		t.Fatalf("priced: %+v", d)
	}

	// purchase without --price: the stored price is offered, and paid to the seller.
	// The ownerSku entry moves to the buyer, who pays for the new one; the seller's is
	// refunded to it as far as its fee has not paid out.
	sellerEntry := ownerSkuEntry(t, dt, d.Document)
	paidBy, paidIn, n := paidEntry(t, provenValue(t, env, sellerEntry))
	if paidBy != sellerID || int(n) != len(sellerEntry) {
		t.Fatalf("the seller's ownerSku entry: paid by %s, %d bytes, want the seller and %d", paidBy, n, len(sellerEntry))
	}
	sellerBefore, buyerBefore := balanceOf(t, env, seller), balanceOf(t, env, buyer)
	check(docID, append(idArgs("purchase"), signer(buyer)...)...)
	if d, ok = provenDocument(t, env, dt, id); !ok || d.Revision != 4 || d.Owner != buyerID || d.Price != 0 || d.TransferredAt == 0 {
		t.Fatalf("purchased: %+v", d)
	}
	if provenValue(t, env, sellerEntry) != nil {
		t.Fatal("the seller's ownerSku entry is still stored")
	}
	paidBy, removedIn, _ := paidEntry(t, provenValue(t, env, ownerSkuEntry(t, dt, d.Document)))
	if paidBy != buyerID {
		t.Fatalf("the buyer's ownerSku entry is paid by %s", paidBy)
	}
	sched, err := feeschedule.For(protocol.Latest)
	if err != nil {
		t.Fatal(err)
	}
	refund := feeschedule.StorageRefund(sched.StoragePerByte*uint64(n), paidIn, removedIn)
	if got := balanceOf(t, env, seller); got != sellerBefore+5000+refund {
		t.Fatalf("the seller's balance went from %d to %d, want +5000 and the refund %d", sellerBefore, got, refund)
	}
	if got := balanceOf(t, env, buyer); got != buyerBefore-5000-*tx.Fee {
		t.Fatalf("the buyer's balance went from %d to %d, want -5000 and the fee %d", buyerBefore, got, *tx.Fee)
	}
	// Off sale now: a purchase without --price is refused before anything is signed.
	if _, err = c.run(append(idArgs("purchase"), signer(seller)...)...); !errors.As(err, new(protocol.ErrDocumentNotForSale)) {
		t.Fatalf("purchase of a document off sale: %v", err)
	}

	check(docID, append(append(idArgs("transfer"), "--to", seller), signer(buyer)...)...)
	if d, ok = provenDocument(t, env, dt, id); !ok || d.Revision != 5 || d.Owner != sellerID {
		t.Fatalf("transferred: %+v", d)
	}

	check(docID, append(idArgs("delete"), signer(seller)...)...)
	if _, ok = provenDocument(t, env, dt, id); ok {
		t.Fatal("the deleted document is still stored")
	}
	// A command on it now reads no revision, and says so before signing.
	if _, err = c.run(append(append(idArgs("set-price"), "--price", "1"), signer(seller)...)...); !errors.As(err, new(protocol.ErrDocumentNotFound)) {
		t.Fatalf("set-price of a deleted document: %v", err)
	}
}
