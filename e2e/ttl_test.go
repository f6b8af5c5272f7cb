package e2e

import (
	"context"
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/ttld-dev/ttld/protocol"
)

// Document Time To Live, "Proofs near the expiry": "A write accepted in the last block before
// a document expires proves the document present. A proof fetched after the next
// block's cleanup finds it gone." On a real node whose local genesis lowers the minimum
// ttl to 3 s: a document proves present with its expiry, not expired; once a block at
// or past its expiry has run, its absence is proven and the cleanup's backlog is empty.
func TestDocumentExpiresProven(t *testing.T) {
	t.Parallel()
	env := StartNodeShortTTL(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := env.Client
	send := func(tr protocol.Transition, key ed25519.PrivateKey) int64 {
		t.Helper()
		tx, err := c.Sign(ctx, tr, key)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Broadcast(ctx, tx, true)
		if err != nil || res.Refused() {
			t.Fatalf("%T: %+v %v", tr, res, err)
		}
		return res.Height
	}
	create := &protocol.IdentityCreate{PubKey: env.Dev.Pub, Amount: 1_000_000_000, Keys: []ed25519.PublicKey{env.Dev.Pub}}
	send(create, env.Dev.Priv)
	owner := protocol.NewIdentityID(protocol.AddressOf(env.Dev.Pub), create.Nonce)
	cc := &protocol.DataContractCreate{Identity: owner, Definition: []byte(`{"documentSchemas":{"flash":{"type":"object","ttl":3,` +
		`"properties":{"text":{"type":"string","maxLength":20,"position":0}},"required":["$createdAt"],"additionalProperties":false}}}`)}
	send(cc, env.Dev.Priv)
	contract := protocol.NewContractID(owner, cc.Nonce)
	b := &protocol.DocumentsBatch{Identity: owner, Contract: contract, Actions: []protocol.DocumentAction{{Kind: protocol.ActionCreate, Type: "flash", Data: []byte(`{"text":"soon gone"}`)}}}
	id := b.CreateID(b.Actions[0])
	h := send(b, env.Dev.Priv)

	st, err := c.Document(ctx, contract, "flash", id, h, true)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Present || !st.Verified || st.ExpiresAtMs != st.CreatedAt+3000 || st.Expired {
		t.Fatalf("right after its create: %+v", st)
	}
	// Its storage fee waits in the lifetime pool of this epoch, for one epoch.
	pools, err := c.Pools(ctx, h, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(pools.LifetimePools) != 1 || pools.LifetimePools[0].Lifetime != 1 || pools.LifetimePools[0].Credits == 0 {
		t.Fatalf("lifetime pools: %+v", pools.LifetimePools)
	}
	// Wait for a block past the expiry: its cleanup deletes the document.
	for {
		latest, err := c.LatestHeight(ctx)
		if err != nil {
			t.Fatal(err)
		}
		now, err := c.BlockTime(ctx, latest-1, false)
		if err != nil {
			t.Fatal(err)
		}
		if now >= st.ExpiresAtMs {
			break
		}
		if _, err := c.WaitForHeight(ctx, latest+1); err != nil {
			t.Fatal(err)
		}
	}
	gone, err := c.Document(ctx, contract, "flash", id, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if gone.Present || !gone.Verified {
		t.Fatalf("after the cleanup: %+v", gone)
	}
	backlog, err := c.Expirations(ctx, 0, gone.Height, true)
	if err != nil || len(backlog.Entries) != 0 {
		t.Fatalf("backlog after the cleanup: %+v %v", backlog, err)
	}
}
