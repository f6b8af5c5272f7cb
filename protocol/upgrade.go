package protocol

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// A version signal is how a block's proposer states the newest protocol version its
// binary implements (docs/STATE.md, "Protocol upgrades"): the block's first transaction,
// VersionSignalFormat then the version, u32 big-endian. It carries no signature: the
// block's proposer is the one who states it, and a signal only counts toward a switch
// that a threshold of an epoch's blocks must reach, so a proposer lying about its
// binary gains one block's count, as it would signalling truthfully.
const (
	// VersionSignalFormat is a signal's leading byte, which no transition's format
	// byte (TxFormat1) shares.
	VersionSignalFormat uint8 = 'V'
	// VersionSignalLen is a signal's length.
	VersionSignalLen = 5
)

// EncodeVersionSignal returns the signal of version v.
func EncodeVersionSignal(v Version) []byte {
	return binary.BigEndian.AppendUint32([]byte{VersionSignalFormat}, uint32(v))
}

// IsVersionSignal reports whether tx is meant as a version signal: it starts with
// VersionSignalFormat, well-formed or not.
func IsVersionSignal(tx []byte) bool { return len(tx) > 0 && tx[0] == VersionSignalFormat }

// DecodeVersionSignal reads the version of a signal found at position of its block,
// refusing one that is malformed (ErrInvalidVersionSignal).
func DecodeVersionSignal(tx []byte, position int, inForce Version) (Version, error) {
	if !IsVersionSignal(tx) || len(tx) != VersionSignalLen {
		return 0, ErrInvalidVersionSignal{Position: position, InForce: inForce, Reason: fmt.Sprintf("malformed: a signal is %d bytes, the byte %d then the version u32", VersionSignalLen, VersionSignalFormat)}
	}
	return Version(binary.BigEndian.Uint32(tx[1:])), nil
}

// ErrInvalidVersionSignal: a version signal a block may not carry where it is: not
// the block's first transaction (a second signal included), malformed, or for a
// version the chain cannot move to (at or below the one in force). Every signal CheckTx
// meets gets it too: only a proposer adds one, to its own block.
type ErrInvalidVersionSignal struct {
	// Position is the signal's index in its block; -1 outside a block (CheckTx).
	Position int
	// Version is the version signalled; 0 when the bytes are malformed.
	Version Version
	// InForce is the version in force for the block.
	InForce Version
	Reason  string
}

func (e ErrInvalidVersionSignal) Code() Code { return CodeInvalidVersionSignal }
func (e ErrInvalidVersionSignal) Error() string {
	where := fmt.Sprintf("at position %d of its block", e.Position)
	if e.Position < 0 {
		where = "outside a block"
	}
	if e.Version != 0 {
		return fmt.Sprintf("version signal for %d %s (%d in force): %s", e.Version, where, e.InForce, e.Reason)
	}
	return fmt.Sprintf("version signal %s (%d in force): %s", where, e.InForce, e.Reason)
}

// UpgradeReached reports whether signals of an epoch's blocks reach the threshold of
// l.UpgradeThresholdPercent: signals x 100 >= blocks x percent, exactly (in 128 bits).
func (l Limits) UpgradeReached(signals, blocks uint64) bool {
	sHi, sLo := bits.Mul64(signals, 100)
	bHi, bLo := bits.Mul64(blocks, l.UpgradeThresholdPercent)
	return sHi > bHi || (sHi == bHi && sLo >= bLo)
}
