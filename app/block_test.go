package app

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
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
