package proofs_test

import (
	"context"
	"errors"
	"math/rand"
	"testing"
	"time"

	"github.com/cometbft/cometbft/light"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/proofs/lightchain"
)

var lightStart = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// rotating is a set of four validators of power 10 that replaces one of them every
// every heights: keys h/every .. h/every+3. Each change moves a quarter of the power,
// below a third (docs/STATE.md, "Validators"); after four changes no validator of the
// first set is left.
func rotating(every int64) func(h int64) []lightchain.Member {
	return func(h int64) []lightchain.Member {
		first := int((h - 1) / every)
		return []lightchain.Member{{Key: first, Power: 10}, {Key: first + 1, Power: 10}, {Key: first + 2, Power: 10}, {Key: first + 3, Power: 10}}
	}
}

func fetcher(c *lightchain.Chain) proofs.LightBlocks {
	return func(_ context.Context, h int64) (*cmttypes.LightBlock, error) {
		if lb := c.At(h); lb != nil {
			return lb, nil
		}
		return nil, errors.New("no such height")
	}
}

// TestTraceFollowsTheSet: on a chain whose set changes every 3 blocks, a trace from
// genesis leads to every height and verifies from the genesis set alone, skipping what
// a step may skip: a span the set changed over completely needs headers between.
func TestTraceFollowsTheSet(t *testing.T) {
	t.Parallel()
	c, err := lightchain.New("ttld-test", lightStart, 40, rotating(3))
	if err != nil {
		t.Fatal(err)
	}
	now := lightStart.Add(time.Hour)
	ctx := context.Background()
	for h := int64(1); h <= 40; h++ {
		trace, err := proofs.BuildTrace(ctx, fetcher(c), c.At(1), h, now, proofs.DefaultTrustingPeriod)
		if err != nil {
			t.Fatalf("trace to %d: %v", h, err)
		}
		last, err := proofs.VerifyTrace(c.ChainID, c.Genesis(), trace, now, proofs.DefaultTrustingPeriod)
		if err != nil || last.Height != h || string(last.Hash()) != string(c.At(h).Hash()) {
			t.Fatalf("trace to %d: %v", h, err)
		}
		if h == 40 && (len(trace) < 3 || len(trace) > 12) {
			t.Errorf("a trace over 13 set changes holds %d blocks: want a few, skipping", len(trace))
		}
	}
	// From the genesis set straight to height 40, whose set shares no validator with
	// it: a step cannot skip that.
	var cannot proofs.ErrCannotSkip
	if _, err := proofs.VerifyTrace(c.ChainID, c.Genesis(), []*cmttypes.LightBlock{c.At(1), c.At(40)}, now, 0); !errors.As(err, &cannot) {
		t.Fatalf("a skip over a set that changed completely: %v", err)
	}
}

// TestTraceRefusesForgeries: a header signed by a set the chain never moved to, a
// commit with a forged signature, a header of a fork signed by keys that were never
// validators, a trace that does not start at the trusted set, another chain, and a
// trusted header past the trusting period are each refused.
func TestTraceRefusesForgeries(t *testing.T) {
	t.Parallel()
	c, err := lightchain.New("ttld-test", lightStart, 30, rotating(3))
	if err != nil {
		t.Fatal(err)
	}
	now := lightStart.Add(time.Hour)
	honest, err := proofs.BuildTrace(context.Background(), fetcher(c), c.At(1), 30, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	with := func(last *cmttypes.LightBlock) []*cmttypes.LightBlock {
		return append(append([]*cmttypes.LightBlock(nil), honest[:len(honest)-1]...), last)
	}
	strangers := func(int64) []lightchain.Member {
		return []lightchain.Member{{Key: 100, Power: 10}, {Key: 101, Power: 10}, {Key: 102, Power: 10}, {Key: 103, Power: 10}}
	}

	// The last header re-made with a set of strangers, signed by them.
	forged, err := lightchain.Forge(c.At(30).SignedHeader.Header, strangers(30))
	if err != nil {
		t.Fatal(err)
	}

	// The last commit with one signature's byte changed.
	sigs := append([]cmttypes.CommitSig(nil), c.At(30).Commit.Signatures...)
	sigs[0].Signature = append([]byte(nil), sigs[0].Signature...)
	sigs[0].Signature[0] ^= 1
	badCommit := *c.At(30).Commit
	badCommit.Signatures = sigs
	badSig := &cmttypes.LightBlock{SignedHeader: &cmttypes.SignedHeader{Header: c.At(30).Header, Commit: &badCommit}, ValidatorSet: c.At(30).ValidatorSet}

	// A fork from height 20 on whose sets are strangers.
	fork, err := c.Fork(20, 30, func(h int64) []lightchain.Member {
		if h < 20 {
			return rotating(3)(h)
		}
		return strangers(h)
	})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		chain string
		set   *cmttypes.ValidatorSet
		trace []*cmttypes.LightBlock
		now   time.Time
		tp    time.Duration
	}{
		{"a forged set", c.ChainID, c.Genesis(), with(forged), now, 0},
		{"a forged commit", c.ChainID, c.Genesis(), with(badSig), now, 0},
		{"a header of a fork", c.ChainID, c.Genesis(), with(fork.At(30)), now, 0},
		{"a fork's trace", c.ChainID, c.Genesis(), []*cmttypes.LightBlock{c.At(1), c.At(10), c.At(19), fork.At(20)}, now, 0},
		{"another trusted set", c.ChainID, lightchain.SetOf(strangers(1)), honest, now, 0},
		{"another chain", "ttld-other", c.Genesis(), honest, now, 0},
		{"an expired trusted header", c.ChainID, c.Genesis(), honest, lightStart.Add(proofs.DefaultTrustingPeriod + time.Hour), proofs.DefaultTrustingPeriod},
	} {
		if _, err := proofs.VerifyTrace(tc.chain, tc.set, tc.trace, tc.now, tc.tp); err == nil {
			t.Errorf("%s: verified", tc.name)
		}
	}
	if _, err := proofs.VerifyTrace(c.ChainID, c.Genesis(), honest, now, 0); err != nil {
		t.Fatalf("the honest trace: %v", err)
	}
}

// TestStepIsLightVerify: Step gives CometBFT's light.Verify's verdict (accept, refuse,
// or refuse for too little trusted power) over random pairs of a chain and of its
// forks, which Step cannot import for the browser.
func TestStepIsLightVerify(t *testing.T) {
	t.Parallel()
	c, err := lightchain.New("ttld-test", lightStart, 30, rotating(2))
	if err != nil {
		t.Fatal(err)
	}
	fork, err := c.Fork(12, 30, rotating(1))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	pick := func() *cmttypes.LightBlock {
		if rng.Intn(3) == 0 {
			return fork.At(1 + rng.Int63n(30))
		}
		return c.At(1 + rng.Int63n(30))
	}
	var accepted, refused int
	for i := 0; i < 2000; i++ {
		a, b := pick(), pick()
		if rng.Intn(2) == 0 && a.Height > b.Height {
			a, b = b, a
		}
		now := lightStart.Add(time.Duration(25+rng.Intn(20)) * time.Second)
		tp := time.Duration(1+rng.Intn(90)) * time.Second
		ours := proofs.Step(a, b, now, tp)
		theirs := light.Verify(a.SignedHeader, a.ValidatorSet, b.SignedHeader, b.ValidatorSet, tp, now, proofs.MaxClockDrift, proofs.TrustLevel)
		var cannot proofs.ErrCannotSkip
		var cant light.ErrNewValSetCantBeTrusted
		if (ours == nil) != (theirs == nil) || errors.As(ours, &cannot) != errors.As(theirs, &cant) {
			t.Fatalf("%d -> %d at %s, period %s: Step says %v, light.Verify %v", a.Height, b.Height, now, tp, ours, theirs)
		}
		if ours == nil {
			accepted++
		} else {
			refused++
		}
	}
	t.Logf("%d accepted, %d refused", accepted, refused)
	if accepted < 100 || refused < 100 {
		t.Fatalf("%d pairs accepted, %d refused: want both many", accepted, refused)
	}
}
