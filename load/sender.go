package load

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Transport is how a run's transactions reach the node's RPC.
type Transport string

const (
	// WebSocket sends each connection's transactions over one websocket to /websocket,
	// one JSON-RPC request after the other without waiting for the answers (which a
	// reader takes as they come): few connections, each carrying many requests at
	// once, as a service or a relayer forwarding transactions would.
	WebSocket Transport = "ws"
	// HTTP sends each connection's transactions as JSON-RPC POSTs on one keep-alive
	// HTTP connection, each after the answer to the one before: many connections,
	// each with one transaction in flight, as a crowd of users whose wallets each wait
	// for their transaction's CheckTx answer.
	HTTP Transport = "http"
)

// Transports are the transports, in the order a comparison runs them.
var Transports = []Transport{WebSocket, HTTP}

// ParseTransport reads a transport's name.
func ParseTransport(s string) (Transport, error) {
	for _, t := range Transports {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("load: unknown client %q: want ws or http", s)
}

// Sending counts how the node answered a run's broadcasts. Every transaction the run
// generated ends in exactly one of Accepted, RefusedAtCheck, GaveUp and Failed.
type Sending struct {
	// Accepted: CheckTx answered code 0 (broadcast_tx_sync), or the node took the
	// transaction (broadcast_tx_async).
	Accepted int
	// RefusedAtCheck: CheckTx answered another code.
	RefusedAtCheck int
	// Retries counts the broadcasts sent again because the mempool was full.
	Retries int
	// GaveUp: the mempool was still full at the transaction's last try, when the
	// retries' time was over.
	GaveUp int
	// Failed: another error, or no answer by the end of the retries' time.
	Failed int
}

// total is how many transactions the counts account for.
func (s Sending) total() int { return s.Accepted + s.RefusedAtCheck + s.GaveUp + s.Failed }

// tally is a run's Sending, shared by its connections.
type tally struct {
	mu sync.Mutex
	s  Sending
}

// final counts a transaction's last answer.
func (t *tally) final(a answer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch a {
	case accepted:
		t.s.Accepted++
	case refusedAtCheck:
		t.s.RefusedAtCheck++
	case mempoolFull:
		t.s.GaveUp++
	default:
		t.s.Failed++
	}
}

func (t *tally) retry() {
	t.mu.Lock()
	t.s.Retries++
	t.mu.Unlock()
}

func (t *tally) sending() Sending {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.s
}

// The backoff before a transaction a full mempool refused is sent again: firstBackoff,
// doubled at each refusal up to maxBackoff, each wait drawn uniformly from its upper
// half so that connections refused together do not come back together.
const (
	firstBackoff = 100 * time.Millisecond
	maxBackoff   = 2 * time.Second
)

// backoff is the wait after a transaction's refusal number n (1 for the first).
func backoff(n int) time.Duration {
	d := firstBackoff << min(max(n-1, 0), 10)
	d = min(d, maxBackoff)
	return d/2 + rand.N(d/2+1)
}

// sendConfig is the sending of a run.
type sendConfig struct {
	node      string
	transport Transport
	// method is broadcast_tx_sync or broadcast_tx_async.
	method string
	// rate bounds each connection's broadcasts (retries included) a second; count its
	// fresh transactions (0: no bound).
	rate, count int
	// end is when connections stop generating fresh transactions; retryEnd when they
	// stop sending again what a full mempool refused, and stop waiting for answers.
	end, retryEnd time.Time
}

// sendAll sends, on one connection per client, each client's transactions until
// sc.end, and again those a full mempool refused until they are taken or sc.retryEnd
// comes; it returns how the node answered. Ending ctx ends it with ctx's error.
func sendAll(ctx context.Context, sc sendConfig, clients []*Client) (Sending, error) {
	var t tally
	g, ctx := errgroup.WithContext(ctx)
	for _, c := range clients {
		g.Go(func() error {
			switch sc.transport {
			case HTTP:
				return sendHTTP(ctx, sc, c, &t)
			case WebSocket:
				return sendWS(ctx, sc, c, &t)
			}
			return fmt.Errorf("load: unknown client %q", sc.transport)
		})
	}
	if err := g.Wait(); err != nil {
		return Sending{}, err
	}
	return t.sending(), nil
}

// broadcastMethod is the JSON-RPC method of a RunConfig's Broadcast.
func broadcastMethod(broadcast string) (string, error) {
	switch broadcast {
	case "sync", "async":
		return "broadcast_tx_" + broadcast, nil
	}
	return "", fmt.Errorf("load: broadcast %q: want sync or async", broadcast)
}

// pacer holds a connection to rate broadcasts a second: up to rate in a second from
// the first of them, then a wait for the next second (a batch a second).
type pacer struct {
	rate  int
	start time.Time
	n     int
}

// wait returns when the next broadcast may go, or ctx's error.
func (p *pacer) wait(ctx context.Context) error {
	now := time.Now()
	if now.Sub(p.start) >= time.Second {
		p.start, p.n = now, 0
	}
	if p.n >= p.rate {
		next := p.start.Add(time.Second)
		if err := sleep(ctx, next.Sub(now)); err != nil {
			return err
		}
		p.start, p.n = next, 0
	}
	p.n++
	return nil
}

// sleep waits d, or returns ctx's error when it ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
