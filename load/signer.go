package load

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"

	"github.com/ttld-dev/ttld/protocol"
)

// DefaultSeed is the seed the command line derives signers from unless told otherwise.
const DefaultSeed = "ttld-load"

// DefaultSigners is how many signers a load home is funded with unless told
// otherwise: enough that each signer has only a few transactions in flight at a
// thousand or more a second (see protocol.UseNonce: 24 nonces of gap).
const DefaultSigners = 1000

// identityDomain separates a signer's identity id from its key seed.
const identityDomain = "ttld-load/identity"

// Signer is signer Index of a seed: one ed25519 key that signs both as the platform
// address Address and as key 0 of the identity Identity, both funded in genesis by
// AddSigners.
type Signer struct {
	Index    int
	Key      ed25519.PrivateKey
	Address  protocol.Address
	Identity protocol.IdentityID
}

// Pub is the signer's public key.
func (s Signer) Pub() ed25519.PublicKey { return s.Key.Public().(ed25519.PublicKey) }

// DeriveSigner returns signer i of seed: its key is ed25519.NewKeyFromSeed(sha256(seed
// || u64(i))), its identity id sha256("ttld-load/identity" || seed || u64(i)). The
// same seed and index always give the same signer, so a generator finds the keys the
// genesis funded without reading any file.
func DeriveSigner(seed []byte, i int) Signer {
	key := ed25519.NewKeyFromSeed(indexed(nil, seed, i))
	var id protocol.IdentityID
	copy(id[:], indexed([]byte(identityDomain), seed, i))
	return Signer{Index: i, Key: key, Address: protocol.AddressOf(key.Public().(ed25519.PublicKey)), Identity: id}
}

// DeriveSigners returns signers 0..n-1 of seed.
func DeriveSigners(seed []byte, n int) []Signer {
	out := make([]Signer, n)
	for i := range out {
		out[i] = DeriveSigner(seed, i)
	}
	return out
}

// indexed is sha256(domain || seed || u64(i)).
func indexed(domain, seed []byte, i int) []byte {
	h := sha256.New()
	h.Write(domain)
	h.Write(seed)
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(i)))
	return h.Sum(nil)
}
