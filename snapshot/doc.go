// Package snapshot carries a chain's state to a node that has none: a saved version of
// the state tree cut into chunks that a joining node checks one by one and imports,
// accepting the result only when its root is the app hash its light client trusts
// (docs/STATE.md, "Snapshots"). It answers how a state travels; CometBFT's state sync
// moves the chunks, and abci serves and restores them.
package snapshot
