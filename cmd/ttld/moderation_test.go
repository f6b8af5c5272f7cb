package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// forumModerator is the placeholder moderator of docs/examples/forum.json, which a user
// replaces by the identity that moderates.
const forumModerator = "6d6f64657261746f720000000000000000000000000000000000000000000000"

// TestModerationCommands drives docs/examples/forum.json through the CLI against a
// node: a profile, a thread that refers to it by name, a post that refers to the thread
// and mentions the profile; a moderator's deletion saves the post, the removal record is
// listed with a proof, the restore from the saved file puts the post back as it was,
// and a second restore finds no record.
func TestModerationCommands(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	c := cli{t: t, env: env}
	var tx txOutput
	owner, writer, moderator := c.newIdentity(), c.newIdentity(), c.newIdentity()
	signer := func(id string) []string { return []string{"--identity", id, "--from", node.DevKeyName, "--commit"} }
	commit := func(args ...string) txOutput {
		t.Helper()
		if err := c.json(&tx, args...); err != nil || tx.Status != txCommitted || tx.Code != 0 {
			t.Fatalf("ttld %s: %+v %v", strings.Join(args, " "), tx, err)
		}
		return tx
	}

	raw, err := os.ReadFile("../../docs/examples/forum.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	def := filepath.Join(dir, "forum.json")
	if err := os.WriteFile(def, []byte(strings.ReplaceAll(string(raw), forumModerator, moderator)), 0o600); err != nil {
		t.Fatal(err)
	}
	forum := commit(append([]string{"tx", "contract", "create", def}, signer(owner)...)...).Contract
	profile := commit(append([]string{"tx", "document", "create", forum, "profile", `{"name":"wren"}`}, signer(writer)...)...).Document
	thread := commit(append([]string{"tx", "document", "create", forum, "thread", `{"title":"hello","starter":"wren"}`}, signer(writer)...)...).Document
	post := commit(append([]string{"tx", "document", "create", forum, "post", `{"thread":"` + thread + `","text":"buy pills","mentions":["` + profile + `"]}`}, signer(writer)...)...).Document

	// A post that mentions no stored profile is refused (40254).
	_, err = c.run(append([]string{"tx", "document", "create", forum, "post", `{"thread":"` + thread + `","text":"x","mentions":["` + post + `"]}`}, signer(writer)...)...)
	var re errRefused
	if !errors.As(err, &re) || re.Code != protocol.CodeReferencedDocumentNotFound {
		t.Fatalf("a mention of a post: %v", err)
	}

	cid, _ := protocol.ParseContractID(forum)
	pid, _ := protocol.ParseDocumentID(post)
	st, err := env.Client.Contract(context.Background(), cid, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	pt, _ := st.DocumentType("post")
	dt := drive.DocumentType{Contract: cid, DocumentType: pt}
	before, ok := provenDocument(t, env, dt, pid)
	if !ok {
		t.Fatal("the post is not stored")
	}

	// The writer is no moderator (the contract's owner would be one); the moderator
	// deletes and saves the document.
	_, err = c.run(append([]string{"tx", "document", "moderate-delete", forum, "post", post, "--reason", "spam"}, signer(writer)...)...)
	if !errors.As(err, &re) || re.Code != protocol.CodeNotAModerator {
		t.Fatalf("moderate-delete by the writer: %v", err)
	}
	saved := filepath.Join(dir, "post.hex")
	del := commit(append([]string{"tx", "document", "moderate-delete", forum, "post", post, "--reason", "spam", "--save", saved}, signer(moderator)...)...)
	if del.RestoreDocument == "" || del.Document != post {
		t.Fatalf("moderate-delete output %+v", del)
	}
	if _, ok := provenDocument(t, env, dt, pid); ok {
		t.Fatal("the post is still stored")
	}

	var removals struct {
		Answer   removalsJSON
		Verified string
	}
	if err := c.json(&removals, "query", "removals", forum, "post", "--prove"); err != nil || len(removals.Answer.Records) != 1 || removals.Verified != "presence" {
		t.Fatalf("query removals: %+v %v", removals, err)
	}
	r := removals.Answer.Records[0]
	if r.Document != post || r.Owner != writer || r.Moderator != moderator || r.Reason != "spam" || r.RestorableUntil != r.RemovedAt+7*24*3600*1000 {
		t.Fatalf("record %+v", r)
	}

	commit(append([]string{"tx", "document", "restore", forum, "post", post, "--document", "@" + saved}, signer(moderator)...)...)
	after, ok := provenDocument(t, env, dt, pid)
	if !ok || after.CreatedAt != before.CreatedAt || after.Owner != before.Owner || after.Revision != before.Revision ||
		string(after.Encode(pt)) != string(before.Encode(pt)) {
		t.Fatalf("restored %+v, want %+v", after.Document, before.Document)
	}
	if err := c.json(&removals, "query", "removals", forum, "--prove"); err != nil || len(removals.Answer.Records) != 0 || removals.Verified != "absence" {
		t.Fatalf("query removals after the restore: %+v %v", removals, err)
	}
	_, err = c.run(append([]string{"tx", "document", "restore", forum, "post", post, "--document", del.RestoreDocument}, signer(moderator)...)...)
	if !errors.As(err, &re) || re.Code != protocol.CodeDocumentAlreadyPresent {
		t.Fatalf("a second restore: %v", err)
	}
}
