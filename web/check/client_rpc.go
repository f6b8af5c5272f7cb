//go:build !js

package check

import (
	"context"
	"errors"

	coretypes "github.com/cometbft/cometbft/rpc/core/types"
)

func (c bundleClient) Commit(_ context.Context, height *int64) (*coretypes.ResultCommit, error) {
	if height == nil {
		return nil, errors.New("a bundle answers for one height")
	}
	sh, err := c.header(*height)
	if err != nil {
		return nil, err
	}
	return &coretypes.ResultCommit{SignedHeader: *sh, CanonicalCommit: true}, nil
}

func (bundleClient) Validators(context.Context, *int64, *int, *int) (*coretypes.ResultValidators, error) {
	return nil, errors.New("a bundle is checked against the pinned validator set only")
}
