package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/web/check"
)

// The overview and the blocks list refresh as blocks are committed: /live is a stream
// of Server-Sent Events, one "block" event per new block, which web/static/live.js
// writes into the page. The view subscribes once, through the RPC client, to the
// node's NewBlock events (CometBFT's event bus), and hands each block to every open
// stream; nothing polls.

// DefaultMaxStreams bounds the live streams served at once when Options.MaxStreams
// does not say otherwise; one more is refused (503) until one ends.
const DefaultMaxStreams = 64

// liveWriteTimeout bounds the write of one event to a stream: a reader that takes
// longer is dropped.
const liveWriteTimeout = 10 * time.Second

// liveBlock is a new block as a "block" event carries it (JSON), the texts written
// as the pages write them.
type liveBlock struct {
	Height   int64  `json:"height"`
	Href     string `json:"href"`
	Time     string `json:"time"`
	Txs      int    `json:"txs"`
	Proposer string `json:"proposer"`
	AppHash  string `json:"app_hash"`
	// TxRows are its transactions, newest first: a list, empty for an empty block.
	TxRows []liveTx `json:"transactions"`
}

// liveTx is one of its transactions, as the transaction tables show it.
type liveTx struct {
	Hash     string `json:"hash"`
	Href     string `json:"href"`
	Kind     string `json:"kind"`
	Signer   string `json:"signer"`
	SignerTo string `json:"signer_href"`
	Result   string `json:"result"`
	OK       bool   `json:"ok"`
	Fee      string `json:"fee"`
}

// live is the view's subscription to new blocks and the streams it feeds.
type live struct {
	// subscriber names the view's subscription on the node's event bus.
	subscriber string
	max        int
	mu         sync.Mutex
	streams    map[chan liveBlock]struct{}
	// subscribed: the subscription runs (fan ends it); closed: Close was called, and
	// no stream opens any more.
	subscribed bool
	closed     bool
	// ctx ends, by stop, when the view closes: the streams end, and so does what fan
	// reads for a block.
	ctx     context.Context
	stop    context.CancelFunc
	fanDone chan struct{}
}

// newLive is the live streams of a view subscribing as subscriber, at most max at
// once (0: DefaultMaxStreams).
func newLive(subscriber string, max int) *live {
	if max <= 0 {
		max = DefaultMaxStreams
	}
	ctx, stop := context.WithCancel(context.Background())
	return &live{subscriber: subscriber, max: max, streams: map[chan liveBlock]struct{}{}, ctx: ctx, stop: stop}
}

// newBlockQuery is the node's event query of new blocks.
var newBlockQuery = cmttypes.QueryForEvent(cmttypes.EventNewBlock).String()

// errTooManyStreams: the view serves as many live streams as it allows.
var errTooManyStreams = errors.New("too many live streams")

// openStream registers a stream, subscribing to new blocks if no stream did yet.
func (s *Server) openStream(ctx context.Context) (chan liveBlock, error) {
	l := s.live
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return nil, errors.New("the view is closing")
	case len(l.streams) >= l.max:
		return nil, errTooManyStreams
	}
	if !l.subscribed {
		events, err := s.rpc.Subscribe(ctx, l.subscriber, newBlockQuery, 16)
		if err != nil {
			return nil, fmt.Errorf("subscribing to new blocks: %w", err)
		}
		l.subscribed, l.fanDone = true, make(chan struct{})
		go s.fan(events, l.fanDone)
	}
	// A stream keeps up to a few blocks it has not written yet; past them it misses
	// some, and the page shows the newest.
	ch := make(chan liveBlock, 4)
	l.streams[ch] = struct{}{}
	return ch, nil
}

// open is how many streams are open.
func (l *live) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.streams)
}

// remove forgets a stream whose reader left.
func (l *live) remove(ch chan liveBlock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.streams, ch)
}

// send hands b to every stream; a stream whose reader is behind misses it.
func (l *live) send(b liveBlock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ch := range l.streams {
		select {
		case ch <- b:
		default:
		}
	}
}

// fan hands each new block to every stream, until the view closes.
func (s *Server) fan(events <-chan coretypes.ResultEvent, done chan struct{}) {
	defer close(done)
	for {
		select {
		case <-s.live.ctx.Done():
			return
		case ev := <-events:
			if data, ok := ev.Data.(cmttypes.EventDataNewBlock); ok && data.Block != nil && s.live.open() > 0 {
				s.live.send(s.liveBlockOf(data))
			}
		}
	}
}

// liveBlockOf writes block data as a "block" event: its transactions decoded under
// the protocol version it executed under, as txRows does.
func (s *Server) liveBlockOf(data cmttypes.EventDataNewBlock) liveBlock {
	b := data.Block
	now := time.Now()
	out := liveBlock{Height: b.Height, Href: fmt.Sprintf("/block/%d", b.Height), Time: check.When(b.Time, now), Txs: len(b.Txs),
		Proposer: b.ProposerAddress.String(), AppHash: check.Short(b.AppHash.String()), TxRows: []liveTx{}}
	ctx, cancel := context.WithTimeout(s.live.ctx, RequestTimeout)
	defer cancel()
	rows, err := s.txRows(ctx, s.keepBlockTxs(b, data.ResultFinalizeBlock.TxResults), len(b.Txs)-OverviewRows, len(b.Txs), now)
	if err != nil && s.live.ctx.Err() == nil {
		s.opts.Logger.Warn().Err(err).Int64("height", b.Height).Msg("web: a live block's transactions")
	}
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i]
		out.TxRows = append(out.TxRows, liveTx{Hash: r.Hash, Href: r.Href(), Kind: check.Visible(r.Kind), Signer: r.Signer, SignerTo: r.SignerTo,
			Result: fmt.Sprintf("%d %s", r.Code, check.Visible(r.CodeName)), OK: r.Code == 0, Fee: check.Credits(r.Fee)})
	}
	return out
}

// liveStream serves /live: a "block" event for each new block, until the reader
// leaves or the view closes.
func (s *Server) liveStream(w http.ResponseWriter, r *http.Request) {
	ch, err := s.openStream(r.Context())
	if err != nil {
		http.Error(w, "live updates unavailable: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer s.live.remove(ch)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	// retry: a reader whose stream ended (the node restarts) asks again after 10 s.
	if !s.writeEvent(w, rc, "retry: 10000\n\n") {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.live.ctx.Done():
			return
		case b := <-ch:
			data, err := json.Marshal(b)
			if err != nil || !s.writeEvent(w, rc, "event: block\ndata: "+string(data)+"\n\n") {
				return
			}
		}
	}
}

// writeEvent writes and flushes text to the stream, within liveWriteTimeout.
func (s *Server) writeEvent(w http.ResponseWriter, rc *http.ResponseController, text string) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(liveWriteTimeout))
	if _, err := w.Write([]byte(text)); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// Close ends the live streams and the view's subscription to new blocks. Listener's
// Close calls it as the server shuts down, so that the streams, which never go idle,
// do not hold the shutdown up.
func (s *Server) Close() error {
	l := s.live
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.stop()
	subscribed, fanDone := l.subscribed, l.fanDone
	l.mu.Unlock()
	if !subscribed {
		return nil
	}
	<-fanDone
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.rpc.Unsubscribe(ctx, l.subscriber, newBlockQuery)
}
