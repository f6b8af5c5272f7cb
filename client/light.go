package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	cmtdb "github.com/cometbft/cometbft-db"
	"github.com/cometbft/cometbft/light"
	"github.com/cometbft/cometbft/light/provider"
	lighthttp "github.com/cometbft/cometbft/light/provider/http"
	lightdb "github.com/cometbft/cometbft/light/store/db"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/proofs"
)

// LightOptions make a Client verify the headers its proven reads rest on with
// CometBFT's light client (docs/PROOFS.md, "Following the validator set"): from a
// header it trusts, it follows the chain's validator sets to each header it needs,
// checks each against its witnesses, and keeps what it verified in a trusted store.
type LightOptions struct {
	// Dir holds the trusted store (goleveldb), kept across runs so that the next run
	// starts from the newest header verified; empty: in memory, for one run.
	Dir string
	// Genesis is the chain's genesis validator set and InitialHeight its first height:
	// the light client trusts the first block when it is signed by more than two thirds
	// of Genesis, when the store holds nothing and TrustHeight is 0.
	Genesis       *cmttypes.ValidatorSet
	InitialHeight int64
	// TrustHeight and TrustHash name a header to trust instead, from a source the user
	// trusts: what a client that has been away longer than TrustingPeriod needs.
	TrustHeight int64
	TrustHash   []byte
	// Witnesses are other nodes' RPCs every header verified is compared with; one that
	// disagrees with the primary is reported (ErrWitnessDisagrees). None: the primary
	// is its own witness, and nothing is compared.
	Witnesses []string
	// TrustingPeriod bounds how old the header a verification starts from may be; 0:
	// proofs.DefaultTrustingPeriod.
	TrustingPeriod time.Duration
	// Primary and WitnessProviders, when set, replace the client's RPC and Witnesses as
	// the light client's sources (a test's chains).
	Primary          provider.Provider
	WitnessProviders []provider.Provider
}

// ErrTrustExpired: the newest header the light client trusts is older than its
// trusting period, so a set that has left since could have signed what it would be
// shown: trust a recent header anew (LightOptions.TrustHeight and TrustHash).
type ErrTrustExpired struct{ Err error }

func (e ErrTrustExpired) Error() string {
	return fmt.Sprintf("the newest trusted header is older than the trusting period (%v): trust a recent header anew, its height and hash from a source you trust (--trust-height, --trust-hash)", e.Err)
}

func (e ErrTrustExpired) Unwrap() error { return e.Err }

// ErrWitnessDisagrees: a witness holds another header than the primary at the same
// height, or the two disagree otherwise (CometBFT's light client detected an attack or
// conflicting headers): neither is trusted, and the evidence has gone to both.
type ErrWitnessDisagrees struct{ Err error }

func (e ErrWitnessDisagrees) Error() string {
	return fmt.Sprintf("a witness disagrees with the primary node: %v", e.Err)
}

func (e ErrWitnessDisagrees) Unwrap() error { return e.Err }

// ErrGenesisMismatch: the chain's first block is not signed by the genesis set the
// client trusts (another chain, or another genesis).
type ErrGenesisMismatch struct {
	Height int64
	Err    error
}

func (e ErrGenesisMismatch) Error() string {
	return fmt.Sprintf("the block at the initial height %d is not the genesis validators': %v", e.Height, e.Err)
}

// lightHeaders verify headers with CometBFT's light client; one verification at a
// time, as the light client updates its store as it goes.
type lightHeaders struct {
	mu sync.Mutex
	lc *light.Client
	db cmtdb.DB
}

// VerifiedHeader returns the signed header of height once the light client verified
// it.
func (l *lightHeaders) VerifiedHeader(ctx context.Context, height int64) (*cmttypes.SignedHeader, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lb, err := l.lc.VerifyLightBlockAtHeight(ctx, height, time.Now())
	if err != nil {
		return nil, lightError(err)
	}
	return lb.SignedHeader, nil
}

// lightError names what the light client's errors mean to a reader.
func lightError(err error) error {
	var expired light.ErrOldHeaderExpired
	var attack light.ErrConflictingHeaders
	switch {
	case errors.As(err, &expired):
		return ErrTrustExpired{Err: err}
	case errors.As(err, &attack), errors.Is(err, light.ErrLightClientAttack), errors.Is(err, light.ErrFailedHeaderCrossReferencing):
		return ErrWitnessDisagrees{Err: err}
	}
	return err
}

// storeLockWait is how long opening the trusted store waits for another process (or
// client) of the same home to release it.
const storeLockWait = 10 * time.Second

// openLight makes the light client of opts for chain chainID over the client's RPC
// (remote: its address, for the light client's own provider).
func (c *Client) openLight(ctx context.Context, chainID string) (*lightHeaders, error) {
	opts := c.opts.Light
	primary := opts.Primary
	if primary == nil {
		if c.remote == "" {
			return nil, errors.New("client: a light client needs the node's address (Dial) or LightOptions.Primary")
		}
		p, err := lighthttp.New(chainID, c.remote)
		if err != nil {
			return nil, err
		}
		primary = p
	}
	witnesses := append([]provider.Provider(nil), opts.WitnessProviders...)
	for _, w := range opts.Witnesses {
		p, err := lighthttp.New(chainID, w)
		if err != nil {
			return nil, fmt.Errorf("client: witness %s: %w", w, err)
		}
		witnesses = append(witnesses, p)
	}
	if len(witnesses) == 0 {
		witnesses = []provider.Provider{primary}
	}
	period := opts.TrustingPeriod
	if period <= 0 {
		period = proofs.DefaultTrustingPeriod
	}
	db, err := openTrustedStore(ctx, opts.Dir)
	if err != nil {
		return nil, err
	}
	store := lightdb.New(db, chainID)
	lightOpts := []light.Option{light.SkippingVerification(proofs.TrustLevel), light.MaxClockDrift(proofs.MaxClockDrift)}
	last, err := store.LastLightBlockHeight()
	if err == nil && last > 0 && opts.TrustHeight == 0 {
		lc, err := light.NewClientFromTrustedStore(chainID, period, primary, witnesses, store, lightOpts...)
		if err != nil {
			db.Close()
			return nil, err
		}
		return &lightHeaders{lc: lc, db: db}, nil
	}
	trust := light.TrustOptions{Period: period, Height: opts.TrustHeight, Hash: opts.TrustHash}
	if trust.Height == 0 {
		if trust.Height, trust.Hash, err = genesisTrust(ctx, primary, chainID, opts); err != nil {
			db.Close()
			return nil, err
		}
	}
	lc, err := light.NewClient(ctx, chainID, trust, primary, witnesses, store, lightOpts...)
	if err != nil {
		db.Close()
		return nil, lightError(err)
	}
	return &lightHeaders{lc: lc, db: db}, nil
}

// genesisTrust returns the height and hash of the chain's first block once it is shown
// to be of chain chainID and signed by more than two thirds of the genesis set.
func genesisTrust(ctx context.Context, primary provider.Provider, chainID string, opts *LightOptions) (int64, []byte, error) {
	if opts.Genesis == nil {
		return 0, nil, errors.New("client: the light client trusts nothing yet: give the chain's genesis validators or a trusted height and hash")
	}
	h := max(opts.InitialHeight, 1)
	lb, err := primary.LightBlock(ctx, h)
	if err != nil {
		return 0, nil, fmt.Errorf("client: the block at the initial height %d: %w", h, err)
	}
	if err := lb.ValidateBasic(chainID); err != nil {
		return 0, nil, ErrGenesisMismatch{Height: h, Err: err}
	}
	if !bytes.Equal(lb.ValidatorsHash, opts.Genesis.Hash()) {
		return 0, nil, ErrGenesisMismatch{Height: h, Err: fmt.Errorf("it names set %X, the genesis set is %X", lb.ValidatorsHash, opts.Genesis.Hash())}
	}
	if err := opts.Genesis.VerifyCommitLight(chainID, lb.Commit.BlockID, h, lb.Commit); err != nil {
		return 0, nil, ErrGenesisMismatch{Height: h, Err: err}
	}
	return h, lb.Hash(), nil
}

// openTrustedStore opens the trusted store in dir (nil: in memory), waiting for another
// holder of its lock to let go.
func openTrustedStore(ctx context.Context, dir string) (cmtdb.DB, error) {
	if dir == "" {
		return cmtdb.NewMemDB(), nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, storeLockWait)
	defer cancel()
	for {
		db, err := cmtdb.NewGoLevelDB("trusted", dir)
		if err == nil {
			return db, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("client: the light client's trusted store %s: %w", dir, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
