package thirdparty

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"testing"
	"time"

	rpcclient "github.com/cometbft/cometbft/rpc/client"
	rpchttp "github.com/cometbft/cometbft/rpc/client/http"

	"github.com/ttld-dev/ttld/e2e"
)

// TestThirdPartyFollowsTheSet: once the chain's validator set has changed
// (docs/STATE.md, "Validators"), this package's verifier, following docs/PROOFS.md's
// "Following the validator set" with CometBFT's light client from the genesis set,
// verifies /validators at the latest height and reads the new set from it; the
// genesis set alone no longer verifies the header.
func TestThirdPartyFollowsTheSet(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	added := ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey)
	changed := env.AddValidator(t, added, 3)
	if _, err := env.Client.WaitForHeight(ctx, changed+3); err != nil {
		t.Fatal(err)
	}
	rpc, err := rpchttp.New(env.RPC, "/websocket")
	if err != nil {
		t.Fatal(err)
	}
	lc, err := LightClient(ctx, e2e.ChainID, env.RPC, nil, env.Trusted, 1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rpc.ABCIQueryWithOptions(ctx, "/validators", nil, rpcclient.ABCIQueryOptions{Prove: true})
	if err != nil || res.Response.Code != 0 {
		t.Fatalf("/validators: %+v %v", res, err)
	}
	r := res.Response
	if r.Height < changed+1 {
		t.Fatalf("answered at %d, the set changed at %d", r.Height, changed)
	}
	root, _, err := FollowedAppHash(ctx, rpc, lc, r.Height, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	target, err := TargetOf("/validators", nil)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := VerifyRange(root, target.Start, target.End, r.Value, r.Info == "more", r.ProofOps.Ops)
	if err != nil {
		t.Fatal(err)
	}
	// Each entry: key 104 'V' 's' address, value key (32) || power u64 || operator (32).
	var total uint64
	for _, e := range entries {
		if len(e.Key) != 23 || len(e.Value) != 72 {
			t.Fatalf("entry %X = %X", e.Key, e.Value)
		}
		total += binary.BigEndian.Uint64(e.Value[32:40])
	}
	if len(entries) != 2 || total != 13 {
		t.Fatalf("%d validators of power %d, want 2 of 13", len(entries), total)
	}
	if _, _, err := SignedAppHash(ctx, rpc, e2e.ChainID, env.Trusted, r.Height, time.Second); err == nil {
		t.Fatal("the genesis set alone verified a header of the new set")
	}
}
