package client

import (
	"fmt"

	"github.com/ttld-dev/ttld/protocol"
)

// ErrQuery is returned when the node answers an abci_query with a non-zero code (see
// abci's QueryCode constants): Log is the node's reason.
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

// ErrInconsistentAnswer is returned when an answer decodes to something other than
// what was asked, for instance a range answer of another height than the one it was
// pinned to.
type ErrInconsistentAnswer struct {
	Path   string
	Reason string
}

func (e ErrInconsistentAnswer) Error() string {
	return fmt.Sprintf("client: query %s: %s", e.Path, e.Reason)
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
