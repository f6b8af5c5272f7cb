package app

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

const chainID = "app-test"

func testKey(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte(name))
	return ed25519.NewKeyFromSeed(seed[:])
}

// genesisState is a minimal genesis written straight into a staged state.
func genesisState(t *testing.T, balances map[string]uint64) *drive.Cache {
	kv := drive.NewCache(drive.Empty())
	var supply uint64
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(drive.SetChainParams(kv, drive.ChainParams{ChainID: chainID, InitialHeight: 1, EpochLengthS: 3600}))
	must(drive.SetProtocolVersion(kv, protocol.V13))
	for name, b := range balances {
		must(drive.SetAddress(kv, protocol.AddressOf(testKey(name).Public().(ed25519.PublicKey)), drive.AddressState{Balance: b}))
		supply += b
	}
	must(drive.SetSupply(kv, supply))
	must(drive.SetU64(kv, drive.TotalCreditsKey(), supply))
	return kv
}

func addrOf(name string) protocol.Address {
	return protocol.AddressOf(testKey(name).Public().(ed25519.PublicKey))
}

// TestExecuteBlockWithoutGenesis: a state without its rules is a Fault, never a result.
func TestExecuteBlockWithoutGenesis(t *testing.T) {
	_, err := ExecuteBlock(drive.NewCache(drive.Empty()), Block{Height: 1})
	var f Fault
	if !errors.As(err, &f) {
		t.Fatalf("ExecuteBlock on an empty state: %v, want a Fault", err)
	}
}

// TestFeesIntoPool: the block's fees are what its results charged, and they reach the
// processing-fee pool; a paid refusal charges its fee and consumes the nonce; an unpaid
// one changes nothing; credits are conserved.
func TestFeesIntoPool(t *testing.T) {
	kv := genesisState(t, map[string]uint64{"alice": 10_000_000})
	alice := testKey("alice")
	pub := alice.Public().(ed25519.PublicKey)
	txs := [][]byte{
		protocol.Sign(chainID, &protocol.AddressFundsTransfer{PubKey: pub, Nonce: 1, Recipient: addrOf("bob"), Amount: 100}, alice),
		protocol.Sign(chainID, &protocol.AddressFundsTransfer{PubKey: pub, Nonce: 2, Recipient: addrOf("bob"), Amount: 1 << 40}, alice), // paid
		protocol.Sign(chainID, &protocol.AddressFundsTransfer{PubKey: pub, Nonce: 2, Recipient: addrOf("bob"), Amount: 1}, alice),       // replay: unpaid
	}
	res, err := ExecuteBlock(kv, Block{Height: 1, TimeMs: 1000, Txs: txs})
	if err != nil {
		t.Fatal(err)
	}
	codes := []protocol.Code{protocol.CodeOK, protocol.CodeAddressInsufficientBalance, protocol.CodeInvalidAddressNonce}
	var sum uint64
	for i, tr := range res.TxResults {
		if tr.Code != codes[i] {
			t.Fatalf("tx %d: code %d, want %d", i, tr.Code, codes[i])
		}
		if c, _ := tr.Fee.Charged(); c != tr.Charged || tr.Fee.Processing != tr.Charged {
			t.Fatalf("tx %d: charged %d, fee %+v", i, tr.Charged, tr.Fee)
		}
		sum += tr.Charged
	}
	if res.TxResults[1].Charged == 0 || res.TxResults[2].Charged != 0 {
		t.Fatalf("fees %d and %d: the paid refusal must pay, the unpaid one not", res.TxResults[1].Charged, res.TxResults[2].Charged)
	}
	pool, _ := drive.GetU64(kv, drive.EpochFeesKey(0))
	if pool != sum || res.Fees.Processing != sum {
		t.Fatalf("pool %d, block fees %+v, results charged %d", pool, res.Fees, sum)
	}
	st, _, _ := drive.GetAddress(kv, addrOf("alice"))
	if st.Nonce.Last != 2 || st.Balance != 10_000_000-100-sum {
		t.Fatalf("alice %+v after paying %d", st, sum)
	}
	if err := drive.CheckCredits(kv); err != nil {
		t.Fatal(err)
	}
}

// TestCreditOverflowIsARefusal: a credit that would pass 2^64-1 is refused with a code,
// never a Fault, even in a state where it can happen only because credits are not
// conserved (written straight, past genesis's supply cap).
func TestCreditOverflowIsARefusal(t *testing.T) {
	kv := genesisState(t, map[string]uint64{"alice": 1_000_000})
	if err := drive.SetAddress(kv, addrOf("bob"), drive.AddressState{Balance: ^uint64(0) - 5}); err != nil {
		t.Fatal(err)
	}
	alice := testKey("alice")
	pub := alice.Public().(ed25519.PublicKey)
	tx := protocol.Sign(chainID, &protocol.AddressFundsTransfer{PubKey: pub, Nonce: 1, Recipient: addrOf("bob"), Amount: 10}, alice)
	res, err := ExecuteBlock(kv, Block{Height: 1, TimeMs: 1000, Txs: [][]byte{tx}})
	if err != nil {
		t.Fatalf("ExecuteBlock: %v, want a refusal", err)
	}
	if tr := res.TxResults[0]; tr.Code != protocol.CodeCreditOverflow || tr.Charged != 0 {
		t.Fatalf("code %s charged %d, want an unpaid CreditOverflow", tr.Code, tr.Charged)
	}
	if st, _, _ := drive.GetAddress(kv, addrOf("alice")); st != (drive.AddressState{Balance: 1_000_000}) {
		t.Fatalf("alice %+v: an unpaid refusal changed the payer", st)
	}
	if st, _, _ := drive.GetAddress(kv, addrOf("bob")); st.Balance != ^uint64(0)-5 {
		t.Fatalf("bob %+v", st)
	}
}

// TestBlockContext: the block's height and time are recorded, so CheckTx judges at the
// last block's time (the genesis time before the first block).
func TestBlockContext(t *testing.T) {
	kv := genesisState(t, map[string]uint64{"alice": 1_000_000})
	if err := drive.SetChainParams(kv, drive.ChainParams{ChainID: chainID, GenesisTimeMs: 500, InitialHeight: 1, EpochLengthS: 3600}); err != nil {
		t.Fatal(err)
	}
	if at, err := JudgeTime(kv); err != nil || at != 500 {
		t.Fatalf("before the first block: %d %v, want the genesis time", at, err)
	}
	if _, err := ExecuteBlock(kv, Block{Height: 7, TimeMs: 9000, Proposer: make([]byte, 20)}); err != nil {
		t.Fatal(err)
	}
	last, ok, err := drive.GetLastBlock(kv)
	if err != nil || !ok || last != (drive.LastBlock{Height: 7, TimeMs: 9000}) {
		t.Fatalf("last block %+v %v %v", last, ok, err)
	}
	if at, _ := JudgeTime(kv); at != 9000 {
		t.Fatalf("judge time %d, want the last block's", at)
	}
}

// TestEveryKindHasAHandler: each registered transition kind has its state rules.
func TestEveryKindHasAHandler(t *testing.T) {
	for _, k := range protocol.Kinds() {
		if handlers[k.Type] == nil {
			t.Errorf("no handler for %s", k.Name)
		}
	}
	if len(handlers) != len(protocol.Kinds()) {
		t.Errorf("%d handlers for %d kinds", len(handlers), len(protocol.Kinds()))
	}
}

// TestInsufficientBalanceNamesTheFee: a payer that cannot pay a document create's or a
// contract create's whole fee is refused (40210, paid at its authentication's
// processing), and the refusal names every part of the fee its balance had to cover:
// the storage and deletion prepay, not only the processing it is charged.
func TestInsufficientBalanceNamesTheFee(t *testing.T) {
	kv := genesisState(t, map[string]uint64{"olga": 1 << 40, "pat": 1 << 40})
	if err := drive.SetProtocolVersion(kv, protocol.V14); err != nil {
		t.Fatal(err)
	}
	if err := drive.InsertDocumentTTLTrees(kv, 1); err != nil {
		t.Fatal(err)
	}
	def, err := os.ReadFile("../docs/examples/story-ttl.json")
	if err != nil {
		t.Fatal(err)
	}
	pubOf := func(name string) ed25519.PublicKey { return testKey(name).Public().(ed25519.PublicKey) }
	olga, pat := protocol.NewIdentityID(addrOf("olga"), 1), protocol.NewIdentityID(addrOf("pat"), 1)
	const patBalance = 1_000_000
	contract := protocol.NewContractID(olga, 1)
	blocks := []struct {
		signer string
		tr     protocol.Transition
	}{
		{"olga", &protocol.IdentityCreate{PubKey: pubOf("olga"), Nonce: 1, Amount: 1 << 39, Keys: []ed25519.PublicKey{pubOf("olga-id")}}},
		{"pat", &protocol.IdentityCreate{PubKey: pubOf("pat"), Nonce: 1, Amount: patBalance, Keys: []ed25519.PublicKey{pubOf("pat-id")}}},
		{"olga-id", &protocol.DataContractCreate{Identity: olga, Nonce: 1, Definition: def}},
		{"pat-id", &protocol.DocumentsBatch{Identity: pat, Nonce: 1, Contract: contract, Actions: []protocol.DocumentAction{
			{Kind: protocol.ActionCreate, Type: "story", Entropy: sha256.Sum256([]byte("s")), Data: []byte(`{"caption":"` + strings.Repeat("c", 200) + `","mediaUrl":"` + strings.Repeat("u", 500) + `"}`)}}}},
		{"pat-id", &protocol.DataContractCreate{Identity: pat, Nonce: 2, Definition: def}},
	}
	var results []TxResult
	for i, b := range blocks {
		res, err := ExecuteBlock(kv, Block{Height: uint64(i + 1), TimeMs: uint64(i+1) * 1000, Txs: [][]byte{protocol.Sign(chainID, b.tr, testKey(b.signer))}})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res.TxResults[0])
	}
	for i, r := range results[:3] {
		if r.Code != protocol.CodeOK {
			t.Fatalf("block %d: %s %s", i+1, r.Code, r.Log)
		}
	}
	for i, r := range results[3:] {
		var e protocol.ErrIdentityInsufficientBalance
		if !errors.As(r.Err, &e) || r.Code != protocol.CodeIdentityInsufficientBalance {
			t.Fatalf("refusal %d: %s %v, want ErrIdentityInsufficientBalance", i, r.Code, r.Err)
		}
		if e.ID != pat || e.Balance != patBalance-results[3].Charged*uint64(i) || e.Charged != r.Charged || e.Fee.Processing <= e.Charged {
			t.Fatalf("refusal %d: %+v, charged %d", i, e, r.Charged)
		}
		if e.Fee.Total() <= e.Balance {
			t.Fatalf("refusal %d: the whole fee %d (%s) is within the balance %d", i, e.Fee.Total(), e.Fee, e.Balance)
		}
		if i == 0 && (e.Fee.LifetimeStorage == 0 || e.Fee.DeletionPrepay == 0 || e.Fee.PerpetualStorage != 0) {
			t.Fatalf("a ttl document's fee %+v: want lifetime storage and deletion prepay, no perpetual storage", e.Fee)
		}
		if i == 1 && (e.Fee.PerpetualStorage == 0 || e.Fee.LifetimeStorage != 0) {
			t.Fatalf("a contract's fee %+v: want perpetual storage", e.Fee)
		}
	}
}

// TestTransitionEventReportsTheFee: every charged transition's event reports the fee
// its result charged, part by part (the parts summing to the fee), and the refunds its
// removals credited; over a contract, a note, the note's deletion and a ttl story,
// every part and the refunds are reported non-zero at least once.
func TestTransitionEventReportsTheFee(t *testing.T) {
	kv := genesisState(t, map[string]uint64{"olga": 1 << 40})
	if err := drive.SetProtocolVersion(kv, protocol.V14); err != nil {
		t.Fatal(err)
	}
	if err := drive.InsertDocumentTTLTrees(kv, 1); err != nil {
		t.Fatal(err)
	}
	var defs [2][]byte
	for i, name := range []string{"note.json", "story-ttl.json"} {
		var err error
		if defs[i], err = os.ReadFile("../docs/examples/" + name); err != nil {
			t.Fatal(err)
		}
	}
	olgaKey := testKey("olga-id").Public().(ed25519.PublicKey)
	olga := protocol.NewIdentityID(addrOf("olga"), 1)
	notes, stories := protocol.NewContractID(olga, 1), protocol.NewContractID(olga, 2)
	create := &protocol.DocumentsBatch{Identity: olga, Nonce: 3, Contract: notes, Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionCreate, Type: "note", Entropy: sha256.Sum256([]byte("n")), Data: []byte(`{"text":"` + strings.Repeat("t", 200) + `"}`)}}}
	create.Actions[0].ID = create.CreateID(create.Actions[0])
	blocks := []struct {
		signer string
		tr     protocol.Transition
	}{
		{"olga", &protocol.IdentityCreate{PubKey: testKey("olga").Public().(ed25519.PublicKey), Nonce: 1, Amount: 1 << 39, Keys: []ed25519.PublicKey{olgaKey}}},
		{"olga-id", &protocol.DataContractCreate{Identity: olga, Nonce: 1, Definition: defs[0]}},
		{"olga-id", &protocol.DataContractCreate{Identity: olga, Nonce: 2, Definition: defs[1]}},
		{"olga-id", create},
		{"olga-id", &protocol.DocumentsBatch{Identity: olga, Nonce: 4, Contract: notes, Actions: []protocol.DocumentAction{
			{Kind: protocol.ActionDelete, Type: "note", ID: create.Actions[0].ID, Revision: 1}}}},
		{"olga-id", &protocol.DocumentsBatch{Identity: olga, Nonce: 5, Contract: stories, Actions: []protocol.DocumentAction{
			{Kind: protocol.ActionCreate, Type: "story", Entropy: sha256.Sum256([]byte("s")), Data: []byte(`{"caption":"c","mediaUrl":"u"}`)}}}},
	}
	reported := map[string]bool{}
	for i, b := range blocks {
		res, err := ExecuteBlock(kv, Block{Height: uint64(i + 1), TimeMs: uint64(i+1) * 1000, Txs: [][]byte{protocol.Sign(chainID, b.tr, testKey(b.signer))}})
		if err != nil {
			t.Fatal(err)
		}
		r := res.TxResults[0]
		if r.Code != protocol.CodeOK {
			t.Fatalf("block %d: %s %s", i+1, r.Code, r.Log)
		}
		ev := r.Events[len(r.Events)-1]
		if ev.Type != protocol.EventTransition {
			t.Fatalf("block %d: the last event is %s, want the transition's", i+1, ev.Type)
		}
		attrs := map[string]string{}
		for _, a := range ev.Attrs {
			attrs[a.Key] = a.Value
		}
		parts := feeParts(r.Fee)
		refunds, err := r.Fee.RefundTotal()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]uint64{
			protocol.AttrFee: r.Charged, protocol.AttrFeeProcessing: parts.Processing, protocol.AttrFeePerpetualStorage: parts.PerpetualStorage,
			protocol.AttrFeeLifetimeStorage: parts.LifetimeStorage, protocol.AttrFeeDeletionPrepay: parts.DeletionPrepay, protocol.AttrRefunds: refunds,
		}
		for key, n := range want {
			if attrs[key] != strconv.FormatUint(n, 10) {
				t.Errorf("block %d: %s=%s, want %d", i+1, key, attrs[key], n)
			}
			reported[key] = reported[key] || n > 0
		}
		if parts.Total() != r.Charged {
			t.Errorf("block %d: the parts %+v sum to %d, charged %d", i+1, parts, parts.Total(), r.Charged)
		}
	}
	for _, key := range []string{protocol.AttrFeePerpetualStorage, protocol.AttrFeeLifetimeStorage, protocol.AttrFeeDeletionPrepay, protocol.AttrRefunds} {
		if !reported[key] {
			t.Errorf("no transition reported a non-zero %s", key)
		}
	}
}
