package load

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// testConfig is the shape of n connections sending transactions of size bytes.
func testConfig(n int, size int) Shape {
	return Shape{Connections: n, Size: size}
}

// testFactory is a factory of w over signers, whose next nonces start at 5+i, and its
// clients for n connections.
func testFactory(t *testing.T, w Workload, signers []Signer, n int) (*Factory, []*Client) {
	t.Helper()
	nonces := make([]uint64, len(signers))
	for i := range nonces {
		nonces[i] = 5 + uint64(i)
	}
	f, err := NewFactory(FactoryOptions{Workload: w, Run: RunID{1, 2, 3}, ChainID: "ttld-load-test", Contract: protocol.ContractID{9}, Signers: signers, Nonces: nonces, KVStoreSize: 147})
	if err != nil {
		t.Fatal(err)
	}
	size := 147
	if w != KVStore {
		size, _ = TxSize(w)
	}
	cfg := testConfig(n, size)
	if err := f.ValidateConfig(cfg); err != nil {
		t.Fatal(err)
	}
	clients := make([]*Client, n)
	for i := range clients {
		c, err := f.NewClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = c
	}
	if _, err := f.NewClient(cfg); err == nil {
		t.Fatalf("a client past the %d connections was made", n)
	}
	return f, clients
}

// TestGeneratedTransactionsDecodeAndVerify: every ttld workload's transactions decode
// under the latest protocol, are signed by their signer for the chain, have the
// workload's size, and carry what the workload says.
func TestGeneratedTransactionsDecodeAndVerify(t *testing.T) {
	ctx, err := protocol.ContextFor(protocol.Latest, 1_700_000_000_000)
	if err != nil {
		t.Fatal(err)
	}
	signers := DeriveSigners([]byte("seed"), 8)
	byKey := map[string]Signer{}
	for _, s := range signers {
		byKey[string(s.Identity[:])] = s
		byKey[string(s.Address[:])] = s
	}
	for _, w := range Workloads {
		t.Run(string(w), func(t *testing.T) {
			_, clients := testFactory(t, w, signers, 2)
			size, _ := TxSize(w)
			for range 20 {
				tx, err := clients[0].GenerateTx()
				if err != nil {
					t.Fatal(err)
				}
				if len(tx) != size {
					t.Fatalf("a %d-byte transaction, want %d", len(tx), size)
				}
				st, err := protocol.Decode(tx, ctx)
				if err != nil {
					t.Fatal(err)
				}
				sg := st.Signer()
				who := sg.Identity[:]
				if sg.Kind == protocol.SignerAddress {
					a := sg.Address()
					who = a[:]
				}
				s, ok := byKey[string(who)]
				if !ok {
					t.Fatalf("signed by %x, not a signer", who)
				}
				if err := st.VerifySignature("ttld-load-test", s.Pub(), protocol.VerifyEd25519); err != nil {
					t.Fatal(err)
				}
				if st.VerifySignature("another-chain", s.Pub(), protocol.VerifyEd25519) == nil {
					t.Fatal("the signature holds on another chain")
				}
				checkTransition(t, w, st.Transition, s, signers)
			}
		})
	}
}

// checkTransition checks what w's transition t of signer s carries.
func checkTransition(t *testing.T, w Workload, tr protocol.Transition, s Signer, signers []Signer) {
	t.Helper()
	next := signers[(s.Index+1)%len(signers)]
	switch x := tr.(type) {
	case *protocol.IdentityCreditTransfer:
		if w != Transfers || x.Recipient != next.Identity || x.Amount != 1 {
			t.Fatalf("%s: %+v", w, x)
		}
	case *protocol.AddressFundsTransfer:
		if w != AddressTransfers || x.Recipient != next.Address || x.Amount != 1 {
			t.Fatalf("%s: %+v", w, x)
		}
	case *protocol.DocumentsBatch:
		if !w.documents() || x.Contract != (protocol.ContractID{9}) || len(x.Actions) != 1 || x.Actions[0].Kind != protocol.ActionCreate || len(x.Actions[0].Data) != DocumentDataBytes {
			t.Fatalf("%s: %+v", w, x)
		}
		types, err := protocol.ParseSubmittedDocumentTypes(DocumentsContract(w), protocol.Latest)
		if err != nil {
			t.Fatal(err)
		}
		limits, _ := protocol.LimitsFor(protocol.Latest)
		if _, err := protocol.ParseDocumentData(types[0], x.Actions[0].Data, limits); err != nil {
			t.Fatalf("the document's data does not fit its type: %v", err)
		}
		if ttl := types[0].TTLSeconds; (w == DocumentsTTL) != (ttl == uint32(DocumentTTLSeconds)) || len(types[0].Indices) != 2 {
			t.Fatalf("%s: type with ttl %d and %d indexes", w, ttl, len(types[0].Indices))
		}
	default:
		t.Fatalf("%s made a %T", w, tr)
	}
}

// TestNoncesIncreasePerSignerAndClientsShareNoSigner: each client signs only with its
// own signers, no two clients share one, every signer is someone's, and each
// signer's nonces go up by one from the next nonce the factory was given.
func TestNoncesIncreasePerSignerAndClientsShareNoSigner(t *testing.T) {
	signers := DeriveSigners([]byte("seed"), 10)
	ctx, _ := protocol.ContextFor(protocol.Latest, 1)
	_, clients := testFactory(t, Transfers, signers, 3)
	owner := map[protocol.IdentityID]int{}
	next := map[protocol.IdentityID]uint64{}
	for _, s := range signers {
		next[s.Identity] = 5 + uint64(s.Index)
	}
	for round := range 12 {
		for k, c := range clients {
			tx, _ := c.GenerateTx()
			st, err := protocol.Decode(tx, ctx)
			if err != nil {
				t.Fatal(err)
			}
			id := st.Signer().Identity
			if o, seen := owner[id]; seen && o != k {
				t.Fatalf("round %d: signer %s signs for clients %d and %d", round, id, o, k)
			}
			owner[id] = k
			if st.GetNonce() != next[id] {
				t.Fatalf("round %d: signer %s signed nonce %d, want %d", round, id, st.GetNonce(), next[id])
			}
			next[id]++
		}
	}
	if len(owner) != len(signers) {
		t.Fatalf("%d of %d signers signed", len(owner), len(signers))
	}
}

// TestSentRecordsEveryTransaction: the factory knows the send time of every
// transaction its clients made, by hash.
func TestSentRecordsEveryTransaction(t *testing.T) {
	f, clients := testFactory(t, AddressTransfers, DeriveSigners([]byte("seed"), 4), 2)
	var txs [][]byte
	for range 5 {
		for _, c := range clients {
			tx, _ := c.GenerateTx()
			txs = append(txs, tx)
		}
	}
	sent := f.Sent()
	if len(sent) != len(txs) {
		t.Fatalf("%d sent, %d recorded", len(txs), len(sent))
	}
	for _, tx := range txs {
		if sent[sha256.Sum256(tx)] == 0 {
			t.Fatalf("transaction %x not recorded", tx[:8])
		}
	}
}

// TestFactoryRefusesWhatItCannotServe: more connections than signers, a size the
// workload's transactions do not have, a kvstore size too small for a unique key.
func TestFactoryRefusesWhatItCannotServe(t *testing.T) {
	signers := DeriveSigners([]byte("seed"), 2)
	f, err := NewFactory(FactoryOptions{Workload: Transfers, Signers: signers, Nonces: []uint64{1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	size, _ := TxSize(Transfers)
	if f.ValidateConfig(testConfig(3, size)) == nil {
		t.Fatal("3 connections for 2 signers accepted")
	}
	if f.ValidateConfig(testConfig(2, size+1)) == nil {
		t.Fatal("a size transfers do not have accepted")
	}
	if _, err := NewFactory(FactoryOptions{Workload: KVStore, KVStoreSize: MinKVStoreSize - 1}); err == nil {
		t.Fatal("kvstore transactions too small for a unique key accepted")
	}
	if _, err := NewFactory(FactoryOptions{Workload: Transfers, Signers: signers[:1], Nonces: []uint64{1}}); err == nil {
		t.Fatal("a transfer workload of one signer accepted")
	}
}

// TestKVStoreTransactions: kvstore transactions have the asked size and the shape
// kvstore's isValidTx accepts as a key=value pair (one '=', no ':', neither '=' at an
// end), no validator-update prefix, and keys that never repeat across clients.
func TestKVStoreTransactions(t *testing.T) {
	for _, size := range []int{MinKVStoreSize, 134, 147, 380} {
		f, err := NewFactory(FactoryOptions{Workload: KVStore, Run: NewRunID(), KVStoreSize: size})
		if err != nil {
			t.Fatal(err)
		}
		cfg := testConfig(3, size)
		if err := f.ValidateConfig(cfg); err != nil {
			t.Fatal(err)
		}
		keys := map[string]bool{}
		for range 3 {
			c, _ := f.NewClient(cfg)
			for range 200 {
				tx, _ := c.GenerateTx()
				if len(tx) != size {
					t.Fatalf("a %d-byte transaction, want %d", len(tx), size)
				}
				if bytes.Count(tx, []byte("=")) != 1 || bytes.Contains(tx, []byte(":")) || tx[0] == '=' || tx[len(tx)-1] == '=' || bytes.HasPrefix(tx, []byte("val=")) {
					t.Fatalf("not a kvstore key=value transaction: %q", tx)
				}
				key, _, _ := bytes.Cut(tx, []byte("="))
				if keys[string(key)] {
					t.Fatalf("key %s repeats", key)
				}
				keys[string(key)] = true
			}
		}
	}
}
