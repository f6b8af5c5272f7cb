// Package genesis says how a chain starts: the application state carried in CometBFT's
// genesis file, its validation, and InitChain, which writes it into the tree.
package genesis
