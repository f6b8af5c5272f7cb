package protocol

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// IdentityIDLen and AddressLen are the byte lengths of the two kinds of account.
const (
	IdentityIDLen = 32
	AddressLen    = 20
)

// IdentityID names an identity: sha256 of the domain "ttld/identity", the funding
// address and the nonce of the create, so no two creates can yield the same id.
type IdentityID [IdentityIDLen]byte

// Address is a platform address: the first 20 bytes of sha256 of an ed25519 public key.
type Address [AddressLen]byte

func (id IdentityID) String() string { return hex.EncodeToString(id[:]) }
func (a Address) String() string     { return hex.EncodeToString(a[:]) }

// AddressOf returns the platform address of an ed25519 public key.
func AddressOf(pub ed25519.PublicKey) Address {
	sum := sha256.Sum256(pub)
	var a Address
	copy(a[:], sum[:AddressLen])
	return a
}

// NewIdentityID derives the id of the identity created by address with nonce.
func NewIdentityID(funder Address, nonce uint64) IdentityID {
	h := sha256.New()
	h.Write([]byte("ttld/identity"))
	h.Write(funder[:])
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], nonce)
	h.Write(n[:])
	var id IdentityID
	copy(id[:], h.Sum(nil))
	return id
}

// ParseIdentityID reads an identity id written as 64 hex digits.
func ParseIdentityID(s string) (IdentityID, error) {
	var id IdentityID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != IdentityIDLen {
		return id, fmt.Errorf("identity id must be %d hex digits", 2*IdentityIDLen)
	}
	copy(id[:], b)
	return id, nil
}

// ParseAddress reads a platform address written as 40 hex digits.
func ParseAddress(s string) (Address, error) {
	var a Address
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != AddressLen {
		return a, fmt.Errorf("address must be %d hex digits", 2*AddressLen)
	}
	copy(a[:], b)
	return a, nil
}

// CheckNonce applies the nonce rule shared by identities and addresses: a nonce n is
// accepted when last < n <= last+gap. It returns the reason of a refusal, or 0.
func CheckNonce(last, n, gap uint64) NonceReason {
	if n <= last {
		return NonceStale
	}
	if n-last > gap {
		return NonceTooFarInFuture
	}
	return 0
}
