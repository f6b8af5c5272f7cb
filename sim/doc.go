// Package sim drives the application block by block from a seed, in the style of the
// Cosmos SDK's determinism simulations: random valid and invalid transitions of every
// kind the chain supports, block times that jump from seconds to days, and invariant
// checks after every block. The same seed gives the same blocks, so two runs must give
// the same app hash at every height; a failure names the seed and the height.
//
// sim is a test and tooling package: it sits outside the deterministic core and may use
// math/rand, which it seeds itself.
package sim
