// Package replay checks that the application is deterministic against a node's own
// history: it reads the node's CometBFT block store (the node stopped, or a copy of its
// data), re-executes every block from genesis into a fresh application state in a
// temporary directory, and compares the app hash after each block with the AppHash of
// the next header, and the block's results with that header's LastResultsHash. On the
// first mismatch it stops and reports the height, both hashes, the state changes the
// replayed block made, and, when the node's own state of that height is still kept,
// every key where the node's state and the replay differ.
//
// Blocks execute one at a time, in order, through the application's FinalizeBlock and
// Commit, as a node's do; they are loaded, and their signatures verified into the
// application's remembered signatures, ahead of their execution on every core
// (ahead.go), which changes how fast a block's checks are answered, never what.
//
// Nothing is written into the node's home: its databases are opened read-only.
package replay
