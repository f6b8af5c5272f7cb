package e2e

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/protocol"
)

// TestOverflowDoesNotHaltTheChain replays, on a real node, the user's way to the overflow
// that once halted the chain for good: on a chain whose dev key holds all 2^64-1
// credits, send R 2^63 and commit; then, within one block, send R 2^62 and 2^62+2^61 at
// the next nonce. CheckTx refuses the second with a code and keeps the first; the same
// bytes again are refused again; the first commits, and the chain goes on making blocks.
func TestOverflowDoesNotHaltTheChain(t *testing.T) {
	t.Parallel()
	env := StartNodeFunded(t, math.MaxUint64)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := keyring.Open(env.Home).Add("r")
	if err != nil {
		t.Fatal(err)
	}
	chainID, err := env.Client.ChainID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	send := func(nonce, amount uint64, commit bool) (protocol.Code, int64) {
		t.Helper()
		tx := protocol.Sign(chainID, &protocol.AddressFundsTransfer{PubKey: env.Dev.Pub, Nonce: nonce, Recipient: r.Address(), Amount: amount}, env.Dev.Priv)
		res, err := env.Client.Broadcast(ctx, tx, commit)
		if err != nil {
			t.Fatalf("transfer nonce %d of %d: %v", nonce, amount, err)
		}
		return res.Code, res.Height
	}
	if code, _ := send(1, 1<<63, true); code != protocol.CodeOK {
		t.Fatalf("2^63 to R: code %s", code)
	}
	if code, _ := send(2, 1<<62, false); code != protocol.CodeOK {
		t.Fatalf("2^62 to R: CheckTx code %s", code)
	}
	for try := 0; try < 2; try++ {
		if code, _ := send(3, 1<<62+1<<61, false); code != protocol.CodeAddressInsufficientBalance {
			t.Fatalf("2^62+2^61 to R, try %d: CheckTx code %s, want AddressInsufficientBalance", try, code)
		}
	}
	start, err := env.Client.LatestHeight(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.WaitForHeight(ctx, start+3); err != nil {
		t.Fatalf("the chain stopped after height %d: %v", start, err)
	}
	st, err := env.Client.Address(ctx, r.Address(), 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if st.Balance != 1<<63+1<<62 || !st.Verified {
		t.Fatalf("R holds %d (verified %v), want 2^63+2^62", st.Balance, st.Verified)
	}
}
