package keyring

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docFile returns the example keyring file of docs/KEYS.md.
func docFile(t *testing.T) []byte {
	t.Helper()
	doc, err := os.ReadFile("../docs/KEYS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "<!-- keyring file alice.json -->\n```json\n")
	if !ok {
		t.Fatal("docs/KEYS.md has no example file")
	}
	body, _, ok := strings.Cut(after, "```\n<!-- end keyring file -->")
	if !ok {
		t.Fatal("docs/KEYS.md: the example file does not end")
	}
	return []byte(body)
}

// TestKeysDocFile pins the keyring file format: the file Import writes for the seed of
// docs/TX.md's vector is, byte for byte, the example of docs/KEYS.md.
func TestKeysDocFile(t *testing.T) {
	home := t.TempDir()
	if _, err := Open(home).Import("alice", ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(home, Dir, "alice.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := docFile(t); !bytes.Equal(got, want) {
		t.Fatalf("Import writes\n%s\ndocs/KEYS.md shows\n%s", got, want)
	}
}

// TestKeysDocParse reads the example file by the documented layout alone (no keyring
// code) and signs with it; the keyring's own reading of the same file agrees.
func TestKeysDocParse(t *testing.T) {
	raw := docFile(t)
	var f struct {
		Name, Address string
		PubKey        string `json:"pub_key"`
		PrivKey       string `json:"priv_key"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	priv, err := hex.DecodeString(f.PrivKey)
	if err != nil || len(priv) != 64 {
		t.Fatalf("priv_key %q: %v", f.PrivKey, err)
	}
	key := ed25519.NewKeyFromSeed(priv[:32])
	pub := key.Public().(ed25519.PublicKey)
	if hex.EncodeToString(pub) != f.PubKey || !bytes.Equal(priv[32:], pub) {
		t.Fatalf("the seed's public key %x is not pub_key %s", pub, f.PubKey)
	}
	sum := sha256.Sum256(pub)
	if hex.EncodeToString(sum[:20]) != f.Address {
		t.Fatalf("address %s, sha256(pub_key)[:20] is %x", f.Address, sum[:20])
	}
	msg := []byte("signed with a key read from docs/KEYS.md")
	if !ed25519.Verify(pub, msg, ed25519.Sign(key, msg)) {
		t.Fatal("signature does not verify")
	}

	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, Dir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, Dir, f.Name+".json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := Open(home).Get(f.Name)
	if err != nil || !k.Priv.Equal(key) || k.Address().String() != f.Address {
		t.Fatalf("the keyring reads the documented file as %+v, %v", k, err)
	}
}
