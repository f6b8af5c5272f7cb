package proofs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"
	cmttypes "github.com/cometbft/cometbft/types"
)

// DefaultWait is how long a Verifier waits for a header to exist when Wait is zero.
const DefaultWait = 10 * time.Second

// DefaultMaxAge is the freshness bound of a verified read of the latest state: the
// signed header after the answer's state may be at most this much older than the
// reader's clock (docs/PROOFS.md, "Height and freshness"). The client's default and
// the web view's, in the browser: well above the block interval (about a second), well
// below what an operator would call stale. A chain that does not make empty blocks can
// leave the latest header older than this while idle: raise or disable the bound.
const DefaultMaxAge = time.Minute

// Verifier checks answers against headers signed by the chain's validators.
type Verifier struct {
	Client Client
	// ChainID is required: every header's chain id must equal it.
	ChainID string
	// Headers, when set, verify the headers (a light client following the chain's
	// validator sets from a header it trusts: docs/PROOFS.md, "Following the validator
	// set"); Trusted is then not used.
	Headers Headers
	// Trusted is the validator set every checked header must name, for instance the
	// one of a browser's pin. When nil (and Headers too), the validator set of each
	// header is fetched (all pages) and checked against the header's ValidatorsHash,
	// which proves only that the node's answers agree with one another.
	Trusted *cmttypes.ValidatorSet
	// Wait is how long AppHashAfter polls for a header that does not exist yet;
	// zero means DefaultWait.
	Wait time.Duration
}

// Result is a checked single-key answer: at state Height (after block Height), Key is
// present with Value (Present) or absent; AppHash is the signed app hash it was
// checked against, from header Height+1, and Time that header's time.
type Result struct {
	Height  int64
	Key     []byte
	Value   []byte
	Present bool
	AppHash []byte
	Time    time.Time
}

// RangeResult is a checked range answer: at state Height, Entries are every key of the
// range in order, complete up to and including the last one; More tells whether the
// range holds keys after it (continue at NextStart(Entries)). AppHash and Time are
// those of the signed header Height+1.
type RangeResult struct {
	Height  int64
	Entries []KV
	More    bool
	AppHash []byte
	Time    time.Time
}

// AppHashAfter returns the app hash of the state after block h: the AppHash of header
// h+1, once the header is shown to be of chain ChainID, its commit to sign that very
// header, the validator set to hash to the header's ValidatorsHash, and more than 2/3
// of that set's voting power to have signed the commit. It waits up to Wait for header
// h+1 to exist.
func (v *Verifier) AppHashAfter(ctx context.Context, h int64) ([]byte, error) {
	header, err := v.headerAfter(ctx, h)
	if err != nil {
		return nil, err
	}
	return header.AppHash, nil
}

// headerAfter returns header h+1 once checked as AppHashAfter describes.
func (v *Verifier) headerAfter(ctx context.Context, h int64) (*cmttypes.Header, error) {
	if h < 0 {
		return nil, ErrInvalidHeight{Height: h}
	}
	height := h + 1
	sh, err := v.signedHeader(ctx, height)
	if err != nil {
		return nil, err
	}
	if v.Headers != nil {
		verified, err := v.Headers.VerifiedHeader(ctx, height)
		if err != nil {
			return nil, ErrInvalidHeader{Height: height, Err: err}
		}
		sh = *verified
	}
	if sh.Header == nil || sh.Commit == nil {
		return nil, ErrInvalidHeader{Height: height, Err: errors.New("header or commit missing")}
	}
	if sh.Height != height {
		return nil, ErrHeightMismatch{Want: height, Got: sh.Height}
	}
	if sh.ChainID != v.ChainID {
		return nil, ErrChainIDMismatch{Want: v.ChainID, Got: sh.ChainID}
	}
	if hh := sh.Header.Hash(); sh.Commit.Height != height || !bytes.Equal(hh, sh.Commit.BlockID.Hash) {
		return nil, ErrCommitMismatch{Height: height, HeaderHash: hh, CommitHash: sh.Commit.BlockID.Hash}
	}
	if err := sh.ValidateBasic(v.ChainID); err != nil {
		return nil, ErrInvalidHeader{Height: height, Err: err}
	}
	if v.Headers != nil {
		return sh.Header, nil
	}
	vals, err := v.validators(ctx, height)
	if err != nil {
		return nil, err
	}
	if got := vals.Hash(); !bytes.Equal(got, sh.ValidatorsHash) {
		return nil, ErrValidatorsHashMismatch{Height: height, Want: sh.ValidatorsHash, Got: got}
	}
	if err := vals.VerifyCommitLight(v.ChainID, sh.Commit.BlockID, height, sh.Commit); err != nil {
		return nil, ErrCommitNotSigned{Height: height, Err: err}
	}
	return sh.Header, nil
}

// VerifyQuery checks a single-key abci_query answer (prove=true) end to end: its proof
// against the signed app hash of the state resp.Height. An empty resp.Value with a
// non-existence proof is an absence; an existence proof must carry resp.Value.
func (v *Verifier) VerifyQuery(ctx context.Context, resp abci.ResponseQuery) (Result, error) {
	if resp.Code != 0 {
		return Result{}, ErrQueryFailed{Code: resp.Code, Codespace: resp.Codespace, Log: resp.Log}
	}
	op, err := singleOp(resp.Key, resp.ProofOps)
	if err != nil {
		return Result{}, err
	}
	p, err := op.check(0)
	if err != nil {
		return Result{}, err
	}
	switch {
	case p.present && !bytes.Equal(p.value, resp.Value):
		return Result{}, ErrValueMismatch{Key: resp.Key, Want: resp.Value, Got: p.value}
	case !p.present && len(resp.Value) != 0:
		return Result{}, ErrPresenceMismatch{Key: resp.Key, Present: false}
	}
	header, err := v.checkedHeader(ctx, resp.Height, p.root)
	if err != nil {
		return Result{}, err
	}
	res := Result{Height: resp.Height, Key: resp.Key, Present: p.present, AppHash: header.AppHash, Time: header.Time}
	if p.present {
		res.Value = nonNil(resp.Value)
	}
	return res, nil
}

// VerifyRangeQuery checks a range abci_query answer end to end: resp.Value is
// EncodeEntries of the entries, resp.ProofOps the proof of ProveRange for the range
// [start, end) the caller asked for, resp.Height the state height. The result's More
// is what the proof shows; resp.Info must say the same (InfoMore exactly when the
// range continues after the last entry: docs/PROOFS.md, "Range answers", step 4), or
// the answer is refused with ErrMoreMismatch, as the page demands of every client.
func (v *Verifier) VerifyRangeQuery(ctx context.Context, resp abci.ResponseQuery, start, end []byte) (RangeResult, error) {
	if resp.Code != 0 {
		return RangeResult{}, ErrQueryFailed{Code: resp.Code, Codespace: resp.Codespace, Log: resp.Log}
	}
	entries, err := DecodeEntries(resp.Value)
	if err != nil {
		return RangeResult{}, err
	}
	r, err := rangeRoot(start, end, entries, resp.ProofOps)
	if err != nil {
		return RangeResult{}, err
	}
	if said := resp.Info == InfoMore; said != r.more {
		return RangeResult{}, ErrMoreMismatch{More: said, Proven: r.more, Next: r.next}
	}
	header, err := v.checkedHeader(ctx, resp.Height, r.root)
	if err != nil {
		return RangeResult{}, err
	}
	return RangeResult{Height: resp.Height, Entries: entries, More: r.more, AppHash: header.AppHash, Time: header.Time}, nil
}

// checkedHeader returns the signed header after state h once its app hash equals
// root, the root a proof of that state computes.
func (v *Verifier) checkedHeader(ctx context.Context, h int64, root []byte) (*cmttypes.Header, error) {
	header, err := v.headerAfter(ctx, h)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(header.AppHash, root) {
		return nil, ErrAppHashMismatch{Height: h, Want: header.AppHash, Got: root}
	}
	return header, nil
}

// checkValidators rejects what would make CometBFT's validator set constructors panic:
// an invalid validator, a repeated address, a total voting power over the maximum.
func checkValidators(vals []*cmttypes.Validator) error {
	seen := make(map[string]bool, len(vals))
	var total int64
	for i, val := range vals {
		if val == nil {
			return fmt.Errorf("validator %d is missing", i)
		}
		if err := val.ValidateBasic(); err != nil {
			return fmt.Errorf("validator %d: %w", i, err)
		}
		if seen[string(val.Address)] {
			return fmt.Errorf("validator %X appears twice", val.Address)
		}
		seen[string(val.Address)] = true
		if val.VotingPower > cmttypes.MaxTotalVotingPower-total {
			return fmt.Errorf("total voting power exceeds %d", cmttypes.MaxTotalVotingPower)
		}
		total += val.VotingPower
	}
	return nil
}
