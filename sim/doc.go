// Package sim drives the application block by block from a seed, in the style of the
// Cosmos SDK's determinism simulations: random valid and invalid transitions of every
// kind the chain supports, block times that jump from seconds to days, and invariant
// checks after every block. The same seed gives the same blocks, so two runs must give
// the same app hash at every height; a failure names the seed and the height.
//
// Document time to live (protocol version 14): an even seed's chain starts on 14, an
// odd one's on 13 and upgrades at a height of the seed; the contracts include types
// with a ttl, whose documents expire as block times jump, and a flood mode builds a
// backlog of expired documents. After every block CheckCleanup holds the documents
// cleanup to its budget: nothing due is left unless the count or weight budget was
// used, oldest first.
//
// sim is a test and tooling package: it sits outside the deterministic core and may use
// math/rand, which it seeds itself.
package sim
