// Package client talks to a ttld node over the CometBFT RPC: it signs state
// transitions with the chain id and the signer's next nonce, broadcasts them
// (broadcast_tx_sync or broadcast_tx_commit) and reports their code and fee, and it
// reads addresses, identities and address balance changes through abci_query, with
// their Merkle proofs checked by proofs.Verifier when asked.
//
// Heights follow abci_query: an answer at height H is the state after block H, and
// its proof is checked against the app hash of header H+1 (proofs owns that rule; a
// verified read waits for header H+1 to exist).
package client
