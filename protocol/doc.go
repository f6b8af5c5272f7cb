// Package protocol says what is valid: protocol versions and their limits, the data
// model (identities, addresses, credits), state transitions with their wire encoding and
// sign bytes, structure validation, and the stable consensus error codes.
//
// Nothing here reads the clock, the environment, randomness, files or the network, and
// nothing imports another package of this module: every other package builds on this one.
package protocol
