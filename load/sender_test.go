package load

import (
	"container/heap"
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
// error's text) and the node's refusals for now (its mempool full, catching up) are
// sent again, and any other error failed.
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
		{&coretypes.ResultBroadcastTx{Codespace: "ttld-node", Code: 2}, nil, mempoolFull},
		{&coretypes.ResultBroadcastTx{Codespace: "ttld-node", Code: 1}, nil, mempoolFull},
		{&coretypes.ResultBroadcastTx{Codespace: "ttld-internal", Code: 1}, nil, refusedAtCheck},
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

// TestWebsocketRetriesInOrder: while transactions a full mempool refused wait for
// their backoff, the websocket sender generates nothing fresh (it could be a waiting
// signer's next nonce); the refused go again first generated first, the later one
// waiting for the earlier even when its own backoff ended sooner; then fresh ones.
func TestWebsocketRetriesInOrder(t *testing.T) {
	now := time.Now()
	s := &wsState{sc: sendConfig{retryEnd: now.Add(time.Minute)}, pending: map[rpctypes.JSONRPCIntID]*wsTx{}}
	first := &wsTx{tx: []byte("a"), seq: 3, refusals: 2, due: now.Add(2 * time.Second)}
	second := &wsTx{tx: []byte("b"), seq: 4, refusals: 1, due: now.Add(time.Second)}
	heap.Push(&s.retries, second)
	heap.Push(&s.retries, first)

	for _, at := range []time.Time{now, second.due} {
		e, retry, fresh, done, wake := s.next(at, true)
		if e != nil || retry || fresh || done || !wake.Equal(first.due) {
			t.Fatalf("at +%s: next = %v %v %v %v wake +%s, want a wait for the first generated, due at +2s", at.Sub(now), e, retry, fresh, done, wake.Sub(now))
		}
	}
	for _, want := range []*wsTx{first, second} {
		if e, retry, _, _, _ := s.next(first.due, true); e != want || !retry {
			t.Fatalf("at +2s: next = %v retry %v, want %s", e, retry, want.tx)
		}
	}
	if _, _, fresh, _, _ := s.next(first.due, true); !fresh {
		t.Fatal("with no retry waiting: want a fresh transaction")
	}
}
