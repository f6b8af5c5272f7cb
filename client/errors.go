package client

import (
	"fmt"
	"time"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// ErrQuery is returned when the node answers an abci_query with a non-zero code (see
// proofs' QueryCode constants): Log is the node's reason.
type ErrQuery struct {
	Path   string
	Code   uint32
	Log    string
	Height int64
}

func (e ErrQuery) Error() string {
	return fmt.Sprintf("client: query %s at height %d failed with code %d: %s", e.Path, e.Height, e.Code, e.Log)
}

// ErrWrongKey is returned when a verified single-key answer is about another key than
// the one the query path names: its proof, however valid, says nothing about Want.
type ErrWrongKey struct {
	Path      string
	Want, Got []byte
}

func (e ErrWrongKey) Error() string {
	return fmt.Sprintf("client: query %s answered for key %X, want %X", e.Path, e.Got, e.Want)
}

// ErrWrongHeight is returned when an answer is about another state than the one asked
// for: the query asked for height Want, the answer is at height Got. Its proof, however
// valid, is about the state Got (a proxy can rewrite the request's height and forward
// an honest answer for an older state).
type ErrWrongHeight struct {
	Path      string
	Want, Got int64
}

func (e ErrWrongHeight) Error() string {
	return fmt.Sprintf("client: query %s asked for height %d, answered at height %d", e.Path, e.Want, e.Got)
}

// ErrStale is returned when a verified answer for the latest state is older than
// Options.MaxAge: the signed header after its state (header Height+1) has time
// HeaderTime, Age before the client's clock. A node, or anyone between it and the
// client, can serve an old state as the latest one; only its age gives it away.
type ErrStale struct {
	Path       string
	Height     int64
	HeaderTime time.Time
	Age        time.Duration
	MaxAge     time.Duration
}

func (e ErrStale) Error() string {
	return fmt.Sprintf("client: query %s answered with the state at height %d, whose header %d is %s old (at %s), over the %s allowed",
		e.Path, e.Height, e.Height+1, e.Age.Round(time.Millisecond), e.HeaderTime.UTC().Format(time.RFC3339), e.MaxAge)
}

// ErrInconsistentAnswer is returned when an answer decodes to something other than
// what was asked, for instance a range answer cut short where it cannot be.
type ErrInconsistentAnswer struct {
	Path   string
	Reason string
}

func (e ErrInconsistentAnswer) Error() string {
	return fmt.Sprintf("client: query %s: %s", e.Path, e.Reason)
}

// ErrUnknownInfo is returned for an answer whose info is neither empty nor
// proofs.InfoMore, the two values docs/PROOFS.md gives it ("Asking").
type ErrUnknownInfo struct {
	Path string
	Info string
}

func (e ErrUnknownInfo) Error() string {
	return fmt.Sprintf("client: query %s answered with info %q, neither empty nor %q", e.Path, e.Info, proofs.InfoMore)
}

// ErrCorruptValue is returned when a value in an answer does not decode.
type ErrCorruptValue struct {
	Key []byte
	Err error
}

func (e ErrCorruptValue) Error() string {
	return fmt.Sprintf("client: value at key %X: %v", e.Key, e.Err)
}

func (e ErrCorruptValue) Unwrap() error { return e.Err }

// ErrUnknownTransition is returned for a transition type this client cannot fill a
// nonce into.
type ErrUnknownTransition struct {
	Type protocol.TransitionType
}

func (e ErrUnknownTransition) Error() string {
	return fmt.Sprintf("client: cannot sign transition %s", e.Type)
}

// ErrTxInCache is returned by Broadcast when the node's mempool cache already holds
// this exact transaction (the same bytes, so the same hash): it was accepted before
// and is waiting in the mempool, or a block has already included it. Sending it again
// changes nothing; a new transaction needs a new nonce.
type ErrTxInCache struct{ Hash []byte }

func (e ErrTxInCache) Error() string {
	return fmt.Sprintf("transaction %X is already in the node's mempool cache: it is pending and will be included, or has been already; sending it again does nothing", e.Hash)
}

// ErrCommitTimeout is returned by Broadcast with commit when the wait for the block
// ended before a block included the transaction. The transaction may have passed
// CheckTx and may still commit: look it up by Hash before sending it again.
type ErrCommitTimeout struct {
	Hash []byte
	Err  error
}

func (e ErrCommitTimeout) Error() string {
	return fmt.Sprintf("transaction %X was not included in a block before the wait ended; it may still commit: look it up by its hash before sending it again (%v)", e.Hash, e.Err)
}

func (e ErrCommitTimeout) Unwrap() error { return e.Err }

// ErrFutureHeight is returned by a read at a height the node has not reached. It
// wraps the node's answer (an ErrQuery with proofs.QueryCodeVersionMissing).
type ErrFutureHeight struct {
	Height, Latest int64
	Query          ErrQuery
}

func (e ErrFutureHeight) Unwrap() error { return e.Query }

func (e ErrFutureHeight) Error() string {
	return fmt.Sprintf("height %d is in the future; the latest is %d", e.Height, e.Latest)
}
