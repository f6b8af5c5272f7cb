// Package lint holds the repository's lint rules, written as tests: the deterministic
// core (protocol, query, feeschedule, drive, app) may not read the clock, randomness,
// the environment, files or the network, may not start goroutines or use floats, and
// each package imports only the packages below it in docs/ARCHITECTURE.md's table.
package lint
