package snapshot

// What the tests of package snapshot_test use of the package's own: they run a
// simulated chain (sim), which imports abci, which imports this package.
var AppendItem = appendItem

const PartialSuffix = partialSuffix
