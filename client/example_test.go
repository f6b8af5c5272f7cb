package client_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"os"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/protocol"
)

// Send credits from one address to another and read the recipient's balance with its
// proof checked against a header signed by the chain's validators.
//
// The example starts a one-validator chain in process (e2e.Start), whose genesis funds
// a dev key; against a running node, Dial its RPC address and name its chain and
// validators the same way.
func Example() {
	home, err := os.MkdirTemp("", "ttld-client-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(home)
	chain, err := e2e.Start(home)
	if err != nil {
		panic(err)
	}
	defer chain.Node.Stop()

	// Trusted is the validator set every checked header must be signed by: here the
	// genesis's. Without it the client fetches each header's set from the node.
	c, err := client.Dial(chain.RPC, client.Options{ChainID: e2e.ChainID, Trusted: chain.Trusted})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	// The recipient's key comes from a fixed seed; a wallet keeps its keys in a keyring.
	recipient := protocol.AddressOf(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, ed25519.SeedSize)).Public().(ed25519.PublicKey))
	// Sign fills in the signer's next nonce and the chain id.
	tx, err := c.Sign(ctx, &protocol.AddressFundsTransfer{PubKey: chain.Dev.Pub, Recipient: recipient, Amount: 250_000}, chain.Dev.Priv)
	if err != nil {
		panic(err)
	}
	res, err := c.Broadcast(ctx, tx, true)
	if err != nil {
		panic(err)
	}
	fmt.Printf("transfer: %s, committed: %t, fee charged: %t\n", res.Code, res.Committed, res.Fee > 0)

	// The state after the transfer's block, proven: the read waits for the next header.
	st, err := c.Address(ctx, recipient, res.Height, true)
	if err != nil {
		panic(err)
	}
	fmt.Printf("verified: %t, balance: %d\n", st.Verified, st.Balance)
	// Output:
	// transfer: OK, committed: true, fee charged: true
	// verified: true, balance: 250000
}
