package app

import (
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// Room bounds the transactions of a block a proposer builds (ProposeBlock).
type Room struct {
	// MaxBytes is what the block's transactions may take in all.
	MaxBytes int64
	// Size is what one transaction takes of MaxBytes (CometBFT counts each with its
	// framing).
	Size func(tx []byte) int64
}

// ProposeBlock builds a proposal from b, whose transactions are the candidates in the
// mempool's order: it executes them as the block would, leaves out every transaction
// refused unpaid, and stops before the first one that does not fit in room beside those
// taken. It returns the block it proposes (b with the transactions taken) and that
// block's result, which is what ExecuteBlock returns for it on the same state: a
// transaction refused unpaid changes nothing (TxResult.Unpaid), so the block without
// it executes the same. kv then holds the proposed block's writes. An error is a Fault,
// as ExecuteBlock's.
//
// signal is the newest version the proposer's binary implements, or the one its
// operator holds back to (docs/STATE.md, "Protocol upgrades"): the block starts with
// its signal when it is above the version in force before the block (0: never).
func ProposeBlock(kv drive.KV, b Block, room Room, signal protocol.Version) (Block, BlockResult, error) {
	v, err := drive.GetProtocolVersion(kv)
	if err != nil {
		return Block{}, BlockResult{}, asFault(err)
	}
	if signal > v {
		// NB: at a block that switches the version up to the signal, the signal is
		// refused there, unpaid, and left out as any such transaction.
		b.Txs = append([][]byte{protocol.EncodeVersionSignal(signal)}, b.Txs...)
	}
	pick := &picker{room: room}
	res, err := executeBlock(kv, b, pick)
	if err != nil {
		return Block{}, BlockResult{}, asFault(err)
	}
	b.Txs = pick.taken
	return b, res, nil
}

// picker takes a proposal's transactions as the block executes them. A nil picker takes
// every transaction: the block is decided already.
type picker struct {
	room Room
	// used is what the transactions taken take of room.MaxBytes (<= MaxBytes).
	used  int64
	taken [][]byte
}

// fits reports whether tx fits beside the transactions taken, and its size.
func (p *picker) fits(tx []byte) (int64, bool) {
	if p == nil {
		return 0, true
	}
	size := p.room.Size(tx)
	return size, p.used+size <= p.room.MaxBytes
}

// take reports whether the block keeps tx, executed with result tr: a proposal leaves
// out an unpaid refusal.
func (p *picker) take(tx []byte, size int64, tr TxResult) bool {
	if p == nil {
		return true
	}
	if tr.Unpaid() {
		return false
	}
	p.used += size
	p.taken = append(p.taken, tx)
	return true
}
