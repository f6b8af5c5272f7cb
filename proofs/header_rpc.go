//go:build !js

package proofs

import (
	"context"
	"errors"
	"fmt"
	"time"

	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	cmttypes "github.com/cometbft/cometbft/types"
)

// Client is the part of the CometBFT RPC client the Verifier needs;
// rpc/client/http.HTTP satisfies it. (In a browser build, GOOS=js, a Client serves the
// signed headers a page carries instead: header_js.go.)
type Client interface {
	Commit(ctx context.Context, height *int64) (*coretypes.ResultCommit, error)
	Validators(ctx context.Context, height *int64, page, perPage *int) (*coretypes.ResultValidators, error)
}

// pollInterval is how often a Verifier asks again for a header that does not exist yet.
const pollInterval = 200 * time.Millisecond

// validatorsPerPage is the page size asked of the validators RPC (CometBFT's maximum).
const validatorsPerPage = 100

// signedHeader fetches the commit of height, polling while it does not exist yet.
func (v *Verifier) signedHeader(ctx context.Context, height int64) (cmttypes.SignedHeader, error) {
	wait := v.Wait
	if wait <= 0 {
		wait = DefaultWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		res, err := v.Client.Commit(ctx, &height)
		if err == nil && res != nil {
			return res.SignedHeader, nil
		}
		if err == nil {
			err = errors.New("empty commit result")
		}
		select {
		case <-ctx.Done():
			return cmttypes.SignedHeader{}, ErrHeaderUnavailable{Height: height, Err: err}
		case <-time.After(pollInterval):
		}
	}
}

// validators returns Trusted, or the validator set of height from the client (all
// pages), checked to be a well-formed set.
func (v *Verifier) validators(ctx context.Context, height int64) (*cmttypes.ValidatorSet, error) {
	if v.Trusted != nil {
		return v.Trusted, nil
	}
	return FetchValidators(ctx, v.Client, height)
}

// FetchValidators returns the validator set of height from c (all pages), checked to be
// a well-formed set; nothing says it is the chain's (a light client's step does).
func FetchValidators(ctx context.Context, c Client, height int64) (*cmttypes.ValidatorSet, error) {
	var all []*cmttypes.Validator
	perPage := validatorsPerPage
	for page := 1; ; page++ {
		res, err := c.Validators(ctx, &height, &page, &perPage)
		if err != nil {
			return nil, ErrInvalidValidators{Height: height, Err: err}
		}
		if res == nil || res.BlockHeight != height {
			return nil, ErrInvalidValidators{Height: height, Err: errors.New("answer for another height")}
		}
		all = append(all, res.Validators...)
		if len(all) >= res.Total {
			break
		}
		if len(res.Validators) == 0 {
			return nil, ErrInvalidValidators{Height: height, Err: fmt.Errorf("page %d is empty with %d of %d validators", page, len(all), res.Total)}
		}
	}
	if err := checkValidators(all); err != nil {
		return nil, ErrInvalidValidators{Height: height, Err: err}
	}
	vals, err := cmttypes.ValidatorSetFromExistingValidators(all)
	if err != nil {
		return nil, ErrInvalidValidators{Height: height, Err: err}
	}
	return vals, nil
}

// FetchLightBlock returns the light block of height from c: its signed header and its
// set, unchecked (Step and VerifyTrace check them).
func FetchLightBlock(ctx context.Context, c Client, height int64) (*cmttypes.LightBlock, error) {
	res, err := c.Commit(ctx, &height)
	if err != nil {
		return nil, ErrHeaderUnavailable{Height: height, Err: err}
	}
	if res == nil || res.Header == nil || res.Commit == nil {
		return nil, ErrHeaderUnavailable{Height: height, Err: errors.New("empty commit result")}
	}
	sh := res.SignedHeader
	vals, err := FetchValidators(ctx, c, height)
	if err != nil {
		return nil, err
	}
	return &cmttypes.LightBlock{SignedHeader: &sh, ValidatorSet: vals}, nil
}
