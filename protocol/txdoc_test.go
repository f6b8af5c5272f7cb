package protocol

import (
	"bufio"
	"crypto/ed25519"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// TestTxDocVector checks the test vector of docs/TX.md against this implementation, so
// the page a client in another language is written from stays true.
func TestTxDocVector(t *testing.T) {
	f, err := os.Open("../docs/TX.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vec := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<16)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) >= 2 {
			vec[fs[0]] = fs[1]
		}
	}
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = 1
	}
	key := ed25519.NewKeyFromSeed(seed)
	pub := key.Public().(ed25519.PublicKey)
	var to Address
	for i := range to {
		to[i] = 0x22
	}
	tr := &AddressFundsTransfer{PubKey: pub, Nonce: 1, Recipient: to, Amount: 1000}
	unsigned := EncodeUnsigned(tr)
	want := map[string]string{
		"pubkey":     hex.EncodeToString(pub),
		"address":    AddressOf(pub).String(),
		"unsigned":   hex.EncodeToString(unsigned),
		"sign_bytes": hex.EncodeToString(SignBytes("ttld-local", tr.Type(), unsigned)),
		"tx":         hex.EncodeToString(Sign("ttld-local", tr, key)),
		"identity":   NewIdentityID(AddressOf(pub), 1).String(),
	}
	for k, w := range want {
		if vec[k] != w {
			t.Errorf("docs/TX.md %s = %q, the code gives %q", k, vec[k], w)
		}
	}
}
