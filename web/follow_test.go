package web_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/proofs/lightchain"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web/check"
)

// TestBundlesFollowTheSet: once the set has changed, a proof bundle's header names a
// set the browser never pinned, and the bundle carries the trace that leads to it
// from the chain's first block, which the pinned genesis set signed: it verifies. A
// bundle without its trace, one whose header a set the chain never moved to signed,
// and one whose trace skips more than a step may are refused.
func TestBundlesFollowTheSet(t *testing.T) {
	t.Parallel()
	c := startChain(t)
	key := ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey)
	changed := c.env.AddValidator(t, key, 3)
	ctx := context.Background()
	if _, err := c.env.Client.WaitForHeight(ctx, changed+4); err != nil {
		t.Fatal(err)
	}
	addr := c.env.Dev.Address()
	status, _, raw := c.get(t, "/proof?path=/address&data="+hex.EncodeToString(addr[:]))
	if status != http.StatusOK {
		t.Fatalf("/proof: %d %s", status, raw)
	}
	b, err := check.DecodeBundle([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Trace) < 2 || b.SignedHeader.Height <= changed+1 {
		t.Fatalf("a bundle of height %d (the set changed at %d) carries a trace of %d", b.SignedHeader.Height, changed, len(b.Trace))
	}
	pin := check.Pin{ChainID: e2e.ChainID, Validators: c.env.Trusted}
	now := time.Now()
	v, err := check.Verify([]check.Bundle{b}, pin, now, -1, "", nil)
	var shown check.ErrShown
	if err != nil && !errors.As(err, &shown) {
		t.Fatalf("the honest bundle: %v", err)
	}
	if v.Followed != len(b.Trace) || v.Figures == nil {
		t.Fatalf("the verdict: %+v", v)
	}

	// The validators page shows the new set, proven through the trace, and the change
	// from the block index; the genesis validator's page counts its signed blocks.
	added := strings.ToUpper(protocol.ConsensusAddressOf(key).String())
	status, _, body := c.get(t, "/validators")
	if status != http.StatusOK || !strings.Contains(body, `data-figure="validators">2, total power 13<`) || !strings.Contains(body, added) || !strings.Contains(body, "proposal 1") {
		t.Fatalf("/validators after the change: %d %s", status, body)
	}
	c.verify(t, "/validators", body)
	genesisValidator := strings.ToUpper(hex.EncodeToString(c.env.Trusted.Validators[0].Address))
	if status, _, body := c.get(t, "/validator/"+genesisValidator); status != http.StatusOK || strings.Contains(body, `id="signed">0<`) {
		t.Fatalf("/validator/%s: %d %s", genesisValidator, status, body)
	}

	var pinned check.ErrPinned
	bare := b
	bare.Trace = nil
	if _, err := check.Verify([]check.Bundle{bare}, pin, now, -1, "", nil); !errors.As(err, &pinned) {
		t.Errorf("a header of another set, without its trace: %v", err)
	}

	// The answer's header re-made to name a set of strangers, who sign it; the trace
	// ends with it.
	last, err := lightchain.Forge(b.SignedHeader.Header, []lightchain.Member{{Key: 100, Power: 10}, {Key: 101, Power: 10}})
	if err != nil {
		t.Fatal(err)
	}
	forged := b
	forged.SignedHeader = last.SignedHeader
	forged.Trace = append(append([]*cmttypes.LightBlock(nil), b.Trace[:len(b.Trace)-1]...), last)
	var notProven check.ErrNotProven
	if _, err := check.Verify([]check.Bundle{forged}, pin, now, -1, "", nil); !errors.As(err, &notProven) {
		t.Errorf("a header signed by a set the chain never moved to: %v", err)
	}

	// A trace that leaves its middle out, where the set changed.
	if len(b.Trace) > 2 {
		short := b
		short.Trace = []*cmttypes.LightBlock{b.Trace[0], b.Trace[len(b.Trace)-1]}
		var cannot proofs.ErrCannotSkip
		if _, err := check.Verify([]check.Bundle{short}, pin, now, -1, "", nil); !errors.As(err, &cannot) {
			t.Errorf("a trace with its middle left out: %v", err)
		}
	}
}
