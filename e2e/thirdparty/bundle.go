package thirdparty

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	cmtjson "github.com/cometbft/cometbft/libs/json"
	"github.com/cometbft/cometbft/libs/math"
	"github.com/cometbft/cometbft/light"
	cmttypes "github.com/cometbft/cometbft/types"
)

// Reading the web view's JSON API (docs/API.md, docs/openapi.json) and checking the
// proof bundles its answers carry, as docs/PROOFS.md's "Proof bundles (the web view)"
// says: a bundle is the query's path and data, the node's abci_query answer with its
// proof, the signed header after the answer's height and, when another set than the
// genesis one signed it, the trace of light blocks from the chain's first block.

// Bundle is a proof bundle, in CometBFT's JSON encoding.
type Bundle struct {
	ChainID      string                  `json:"chain_id"`
	Path         string                  `json:"path"`
	Data         []byte                  `json:"data"`
	Response     abcitypes.ResponseQuery `json:"response"`
	SignedHeader *cmttypes.SignedHeader  `json:"signed_header"`
	Trace        []*cmttypes.LightBlock  `json:"trace,omitempty"`
}

// Proven is what a checked bundle proves: the query, the height of the state it is
// about, and the answer's value (a single key's value, or a range's entries, or a
// document answer's JSON).
type Proven struct {
	Path    string
	Data    []byte
	Height  int64
	Value   []byte
	Entries []KV
}

// APIProof is an answer's proof box as docs/openapi.json describes it.
type APIProof struct {
	Figures map[string]string `json:"figures"`
	Bundles []json.RawMessage `json:"bundles"`
}

// GetProof reads url, an API path answering a proof box, and returns the box.
func GetProof(url string) (APIProof, error) {
	res, err := http.Get(url)
	if err != nil {
		return APIProof{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return APIProof{}, err
	}
	if res.StatusCode != http.StatusOK {
		return APIProof{}, fmt.Errorf("GET %s: %d %s", url, res.StatusCode, raw)
	}
	var answer struct {
		Proof *APIProof `json:"proof"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return APIProof{}, err
	}
	if answer.Proof == nil || len(answer.Proof.Bundles) == 0 {
		return APIProof{}, fmt.Errorf("GET %s: no proof bundles", url)
	}
	return *answer.Proof, nil
}

// CheckBundle checks a bundle of chain chainID against genesis, the chain's genesis
// validator set, whose first block is initialHeight, at the clock now, and returns
// what it proves.
func CheckBundle(raw []byte, chainID string, genesis *cmttypes.ValidatorSet, initialHeight int64, now time.Time) (Proven, error) {
	var b Bundle
	if err := cmtjson.Unmarshal(raw, &b); err != nil {
		return Proven{}, err
	}
	sh := b.SignedHeader
	switch {
	case b.ChainID != chainID:
		return Proven{}, fmt.Errorf("a bundle of chain %q", b.ChainID)
	case sh == nil || sh.Header == nil || sh.Commit == nil:
		return Proven{}, errors.New("no signed header")
	case sh.Height != b.Response.Height+1:
		return Proven{}, fmt.Errorf("header %d for an answer at %d", sh.Height, b.Response.Height)
	}
	if err := sh.ValidateBasic(chainID); err != nil {
		return Proven{}, err
	}
	vals, err := signers(b, chainID, genesis, initialHeight, now)
	if err != nil {
		return Proven{}, err
	}
	if err := vals.VerifyCommitLight(chainID, sh.Commit.BlockID, sh.Height, sh.Commit); err != nil {
		return Proven{}, fmt.Errorf("the header's commit: %w", err)
	}
	p := Proven{Path: b.Path, Data: b.Data, Height: b.Response.Height, Value: b.Response.Value}
	root := sh.AppHash
	var ops = b.Response.ProofOps
	if ops == nil {
		return Proven{}, errors.New("the answer carries no proof")
	}
	switch b.Path {
	case "/documents":
		_, err = VerifyDocuments(root, b.Data, b.Response.Value, ops.Ops)
		return p, err
	case "/count":
		_, err = VerifyCount(root, b.Data, b.Response.Value, false, ops.Ops)
		return p, err
	}
	target, err := TargetOf(b.Path, b.Data)
	if err != nil {
		return Proven{}, err
	}
	if target.Key != nil {
		return p, VerifySingle(root, target.Key, b.Response.Value, ops.Ops)
	}
	p.Entries, err = VerifyRange(root, target.Start, target.End, b.Response.Value, b.Response.Info == "more", ops.Ops)
	return p, err
}

// signers is the validator set that signed b's header, trusted: the genesis set when
// the header names it, else the set of the trace's last light block, which must be the
// header's, reached from the chain's first block by the steps of "Following the
// validator set".
func signers(b Bundle, chainID string, genesis *cmttypes.ValidatorSet, initialHeight int64, now time.Time) (*cmttypes.ValidatorSet, error) {
	if bytes.Equal(b.SignedHeader.ValidatorsHash, genesis.Hash()) {
		return genesis, nil
	}
	if len(b.Trace) == 0 {
		return nil, errors.New("the header names another set than the genesis one, and no trace leads to it")
	}
	first := b.Trace[0]
	if err := first.ValidateBasic(chainID); err != nil {
		return nil, err
	}
	if first.Height != initialHeight || !bytes.Equal(first.ValidatorsHash, genesis.Hash()) {
		return nil, errors.New("the trace does not start at the chain's first block, signed by the genesis set")
	}
	if err := genesis.VerifyCommitLight(chainID, first.Commit.BlockID, first.Height, first.Commit); err != nil {
		return nil, err
	}
	trusted := first
	for _, next := range b.Trace[1:] {
		if err := next.ValidateBasic(chainID); err != nil {
			return nil, err
		}
		if err := light.Verify(trusted.SignedHeader, trusted.ValidatorSet, next.SignedHeader, next.ValidatorSet,
			14*24*time.Hour, now, 10*time.Second, math.Fraction{Numerator: 1, Denominator: 3}); err != nil {
			return nil, fmt.Errorf("the step from %d to %d: %w", trusted.Height, next.Height, err)
		}
		trusted = next
	}
	if trusted.Hash().String() != b.SignedHeader.Hash().String() {
		return nil, errors.New("the trace does not end at the bundle's header")
	}
	return trusted.ValidatorSet, nil
}
