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

// Keep a session alive while it is used (protocol version 15): a document of a type
// with a ttl expires a ttl after its $renewedAt, which a renewal by its owner sets to
// the block time (docs/STATE.md, "Renewal"). The session type is
// docs/examples/session.json: an hour's ttl, and every replace renews too.
func Example_renewSession() {
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
	c, err := client.Dial(chain.RPC, client.Options{ChainID: e2e.ChainID, Trusted: chain.Trusted})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	send := func(t protocol.Transition) {
		tx, err := c.Sign(ctx, t, chain.Dev.Priv)
		if err != nil {
			panic(err)
		}
		if res, err := c.Broadcast(ctx, tx, true); err != nil || res.Refused() {
			panic(fmt.Sprint(res, err))
		}
	}

	// An identity funded by the dev key, which owns the session contract and its
	// sessions.
	create := &protocol.IdentityCreate{PubKey: chain.Dev.Pub, Amount: 100_000_000_000, Keys: []ed25519.PublicKey{chain.Dev.Pub}}
	send(create)
	owner := protocol.NewIdentityID(chain.Dev.Address(), create.Nonce)
	def, err := os.ReadFile("../docs/examples/session.json")
	if err != nil {
		panic(err)
	}
	contract := &protocol.DataContractCreate{Identity: owner, Definition: def}
	send(contract)
	batch := &protocol.DocumentsBatch{Identity: owner, Contract: contract.ContractID(), Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionCreate, Type: "session", Entropy: [32]byte{1}, Data: []byte(`{"user":"ada"}`)},
	}}
	id := batch.CreateID(batch.Actions[0])
	batch.Actions[0].ID = id
	send(batch)

	// The renewal names the document's next revision, as every change does.
	send(&protocol.DocumentsBatch{Identity: owner, Contract: contract.ContractID(), Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionRenew, Type: "session", ID: id, Revision: 2},
	}})
	st, err := c.Document(ctx, contract.ContractID(), "session", id, 0, true)
	if err != nil {
		panic(err)
	}
	fmt.Printf("verified: %t, renewed after its creation: %t\n", st.Verified, st.RenewedAt > st.CreatedAt)
	fmt.Printf("expires an hour after the renewal: %t, expired: %t\n", st.ExpiresAtMs == st.RenewedAt+3_600_000, st.Expired)
	// Output:
	// verified: true, renewed after its creation: true
	// expires an hour after the renewal: true, expired: false
}
