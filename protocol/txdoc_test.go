package protocol

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// txDocVector is one test vector of docs/TX.md: a transition and the key that signs it.
type txDocVector struct {
	name string
	key  ed25519.PrivateKey
	tr   Transition
	// extra are further lines of the vector, name -> value
	extra map[string]string
}

// txDocVectors are the vectors of docs/TX.md, one per transition kind, all on chain
// ttld-local: the address key has the seed 32 × 0x01 (the first vector's), the
// identity key the seed 32 × 0x02.
func txDocVectors() []txDocVector {
	addrKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	idKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, ed25519.SeedSize))
	addrPub, idPub := addrKey.Public().(ed25519.PublicKey), idKey.Public().(ed25519.PublicKey)
	addr := AddressOf(addrPub)
	id := NewIdentityID(addr, 1)
	var to Address
	copy(to[:], bytes.Repeat([]byte{0x22}, AddressLen))
	var toID IdentityID
	copy(toID[:], bytes.Repeat([]byte{0x33}, IdentityIDLen))
	consensusPub := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize)).Public().(ed25519.PublicKey)
	return []txDocVector{
		{"address_funds_transfer", addrKey, &AddressFundsTransfer{PubKey: addrPub, Nonce: 1, Recipient: to, Amount: 1000}, map[string]string{
			"pubkey":   hex.EncodeToString(addrPub),
			"address":  addr.String(),
			"identity": id.String(),
		}},
		{"identity_create", addrKey, &IdentityCreate{PubKey: addrPub, Nonce: 1, Amount: 5_000_000, Keys: []ed25519.PublicKey{idPub}}, map[string]string{
			"identity_key": hex.EncodeToString(idPub),
			"identity":     id.String(),
		}},
		{"identity_top_up", addrKey, &IdentityTopUp{PubKey: addrPub, Nonce: 2, Identity: id, Amount: 1000}, nil},
		{"identity_credit_transfer", idKey, &IdentityCreditTransfer{Identity: id, KeyIndex: 0, Nonce: 1, Recipient: toID, Amount: 500}, nil},
		{"identity_credit_transfer_to_address", idKey, &IdentityCreditTransferToAddress{Identity: id, KeyIndex: 0, Nonce: 2, Recipient: to, Amount: 250}, nil},
		{"data_contract_create", idKey, &DataContractCreate{Identity: id, KeyIndex: 0, Nonce: 3, Definition: []byte(sampleContractJSON)}, map[string]string{
			"contract": NewContractID(id, 3).String(),
		}},
		{"data_contract_update", idKey, &DataContractUpdate{Identity: id, KeyIndex: 0, Nonce: 4, Contract: NewContractID(id, 3), Version: 2, Definition: []byte(sampleContractJSON)}, nil},
		{"documents_batch", idKey, docVectorBatch(id), map[string]string{
			"document": docVectorBatch(id).Actions[0].ID.String(),
		}},
		{"validator_set_proposal", idKey, &ValidatorSetProposal{Identity: id, KeyIndex: 0, Nonce: 6, Change: ValidatorChange{Kind: ValidatorAdd, PubKey: consensusPub, Power: 5, Operator: toID}}, map[string]string{
			"validator": ConsensusAddressOf(consensusPub).String(),
		}},
		{"validator_set_approval", idKey, &ValidatorSetApproval{Identity: id, KeyIndex: 0, Nonce: 7, Proposal: 1}, nil},
	}
}

// docVectorBatch is the documents batch vector: one create of a note, entropy 32 × 0x44.
func docVectorBatch(id IdentityID) *DocumentsBatch {
	b := &DocumentsBatch{Identity: id, Nonce: 5, Contract: NewContractID(id, 3), Actions: []DocumentAction{
		{Kind: ActionCreate, Type: "note", Entropy: [32]byte(bytes.Repeat([]byte{0x44}, 32)), Data: []byte(`{"text":"hello"}`)},
	}}
	b.Actions[0].ID = b.CreateID(b.Actions[0])
	return b
}

// txDocBlocks reads the vector blocks of docs/TX.md: the "name value" lines between
// "<!-- vector NAME -->" and the end of the fenced block after it.
func txDocBlocks(t *testing.T) map[string]map[string]string {
	t.Helper()
	f, err := os.Open("../docs/TX.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	blocks := map[string]map[string]string{}
	var cur map[string]string
	fences := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<16)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "<!-- vector "); ok {
			cur, fences = map[string]string{}, 0
			blocks[strings.TrimSuffix(name, " -->")] = cur
			continue
		}
		if cur == nil {
			continue
		}
		if strings.HasPrefix(line, "```") {
			if fences++; fences == 2 {
				cur = nil
			}
			continue
		}
		if fs := strings.Fields(line); len(fs) >= 2 {
			cur[fs[0]] = fs[1]
		}
	}
	return blocks
}

// TestTxDocVector checks every test vector of docs/TX.md against this implementation,
// so the page a client in another language is written from stays true: one vector per
// transition kind.
func TestTxDocVector(t *testing.T) {
	blocks := txDocBlocks(t)
	kinds := map[TransitionType]bool{}
	for _, v := range txDocVectors() {
		kinds[v.tr.Type()] = true
		if v.name != v.tr.Type().String() {
			t.Errorf("vector %s is of kind %s", v.name, v.tr.Type())
		}
		unsigned := EncodeUnsigned(v.tr)
		tx := Sign("ttld-local", v.tr, v.key)
		want := map[string]string{
			"unsigned":   hex.EncodeToString(unsigned),
			"sign_bytes": hex.EncodeToString(SignBytes("ttld-local", v.tr.Type(), unsigned)),
			"tx":         hex.EncodeToString(tx),
		}
		for k, x := range v.extra {
			want[k] = x
		}
		got, ok := blocks[v.name]
		if !ok {
			t.Errorf("docs/TX.md has no vector %s", v.name)
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("docs/TX.md vector %s: %s = %q, the code gives %q", v.name, k, got[k], w)
			}
		}
		ctx, err := ContextFor(Latest, 0)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := Decode(tx, ctx); err != nil || back.Transition.Type() != v.tr.Type() {
			t.Errorf("vector %s does not decode: %v", v.name, err)
		}
	}
	for _, k := range Kinds() {
		if !kinds[k.Type] {
			t.Errorf("docs/TX.md has no vector for transition kind %s", k.Name)
		}
	}
}
