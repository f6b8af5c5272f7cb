package thirdparty

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	cmttypes "github.com/cometbft/cometbft/types"
)

// Committer is the part of a CometBFT RPC client the header check needs.
type Committer interface {
	Commit(ctx context.Context, height *int64) (*coretypes.ResultCommit, error)
}

// SignedAppHash returns the app hash and time of header h+1, which prove the state
// after block h, once that header is shown to be of chainID and signed by more than
// 2/3 of the voting power of vals (a validator set the caller trusts, for instance
// the genesis one), waiting up to wait for the header to exist.
func SignedAppHash(ctx context.Context, rpc Committer, chainID string, vals *cmttypes.ValidatorSet, h int64, wait time.Duration) ([]byte, time.Time, error) {
	height := h + 1
	deadline := time.Now().Add(wait)
	var res *coretypes.ResultCommit
	for {
		var err error
		if res, err = rpc.Commit(ctx, &height); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, time.Time{}, fmt.Errorf("header %d: %w", height, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	sh := res.SignedHeader
	switch {
	case sh.Header == nil || sh.Commit == nil:
		return nil, time.Time{}, errors.New("header or commit missing")
	case sh.Height != height || sh.Commit.Height != height:
		return nil, time.Time{}, fmt.Errorf("asked for header %d, got %d", height, sh.Height)
	case sh.ChainID != chainID:
		return nil, time.Time{}, fmt.Errorf("header of chain %q", sh.ChainID)
	case !bytes.Equal(sh.Header.Hash(), sh.Commit.BlockID.Hash):
		return nil, time.Time{}, errors.New("the commit signs another block")
	case !bytes.Equal(vals.Hash(), sh.ValidatorsHash):
		return nil, time.Time{}, errors.New("the header names another validator set")
	}
	if err := vals.VerifyCommitLight(chainID, sh.Commit.BlockID, height, sh.Commit); err != nil {
		return nil, time.Time{}, err
	}
	return sh.AppHash, sh.Time, nil
}
