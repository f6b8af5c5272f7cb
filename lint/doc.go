// Package lint holds the repository's lint rules, written as tests: the deterministic
// core (protocol, query, feeschedule, drive, app) may not read the clock, randomness,
// the environment, files or the network, may not start goroutines or use floats, and
// each package imports only what its row of docs/ARCHITECTURE.md's package table allows,
// packages of the rows above its own; the table and the rule are compared row by row.
package lint
