package abci

import "github.com/ttld-dev/ttld/app"

// VerifyAhead verifies the signatures of txs, transactions of a block at atMs that is
// not executed yet, into the signatures the application remembers, as far as the last
// saved version tells their signers' keys (app.SignatureReader), and returns how many
// it checked. When the block executes, FinalizeBlock finds them remembered.
//
// It is for a caller that knows blocks before they execute (a replay reading its block
// store ahead): it may run on any number of goroutines while blocks execute and commit.
// A key the blocks in between create or change is guessed wrong or not at all: a wrong
// guess is a check remembered under a key the block never asks for, a transaction left
// out is verified by its block as usual. Only checks that passed are remembered, under
// the key, the message and the signature, so what a block does never depends on what
// was verified ahead. A state that cannot be read (nothing saved yet, a version pruned
// meanwhile) ends the call early: it only warms a cache.
func (a *Application) VerifyAhead(txs [][]byte, atMs uint64) int {
	saved, err := a.store.Saved(0)
	if err != nil {
		return 0
	}
	sr, err := app.NewSignatureReader(saved, atMs)
	if err != nil {
		return 0
	}
	n := 0
	for _, tx := range txs {
		c, ok, err := sr.Check(tx)
		if err != nil {
			return n
		}
		if ok {
			a.signatures.Verify(c.PubKey, c.Message, c.Signature)
			n++
		}
	}
	return n
}
