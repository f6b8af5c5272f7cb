// Package e2e runs a real ttld node in process (CometBFT with the application, on
// loopback ports and a temporary home) and drives it through its RPC only, as a user
// would: transitions signed and broadcast by package client, reads checked with
// proofs against signed headers. StartNode is the harness; the tests are the
// end-to-end scenarios, and other packages' tests (the CLI's) use StartNode too; Start
// runs the same node outside a test, for runnable examples.
package e2e
