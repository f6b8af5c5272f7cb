package proofs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	cmtmath "github.com/cometbft/cometbft/libs/math"
	cmttypes "github.com/cometbft/cometbft/types"
)

// Following the validator set (docs/PROOFS.md, "Following the validator set"): from
// protocol version 16 on the set changes by the chain's own rules, so a header is
// trusted not because a fixed set signed it but because a chain of headers leads to it
// from a set the reader trusts, each step one CometBFT's light client takes: to the
// next height, whose set the trusted header named as its next; or further, when more
// than TrustLevel of the trusted set's power signed the new header, whose own set
// signed it with more than two thirds.

// TrustLevel is the share of a trusted set's power that must sign a header further on
// for its own set to be trusted: CometBFT's light client's default, one third. The
// chain never moves a third of its power or more in one block (docs/STATE.md,
// "Validators"), so a step over one set change always holds.
var TrustLevel = cmtmath.Fraction{Numerator: 1, Denominator: 3}

// DefaultTrustingPeriod is how old a trusted header a client verifies from may be: a
// set trusted longer ago may since have left and could sign a fork (CometBFT's light
// client's trusting period). ttld's client and command line use it unless told
// otherwise; a header older than it must be trusted anew (a height and hash from a
// source the reader trusts).
const DefaultTrustingPeriod = 14 * 24 * time.Hour

// MaxClockDrift is how far in the future of the reader's clock a header's time may be.
const MaxClockDrift = 10 * time.Second

// noTrustingPeriod stands for no bound on how old a trusted header may be.
const noTrustingPeriod = time.Duration(1<<63 - 1)

// Headers give a Verifier signed headers it need not check against a set itself: a
// light client verified them from the headers it trusts (client.Options.Light).
type Headers interface {
	// VerifiedHeader returns the signed header of height once verified; a height that
	// does not exist yet is an error.
	VerifiedHeader(ctx context.Context, height int64) (*cmttypes.SignedHeader, error)
}

// ErrTrace: step Step of a trace (its light block at Height) does not follow from the
// one before it, or, for step 0, is not of the chain or not signed by the set the
// reader trusts.
type ErrTrace struct {
	Step   int
	Height int64
	Err    error
}

func (e ErrTrace) Error() string {
	if e.Step == 0 {
		return fmt.Sprintf("proofs: the first header of the trace (height %d) is not the trusted set's: %v", e.Height, e.Err)
	}
	return fmt.Sprintf("proofs: header %d (step %d of the trace) does not follow from the one before: %v", e.Height, e.Step, e.Err)
}

func (e ErrTrace) Unwrap() error { return e.Err }

// ErrCannotSkip: too little of the trusted set's power signed a header further on for
// its set to be trusted; a trace needs a header between the two.
type ErrCannotSkip struct{ Err error }

func (e ErrCannotSkip) Error() string {
	return fmt.Sprintf("less than a third of the trusted set's power signed the header: %v", e.Err)
}

func (e ErrCannotSkip) Unwrap() error { return e.Err }

// Step checks that light block next follows from trusted by the rules of CometBFT's
// light client (light.Verify, which this package cannot import: its store does not
// build for the browser; TestStepIsLightVerify holds the two to the same verdicts):
// trusted is not older than trustingPeriod at now; next is a valid header of the same
// chain, higher, later, not past now by more than MaxClockDrift, and of the set it
// carries; adjacent, its set is the one trusted named next; further on, more than
// TrustLevel of trusted's set signed it (ErrCannotSkip otherwise); and more than two
// thirds of its own set signed it.
func Step(trusted, next *cmttypes.LightBlock, now time.Time, trustingPeriod time.Duration) error {
	if !trusted.Time.Add(trustingPeriod).After(now) {
		return fmt.Errorf("the trusted header %d expired at %s (trusting period %s)", trusted.Height, trusted.Time.Add(trustingPeriod), trustingPeriod)
	}
	chainID := trusted.ChainID
	if err := next.SignedHeader.ValidateBasic(chainID); err != nil {
		return err
	}
	switch {
	case next.Height <= trusted.Height:
		return fmt.Errorf("height %d does not follow %d", next.Height, trusted.Height)
	case !next.Time.After(trusted.Time):
		return fmt.Errorf("time %s does not follow %s", next.Time, trusted.Time)
	case !next.Time.Before(now.Add(MaxClockDrift)):
		return fmt.Errorf("time %s is in the future (now %s, drift allowed %s)", next.Time, now, MaxClockDrift)
	case !bytes.Equal(next.ValidatorsHash, next.ValidatorSet.Hash()):
		return fmt.Errorf("it names set %X and carries set %X", next.ValidatorsHash, next.ValidatorSet.Hash())
	}
	if next.Height == trusted.Height+1 {
		if !bytes.Equal(next.ValidatorsHash, trusted.NextValidatorsHash) {
			return fmt.Errorf("it names set %X, the header before named %X next", next.ValidatorsHash, trusted.NextValidatorsHash)
		}
	} else if err := trusted.ValidatorSet.VerifyCommitLightTrusting(chainID, next.Commit, TrustLevel); err != nil {
		var few cmttypes.ErrNotEnoughVotingPowerSigned
		if errors.As(err, &few) {
			return ErrCannotSkip{Err: err}
		}
		return err
	}
	return next.ValidatorSet.VerifyCommitLight(chainID, next.Commit.BlockID, next.Height, next.Commit)
}

// VerifyTrace checks trace, light blocks of ascending heights: the first is of chain
// chainID, names the set trusted (its validators hash) and is signed by more than two
// thirds of it; each next follows from the one before as CometBFT's light client
// verifies (light.Verify: an adjacent header's set is the one the previous header named
// next, a further one is signed by more than TrustLevel of the previous header's set,
// and each by more than two thirds of its own). now is the reader's clock; a header no
// step may start from is one older than trustingPeriod (0: no bound). It returns the
// last light block, whose set and header the reader may trust.
func VerifyTrace(chainID string, trusted *cmttypes.ValidatorSet, trace []*cmttypes.LightBlock, now time.Time, trustingPeriod time.Duration) (*cmttypes.LightBlock, error) {
	if len(trace) == 0 {
		return nil, ErrTrace{Err: errors.New("no light block")}
	}
	if trusted == nil {
		return nil, ErrTrace{Err: errors.New("no trusted validator set")}
	}
	if trustingPeriod <= 0 {
		trustingPeriod = noTrustingPeriod
	}
	for i, lb := range trace {
		if lb == nil || lb.SignedHeader == nil || lb.ValidatorSet == nil {
			return nil, ErrTrace{Step: i, Err: errors.New("a light block without its header, commit or set")}
		}
		if err := lb.ValidateBasic(chainID); err != nil {
			return nil, ErrTrace{Step: i, Height: lb.Height, Err: err}
		}
	}
	first := trace[0]
	if !bytes.Equal(first.ValidatorsHash, trusted.Hash()) {
		return nil, ErrTrace{Height: first.Height, Err: fmt.Errorf("it names set %X, the trusted set is %X", first.ValidatorsHash, trusted.Hash())}
	}
	if err := trusted.VerifyCommitLight(chainID, first.Commit.BlockID, first.Height, first.Commit); err != nil {
		return nil, ErrTrace{Height: first.Height, Err: err}
	}
	for i := 1; i < len(trace); i++ {
		prev, next := trace[i-1], trace[i]
		if next.Height <= prev.Height {
			return nil, ErrTrace{Step: i, Height: next.Height, Err: fmt.Errorf("height %d does not follow %d", next.Height, prev.Height)}
		}
		if err := Step(prev, next, now, trustingPeriod); err != nil {
			return nil, ErrTrace{Step: i, Height: next.Height, Err: err}
		}
	}
	return trace[len(trace)-1], nil
}

// LightBlocks returns the light block of a height: its signed header and its set.
type LightBlocks func(ctx context.Context, height int64) (*cmttypes.LightBlock, error)

// BuildTrace returns light blocks that lead from trusted to the block of height to,
// each step one Step accepts, found as CometBFT's light client finds them: the block
// of to at once when more than TrustLevel of the trusted set signed it, else the
// block halfway first, and so on (bisection). The trace starts with trusted and ends
// with the block of to; VerifyTrace accepts it from trusted's set.
func BuildTrace(ctx context.Context, fetch LightBlocks, trusted *cmttypes.LightBlock, to int64, now time.Time, trustingPeriod time.Duration) ([]*cmttypes.LightBlock, error) {
	if to < trusted.Height {
		return nil, fmt.Errorf("proofs: a trace from height %d cannot lead back to %d", trusted.Height, to)
	}
	if trustingPeriod <= 0 {
		trustingPeriod = noTrustingPeriod
	}
	trace := []*cmttypes.LightBlock{trusted}
	if to == trusted.Height {
		return trace, nil
	}
	target, err := fetch(ctx, to)
	if err != nil {
		return nil, err
	}
	cur, pending := trusted, []*cmttypes.LightBlock{target}
	for len(pending) > 0 {
		next := pending[len(pending)-1]
		err := Step(cur, next, now, trustingPeriod)
		var cannot ErrCannotSkip
		switch {
		case err == nil:
			trace, cur, pending = append(trace, next), next, pending[:len(pending)-1]
		case errors.As(err, &cannot):
			mid, err := fetch(ctx, cur.Height+(next.Height-cur.Height)/2)
			if err != nil {
				return nil, err
			}
			pending = append(pending, mid)
		default:
			return nil, ErrTrace{Step: len(trace), Height: next.Height, Err: err}
		}
	}
	return trace, nil
}
