package check_test

import (
	"context"
	"testing"

	rpcclient "github.com/cometbft/cometbft/rpc/client"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/web/check"
)

// TestCheck: an address's proven answer, bundled with the header after it, checks
// against the genesis set; a byte flipped in the value, in the proof or in the commit's
// signature, a proof of another key, and another validator set are each refused.
func TestCheck(t *testing.T) {
	env := e2e.StartNode(t)
	ctx := context.Background()
	bundle := func() check.Bundle {
		t.Helper()
		addr := env.Dev.Address()
		res, err := env.Client.RPC().ABCIQueryWithOptions(ctx, proofs.PathAddress, addr[:], rpcclient.ABCIQueryOptions{Prove: true})
		if err != nil {
			t.Fatal(err)
		}
		next := res.Response.Height + 1
		if _, err := env.Client.WaitForHeight(ctx, next); err != nil {
			t.Fatal(err)
		}
		commit, err := env.Client.RPC().(rpcclient.SignClient).Commit(ctx, &next)
		if err != nil {
			t.Fatal(err)
		}
		return check.Bundle{ChainID: e2e.ChainID, Path: proofs.PathAddress, Data: addr[:], Response: res.Response, SignedHeader: &commit.SignedHeader}
	}
	b := bundle()
	raw, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	again, err := check.DecodeBundle(raw)
	if err != nil {
		t.Fatal(err)
	}
	r, err := check.Check(again, env.Trusted)
	if err != nil || !r.Present {
		t.Fatalf("the node's answer: %+v %v", r, err)
	}
	for name, spoil := range map[string]func(b *check.Bundle){
		"value":     func(b *check.Bundle) { b.Response.Value[0] ^= 1 },
		"proof":     func(b *check.Bundle) { ops := b.Response.ProofOps.Ops; ops[0].Data[len(ops[0].Data)-1] ^= 1 },
		"signature": func(b *check.Bundle) { b.SignedHeader.Commit.Signatures[0].Signature[0] ^= 1 },
		"app hash":  func(b *check.Bundle) { b.SignedHeader.Header.AppHash[0] ^= 1 },
		"key":       func(b *check.Bundle) { b.Data = make([]byte, 20) },
		"chain":     func(b *check.Bundle) { b.ChainID = "other" },
	} {
		c, err := check.DecodeBundle(raw)
		if err != nil {
			t.Fatal(err)
		}
		spoil(&c)
		if _, err := check.Check(c, env.Trusted); err == nil {
			t.Errorf("a bundle with its %s changed was accepted", name)
		}
	}
	if _, err := check.CheckShown(again, env.Trusted, r.Value[len(r.Value)-8:]); err != nil {
		t.Errorf("the value's end, shown: %v", err)
	}
	if _, err := check.CheckShown(again, env.Trusted, []byte{1, 2, 3}); err == nil {
		t.Error("a page showing another value than the proof's was accepted")
	}
	if _, err := check.Check(again, nil); err == nil {
		t.Error("a bundle checked against no validator set was accepted")
	}
}
