package client

import (
	"context"
	"errors"
	"testing"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/proofs"
)

// TestUnknownInfoRefused: an answer's info is "more" (a range cut short) or empty
// (docs/PROOFS.md, "Asking"); the client refuses any other, proven or not, on a range
// path or a single key, before it reads the value.
func TestUnknownInfoRefused(t *testing.T) {
	c, chain := newTestClient(t)
	ctx := context.Background()
	chain.queryHook = func(path string, resp *abcitypes.ResponseQuery) {
		resp.Info = "More"
	}
	for _, prove := range []bool{false, true} {
		var unknown ErrUnknownInfo
		if _, err := c.Pools(ctx, 0, prove); !errors.As(err, &unknown) || unknown.Path != proofs.PathPools || unknown.Info != "More" {
			t.Errorf("pools (prove %t) whose info is %q: %v, want ErrUnknownInfo", prove, "More", err)
		}
		unknown = ErrUnknownInfo{}
		if _, err := c.TotalCredits(ctx, 0, prove); !errors.As(err, &unknown) || unknown.Path != proofs.PathTotalCredits {
			t.Errorf("total credits (prove %t) whose info is %q: %v, want ErrUnknownInfo", prove, "More", err)
		}
	}
	// An honest answer, its info empty, reads.
	chain.queryHook = nil
	if _, err := c.Pools(ctx, 0, false); err != nil {
		t.Fatalf("an honest answer: %v", err)
	}
}
