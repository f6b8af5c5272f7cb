package protocol

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
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

// MaxNonce is the largest nonce a signer can use: its record keeps the nonce in 40
// bits (NonceState).
const MaxNonce = 1<<40 - 1

// NonceWindow is how many nonces below a signer's highest used one its record keeps
// track of (the bits of NonceState.Missing).
const NonceWindow = 24

// NonceState is a signer's nonce record: the highest nonce it used, and which of the
// NonceWindow nonces below it it skipped. A skipped nonce may still be used once, so a
// transition that reaches a block after a later one of the same signer (two nodes'
// mempools may order them so) is accepted rather than lost.
type NonceState struct {
	// Last is the highest nonce used, 0 before the first (<= MaxNonce).
	Last uint64
	// Missing: bit i set means nonce Last-1-i was skipped and is still usable.
	Missing uint32
}

// UseNonce applies the nonce rule shared by identities and addresses. A nonce n is
// accepted when Last < n <= Last+gap (the nonces skipped on the way are remembered), or
// when it is one of the skipped nonces of the window. It returns the record after n is
// used, or the reason n is refused. gap is at most NonceWindow.
func UseNonce(s NonceState, n, gap uint64) (NonceState, NonceReason) {
	switch {
	case n > s.Last:
		if n-s.Last > gap || n > MaxNonce {
			return s, NonceTooFarInFuture
		}
		shift := n - s.Last
		// The old Last becomes bit shift-1, not missing (used, or 0, which is never a
		// nonce); the nonces between it and n are skipped (bits 0..shift-2).
		missing := uint64(s.Missing) << shift
		skipped := uint64(1)<<(shift-1) - 1
		return NonceState{Last: n, Missing: uint32((missing | skipped) & (1<<NonceWindow - 1))}, 0
	case n == s.Last || n == 0 || s.Last-1-n >= NonceWindow:
		return s, NonceStale
	}
	bit := uint32(1) << (s.Last - 1 - n)
	if s.Missing&bit == 0 {
		return s, NonceStale
	}
	s.Missing &^= bit
	return s, 0
}

// Drops reports whether using nonce n would make a skipped nonce unusable (it would
// fall more than NonceWindow below the new Last), and the lowest such nonce. Only a
// nonce above Last drops any.
func (s NonceState) Drops(n uint64) (uint64, bool) {
	if n <= s.Last {
		return 0, false
	}
	shift := n - s.Last
	dropped := s.Missing // bit i is nonce Last-1-i: the bits shifted past the window
	if shift < NonceWindow {
		dropped = s.Missing >> (NonceWindow - shift)
		if dropped == 0 {
			return 0, false
		}
		// The highest bit dropped is the lowest nonce.
		return s.Last - 1 - (NonceWindow - shift + uint64(bits.Len32(dropped)) - 1), true
	}
	if dropped == 0 {
		return 0, false
	}
	return s.Last - uint64(bits.Len32(dropped)), true
}

// Skipped lists the skipped nonces still usable, lowest first.
func (s NonceState) Skipped() []uint64 {
	var out []uint64
	for i := uint64(NonceWindow); i > 0; i-- {
		if s.Missing&(1<<(i-1)) != 0 {
			out = append(out, s.Last-i)
		}
	}
	return out
}

// Used reports whether nonce n has been used: at or below Last and not skipped (a nonce
// more than NonceWindow below Last that was skipped is gone, and counts as used).
func (s NonceState) Used(n uint64) bool {
	if n == 0 || n > s.Last {
		return false
	}
	if n == s.Last || s.Last-1-n >= NonceWindow {
		return true
	}
	return s.Missing&(1<<(s.Last-1-n)) == 0
}

// Encode packs the record into the 8 bytes of a state value: Missing in the top 24
// bits, Last in the low 40.
func (s NonceState) Encode() uint64 { return uint64(s.Missing)<<40 | s.Last }

// DecodeNonceState reads a record packed by Encode.
func DecodeNonceState(v uint64) NonceState {
	return NonceState{Last: v & MaxNonce, Missing: uint32(v >> 40)}
}
