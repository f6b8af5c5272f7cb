package load

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cometbft/cometbft/mempool"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	rpctypes "github.com/cometbft/cometbft/rpc/jsonrpc/types"
)

// TestJudgeAnswers: code 0 is accepted, another code refused by CheckTx, CometBFT's
// full-mempool error (as its RPC server sends it, an internal error whose data is the
// error's text) is sent again, and any other error failed.
func TestJudgeAnswers(t *testing.T) {
	full := rpctypes.RPCInternalError(rpctypes.JSONRPCIntID(1), mempool.ErrMempoolIsFull{NumTxs: 5, MaxTxs: 5}).Error
	inCache := rpctypes.RPCInternalError(rpctypes.JSONRPCIntID(1), mempool.ErrTxInCache).Error
	for _, c := range []struct {
		res  *coretypes.ResultBroadcastTx
		err  error
		want answer
	}{
		{&coretypes.ResultBroadcastTx{}, nil, accepted},
		{&coretypes.ResultBroadcastTx{Code: 40210}, nil, refusedAtCheck},
		{&coretypes.ResultBroadcastTx{}, full, mempoolFull},
		{&coretypes.ResultBroadcastTx{}, inCache, failed},
		{&coretypes.ResultBroadcastTx{}, errors.New("connection reset"), failed},
	} {
		if got := judge(c.res, c.err); got != c.want {
			t.Errorf("judge(%+v, %v) = %d, want %d", c.res, c.err, got, c.want)
		}
	}
}

// TestBackoffDoublesWithinBounds: each wait is in the upper half of 100 ms doubled per
// refusal, at most 2 s.
func TestBackoffDoublesWithinBounds(t *testing.T) {
	for n, ceiling := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 5: 1600 * time.Millisecond, 6: 2 * time.Second, 60: 2 * time.Second} {
		for range 100 {
			if d := backoff(n); d < ceiling/2 || d > ceiling {
				t.Fatalf("refusal %d: waited %s, want %s to %s", n, d, ceiling/2, ceiling)
			}
		}
	}
}

// TestPacerHoldsTheRate: a pacer of 50 a second lets 50 go at once, then holds the
// 51st until a second after the first.
func TestPacerHoldsTheRate(t *testing.T) {
	p := pacer{rate: 50}
	start := time.Now()
	for range 50 {
		if err := p.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if time.Since(start) > 500*time.Millisecond {
		t.Fatalf("50 broadcasts of a 50/s pacer took %s", time.Since(start))
	}
	if err := p.wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < time.Second {
		t.Fatalf("the 51st broadcast went %s after the first", time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 50 {
		p.wait(ctx)
	}
	if err := p.wait(ctx); err == nil {
		t.Fatal("a pacer waited past its context")
	}
}
