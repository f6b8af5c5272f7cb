package keyring

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

func TestAddGetRoundTrip(t *testing.T) {
	home := t.TempDir()
	kr := Open(home)
	added, err := kr.Add("alice")
	if err != nil {
		t.Fatal(err)
	}
	if added.Name != "alice" || len(added.Pub) != ed25519.PublicKeySize || !bytes.Equal(added.Priv.Public().(ed25519.PublicKey), added.Pub) {
		t.Fatalf("added key is inconsistent: %+v", added)
	}
	if added.Address() != protocol.AddressOf(added.Pub) {
		t.Fatalf("Address() = %s, want %s", added.Address(), protocol.AddressOf(added.Pub))
	}
	got, err := Open(home).Get("alice")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "alice" || !bytes.Equal(got.Pub, added.Pub) || !bytes.Equal(got.Priv, added.Priv) {
		t.Fatalf("Get returned %+v, want %+v", got, added)
	}
	msg := []byte("sign me")
	if !ed25519.Verify(added.Pub, msg, ed25519.Sign(got.Priv, msg)) {
		t.Fatal("loaded private key does not sign for the added public key")
	}
}

func TestFileModes(t *testing.T) {
	home := t.TempDir()
	kr := Open(home)
	if _, err := kr.Add("bob"); err != nil {
		t.Fatal(err)
	}
	dir, err := os.Stat(filepath.Join(home, Dir))
	if err != nil {
		t.Fatal(err)
	}
	if dir.Mode().Perm() != 0o700 {
		t.Errorf("keyring dir mode = %o, want 700", dir.Mode().Perm())
	}
	f, err := os.Stat(filepath.Join(home, Dir, "bob.json"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %o, want 600", f.Mode().Perm())
	}
	if kr.Dir() != filepath.Join(home, Dir) {
		t.Errorf("Dir() = %s", kr.Dir())
	}
}

func TestDuplicateRefused(t *testing.T) {
	kr := Open(t.TempDir())
	first, err := kr.Add("dup")
	if err != nil {
		t.Fatal(err)
	}
	_, err = kr.Add("dup")
	var exists ErrExists
	if !errors.As(err, &exists) || exists.Name != "dup" {
		t.Fatalf("second Add: err = %v, want ErrExists{dup}", err)
	}
	_, seed, _ := ed25519.GenerateKey(nil)
	_, err = kr.Import("dup", seed)
	if !errors.As(err, &exists) {
		t.Fatalf("Import over existing: err = %v, want ErrExists", err)
	}
	kept, err := kr.Get("dup")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kept.Pub, first.Pub) {
		t.Fatal("a refused Add or Import replaced the stored key")
	}
}

func TestBadNamesRefused(t *testing.T) {
	kr := Open(t.TempDir())
	for _, name := range []string{"", "Alice", "a b", "../x", "a.b", "é", strings.Repeat("a", 65)} {
		_, err := kr.Add(name)
		var bad ErrInvalidName
		if !errors.As(err, &bad) || bad.Name != name {
			t.Errorf("Add(%q): err = %v, want ErrInvalidName", name, err)
		}
		if _, err := kr.Get(name); !errors.As(err, &bad) {
			t.Errorf("Get(%q): err = %v, want ErrInvalidName", name, err)
		}
	}
	for _, name := range []string{"a", "key_1", "my-key", strings.Repeat("z", 64)} {
		if _, err := kr.Add(name); err != nil {
			t.Errorf("Add(%q): %v", name, err)
		}
	}
	keys, err := kr.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 4 {
		t.Fatalf("List has %d keys after 4 good and 7 bad adds, want 4", len(keys))
	}
}

func TestGetMissing(t *testing.T) {
	_, err := Open(t.TempDir()).Get("ghost")
	var nf ErrNotFound
	if !errors.As(err, &nf) || nf.Name != "ghost" {
		t.Fatalf("err = %v, want ErrNotFound{ghost}", err)
	}
}

func TestImportKeepsKey(t *testing.T) {
	kr := Open(t.TempDir())
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kr.Import("imported", priv)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k.Pub, pub) || k.Address() != protocol.AddressOf(pub) {
		t.Fatalf("imported key has pub %x, want %x", k.Pub, pub)
	}
	_, err = kr.Import("short", priv[:10])
	var bad ErrInvalidKey
	if !errors.As(err, &bad) || bad.Name != "short" {
		t.Fatalf("Import of a 10-byte key: err = %v, want ErrInvalidKey", err)
	}
	if _, err := kr.Get("short"); !errors.As(err, new(ErrNotFound)) {
		t.Fatalf("a refused import left a file: Get err = %v", err)
	}
}

func TestListSortedByName(t *testing.T) {
	kr := Open(t.TempDir())
	if keys, err := kr.List(); err != nil || len(keys) != 0 {
		t.Fatalf("List of a new keyring = %v, %v; want empty", keys, err)
	}
	// "a-b.json" sorts before "a.json" as a file name; the names must sort as names.
	for _, n := range []string{"zed", "a-b", "a", "m"} {
		if _, err := kr.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := kr.List()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range keys {
		names = append(names, k.Name)
	}
	if got := strings.Join(names, ","); got != "a,a-b,m,zed" {
		t.Fatalf("List order = %s, want a,a-b,m,zed", got)
	}
}

func TestCorruptFileRejected(t *testing.T) {
	home := t.TempDir()
	kr := Open(home)
	a, err := kr.Add("a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := kr.Add("b")
	if err != nil {
		t.Fatal(err)
	}
	// Put b's key pair into a's file: the name inside no longer matches.
	raw, err := os.ReadFile(filepath.Join(home, Dir, "b.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, Dir, "a.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = kr.Get("a")
	var bad ErrInvalidKey
	if !errors.As(err, &bad) || bad.Name != "a" {
		t.Fatalf("Get of a file naming another key: err = %v, want ErrInvalidKey{a}", err)
	}
	// A public key that does not belong to the private key is refused.
	tampered := strings.Replace(string(raw), "\"b\"", "\"a\"", 1)
	tampered = strings.Replace(tampered, hex.EncodeToString(b.Pub), hex.EncodeToString(a.Pub), 1)
	if err := os.WriteFile(filepath.Join(home, Dir, "a.json"), []byte(tampered), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := kr.Get("a"); !errors.As(err, &bad) {
		t.Fatalf("Get of a mismatched pair: err = %v, want ErrInvalidKey", err)
	}
}
