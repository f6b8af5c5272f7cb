package keyring

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/ttld-dev/ttld/protocol"
)

// Dir is the keyring's folder inside a home directory.
const Dir = "keyring"

const fileExt = ".json"

var validName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// Key is a named ed25519 key pair. Pub is always Priv's public half.
type Key struct {
	Name string
	Pub  ed25519.PublicKey
	Priv ed25519.PrivateKey
}

// Address is the key's platform address.
func (k Key) Address() protocol.Address { return protocol.AddressOf(k.Pub) }

// ErrExists: a key of that name is already stored.
type ErrExists struct{ Name string }

func (e ErrExists) Error() string { return fmt.Sprintf("keyring: key %q already exists", e.Name) }

// ErrNotFound: no key of that name is stored.
type ErrNotFound struct{ Name string }

func (e ErrNotFound) Error() string { return fmt.Sprintf("keyring: key %q not found", e.Name) }

// ErrInvalidName: a key name is not 1 to 64 of [a-z0-9_-].
type ErrInvalidName struct{ Name string }

func (e ErrInvalidName) Error() string {
	return fmt.Sprintf("keyring: invalid key name %q: want 1 to 64 of a-z, 0-9, _ and -", e.Name)
}

// ErrInvalidKey: a private key has the wrong length, or a stored file does not hold a
// consistent key pair.
type ErrInvalidKey struct{ Name, Reason string }

func (e ErrInvalidKey) Error() string {
	return fmt.Sprintf("keyring: key %q: %s", e.Name, e.Reason)
}

// Keyring is the set of keys in one folder.
type Keyring struct{ dir string }

// Open returns the keyring of a home directory. Nothing is created until a key is added.
func Open(home string) *Keyring { return &Keyring{dir: filepath.Join(home, Dir)} }

// Dir is the folder the keys are stored in.
func (k *Keyring) Dir() string { return k.dir }

// file is the stored form of a key.
type file struct {
	Name    string `json:"name"`
	Address string `json:"address"`  // informational; derived from the public key
	PubKey  string `json:"pub_key"`  // 64 hex digits
	PrivKey string `json:"priv_key"` // 128 hex digits: seed then public key, as crypto/ed25519
}

// Add creates a random key named name.
func (k *Keyring) Add(name string) (Key, error) {
	if !validName.MatchString(name) {
		return Key{}, ErrInvalidName{name}
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Key{}, fmt.Errorf("keyring: generate key: %w", err)
	}
	return k.Import(name, priv)
}

// Import stores priv under name.
func (k *Keyring) Import(name string, priv ed25519.PrivateKey) (Key, error) {
	if !validName.MatchString(name) {
		return Key{}, ErrInvalidName{name}
	}
	if len(priv) != ed25519.PrivateKeySize {
		return Key{}, ErrInvalidKey{name, fmt.Sprintf("private key is %d bytes, want %d", len(priv), ed25519.PrivateKeySize)}
	}
	// Rebuild from the seed so that a private key whose second half is not its public
	// key cannot be stored.
	priv = ed25519.NewKeyFromSeed(priv.Seed())
	key := Key{Name: name, Pub: priv.Public().(ed25519.PublicKey), Priv: priv}
	if err := os.MkdirAll(k.dir, 0o700); err != nil {
		return Key{}, fmt.Errorf("keyring: %w", err)
	}
	b, err := json.MarshalIndent(file{
		Name:    name,
		Address: key.Address().String(),
		PubKey:  hex.EncodeToString(key.Pub),
		PrivKey: hex.EncodeToString(key.Priv),
	}, "", "  ")
	if err != nil {
		return Key{}, fmt.Errorf("keyring: %w", err)
	}
	// O_EXCL makes the existence check and the creation one step.
	f, err := os.OpenFile(k.path(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return Key{}, ErrExists{name}
	}
	if err != nil {
		return Key{}, fmt.Errorf("keyring: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		os.Remove(f.Name())
		return Key{}, fmt.Errorf("keyring: write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return Key{}, fmt.Errorf("keyring: write %s: %w", name, err)
	}
	return key, nil
}

// Get loads the key named name.
func (k *Keyring) Get(name string) (Key, error) {
	if !validName.MatchString(name) {
		return Key{}, ErrInvalidName{name}
	}
	b, err := os.ReadFile(k.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return Key{}, ErrNotFound{name}
	}
	if err != nil {
		return Key{}, fmt.Errorf("keyring: %w", err)
	}
	return decode(name, b)
}

// List loads every key, sorted by name.
func (k *Keyring) List() ([]Key, error) {
	entries, err := os.ReadDir(k.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	var keys []Key
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), fileExt)
		if !ok || e.IsDir() || !validName.MatchString(name) {
			continue
		}
		key, err := k.Get(name)
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Name < keys[j].Name })
	return keys, nil
}

func (k *Keyring) path(name string) string { return filepath.Join(k.dir, name+fileExt) }

func decode(name string, b []byte) (Key, error) {
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return Key{}, ErrInvalidKey{name, err.Error()}
	}
	if f.Name != name {
		return Key{}, ErrInvalidKey{name, fmt.Sprintf("file names the key %q", f.Name)}
	}
	priv, err := hex.DecodeString(f.PrivKey)
	if err != nil || len(priv) != ed25519.PrivateKeySize {
		return Key{}, ErrInvalidKey{name, "priv_key is not 128 hex digits"}
	}
	key := ed25519.NewKeyFromSeed(priv[:ed25519.SeedSize])
	pub := key.Public().(ed25519.PublicKey)
	if f.PubKey != hex.EncodeToString(pub) {
		return Key{}, ErrInvalidKey{name, "pub_key does not match priv_key"}
	}
	return Key{Name: name, Pub: pub, Priv: key}, nil
}
