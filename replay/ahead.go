package replay

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	cmttypes "github.com/cometbft/cometbft/types"
	"golang.org/x/sync/semaphore"

	"github.com/ttld-dev/ttld/abci"
	"github.com/ttld-dev/ttld/protocol"
)

// The replay reads ahead: one goroutine loads and decodes the blocks after the one
// executing, and verifiers, one a core, verify their signatures into the replica's
// remembered signatures (abci.Application.VerifyAhead), so that FinalizeBlock finds
// them verified. The blocks still execute one at a time, in order, on the replay's own
// goroutine, through FinalizeBlock and Commit as a node's do: what is read ahead only
// warms a cache, and a signature verified ahead under a key that a block in between
// changes is one FinalizeBlock verifies again, so no block's result depends on it.

const (
	// aheadBlocks is how many loaded blocks wait for their execution at most.
	aheadBlocks = 16
	// aheadBytes bounds the transactions held by the blocks loaded ahead, the one
	// executing included; a block larger than this is loaded alone.
	aheadBytes = 64 << 20
	// chunkTxs is how many transactions of a block a verifier takes at a time: a few
	// milliseconds of ed25519 checks.
	chunkTxs = 32
)

// loaded is a block read ahead of its execution, or the error that ended reading.
type loaded struct {
	h     int64
	block *cmttypes.Block
	next  *cmttypes.BlockMeta
	req   *abcitypes.RequestFinalizeBlock
	size  int64 // what it holds of aheadBytes
	err   error
	// left counts the chunks of the block not verified yet; the verifier of the last
	// closes verified.
	left     atomic.Int64
	verified chan struct{}
}

// chunk is a part of a block's transactions for one verifier.
type chunk struct {
	b    *loaded
	txs  [][]byte
	atMs uint64
}

// pipeline runs the reading ahead of one replay; close stops it and waits for its
// goroutines.
type pipeline struct {
	blocks chan *loaded
	budget *semaphore.Weighted
	stop   context.CancelFunc
	ctx    context.Context
	wg     sync.WaitGroup
	// checked counts the signature checks verified ahead.
	checked atomic.Int64
}

// readAhead starts reading blocks from..to of src and verifying their signatures into
// the replica's application.
func readAhead(ctx context.Context, src *source, app *abci.Application, from, to int64) *pipeline {
	workers := runtime.GOMAXPROCS(0)
	p := &pipeline{blocks: make(chan *loaded, aheadBlocks), budget: semaphore.NewWeighted(aheadBytes)}
	p.ctx, p.stop = context.WithCancel(ctx)
	work := make(chan chunk, 4*workers)
	p.wg.Add(1 + workers)
	go func() {
		defer p.wg.Done()
		p.read(src, from, to, work)
	}()
	for range workers {
		go func() {
			defer p.wg.Done()
			p.verify(app, work)
		}()
	}
	return p
}

// read loads blocks from..to in order, hands each block's chunks to the verifiers and
// the block to the executor. A block that cannot be loaded goes to the executor as its
// error, and reading ends.
func (p *pipeline) read(src *source, from, to int64, work chan<- chunk) {
	defer close(p.blocks)
	defer close(work)
	for h := from; h <= to; h++ {
		b := &loaded{h: h, verified: make(chan struct{})}
		b.block, b.next, b.err = src.blocksAt(h)
		if b.err == nil && b.block == nil {
			b.err = ErrMissingBlock{Path: src.blockPath, Height: h}
		}
		if b.err != nil {
			close(b.verified)
			p.send(b)
			return
		}
		b.req = finalizeRequest(b.block)
		for _, tx := range b.req.Txs {
			b.size += int64(len(tx))
		}
		b.size = min(b.size, aheadBytes)
		if p.budget.Acquire(p.ctx, b.size) != nil {
			return
		}
		chunks := (len(b.req.Txs) + chunkTxs - 1) / chunkTxs
		b.left.Store(int64(chunks))
		if chunks == 0 {
			close(b.verified)
		}
		atMs := protocol.BlockTimeMs(b.block.Time)
		for i := 0; i < len(b.req.Txs); i += chunkTxs {
			select {
			case work <- chunk{b: b, txs: b.req.Txs[i:min(i+chunkTxs, len(b.req.Txs))], atMs: atMs}:
			case <-p.ctx.Done():
				return
			}
		}
		if !p.send(b) {
			return
		}
	}
}

// send hands b to the executor; false when the replay stopped.
func (p *pipeline) send(b *loaded) bool {
	select {
	case p.blocks <- b:
		return true
	case <-p.ctx.Done():
		return false
	}
}

// verify verifies chunks until there are no more or the replay stops.
func (p *pipeline) verify(app *abci.Application, work <-chan chunk) {
	for {
		select {
		case c, ok := <-work:
			if !ok {
				return
			}
			p.checked.Add(int64(app.VerifyAhead(c.txs, c.atMs)))
			if c.b.left.Add(-1) == 0 {
				close(c.b.verified)
			}
		case <-p.ctx.Done():
			return
		}
	}
}

// next returns the next block once its signatures are verified ahead; nil after the
// last, or with the context's error when the replay stopped first. FinalizeBlock would verify whatever the verifiers had not reached, on every
// core as well: waiting leaves the cores to them instead of checking the same
// signatures twice.
func (p *pipeline) next() (*loaded, error) {
	var b *loaded
	select {
	case b = <-p.blocks:
	case <-p.ctx.Done():
		return nil, p.ctx.Err()
	}
	if b == nil {
		return nil, p.ctx.Err()
	}
	select {
	case <-b.verified:
	case <-p.ctx.Done():
		return nil, p.ctx.Err()
	}
	return b, b.err
}

// done releases what executed block b held of the budget.
func (p *pipeline) done(b *loaded) { p.budget.Release(b.size) }

// close stops reading and verifying and waits until every goroutine has ended; it may
// be called again.
func (p *pipeline) close() {
	p.stop()
	p.wg.Wait()
}
