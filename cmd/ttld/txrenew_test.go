package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// TestRenewCommand: `ttld tx document renew` on a story of docs/examples/story-ttl.json
// (a day's ttl): the dry run's fee is bounded by its max_fee and the renewal it commits
// costs no more than that bound; the story read back proven carries $renewedAt (the
// renewing block's time, after its creation), its next revision, and expires a day
// after the renewal, as `ttld query document` shows and the command printed. A replace
// renews a document of a type that declares renewOnReplace (docs/examples/session.json),
// printing the expiry it moved to; `replace --renew` of any other type is refused before
// anything is signed. Only the owner renews (DocumentOwnerIdMismatch), and a document of
// a type without a ttl is not renewed (DocumentActionNotAllowed).
func TestRenewCommand(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	c := cli{t: t, env: env}
	owner, other := c.newIdentity(), c.newIdentity()
	signer := func(id string) []string { return []string{"--identity", id, "--from", node.DevKeyName, "--commit"} }
	var tx txOutput
	contract := func(file string) (string, protocol.Contract) {
		if err := c.json(&tx, "tx", "contract", "create", file, "--identity", owner, "--from", node.DevKeyName, "--commit"); err != nil || tx.Code != 0 {
			t.Fatalf("contract create %s: %+v %v", file, tx, err)
		}
		id, err := protocol.ParseContractID(tx.Contract)
		if err != nil {
			t.Fatal(err)
		}
		st, err := env.Client.Contract(context.Background(), id, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		return tx.Contract, st.Contract
	}
	stories, sc := contract("../../docs/examples/story-ttl.json")
	if err := c.json(&tx, append([]string{"tx", "document", "create", stories, "story", `{"mediaUrl":"https://example.org/a.jpg"}`}, signer(owner)...)...); err != nil || tx.Code != 0 {
		t.Fatalf("create: %+v %v", tx, err)
	}
	story := tx.Document
	id, _ := protocol.ParseDocumentID(story)
	st, _ := sc.DocumentType("story")
	dt := drive.DocumentType{Contract: sc.ID, DocumentType: st}
	created, ok := provenDocument(t, env, dt, id)
	if !ok {
		t.Fatal("the story is not stored")
	}

	args := []string{"tx", "document", "renew", stories, "story", story}
	var dry dryRunOutput
	if err := c.json(&dry, append(append(args, "--dry-run"), signer(owner)...)...); err != nil || dry.Code != 0 || dry.Fee == 0 || dry.MaxFee < dry.Fee {
		t.Fatalf("renew --dry-run: %+v %v", dry, err)
	}
	if err := c.json(&tx, append(args, signer(owner)...)...); err != nil || tx.Code != 0 || tx.Fee == nil || *tx.Fee > dry.MaxFee || tx.Document != story {
		t.Fatalf("renew: %+v %v (the dry run's max fee %d)", tx, err, dry.MaxFee)
	}
	d, ok := provenDocument(t, env, dt, id)
	if !ok || d.Revision != 2 || d.RenewedAt <= created.CreatedAt || d.UpdatedAt != d.RenewedAt || d.CreatedAt != created.CreatedAt {
		t.Fatalf("renewed: %+v", d.Document)
	}
	if tx.RenewedAt != d.RenewedAt || tx.ExpiresAt != d.RenewedAt+86_400_000 {
		t.Fatalf("renew printed renewed_at %d, expires_at %d; the story was renewed at %d", tx.RenewedAt, tx.ExpiresAt, d.RenewedAt)
	}
	if at, _ := st.ExpiresAtMs(d.Document); at != d.RenewedAt+86_400_000 {
		t.Fatalf("the renewed story expires at %d, want a day after %d", at, d.RenewedAt)
	}
	if v := provenValue(t, env, drive.ExpirationKey(d.RenewedAt+86_400_000, id)); v == nil {
		t.Fatal("no expirations entry at the renewed expiry")
	}
	// `ttld query document --prove` shows the renewal and the expiry it moved.
	var shown struct {
		Answer   documentStateJSON `json:"answer"`
		Verified string            `json:"verified"`
	}
	if err := c.json(&shown, "query", "document", stories, "story", story, "--prove"); err != nil || shown.Verified != "presence" ||
		shown.Answer.RenewedAt != d.RenewedAt || shown.Answer.ExpiresAt != d.RenewedAt+86_400_000 || shown.Answer.Revision != 2 {
		t.Fatalf("query document: %+v %v", shown, err)
	}

	var re errRefused
	if _, err := c.run(append(args, signer(other)...)...); !errors.As(err, &re) || re.Code != protocol.CodeDocumentOwnerIDMismatch {
		t.Fatalf("renew by another identity: %v", err)
	}
	// A story's replace does not renew it (no renewOnReplace): asked to, the command
	// refuses before signing, and nothing is sent.
	var nr errReplaceDoesNotRenew
	_, err := c.run(append([]string{"tx", "document", "replace", stories, "story", story, `{"mediaUrl":"https://example.org/b.jpg"}`, "--renew"}, signer(owner)...)...)
	if !errors.As(err, &nr) || !nr.TTL || nr.Type != "story" {
		t.Fatalf("replace --renew of a story: %v", err)
	}
	line := fmt.Sprintf(`{"action":"replace","contract":%q,"type":"story","id":%q,"data":{"mediaUrl":"https://example.org/b.jpg"},"renew":true}`, stories, story)
	if _, err := c.run(append([]string{"tx", "document", "batch", batchFile(t, line)}, signer(owner)...)...); !errors.As(err, &nr) {
		t.Fatalf("a batch file's renewing replace of a story: %v", err)
	}
	if again, _ := provenDocument(t, env, dt, id); again.Revision != 2 {
		t.Fatalf("the refused replace changed the story: %+v", again.Document)
	}
	// A session's replace renews it (renewOnReplace): with --renew, or without, the
	// committed replace prints its new $renewedAt and the expiry an hour after.
	sessions, ssc := contract("../../docs/examples/session.json")
	if err := c.json(&tx, append([]string{"tx", "document", "create", sessions, "session", `{"user":"ada"}`}, signer(owner)...)...); err != nil || tx.Code != 0 {
		t.Fatalf("session create: %+v %v", tx, err)
	}
	session := tx.Document
	sid, _ := protocol.ParseDocumentID(session)
	sst, _ := ssc.DocumentType("session")
	sdt := drive.DocumentType{Contract: ssc.ID, DocumentType: sst}
	for i, renew := range [][]string{{"--renew"}, nil} {
		page := fmt.Sprintf(`{"user":"ada","page":"p%d"}`, i)
		if err := c.json(&tx, append(append([]string{"tx", "document", "replace", sessions, "session", session, page}, renew...), signer(owner)...)...); err != nil || tx.Code != 0 {
			t.Fatalf("session replace %v: %+v %v", renew, tx, err)
		}
		s, ok := provenDocument(t, env, sdt, sid)
		if !ok || s.Revision != uint64(i+2) || s.RenewedAt != s.UpdatedAt || s.RenewedAt <= s.CreatedAt {
			t.Fatalf("session after replace %v: %+v", renew, s.Document)
		}
		if tx.RenewedAt != s.RenewedAt || tx.ExpiresAt != s.RenewedAt+3_600_000 {
			t.Fatalf("replace %v printed renewed_at %d, expires_at %d; the session was renewed at %d", renew, tx.RenewedAt, tx.ExpiresAt, s.RenewedAt)
		}
	}

	notes, _ := contract("../../docs/examples/note.json")
	if err := c.json(&tx, append([]string{"tx", "document", "create", notes, "note", `{"text":"hi"}`}, signer(owner)...)...); err != nil || tx.Code != 0 {
		t.Fatalf("note create: %+v %v", tx, err)
	}
	_, err = c.run(append([]string{"tx", "document", "renew", notes, "note", tx.Document}, signer(owner)...)...)
	if !errors.As(err, &re) || re.Code != protocol.CodeDocumentActionNotAllowed {
		t.Fatalf("renew of a note (no ttl): %v", err)
	}
}
