package client

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ttld-dev/ttld/protocol"
)

// TestRenewedSessionReads: a session of docs/examples/session.json (an hour's ttl,
// renewOnReplace) read through the client once renewed (protocol version 15): seed
// 003's session that stays alive while used. Forty minutes after its creation it is
// renewed; seventy minutes after, past the hour it was created with, the client reads
// it present and not expired, with its $renewedAt and the expiry an hour after that
// (docs/STATE.md, "Renewal"), as a query of the user's sessions does. Left alone
// past that expiry, the cleanup deletes it and the client reads it absent.
func TestRenewedSessionReads(t *testing.T) {
	c, chain := newTestClient(t)
	ctx := context.Background()
	alice := seedKey("alice")
	def, err := os.ReadFile("../docs/examples/session.json")
	if err != nil {
		t.Fatal(err)
	}
	owner, contract := ownContract(t, c, alice, def)
	batch := &protocol.DocumentsBatch{Identity: owner, Contract: contract, Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionCreate, Type: "session", Entropy: [32]byte{1}, Data: []byte(`{"user":"ada"}`)},
	}}
	id := batch.CreateID(batch.Actions[0])
	batch.Actions[0].ID = id
	send(t, c, batch, alice)
	created, err := c.Document(ctx, contract, "session", id, 0, false)
	if err != nil || !created.Present || created.RenewedAt != 0 || created.ExpiresAtMs != created.CreatedAt+3_600_000 {
		t.Fatalf("the new session: %+v %v", created, err)
	}

	chain.time = chain.time.Add(40 * time.Minute)
	send(t, c, &protocol.DocumentsBatch{Identity: owner, Contract: contract, Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionRenew, Type: "session", ID: id, Revision: 2},
	}}, alice)
	chain.time = chain.time.Add(30 * time.Minute)
	chain.block(nil)
	st, err := c.Document(ctx, contract, "session", id, 0, false)
	if err != nil || !st.Present || st.Expired || st.RenewedAt <= created.CreatedAt+40*60_000 || st.Revision != 2 ||
		st.ExpiresAtMs != st.RenewedAt+3_600_000 || st.BlockTimeMs <= created.ExpiresAtMs {
		t.Fatalf("the renewed session, past the hour it was created with: %+v %v", st, err)
	}
	list, err := c.Documents(ctx, contract, "session", []byte(`{"where":[["user","==","ada"]]}`), 0, false)
	if err != nil || len(list.Documents) != 1 || list.Documents[0].ID != id || list.Documents[0].RenewedAt != st.RenewedAt {
		t.Fatalf("ada's sessions: %+v %v", list, err)
	}

	chain.time = time.UnixMilli(int64(st.ExpiresAtMs)).UTC()
	chain.block(nil)
	gone, err := c.Document(ctx, contract, "session", id, 0, false)
	if err != nil || gone.Present {
		t.Fatalf("the session at its renewed expiry, after the cleanup: %+v %v", gone, err)
	}
}
