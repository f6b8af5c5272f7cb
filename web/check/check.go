package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtjson "github.com/cometbft/cometbft/libs/json"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/proofs"
)

// Bundle is one proven answer as a page serves it (in CometBFT's JSON): the query
// asked, the node's answer and the signed header after the answer's height; when that
// header names another set than the chain's genesis set, the trace of light blocks
// that leads to it from the chain's first block, which the genesis set signed
// (docs/PROOFS.md, "Following the validator set").
type Bundle struct {
	ChainID      string                 `json:"chain_id"`
	Path         string                 `json:"path"`
	Data         []byte                 `json:"data"`
	Response     abci.ResponseQuery     `json:"response"`
	SignedHeader *cmttypes.SignedHeader `json:"signed_header"`
	Trace        []*cmttypes.LightBlock `json:"trace,omitempty"`
}

// Encode writes b in CometBFT's JSON.
func (b Bundle) Encode() ([]byte, error) { return cmtjson.Marshal(b) }

// DecodeBundle reads a bundle written by Encode.
func DecodeBundle(raw []byte) (Bundle, error) {
	var b Bundle
	err := cmtjson.Unmarshal(raw, &b)
	return b, err
}

// DecodeValidators reads a validator set in CometBFT's JSON.
func DecodeValidators(raw []byte) (*cmttypes.ValidatorSet, error) {
	var vals cmttypes.ValidatorSet
	if err := cmtjson.Unmarshal(raw, &vals); err != nil {
		return nil, err
	}
	if err := vals.ValidateBasic(); err != nil {
		return nil, err
	}
	return &vals, nil
}

// ErrWrongKey: the answer proves another key than the one the query names.
type ErrWrongKey struct{ Want, Got []byte }

func (e ErrWrongKey) Error() string {
	return fmt.Sprintf("the answer is about key %X, the query names %X", e.Got, e.Want)
}

// Check verifies the answer of b against the validator set trusted (the reader's,
// never the bundle's); a document query's (/documents, /count) as checkDocuments and
// checkCount say. Otherwise the key (or the range's start) is the one the query's path
// and data name, the proof leads to a root (for a range, with every key of the range
// accounted for), header Response.Height+1 of chain ChainID carries that root as its
// app hash, and its commit is signed by more than two thirds of trusted. A range's
// Result holds its entries' encoding as its Value, present when it has entries.
func Check(b Bundle, trusted *cmttypes.ValidatorSet) (proofs.Result, error) {
	if trusted == nil {
		return proofs.Result{}, errors.New("no pinned validator set")
	}
	switch b.Path {
	case proofs.PathDocuments:
		return checkDocuments(b, trusted)
	case proofs.PathCount:
		return checkCount(b, trusted)
	}
	target, err := proofs.TargetOf(b.Path, b.Data)
	if err != nil {
		return proofs.Result{}, err
	}
	want := target.Key
	if target.Range() {
		want = target.Start
	}
	if !bytes.Equal(b.Response.Key, want) {
		return proofs.Result{}, ErrWrongKey{Want: want, Got: b.Response.Key}
	}
	// NB: Wait is short: the bundle holds the one header there is, and a Verifier polls
	// for a missing one as long as Wait.
	v := &proofs.Verifier{Client: bundleClient{b.SignedHeader}, ChainID: b.ChainID, Trusted: trusted, Wait: time.Millisecond}
	if !target.Range() {
		return v.VerifyQuery(context.Background(), b.Response)
	}
	r, err := v.VerifyRangeQuery(context.Background(), b.Response, target.Start, target.End)
	if err != nil {
		return proofs.Result{}, err
	}
	return proofs.Result{Height: r.Height, Key: target.Start, Value: b.Response.Value, Present: len(r.Entries) > 0, AppHash: r.AppHash, Time: r.Time}, nil
}

// checkDocuments verifies a /documents answer: every document returned present, every
// document of the ranges it read accounted for, against the signed app hash
// (proofs.VerifyDocumentsQuery). Its Result holds the answer's JSON as its Value,
// present when it returned documents.
func checkDocuments(b Bundle, trusted *cmttypes.ValidatorSet) (proofs.Result, error) {
	v := &proofs.Verifier{Client: bundleClient{b.SignedHeader}, ChainID: b.ChainID, Trusted: trusted, Wait: time.Millisecond}
	r, checked, err := v.VerifyDocumentsQuery(context.Background(), b.Response, b.Data)
	if err != nil {
		return proofs.Result{}, err
	}
	return proofs.Result{Height: checked.Height, Value: b.Response.Value, Present: len(r.Documents) > 0, AppHash: checked.AppHash, Time: checked.Time}, nil
}

// checkCount verifies a /count answer: the count record its query names, present with
// its value or absent (count 0), against the signed app hash (proofs.VerifyCountQuery).
// Its Result holds the answer's JSON as its Value, present when the count is not 0.
func checkCount(b Bundle, trusted *cmttypes.ValidatorSet) (proofs.Result, error) {
	v := &proofs.Verifier{Client: bundleClient{b.SignedHeader}, ChainID: b.ChainID, Trusted: trusted, Wait: time.Millisecond}
	r, checked, err := v.VerifyCountQuery(context.Background(), b.Response, b.Path, b.Data)
	if err != nil {
		return proofs.Result{}, err
	}
	return proofs.Result{Height: checked.Height, Value: b.Response.Value, Present: r.Count > 0, AppHash: checked.AppHash, Time: checked.Time}, nil
}
