package proofs

import (
	"errors"
	"fmt"
)

// ErrNotProven is returned when an answer carries no proof at all.
var ErrNotProven = errors.New("proofs: the answer carries no proof")

// ErrMalformedProof is returned when a proof operation cannot be decoded or does not
// prove what an IAVL proof of its kind must prove. Index is the position of the
// operation in ProofOps, or of the proof in a range operation's batch (0 when there is
// a single one).
type ErrMalformedProof struct {
	Index  int
	Reason string
}

func (e ErrMalformedProof) Error() string {
	return fmt.Sprintf("proofs: malformed proof operation %d: %s", e.Index, e.Reason)
}

// ErrKeyMismatch is returned when proof operation Index (for a range answer: batch
// entry Index, or the operation's own key) proves key Got where key Want was expected.
type ErrKeyMismatch struct {
	Index     int
	Want, Got []byte
}

func (e ErrKeyMismatch) Error() string {
	return fmt.Sprintf("proofs: proof operation %d is for key %X, want %X", e.Index, e.Got, e.Want)
}

// ErrPresenceMismatch is returned when the proof shows the opposite of what the answer
// claims: Present is what the proof shows for Key.
type ErrPresenceMismatch struct {
	Key     []byte
	Present bool
}

func (e ErrPresenceMismatch) Error() string {
	if e.Present {
		return fmt.Sprintf("proofs: key %X is present, the answer claims it is absent", e.Key)
	}
	return fmt.Sprintf("proofs: key %X is absent, the answer claims it is present", e.Key)
}

// ErrValueMismatch is returned when the answer gives value Want for Key but the proof
// commits to value Got.
type ErrValueMismatch struct {
	Key, Want, Got []byte
}

func (e ErrValueMismatch) Error() string {
	return fmt.Sprintf("proofs: key %X: the answer has value %X, the proof commits to %X", e.Key, e.Want, e.Got)
}

// ErrRootMismatch is returned when the proof computes root Got instead of the expected
// root Want.
type ErrRootMismatch struct {
	Want, Got []byte
}

func (e ErrRootMismatch) Error() string {
	return fmt.Sprintf("proofs: the proof computes root %X, want %X", e.Got, e.Want)
}

// ErrUnprovable is returned by Prove and ProveRange when a proof would need the leaf
// Key and that leaf cannot be proven: ICS23 refuses leaves with an empty key or an
// empty value, so such a leaf, and the absence of the keys next to it, are unprovable.
type ErrUnprovable struct {
	Key    []byte
	Reason string
}

func (e ErrUnprovable) Error() string {
	return fmt.Sprintf("proofs: leaf %X cannot be proven: %s", e.Key, e.Reason)
}

// ErrInvalidRange is returned for a range whose end is not after its start.
type ErrInvalidRange struct {
	Start, End []byte
}

func (e ErrInvalidRange) Error() string {
	return fmt.Sprintf("proofs: empty range [%X, %X)", e.Start, e.End)
}

// ErrRangeGap is returned when entry Index of a range answer has key Got, while the
// proof shows that the next key of the range is Want (nil: the range has no further key).
type ErrRangeGap struct {
	Index     int
	Want, Got []byte
}

func (e ErrRangeGap) Error() string {
	if e.Want == nil {
		return fmt.Sprintf("proofs: range entry %d has key %X, the proof shows no further key in the range", e.Index, e.Got)
	}
	return fmt.Sprintf("proofs: range entry %d has key %X, the proof shows the next key is %X", e.Index, e.Got, e.Want)
}

// ErrMoreMismatch is returned when a range answer claims More but the proof shows
// Proven. Next is the key the proof shows after the last entry (nil: none in range).
type ErrMoreMismatch struct {
	More, Proven bool
	Next         []byte
}

func (e ErrMoreMismatch) Error() string {
	return fmt.Sprintf("proofs: the answer claims more=%t, the proof shows more=%t (next key %X)", e.More, e.Proven, e.Next)
}

// ErrDecodeEntries is returned by DecodeEntries for bytes that are not the encoding of
// a range answer. Offset is where decoding stopped.
type ErrDecodeEntries struct {
	Offset int
	Reason string
}

func (e ErrDecodeEntries) Error() string {
	return fmt.Sprintf("proofs: decoding range entries at byte %d: %s", e.Offset, e.Reason)
}

// ErrQueryFailed is returned for an abci_query answer with a non-zero code.
type ErrQueryFailed struct {
	Code      uint32
	Codespace string
	Log       string
}

func (e ErrQueryFailed) Error() string {
	return fmt.Sprintf("proofs: query failed with code %d (%s): %s", e.Code, e.Codespace, e.Log)
}

// ErrInvalidHeight is returned for a state height that cannot have a header after it.
type ErrInvalidHeight struct {
	Height int64
}

func (e ErrInvalidHeight) Error() string {
	return fmt.Sprintf("proofs: invalid state height %d", e.Height)
}

// ErrHeaderUnavailable is returned when the commit of header Height could not be
// fetched before the wait ran out; Err is the last error of the client.
type ErrHeaderUnavailable struct {
	Height int64
	Err    error
}

func (e ErrHeaderUnavailable) Error() string {
	return fmt.Sprintf("proofs: header %d unavailable: %v", e.Height, e.Err)
}

func (e ErrHeaderUnavailable) Unwrap() error { return e.Err }

// ErrInvalidHeader is returned when the signed header of height Height is
// incomplete or fails CometBFT's basic validation.
type ErrInvalidHeader struct {
	Height int64
	Err    error
}

func (e ErrInvalidHeader) Error() string {
	return fmt.Sprintf("proofs: invalid signed header %d: %v", e.Height, e.Err)
}

func (e ErrInvalidHeader) Unwrap() error { return e.Err }

// ErrHeightMismatch is returned when the client returns header Got for height Want.
type ErrHeightMismatch struct {
	Want, Got int64
}

func (e ErrHeightMismatch) Error() string {
	return fmt.Sprintf("proofs: asked for header %d, got header %d", e.Want, e.Got)
}

// ErrChainIDMismatch is returned when a header belongs to chain Got instead of Want.
type ErrChainIDMismatch struct {
	Want, Got string
}

func (e ErrChainIDMismatch) Error() string {
	return fmt.Sprintf("proofs: header is for chain %q, want %q", e.Got, e.Want)
}

// ErrCommitMismatch is returned when the commit served with header Height signs
// another block than that header.
type ErrCommitMismatch struct {
	Height                 int64
	HeaderHash, CommitHash []byte
}

func (e ErrCommitMismatch) Error() string {
	return fmt.Sprintf("proofs: commit %d signs block %X, the header is block %X", e.Height, e.CommitHash, e.HeaderHash)
}

// ErrInvalidValidators is returned when the validator set for header Height cannot be
// fetched or is not a valid set.
type ErrInvalidValidators struct {
	Height int64
	Err    error
}

func (e ErrInvalidValidators) Error() string {
	return fmt.Sprintf("proofs: validators of height %d: %v", e.Height, e.Err)
}

func (e ErrInvalidValidators) Unwrap() error { return e.Err }

// ErrValidatorsHashMismatch is returned when header Height names validator set hash
// Want but the validator set at hand hashes to Got.
type ErrValidatorsHashMismatch struct {
	Height    int64
	Want, Got []byte
}

func (e ErrValidatorsHashMismatch) Error() string {
	return fmt.Sprintf("proofs: header %d names validators %X, the validator set hashes to %X", e.Height, e.Want, e.Got)
}

// ErrCommitNotSigned is returned when the commit of header Height is not signed by more
// than 2/3 of the voting power. Err is CometBFT's reason (for instance a
// types.ErrNotEnoughVotingPowerSigned, reachable with errors.As).
type ErrCommitNotSigned struct {
	Height int64
	Err    error
}

func (e ErrCommitNotSigned) Error() string {
	return fmt.Sprintf("proofs: commit %d not signed by +2/3 of the validators: %v", e.Height, e.Err)
}

func (e ErrCommitNotSigned) Unwrap() error { return e.Err }

// ErrAppHashMismatch is returned when a proof of the state after block Height computes
// root Got while the signed header Height+1 carries app hash Want.
type ErrAppHashMismatch struct {
	Height    int64
	Want, Got []byte
}

func (e ErrAppHashMismatch) Error() string {
	return fmt.Sprintf("proofs: the proof of the state after block %d computes %X, header %d has app hash %X",
		e.Height, e.Got, e.Height+1, e.Want)
}
