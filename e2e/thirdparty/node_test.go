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
	"github.com/ttld-dev/ttld/protocol"
)

// TestThirdPartyVerifier checks an answer of every path from a real node with this
// package's verifier alone: the proof with cosmos/ics23, the app hash with header H+1
// signed by the genesis validators. ttld's own client only sets the chain up.
func TestThirdPartyVerifier(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
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
	devAddr := dev.Address()
	id := protocol.NewIdentityID(devAddr, create.Nonce)
	var nobody protocol.Address
	noID := protocol.NewIdentityID(nobody, 1)

	rpc, err := rpchttp.New(env.RPC, "/websocket")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		path    string
		data    []byte
		entries bool // expect a non-empty answer
	}{
		{"/key", []byte{104, 's'}, true},
		{"/address", devAddr[:], true},
		{"/address", nobody[:], false},
		{"/identity", id[:], true},
		{"/identity", noID[:], false},
		{"/address-changes/blocks", binary.BigEndian.AppendUint64(nil, 0), true},
		{"/address-changes/compacted", binary.BigEndian.AppendUint64(nil, 0), false},
		{"/epoch", binary.BigEndian.AppendUint32(nil, 0), true},
		{"/epoch", binary.BigEndian.AppendUint32(nil, 40), false},
		{"/pools", nil, true},
		{"/pending-refunds", nil, false},
		{"/total-credits", nil, true},
		{"/key", []byte{48, 'u'}, true},
	} {
		res, err := rpc.ABCIQueryWithOptions(ctx, q.path, q.data, rpcclient.ABCIQueryOptions{Prove: true})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Response
		if r.Code != 0 || r.ProofOps == nil {
			t.Fatalf("%s %X: code %d, proof %v", q.path, q.data, r.Code, r.ProofOps)
		}
		root, _, err := SignedAppHash(ctx, rpc, e2e.ChainID, env.Trusted, r.Height, 10*time.Second)
		if err != nil {
			t.Fatalf("%s: header %d: %v", q.path, r.Height+1, err)
		}
		target, err := TargetOf(q.path, q.data)
		if err != nil {
			t.Fatal(err)
		}
		if target.Key != nil {
			if err := VerifySingle(root, target.Key, r.Value, r.ProofOps.Ops); err != nil {
				t.Fatalf("%s %X: %v", q.path, q.data, err)
			}
			if (len(r.Value) > 0) != q.entries {
				t.Fatalf("%s %X: value %X", q.path, q.data, r.Value)
			}
			// another value does not verify
			if err := VerifySingle(root, target.Key, append(r.Value, 1), r.ProofOps.Ops); err == nil {
				t.Fatalf("%s %X: another value verifies", q.path, q.data)
			}
			continue
		}
		entries, err := VerifyRange(root, target.Start, target.End, r.Value, r.Info == "more", r.ProofOps.Ops)
		if err != nil {
			t.Fatalf("%s %X: %v", q.path, q.data, err)
		}
		if (len(entries) > 0) != q.entries {
			t.Fatalf("%s %X: %d entries", q.path, q.data, len(entries))
		}
		if len(entries) > 0 {
			dropped := encodeEntries(entries[1:])
			if _, err := VerifyRange(root, target.Start, target.End, dropped, false, r.ProofOps.Ops); err == nil {
				t.Fatalf("%s %X: the answer without its first entry verifies", q.path, q.data)
			}
		}
	}
}
