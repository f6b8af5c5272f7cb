//go:build js

package proofs

import (
	"context"
	"errors"

	cmttypes "github.com/cometbft/cometbft/types"
)

// Client is, in a browser build (GOOS=js), what serves a Verifier the signed headers
// a page carries: the RPC client's packages do not build for the browser. Trusted must
// be set: there is no validator set to fetch.
type Client interface {
	SignedHeader(ctx context.Context, height int64) (*cmttypes.SignedHeader, error)
}

// signedHeader is the client's signed header of height.
func (v *Verifier) signedHeader(ctx context.Context, height int64) (cmttypes.SignedHeader, error) {
	sh, err := v.Client.SignedHeader(ctx, height)
	if err != nil {
		return cmttypes.SignedHeader{}, ErrHeaderUnavailable{Height: height, Err: err}
	}
	return *sh, nil
}

// validators returns Trusted: a browser checks headers against the set it pinned.
func (v *Verifier) validators(context.Context, int64) (*cmttypes.ValidatorSet, error) {
	if v.Trusted == nil {
		return nil, ErrInvalidValidators{Err: errors.New("no pinned validator set")}
	}
	return v.Trusted, nil
}
