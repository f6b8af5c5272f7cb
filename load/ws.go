package load

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"

	cmtjson "github.com/cometbft/cometbft/libs/json"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	jsonrpcclient "github.com/cometbft/cometbft/rpc/jsonrpc/client"
	rpctypes "github.com/cometbft/cometbft/rpc/jsonrpc/types"
)

// wsTx is a transaction a websocket sends: seq numbers the connection's fresh
// transactions in the order they were generated (each signer's in nonce order),
// refusals counts the times a full mempool refused it, due is when it may be sent again.
type wsTx struct {
	tx       []byte
	seq      int
	refusals int
	due      time.Time
}

// retryQueue holds the refused transactions, first generated first (container/heap):
// they go again in the order they were generated, so that each signer's nonces reach
// the mempool in order, each once the one before it has gone.
type retryQueue []*wsTx

func (q retryQueue) Len() int           { return len(q) }
func (q retryQueue) Less(i, j int) bool { return q[i].seq < q[j].seq }
func (q retryQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *retryQueue) Push(x any)        { *q = append(*q, x.(*wsTx)) }
func (q *retryQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// wsState is what a websocket's sender and its answers' reader share.
type wsState struct {
	sc sendConfig
	t  *tally
	// woken is signalled at every answer.
	woken chan struct{}

	mu sync.Mutex
	// pending are the transactions sent and not answered yet, by request id.
	pending map[rpctypes.JSONRPCIntID]*wsTx
	retries retryQueue
}

// answer takes the node's answer r: a transaction a full mempool refused goes into
// the retry queue, unless its backoff would end after sc.retryEnd; any other answer
// is its last.
func (s *wsState) answer(r rpctypes.RPCResponse) {
	id, ok := r.ID.(rpctypes.JSONRPCIntID)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.pending[id]
	if e == nil {
		return
	}
	delete(s.pending, id)
	var res coretypes.ResultBroadcastTx
	var err error
	if r.Error != nil {
		err = r.Error
	} else if err = cmtjson.Unmarshal(r.Result, &res); err != nil {
		err = fmt.Errorf("load: broadcast answer: %w", err)
	}
	a := judge(&res, err)
	requeued := false
	if a == mempoolFull {
		e.refusals++
		if due := time.Now().Add(backoff(e.refusals)); !due.After(s.sc.retryEnd) {
			e.due = due
			heap.Push(&s.retries, e)
			requeued = true
		}
	}
	if !requeued {
		s.t.final(a)
	}
	select {
	case s.woken <- struct{}{}:
	default:
	}
}

// next is what the sender does next at now: send e (a retry when retry), generate a
// fresh transaction (fresh), or wait until the next answer or until wake; done when
// nothing is in flight or left to retry. The first generated of the refused
// transactions goes first, when its backoff ends, and no fresh transaction is generated
// while a refused one waits: a signer's transactions should reach the mempool in nonce
// order, as a client that waits out a full mempool sends them (the HTTP sender does the
// same by sending one transaction at a time).
func (s *wsState) next(now time.Time, freshLeft bool) (e *wsTx, retry, fresh, done bool, wake time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(s.retries) > 0 && !s.retries[0].due.After(now):
		return heap.Pop(&s.retries).(*wsTx), true, false, false, time.Time{}
	case freshLeft && len(s.retries) == 0:
		return nil, false, true, false, time.Time{}
	case len(s.pending) == 0 && len(s.retries) == 0:
		return nil, false, false, true, time.Time{}
	case !now.Before(s.sc.retryEnd):
		// The retries' time is over: what is unanswered failed, what waits to be
		// sent again gave up.
		for range s.pending {
			s.t.final(failed)
		}
		for range s.retries {
			s.t.final(mempoolFull)
		}
		clear(s.pending)
		s.retries = nil
		return nil, false, false, true, time.Time{}
	}
	wake = s.sc.retryEnd
	if len(s.retries) > 0 && s.retries[0].due.Before(wake) {
		wake = s.retries[0].due
	}
	return nil, false, false, false, wake
}

// sendWS sends c's transactions on one websocket (CometBFT's JSON-RPC websocket
// client), one request after the other without waiting for their answers, which a
// reader takes as they come; the transactions a full mempool refused are sent again
// in the order they were generated, each after its backoff, and no fresh one is sent
// while they wait. It returns once every transaction sent has its last answer, or when
// sc.retryEnd comes.
func sendWS(ctx context.Context, sc sendConfig, c *Client, t *tally) error {
	ws, err := jsonrpcclient.NewWS(sc.node, "/websocket")
	if err != nil {
		return fmt.Errorf("load: websocket client of %s: %w", sc.node, err)
	}
	if err := ws.Start(); err != nil {
		return fmt.Errorf("load: websocket to %s: %w", sc.node, err)
	}
	s := &wsState{sc: sc, t: t, woken: make(chan struct{}, 1), pending: map[rpctypes.JSONRPCIntID]*wsTx{}}
	stop := make(chan struct{})
	var reader sync.WaitGroup
	reader.Go(func() {
		for {
			select {
			case r := <-ws.ResponsesCh:
				s.answer(r)
			case <-stop:
				return
			}
		}
	})
	defer func() {
		close(stop)
		reader.Wait()
		ws.Stop()
	}()

	p := pacer{rate: sc.rate}
	var id rpctypes.JSONRPCIntID
	fresh := 0
	for {
		now := time.Now()
		e, retry, generate, done, wake := s.next(now, (sc.count == 0 || fresh < sc.count) && now.Before(sc.end))
		switch {
		case done:
			return nil
		case retry:
			t.retry()
		case generate:
			tx, err := c.GenerateTx()
			if err != nil {
				return err
			}
			e, fresh = &wsTx{tx: tx, seq: fresh}, fresh+1
		default:
			timer := time.NewTimer(wake.Sub(now))
			select {
			case <-ctx.Done():
				timer.Stop()
				return ctx.Err()
			case <-s.woken:
			case <-timer.C:
			}
			timer.Stop()
			continue
		}
		if err := p.wait(ctx); err != nil {
			return err
		}
		id++
		req, err := rpctypes.MapToRequest(id, sc.method, map[string]any{"tx": e.tx})
		if err != nil {
			return fmt.Errorf("load: broadcast request: %w", err)
		}
		s.mu.Lock()
		s.pending[id] = e
		s.mu.Unlock()
		if err := ws.Send(ctx, req); err != nil {
			return fmt.Errorf("load: websocket to %s: %w", sc.node, err)
		}
	}
}
