package sim

import (
	"crypto/ed25519"
	"fmt"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	dbm "github.com/cosmos/cosmos-db"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// ttlChain is a chain on the latest protocol version (an even generator seed) with two funded
// identities, the ttl contract (ttlDefinition) and an "offer" of the first, created
// 2 s after genesis and put on sale at 1,000 credits 1 s later. It returns the chain,
// the identities, the contract and the offer's id.
func ttlChain(t *testing.T) (*Chain, [2]identity, protocol.ContractID, protocol.DocumentID) {
	c, err := Open(dbm.NewMemDB())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	g := NewGenerator(10, 2)
	if g.Version != protocol.Latest {
		t.Fatalf("seed 10 starts on %d", g.Version)
	}
	if _, err := c.InitChain(g.Genesis(), g.Validators()...); err != nil {
		t.Fatal(err)
	}
	kv, err := c.NextBlockState()
	if err != nil {
		t.Fatal(err)
	}
	var idns [2]identity
	var txs [][]byte
	for i, k := range g.keys[:2] {
		st, _, err := drive.GetAddress(kv, protocol.AddressOf(pubOf(k)))
		if err != nil {
			t.Fatal(err)
		}
		create := &protocol.IdentityCreate{PubKey: pubOf(k), Nonce: 1, Amount: st.Balance / 2, Keys: []ed25519.PublicKey{pubOf(k)}}
		txs = append(txs, protocol.Sign(ChainID, create, k))
		idns[i] = identity{id: protocol.NewIdentityID(protocol.AddressOf(pubOf(k)), 1), key: k}
	}
	mustBlock(t, c, GenesisTime.Add(time.Second), txs...)
	cc := &protocol.DataContractCreate{Identity: idns[0].id, Nonce: 1, Definition: []byte(ttlDefinition)}
	create := &protocol.DocumentsBatch{Identity: idns[0].id, Nonce: 2, Contract: cc.ContractID(), Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionCreate, Type: "offer", Entropy: [32]byte{1}, Data: []byte(`{"name":"a","qty":3}`)},
	}}
	create.Actions[0].ID = create.CreateID(create.Actions[0])
	mustBlock(t, c, GenesisTime.Add(2*time.Second), protocol.Sign(ChainID, cc, idns[0].key), protocol.Sign(ChainID, create, idns[0].key))
	price := &protocol.DocumentsBatch{Identity: idns[0].id, Nonce: 3, Contract: cc.ContractID(), Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionUpdatePrice, Type: "offer", ID: create.Actions[0].ID, Revision: 2, Price: 1000},
	}}
	mustBlock(t, c, GenesisTime.Add(3*time.Second), protocol.Sign(ChainID, price, idns[0].key))
	return c, idns, cc.ContractID(), create.Actions[0].ID
}

// mustBlock executes txs in the next block at at and fails unless all succeed.
func mustBlock(t *testing.T, c *Chain, at time.Time, txs ...[]byte) {
	t.Helper()
	res, err := c.Block(at, txs)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range res.TxResults {
		if tr.Code != 0 {
			t.Fatalf("block at %s, tx %d: code %d %s", at.Sub(GenesisTime), i, tr.Code, tr.Log)
		}
	}
}

// TestDryRunBoundsTTLChanges: a replace that grows an hour-long document, its transfer,
// its purchase and a price update, each dry-run 1 s after the document was put on
// sale and executed in a later block: half an hour later, the last millisecond before
// the expiry, at the expiry, and two days later (the block that still sees it, before
// its cleanup). "The price never decreases with the lifetime, so an estimate made at
// an earlier block time (check_tx) stays an upper bound of the execution" (Document Time To Live,
// Fees): before the expiry the change succeeds for no more than the dry run's fee;
// from the expiry on, "a document can no longer be replaced, transferred, bought or
// repriced ... each is refused, paid, with DocumentExpiredError (40140)" (Document Time To Live),
// and the refusal costs no more than the dry run's fee either.
func TestDryRunBoundsTTLChanges(t *testing.T) {
	t.Parallel()
	created := GenesisTime.Add(2 * time.Second)
	expiry := created.Add(3600 * time.Second)
	for _, kind := range []protocol.DocumentActionKind{protocol.ActionReplace, protocol.ActionTransfer, protocol.ActionPurchase, protocol.ActionUpdatePrice} {
		for _, at := range []time.Time{created.Add(30 * time.Minute), expiry.Add(-time.Millisecond), expiry, expiry.Add(48 * time.Hour)} {
			t.Run(fmt.Sprintf("%d@%s", kind, at.Sub(created)), func(t *testing.T) {
				c, idns, contract, id := ttlChain(t)
				signer := idns[0]
				a := protocol.DocumentAction{Kind: kind, Type: "offer", ID: id, Revision: 3}
				nonce := uint64(4)
				switch kind {
				case protocol.ActionReplace:
					a.Data = []byte(`{"name":"a","qty":40,"tag":"abcd"}`)
				case protocol.ActionTransfer:
					a.Recipient = idns[1].id
				case protocol.ActionPurchase:
					signer, nonce, a.Price = idns[1], 1, 1000
				case protocol.ActionUpdatePrice:
					a.Price = 123_456_789
				}
				b := &protocol.DocumentsBatch{Identity: signer.id, Nonce: nonce, Contract: contract, Actions: []protocol.DocumentAction{a}}
				ans, got := dryRunThenBlock(t, c, protocol.Sign(ChainID, b, signer.key), at, expiry)
				if uint64(got.GasUsed) > ans.Fee { // a change's price only falls as its lifetime does
					t.Fatalf("the dry run said fee %d; the block charged %d", ans.Fee, got.GasUsed)
				}
			})
		}
	}
}

// dryRunThenBlock dry-runs tx, which must be accepted, then executes it alone in a block
// at at, which must accept it before the expiry of the document it changes and refuse
// it with 40140 from it on, and charge a fee of at most the dry run's max fee.
func dryRunThenBlock(t *testing.T, c *Chain, tx []byte, at, expiry time.Time) (proofs.DryRunAnswer, *abcitypes.ExecTxResult) {
	t.Helper()
	ans := dryRun(t, c, tx)
	if ans.Code != 0 || ans.Fee > ans.MaxFee {
		t.Fatalf("dry run: code %s, fee %d, at most %d", protocol.Code(ans.Code), ans.Fee, ans.MaxFee)
	}
	res, err := c.Block(at, [][]byte{tx})
	if err != nil {
		t.Fatal(err)
	}
	got := res.TxResults[0]
	want := protocol.CodeOK
	if !at.Before(expiry) {
		want = protocol.CodeDocumentExpired
	}
	if protocol.Code(got.Code) != want {
		t.Fatalf("code %s (%s), want %s", protocol.Code(got.Code), got.Log, want)
	}
	if got.GasUsed <= 0 || uint64(got.GasUsed) > ans.MaxFee {
		t.Fatalf("the dry run said fee %d, at most %d; the block charged %d", ans.Fee, ans.MaxFee, got.GasUsed)
	}
	return ans, got
}

// TestDryRunBoundsRenewal: a renewal of a two-week story (protocol version 15),
// dry-run on the state after its creation and executed in a later block: half an hour later, ten
// days later, the last millisecond before its expiry, and at it. The lifetime the
// story has left shrinks as blocks pass, so the same renewal pays more later (ten
// days in, 4 days left: 15 credits a byte paid, 68 for two weeks): the dry run's max
// fee bounds every one of them (docs/STATE.md, "Renewal": "a fee estimate adds the
// difference to a lifetime left of 0 to its bound"), and from the expiry on the renewal
// is refused like every change (40140).
func TestDryRunBoundsRenewal(t *testing.T) {
	t.Parallel()
	created := GenesisTime.Add(4 * time.Second)
	expiry := created.Add(1_209_600 * time.Second)
	for _, at := range []time.Time{created.Add(30 * time.Minute), created.Add(10 * 24 * time.Hour), expiry.Add(-time.Millisecond), expiry} {
		t.Run(at.Sub(created).String(), func(t *testing.T) {
			c, idns, contract, _ := ttlChain(t)
			signer := idns[0]
			create := &protocol.DocumentsBatch{Identity: signer.id, Nonce: 4, Contract: contract, Actions: []protocol.DocumentAction{
				{Kind: protocol.ActionCreate, Type: "story", Entropy: [32]byte{2}, Data: []byte(`{"caption":"hello","n":3}`)},
			}}
			id := create.CreateID(create.Actions[0])
			create.Actions[0].ID = id
			mustBlock(t, c, created, protocol.Sign(ChainID, create, signer.key))
			renew := &protocol.DocumentsBatch{Identity: signer.id, Nonce: 5, Contract: contract, Actions: []protocol.DocumentAction{
				{Kind: protocol.ActionRenew, Type: "story", ID: id, Revision: 2},
			}}
			ans, got := dryRunThenBlock(t, c, protocol.Sign(ChainID, renew, signer.key), at, expiry)
			if at.Equal(created.Add(10*24*time.Hour)) && uint64(got.GasUsed) <= ans.Fee {
				t.Fatalf("ten days in the renewal cost %d, no more than the dry run's %d a second in", got.GasUsed, ans.Fee)
			}
		})
	}
}

// TestDryRunBoundsTransferToAbsentRecipient: a documents batch transferring a
// document to an identity that does not exist yet, dry-run then executed after an
// earlier transaction of the block created that identity. app.DryRun promises a max
// fee "never below what a block on kv's state, or on a later state where keys it
// found absent have been written, charges"; the recipient's identity is such a key.
// The dry run is refused with RecipientIdentityNotFound and its max fee bounds that
// refusal only (app/documents_batch.go, the ActionTransfer case: the refusal does not
// set e.unbounded, as an absent contract or document does), while the block, where
// the recipient exists, writes the transfer (TestDryRunBoundsFeesInBlocks, seed 11,
// met it at height 663 with an earlier revision of this package's generator: max
// 98,700, charged 5,550,274).
func TestDryRunBoundsTransferToAbsentRecipient(t *testing.T) {
	c, idn := absentKeysChain(t)
	cc := &protocol.DataContractCreate{Identity: idn.id, Nonce: 1, Definition: []byte(shopDefinition)}
	create := &protocol.DocumentsBatch{Identity: idn.id, Nonce: 2, Contract: cc.ContractID(), Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionCreate, Type: "item", Entropy: [32]byte{3}, Data: []byte(`{"name":"a","qty":3}`)},
	}}
	create.Actions[0].ID = create.CreateID(create.Actions[0])
	mustBlock(t, c, GenesisTime.Add(2*time.Second), protocol.Sign(ChainID, cc, idn.key), protocol.Sign(ChainID, create, idn.key))
	g := NewGenerator(9, 2) // absentKeysChain's keys
	k := g.keys[1]
	kv, err := c.NextBlockState()
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := drive.GetAddress(kv, protocol.AddressOf(pubOf(k)))
	if err != nil {
		t.Fatal(err)
	}
	recipient := protocol.NewIdentityID(protocol.AddressOf(pubOf(k)), 1)
	idCreate := &protocol.IdentityCreate{PubKey: pubOf(k), Nonce: 1, Amount: st.Balance / 2, Keys: []ed25519.PublicKey{pubOf(k)}}
	transfer := &protocol.DocumentsBatch{Identity: idn.id, Nonce: 3, Contract: cc.ContractID(), Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionTransfer, Type: "item", ID: create.Actions[0].ID, Revision: 2, Recipient: recipient},
	}}
	checkBoundAfter(t, c, protocol.Sign(ChainID, transfer, idn.key), GenesisTime.Add(3*time.Second), "the recipient", protocol.Sign(ChainID, idCreate, k))
}

// TestCheckCleanupCatchesLeftovers: CheckCleanup fails on a state holding a document
// due at the block's time that a cleanup which removed nothing left behind, and passes
// on the same state the millisecond before its expiry.
func TestCheckCleanupCatchesLeftovers(t *testing.T) {
	c, _, _, _ := ttlChain(t)
	kv, err := c.Saved()
	if err != nil {
		t.Fatal(err)
	}
	expiry := uint64(GenesisTime.Add(2*time.Second + 3600*time.Second).UnixMilli())
	if err := CheckCleanup(kv, expiry-1, BlockCleanup{}); err != nil {
		t.Fatalf("before the expiry: %v", err)
	}
	if err := CheckCleanup(kv, expiry, BlockCleanup{}); err == nil {
		t.Fatal("a document due at the block's time, left by a cleanup that removed nothing, passed")
	}
}

// windowsDefinition has a session type (an hour's ttl) counted per minute of its
// $renewedAt (a ttl'd, ranked grid) and of its $updatedAt (a permanent grid), and a
// page type without a ttl ranked per minute of its $updatedAt (a permanent grid).
const windowsDefinition = `{"documentSchemas":{` +
	`"session":{"type":"object","ttl":3600,"properties":{"user":{"type":"string","maxLength":20,"position":0}},"required":["$createdAt","user"],"additionalProperties":false,"indices":[` +
	`{"name":"active","properties":[{"user":"asc"}],"countable":true,"ranked":true,"timeRange":{"on":"$renewedAt","range":60,"step":60,"ttl":7200}},` +
	`{"name":"edited","properties":[{"user":"asc"}],"countable":true,"timeRange":{"on":"$updatedAt","range":120,"step":60}}]},` +
	`"page":{"type":"object","properties":{"user":{"type":"string","maxLength":20,"position":0}},"required":["user"],"additionalProperties":false,"indices":[` +
	`{"name":"edits","properties":[{"user":"asc"}],"countable":true,"ranked":true,"timeRange":{"on":"$updatedAt","range":60,"step":60}}]}}}`

// TestDryRunBoundsWindowMoves: a write that stamps a time-range grid's field with the
// block time ($renewedAt on a renewal, $updatedAt on a replace) keeps its document in
// the windows it had when a dry run, made a second after the document's block, finds
// that time in them; the block that executes it half an hour later writes it into other
// windows: an entry, count records and a rank of its own in each, ephemeral bytes under
// the ttl'd grid, stored (lifetime or perpetual) bytes under the permanent ones. The dry
// run's max fee bounds each (drive's windowMargin).
func TestDryRunBoundsWindowMoves(t *testing.T) {
	t.Parallel()
	created := GenesisTime.Add(2 * time.Second)
	for _, c := range []struct {
		name, typ string
		action    protocol.DocumentAction
	}{
		{"renew a session", "session", protocol.DocumentAction{Kind: protocol.ActionRenew, Revision: 2}},
		{"replace a session", "session", protocol.DocumentAction{Kind: protocol.ActionReplace, Revision: 2, Data: []byte(`{"user":"ada"}`)}},
		{"replace a page", "page", protocol.DocumentAction{Kind: protocol.ActionReplace, Revision: 2, Data: []byte(`{"user":"ada"}`)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			chain, signer := identityChain(t, 10)
			idn, k := signer.id, signer.key
			cc := &protocol.DataContractCreate{Identity: idn, Nonce: 1, Definition: []byte(windowsDefinition)}
			create := &protocol.DocumentsBatch{Identity: idn, Nonce: 2, Contract: cc.ContractID(), Actions: []protocol.DocumentAction{
				{Kind: protocol.ActionCreate, Type: c.typ, Entropy: [32]byte{1}, Data: []byte(`{"user":"ada"}`)},
			}}
			create.Actions[0].ID = create.CreateID(create.Actions[0])
			mustBlock(t, chain, created, protocol.Sign(ChainID, cc, k), protocol.Sign(ChainID, create, k))
			a := c.action
			a.Type, a.ID = c.typ, create.Actions[0].ID
			change := &protocol.DocumentsBatch{Identity: idn, Nonce: 3, Contract: cc.ContractID(), Actions: []protocol.DocumentAction{a}}
			ans, got := dryRunThenBlock(t, chain, protocol.Sign(ChainID, change, k), created.Add(30*time.Minute), created.Add(24*time.Hour))
			t.Logf("dry run fee %d, max %d; charged %d", ans.Fee, ans.MaxFee, got.GasUsed)
		})
	}
}
