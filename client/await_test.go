package client

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/ttld-dev/ttld/protocol"
)

// TestAwait: a transaction broadcast without commit is only accepted; Await finds it in
// the block that includes it, with that block's code and fee, and tells a transaction
// no block holds when the wait ends as not committed.
func TestAwait(t *testing.T) {
	t.Parallel()
	c, chain := newTestClient(t)
	ctx := context.Background()
	alice, bob := seedKey("alice"), seedKey("bob")
	from, err := c.LatestHeight(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var txs [][]byte
	var hashes [][]byte
	for _, amount := range []uint64{10, 20} {
		tx, err := c.Sign(ctx, &protocol.AddressFundsTransfer{PubKey: pubOf(alice), Recipient: protocol.AddressOf(pubOf(bob)), Amount: amount}, alice)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Broadcast(ctx, tx, false)
		if err != nil {
			t.Fatal(err)
		}
		if res.Refused() || res.Committed {
			t.Fatalf("broadcast without commit: %+v, want accepted and no more", res)
		}
		txs, hashes = append(txs, tx), append(hashes, res.Hash)
	}
	// An empty block, then the first transfer's block; the second stays in no block.
	chain.mu.Lock()
	chain.block(nil)
	results := chain.block(txs[:1])
	height := chain.height
	chain.mu.Unlock()

	wait, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	got, err := c.Await(wait, from+1, hashes)
	if err != nil {
		t.Fatal(err)
	}
	first := got[0]
	if !first.Committed || first.Height != height || first.Code != protocol.CodeOK || first.Fee != uint64(results[0].GasUsed) || !bytes.Equal(first.Hash, hashes[0]) {
		t.Fatalf("the first transfer: %+v, want committed at %d with fee %d", first, height, results[0].GasUsed)
	}
	if second := got[1]; second.Committed || second.Height != 0 || !bytes.Equal(second.Hash, hashes[1]) {
		t.Fatalf("the second transfer, in no block: %+v", second)
	}
}
