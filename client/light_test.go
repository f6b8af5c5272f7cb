package client

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cometbft/cometbft/light"
	"github.com/cometbft/cometbft/light/provider"
	lightdb "github.com/cometbft/cometbft/light/store/db"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/proofs/lightchain"
)

// rotating is a set of four validators of power 10 that replaces one every every
// heights (a quarter of the power a change, below a third).
func rotating(every int64) func(h int64) []lightchain.Member {
	return func(h int64) []lightchain.Member {
		first := int((h - 1) / every)
		return []lightchain.Member{{Key: first, Power: 10}, {Key: first + 1, Power: 10}, {Key: first + 2, Power: 10}, {Key: first + 3, Power: 10}}
	}
}

// strangers are four keys that were never validators of the chains here.
func strangers(int64) []lightchain.Member {
	return []lightchain.Member{{Key: 100, Power: 10}, {Key: 101, Power: 10}, {Key: 102, Power: 10}, {Key: 103, Power: 10}}
}

func lightOf(t *testing.T, dir string, c *lightchain.Chain, primary provider.Provider, witnesses ...provider.Provider) (*lightHeaders, error) {
	t.Helper()
	cl := New(nil, Options{Light: &LightOptions{Dir: dir, Genesis: c.Genesis(), InitialHeight: 1, Primary: primary, WitnessProviders: witnesses}})
	return cl.openLight(context.Background(), c.ChainID)
}

// TestLightClientFollowsTheSet: CometBFT's light client, anchored at the genesis set,
// verifies every header of a chain whose set changes every three blocks (and the set
// after four changes shares no validator with the genesis set), and keeps what it
// verified: opened again on its store, it needs no genesis.
func TestLightClientFollowsTheSet(t *testing.T) {
	t.Parallel()
	c, err := lightchain.New("ttld-test", time.Now().Add(-time.Hour), 40, rotating(3))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	honest := &lightchain.Provider{Chain: c, Name: "honest"}
	l, err := lightOf(t, dir, c, honest, &lightchain.Provider{Chain: c, Name: "witness"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, h := range []int64{2, 9, 10, 25, 40, 17} {
		sh, err := l.VerifiedHeader(ctx, h)
		if err != nil || !bytes.Equal(sh.Hash(), c.At(h).Hash()) {
			t.Fatalf("height %d: %v", h, err)
		}
	}
	if err := l.db.Close(); err != nil {
		t.Fatal(err)
	}
	cl := New(nil, Options{Light: &LightOptions{Dir: dir, Primary: honest}})
	again, err := cl.openLight(ctx, c.ChainID)
	if err != nil {
		t.Fatalf("opened on its store: %v", err)
	}
	defer again.db.Close()
	if last, err := again.lc.LastTrustedHeight(); err != nil || last != 40 {
		t.Fatalf("the store trusts up to %d (%v), want 40", last, err)
	}
}

// TestLightClientRefuses: a primary that serves a header signed by a set the chain
// never moved to, a forged commit, or a fork signed by strangers is refused; a primary
// that serves a fork its validators signed (an equivocation) is caught by an honest
// witness, and the evidence goes to both; a fork signed by validators that have left is
// refused by a client that trusts a header after they left; and a trusted header older
// than the trusting period is refused.
func TestLightClientRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	start := time.Now().Add(-time.Hour)
	c, err := lightchain.New("ttld-test", start, 40, rotating(3))
	if err != nil {
		t.Fatal(err)
	}
	forked := func(t *testing.T, setAt func(int64) []lightchain.Member) *lightchain.Chain {
		f, err := c.Fork(20, 40, setAt)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	honest := &lightchain.Provider{Chain: c, Name: "honest witness"}

	t.Run("a fork of strangers", func(t *testing.T) {
		l, err := lightOf(t, "", c, &lightchain.Provider{Chain: forked(t, strangers), Name: "liar"}, honest)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.VerifiedHeader(ctx, 30); err == nil {
			t.Fatal("verified a header of a fork signed by strangers")
		}
	})
	t.Run("an equivocation", func(t *testing.T) {
		liar := &lightchain.Provider{Chain: forked(t, rotating(3)), Name: "liar"}
		l, err := lightOf(t, "", c, liar, honest)
		if err != nil {
			t.Fatal(err)
		}
		var disagrees ErrWitnessDisagrees
		if _, err := l.VerifiedHeader(ctx, 30); !errors.As(err, &disagrees) {
			t.Fatalf("a primary on a fork its validators signed, an honest witness: %v", err)
		}
		if len(honest.Evidence())+len(liar.Evidence()) == 0 {
			t.Error("no evidence reported")
		}
	})
	t.Run("a forged commit", func(t *testing.T) {
		f, err := c.Fork(41, 41, rotating(3)) // a copy of c
		if err != nil {
			t.Fatal(err)
		}
		lb := *f.Blocks[29]
		commit := *lb.Commit
		commit.Signatures = append(commit.Signatures[:0:0], commit.Signatures...)
		commit.Signatures[1].Signature = bytes.Repeat([]byte{1}, 64)
		commit.Signatures[2].Signature = bytes.Repeat([]byte{2}, 64)
		sh := *lb.SignedHeader
		sh.Commit = &commit
		lb.SignedHeader = &sh
		f.Blocks[29] = &lb
		l, err := lightOf(t, "", c, &lightchain.Provider{Chain: f, Name: "liar"}, honest)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.VerifiedHeader(ctx, 30); err == nil {
			t.Fatal("verified a forged commit")
		}
	})
	t.Run("former validators", func(t *testing.T) {
		// The genesis validators (keys 0..3) have all left by height 13 and sign a
		// fork from 20 on; a client that verified height 16 does not follow them.
		l, err := lightOf(t, "", c, honest, honest)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.VerifiedHeader(ctx, 16); err != nil {
			t.Fatal(err)
		}
		l.lc = withPrimary(t, l, &lightchain.Provider{Chain: forked(t, rotating(100)), Name: "former validators"})
		if _, err := l.VerifiedHeader(ctx, 30); err == nil {
			t.Fatal("followed a fork signed by validators that left before the trusted header")
		}
	})
	t.Run("expired trust", func(t *testing.T) {
		old, err := lightchain.New("ttld-test", time.Now().Add(-30*24*time.Hour), 40, rotating(3))
		if err != nil {
			t.Fatal(err)
		}
		p := &lightchain.Provider{Chain: old, Name: "old"}
		l, err := lightOf(t, "", old, p, p)
		if err == nil {
			_, err = l.VerifiedHeader(ctx, 40)
		}
		var expired ErrTrustExpired
		if !errors.As(err, &expired) {
			t.Fatalf("a genesis 30 days old: %v", err)
		}
	})
}

// withPrimary is l's light client over the same trusted store with p as its primary
// and only witness.
func withPrimary(t *testing.T, l *lightHeaders, p provider.Provider) *light.Client {
	t.Helper()
	lc, err := light.NewClientFromTrustedStore(p.ChainID(), proofs.DefaultTrustingPeriod, p, []provider.Provider{p}, lightdb.New(l.db, p.ChainID()),
		light.SkippingVerification(proofs.TrustLevel))
	if err != nil {
		t.Fatal(err)
	}
	return lc
}
