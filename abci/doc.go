// Package abci says how CometBFT talks to the application: it translates ABCI 2.0
// requests into calls of app, drive and proofs, and their answers into responses,
// result codes and events. It holds no business rules.
//
// FinalizeBlock stages the block in the working tree and returns its root as the app
// hash; Commit saves the version. CheckTx runs on a check state staged over the last
// saved version and reset at every Commit; Query reads saved versions only. The
// application is safe for concurrent use across CometBFT's connections, and CheckTx for
// concurrent use within the mempool's: the node's client (ClientCreator) locks each
// connection's other calls, and the check state judges concurrent transactions as one
// serial order would.
package abci
