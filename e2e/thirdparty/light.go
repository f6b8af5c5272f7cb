package thirdparty

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	dbm "github.com/cometbft/cometbft-db"
	"github.com/cometbft/cometbft/libs/math"
	"github.com/cometbft/cometbft/light"
	"github.com/cometbft/cometbft/light/provider"
	lighthttp "github.com/cometbft/cometbft/light/provider/http"
	lightdb "github.com/cometbft/cometbft/light/store/db"
	cmttypes "github.com/cometbft/cometbft/types"
)

// Following the validator set, as docs/PROOFS.md's "Following the validator set" says:
// CometBFT's light client, anchored at the chain's first block once the genesis set is
// shown to have signed it, skipping with trust level 1/3, a trusting period of 14
// days, 10 s of clock drift.

// LightClient returns CometBFT's light client of chain chainID over the node at remote
// (and witnesses; none: the node itself), trusting the block at initialHeight when its
// header names genesis and more than 2/3 of genesis signed its commit.
func LightClient(ctx context.Context, chainID, remote string, witnesses []string, genesis *cmttypes.ValidatorSet, initialHeight int64) (*light.Client, error) {
	primary, err := lighthttp.New(chainID, remote)
	if err != nil {
		return nil, err
	}
	var ws []provider.Provider
	for _, w := range witnesses {
		p, err := lighthttp.New(chainID, w)
		if err != nil {
			return nil, err
		}
		ws = append(ws, p)
	}
	if len(ws) == 0 {
		ws = []provider.Provider{primary}
	}
	first, err := primary.LightBlock(ctx, initialHeight)
	if err != nil {
		return nil, err
	}
	if err := first.ValidateBasic(chainID); err != nil {
		return nil, err
	}
	if !bytes.Equal(first.ValidatorsHash, genesis.Hash()) {
		return nil, errors.New("the first block names another set than the genesis one")
	}
	if err := genesis.VerifyCommitLight(chainID, first.Commit.BlockID, initialHeight, first.Commit); err != nil {
		return nil, fmt.Errorf("the first block is not signed by the genesis set: %w", err)
	}
	trust := light.TrustOptions{Period: 14 * 24 * time.Hour, Height: initialHeight, Hash: first.Hash()}
	return light.NewClient(ctx, chainID, trust, primary, ws, lightdb.New(dbm.NewMemDB(), chainID),
		light.SkippingVerification(math.Fraction{Numerator: 1, Denominator: 3}), light.MaxClockDrift(10*time.Second))
}

// FollowedAppHash returns the app hash and time of header h+1, which prove the state
// after block h, once lc has verified that header, waiting up to wait for it to exist.
func FollowedAppHash(ctx context.Context, rpc Committer, lc *light.Client, h int64, wait time.Duration) ([]byte, time.Time, error) {
	height := h + 1
	deadline := time.Now().Add(wait)
	for {
		if _, err := rpc.Commit(ctx, &height); err == nil {
			break
		} else if time.Now().After(deadline) {
			return nil, time.Time{}, fmt.Errorf("header %d: %w", height, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	lb, err := lc.VerifyLightBlockAtHeight(ctx, height, time.Now())
	if err != nil {
		return nil, time.Time{}, err
	}
	return lb.AppHash, lb.Time, nil
}
