// Package lightchain makes chains of signed light blocks whose validator set changes as
// a test says, with forks of them, and serves them to CometBFT's light client as a
// provider: the ground the tests of following a validator set stand on (proofs'
// traces, the client's light client, the web view's bundles). It signs with keys
// derived from their index, so a chain is the same on every run; it is for tests only.
package lightchain
