// Package protocol says what is valid: protocol versions and their limits, the data
// model (identities, addresses, credits, data contracts and their document types),
// state transitions with their wire encoding and sign bytes, structure validation, and
// the stable consensus error codes. Contracts are parsed against a meta-schema of their
// protocol version, embedded in the binary (docs/CONTRACTS.md).
//
// Nothing here reads the clock, the environment, randomness, files or the network, and
// nothing imports another package of this module: every other package builds on this one.
package protocol
