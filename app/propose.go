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
	// MayDrop reports whether the block may make a skipped nonce of the signer's
	// account (its identity id or address) unusable, at block time atMs: a candidate
	// whose nonce would drop it below the window (protocol.NonceState.Drops) is left
	// out otherwise, so that the skipped transaction, which may still be on its way
	// here from another node's mempool, is not lost. nil: always.
	MayDrop func(account []byte, nonce, atMs uint64) bool
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

// admits reports whether the proposal executes tx: not when its nonce would drop a
// skipped nonce of its signer that room.MayDrop keeps. A transaction that does not
// decode, or whose signer holds nothing, is executed (and refused unpaid).
func (p *picker) admits(kv drive.KV, r rules, atMs uint64, tx []byte) (bool, error) {
	if p == nil || p.room.MayDrop == nil || protocol.IsVersionSignal(tx) {
		return true, nil
	}
	signed, err := protocol.Decode(tx, r.ctx)
	if err != nil {
		return true, nil
	}
	var account []byte
	var st protocol.NonceState
	switch sg := signed.Signer(); sg.Kind {
	case protocol.SignerAddress:
		a := sg.Address()
		as, _, err := drive.GetAddress(kv, a)
		if err != nil {
			return false, err
		}
		account, st = a[:], as.Nonce
	case protocol.SignerIdentity:
		if st, err = drive.GetIdentityNonce(kv, sg.Identity); err != nil {
			return false, err
		}
		account = sg.Identity[:]
	default:
		return true, nil
	}
	dropped, ok := st.Drops(signed.GetNonce())
	return !ok || p.room.MayDrop(account, dropped, atMs), nil
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
