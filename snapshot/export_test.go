package snapshot

// What the tests of package snapshot_test use of the package's own: they run a
// simulated chain (sim), which imports abci, which imports this package.
var (
	AppendItem  = appendItem
	EncodeChunk = encodeChunk
	ChunkItems  = chunkItems
	// ExportFormat is Export in a format of choice: a format-1 snapshot, which this
	// build restores and no longer takes.
	ExportFormat = export
)

const PartialSuffix = partialSuffix

// ImportEnded is closed when r's import goroutine has ended.
func (r *Restorer) ImportEnded() <-chan struct{} { return r.done }
