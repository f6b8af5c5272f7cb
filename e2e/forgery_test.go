package e2e

import (
	"context"
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	cmtbytes "github.com/cometbft/cometbft/libs/bytes"
	rpcclient "github.com/cometbft/cometbft/rpc/client"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/protocol"
)

// heightProxy is a tampering proxy between a client and the node: it rewrites the
// height of every abci_query request through rewrite and forwards the node's honest
// answer.
type heightProxy struct {
	client.RPC
	rewrite func(height int64) int64
}

func (p heightProxy) ABCIQueryWithOptions(ctx context.Context, path string, data cmtbytes.HexBytes, opts rpcclient.ABCIQueryOptions) (*coretypes.ResultABCIQuery, error) {
	opts.Height = p.rewrite(opts.Height)
	return p.RPC.ABCIQueryWithOptions(ctx, path, data, opts)
}

// TestForgedHeights: honest answers for an older state than the one asked, forwarded
// by a proxy that rewrote the request, are refused by verified reads: an explicit
// height by the height check, the latest height by the freshness bound.
func TestForgedHeights(t *testing.T) {
	t.Parallel()
	env := StartNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	dev := env.Dev
	create := &protocol.IdentityCreate{PubKey: dev.Pub, Amount: 1_000_000, Keys: []ed25519.PublicKey{dev.Pub}}
	tx, err := env.Client.Sign(ctx, create, dev.Priv)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := env.Client.Broadcast(ctx, tx, true); err != nil || res.Refused() {
		t.Fatalf("identity create: %+v %v", res, err)
	}
	id := protocol.NewIdentityID(dev.Address(), create.Nonce)
	// header 3 (proving state 2, the forged one) must be well past the bound below
	// while an honest latest answer, tens of milliseconds old, stays well within it:
	// the chain goes on until its latest block is twice the bound past block 3.
	const old, asked = 2, 10
	const maxAge = time.Second
	if _, err := env.Client.WaitForHeight(ctx, asked+2); err != nil {
		t.Fatal(err)
	}
	forged, err := env.Client.BlockTime(ctx, old+1, false)
	if err != nil {
		t.Fatal(err)
	}
	for {
		latest, err := env.Client.LatestHeight(ctx)
		if err != nil {
			t.Fatal(err)
		}
		now, err := env.Client.BlockTime(ctx, latest-1, false)
		if err != nil {
			t.Fatal(err)
		}
		if now >= forged+uint64(2*maxAge/time.Millisecond) {
			break
		}
		if _, err := env.Client.WaitForHeight(ctx, latest+1); err != nil {
			t.Fatal(err)
		}
	}
	dial := func(rewrite func(int64) int64) *client.Client {
		rpc := env.Client.RPC()
		if rewrite != nil {
			rpc = heightProxy{RPC: rpc, rewrite: rewrite}
		}
		return client.New(rpc, client.Options{ChainID: ChainID, Trusted: env.Trusted, MaxAge: maxAge})
	}
	reads := map[string]func(c *client.Client, height int64) error{
		"address": func(c *client.Client, h int64) error {
			_, err := c.Address(ctx, dev.Address(), h, true)
			return err
		},
		"identity": func(c *client.Client, h int64) error {
			_, err := c.Identity(ctx, id, h, true)
			return err
		},
		"address changes": func(c *client.Client, h int64) error {
			_, err := c.AddressChanges(ctx, dev.Address(), 0, h, true)
			return err
		},
	}
	honest := dial(nil)
	olderThanAsked := dial(func(h int64) int64 {
		if h == asked {
			return old
		}
		return h
	})
	olderThanLatest := dial(func(h int64) int64 {
		if h == 0 {
			return old
		}
		return h
	})
	for name, read := range reads {
		if err := read(honest, asked); err != nil {
			t.Fatalf("%s: honest read at %d: %v", name, asked, err)
		}
		if err := read(honest, 0); err != nil {
			t.Fatalf("%s: honest read of the latest state within %s: %v", name, maxAge, err)
		}
		var wh client.ErrWrongHeight
		if err := read(olderThanAsked, asked); !errors.As(err, &wh) || wh.Want != asked || wh.Got != old {
			t.Fatalf("%s: asked %d, forwarded the answer for %d: %v, want ErrWrongHeight", name, asked, old, err)
		}
		var st client.ErrStale
		if err := read(olderThanLatest, 0); !errors.As(err, &st) || st.Height != old || st.Age <= maxAge {
			t.Fatalf("%s: asked the latest, forwarded the answer for %d: %v, want ErrStale", name, old, err)
		}
	}
}
