package protocol_test

import (
	"bytes"
	"crypto/ed25519"
	"fmt"

	"github.com/ttld-dev/ttld/protocol"
)

// A transfer between two addresses, signed for one chain and decoded as a node decodes
// it. The keys come from fixed seeds so that the output is stable; a wallet keeps its
// key in a keyring.
func ExampleSign() {
	const chainID = "ttld-devnet"
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	recipient := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, ed25519.SeedSize)).Public().(ed25519.PublicKey)

	tx := protocol.Sign(chainID, &protocol.AddressFundsTransfer{
		PubKey:    key.Public().(ed25519.PublicKey),
		Nonce:     1,
		Recipient: protocol.AddressOf(recipient),
		Amount:    250_000,
	}, key)

	// A node decodes the bytes under the rules of its protocol version and checks the
	// signature, which a transfer's signer key lets it do without state.
	ctx, err := protocol.ContextFor(protocol.Latest, 0)
	if err != nil {
		panic(err)
	}
	signed, err := protocol.Decode(tx, ctx)
	if err != nil {
		panic(err)
	}
	transfer := signed.Transition.(*protocol.AddressFundsTransfer)
	fmt.Println("kind:", signed.Type())
	fmt.Println("size:", len(tx), "bytes, signature included")
	fmt.Println("from:", signed.Signer().Address())
	fmt.Println("to:", transfer.Recipient)
	fmt.Println("amount:", transfer.Amount, "nonce:", transfer.Nonce)
	_, err = signed.VerifyStateless(chainID, protocol.VerifyEd25519)
	fmt.Println("signature on", chainID+":", err == nil)

	// The sign bytes name the chain: the same bytes sent to another chain are refused.
	_, err = signed.VerifyStateless("ttld-mainnet", protocol.VerifyEd25519)
	code, _ := protocol.CodeOf(err)
	fmt.Println("on ttld-mainnet:", uint32(code), code)
	// Output:
	// kind: address_funds_transfer
	// size: 134 bytes, signature included
	// from: 34750f98bd59fcfc946da45aaabe933be154a4b5
	// to: 6a3803d5f059902a1c6dafbc9ba4729212f7caac
	// amount: 250000 nonce: 1
	// signature on ttld-devnet: true
	// on ttld-mainnet: 20002 InvalidSignature
}
