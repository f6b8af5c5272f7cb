package abci

import (
	"crypto/sha256"
	"slices"
	"sync"

	abcitypes "github.com/cometbft/cometbft/abci/types"
)

// What the check state holds across a block (docs/ARCHITECTURE.md, "The check state
// and the mempool"). CometBFT's mempool keeps its transactions in a list, in the order
// their CheckTx answers reached it, and both its recheck after a block and the
// proposal take them in that order. Concurrent CheckTx calls reach the list in any
// order: a transaction can sit in the list before one the check state accepted it
// after, and built on (the same signer's document create before its replace, a
// transfer before the recipient's spending). Judged in the list's order, the later one
// would be refused by the recheck, and dropped from the mempool with nobody told, or
// charged for failing by the block. So the application keeps its own order, the check
// state's positions, for both: the proposal executes its candidates in that order
// (orderByAcceptance), and the check state after a block judges the transactions
// carried over from the one before in that order, before the recheck asks (carry),
// which then gets each one's verdict. A transaction accepted stays valid until a
// block includes it or one that conflicts with it.

// txKey is a transaction's key in the check state's books: its sha256, as CometBFT
// keys its mempool.
type txKey = [sha256.Size]byte

// MempoolLimits is how much CometBFT's mempool holds ([mempool] size and
// max_txs_bytes in config.toml); 0: no limit.
type MempoolLimits struct {
	Size        int
	MaxTxsBytes int64
}

// accepted are the transactions a check state holds, accepted by CheckTx or carried
// over and staged, with their positions, and the room they and the transactions being
// judged take of the mempool. Safe for concurrent use.
//
// NB: CometBFT v0.38's mempool checks that it has room before CheckTx and again
// before it adds the accepted transaction to its list, and when the second check
// fails it drops the transaction while the RPC caller is still told code 0. The check
// state reserves a new transaction's room before judging it and accepts none that
// would not fit: it holds every transaction of the mempool's list and those on their
// way to it, so the mempool always has room for what CheckTx accepted.
type accepted struct {
	mu     sync.Mutex
	limits MempoolLimits
	txs    map[txKey]acceptedTx
	// count and bytes are the accepted transactions' number and size, with the
	// reservations of those being judged.
	count int
	bytes int64
}

// acceptedTx is an accepted transaction and its position in the check state's
// serial order.
type acceptedTx struct {
	tx       []byte
	position uint64
}

func (a *accepted) init(limits MempoolLimits) {
	a.limits, a.txs = limits, map[txKey]acceptedTx{}
}

// reserve takes the room of a transaction of size bytes, unless it does not fit in
// the limits and force is not set (then it reports false and takes nothing).
func (a *accepted) reserve(size int, force bool) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !force && ((a.limits.Size > 0 && a.count+1 > a.limits.Size) ||
		(a.limits.MaxTxsBytes > 0 && a.bytes+int64(size) > a.limits.MaxTxsBytes)) {
		return false
	}
	a.count++
	a.bytes += int64(size)
	return true
}

// release gives back the room reserve took for a transaction that was not accepted.
func (a *accepted) release(size int) {
	a.mu.Lock()
	a.count--
	a.bytes -= int64(size)
	a.mu.Unlock()
}

// add records tx, accepted at position, in the room reserved for it.
func (a *accepted) add(tx []byte, position uint64) {
	a.mu.Lock()
	a.txs[sha256.Sum256(tx)] = acceptedTx{tx: tx, position: position}
	a.mu.Unlock()
}

// position is where tx stands in the serial order, if it is accepted.
func (a *accepted) position(key txKey) (uint64, bool) {
	a.mu.Lock()
	t, ok := a.txs[key]
	a.mu.Unlock()
	return t.position, ok
}

// inOrder lists the accepted transactions in their serial order, but those for which
// drop reports true.
func (a *accepted) inOrder(drop func(txKey) bool) [][]byte {
	a.mu.Lock()
	list := make([]acceptedTx, 0, len(a.txs))
	for k, t := range a.txs {
		if !drop(k) {
			list = append(list, t)
		}
	}
	a.mu.Unlock()
	slices.SortFunc(list, func(x, y acceptedTx) int { return cmpU64(x.position, y.position) })
	out := make([][]byte, len(list))
	for i, t := range list {
		out[i] = t.tx
	}
	return out
}

// size is how many transactions are accepted (reservations not counted).
func (a *accepted) size() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.txs)
}

func cmpU64(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// carried are the verdicts of the transactions a check state carried over from the
// one before the last block (carry), which CometBFT's recheck asks for in its list's
// order. Safe for concurrent use.
type carried struct {
	mu       sync.Mutex
	verdicts map[txKey]*carriedTx
}

type carriedTx struct {
	res *abcitypes.ResponseCheckTx
	// asked: CometBFT's recheck asked for the verdict, so its mempool holds the
	// transaction.
	asked bool
}

// carry judges txs, the transactions the check state before the last block accepted
// and the block did not include, in the order it accepted them, on cs before any other
// transaction, and keeps each one's verdict for the recheck. What it accepts is staged
// and accepted as a new transaction would be; answer turns a judgement into CheckTx's
// response.
func (cs *checkState) carry(txs [][]byte, sigs *verifiedSignatures, answer func(tx []byte, res checkAnswer) *abcitypes.ResponseCheckTx) {
	c := &carried{verdicts: make(map[txKey]*carriedTx, len(txs))}
	for _, tx := range txs {
		cs.accepted.reserve(len(tx), true)
		res, _, err := cs.checkTx(tx, false, sigs)
		ans := checkAnswer{res: res, err: err}
		if !ans.ok() {
			cs.accepted.release(len(tx))
		}
		c.verdicts[sha256.Sum256(tx)] = &carriedTx{res: answer(tx, ans)}
	}
	cs.carried = c
}

// recheck is the verdict carry gave tx, marked as asked; ok is false when tx was not
// carried.
func (c *carried) recheck(tx []byte) (*abcitypes.ResponseCheckTx, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.verdicts[sha256.Sum256(tx)]
	if !ok {
		return nil, false
	}
	v.asked = true
	return v.res, true
}

// unasked reports whether tx was carried and accepted and the recheck never asked for
// it: CometBFT's mempool no longer holds it.
func (c *carried) unasked(key txKey) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.verdicts[key]
	return ok && !v.asked && v.res.Code == abcitypes.CodeTypeOK
}

// anyUnasked reports whether a transaction was carried and accepted and the recheck
// never asked for it.
func (c *carried) anyUnasked() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, v := range c.verdicts {
		if !v.asked && v.res.Code == abcitypes.CodeTypeOK {
			return true
		}
	}
	return false
}

// orderByAcceptance orders a proposal's candidates, which come in the mempool list's
// order, as the check state accepted them: by position, stably, and those it does not
// hold after the others, in their order.
func orderByAcceptance(cs *checkState, txs [][]byte) [][]byte {
	if cs == nil || len(txs) < 2 {
		return txs
	}
	type candidate struct {
		tx       []byte
		position uint64
		held     bool
	}
	list := make([]candidate, len(txs))
	for i, tx := range txs {
		p, ok := cs.accepted.position(sha256.Sum256(tx))
		list[i] = candidate{tx: tx, position: p, held: ok}
	}
	slices.SortStableFunc(list, func(x, y candidate) int {
		switch {
		case x.held != y.held:
			if x.held {
				return -1
			}
			return 1
		case !x.held:
			return 0
		}
		return cmpU64(x.position, y.position)
	})
	out := make([][]byte, len(list))
	for i, c := range list {
		out[i] = c.tx
	}
	return out
}
