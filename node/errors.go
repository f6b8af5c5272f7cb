package node

import (
	"fmt"
	"strings"
)

// ErrAlreadyInitialized: Init found a configuration or genesis file in Home and was not
// told to overwrite it.
type ErrAlreadyInitialized struct{ Home string }

func (e ErrAlreadyInitialized) Error() string {
	return fmt.Sprintf("%s is already initialized", e.Home)
}

// ErrNotInitialized: Start found no configuration or genesis file in Home.
type ErrNotInitialized struct{ Home string }

func (e ErrNotInitialized) Error() string {
	return fmt.Sprintf("%s is not initialized: run ttld init first", e.Home)
}

// ErrStateSyncTrust: config.toml turns state sync on without the header to trust.
type ErrStateSyncTrust struct{ Home string }

func (e ErrStateSyncTrust) Error() string {
	return fmt.Sprintf("%s: state sync is on ([statesync] enable) without trust_height and trust_hash: run ttld statesync-config --home %s --node URL, URL a node of the network you trust", ConfigFile(e.Home), e.Home)
}

// ErrCorruptStore: a database of the home cannot be read as what it must hold: one of
// its files is damaged or truncated, or a record in it does not decode (CometBFT
// panics on those; the panic is recovered into this error). Path names the database;
// Height is the block whose record failed, 0 when none is known.
type ErrCorruptStore struct {
	Path   string
	Height int64
	Err    error
}

func (e ErrCorruptStore) Error() string {
	at := ""
	if e.Height > 0 {
		at = fmt.Sprintf(" at height %d", e.Height)
	}
	return fmt.Sprintf("%s is corrupt%s: %s", e.Path, at, oneLine(e.Err.Error(), 200))
}

func (e ErrCorruptStore) Unwrap() error { return e.Err }

// ErrGenesisMismatch: the home's state database was made from another genesis than the
// home's genesis file (another chain id, time, initial height, validators or app
// state): the data directory belongs to another chain.
type ErrGenesisMismatch struct {
	StateDB, GenesisFile string
	Field                string // what differs
	Stored, File         string // its value in the state database and in the file
}

func (e ErrGenesisMismatch) Error() string {
	return fmt.Sprintf("%s was made from another genesis than %s: %s %s there, %s in the file (a data directory of another chain?)", e.StateDB, e.GenesisFile, e.Field, e.Stored, e.File)
}

// ErrStoresDisagree: the application's state and CometBFT's stores in the same data
// directory describe different chains or heights that no replay can reconcile.
type ErrStoresDisagree struct {
	ApplicationDB string
	Reason        string
}

func (e ErrStoresDisagree) Error() string {
	return fmt.Sprintf("%s does not belong with the block store beside it: %s", e.ApplicationDB, e.Reason)
}

// ErrCometRefused: CometBFT refused to start on the home's data (an error or a panic
// of its own, recovered). Dir is the data directory it read.
type ErrCometRefused struct {
	Dir string
	Err error
}

func (e ErrCometRefused) Error() string {
	return fmt.Sprintf("cometbft refused the data in %s: %s", e.Dir, oneLine(e.Err.Error(), 300))
}

func (e ErrCometRefused) Unwrap() error { return e.Err }

// oneLine keeps the first line of s, at most max bytes of it: CometBFT's panic values
// can carry whole records in hex.
func oneLine(s string, max int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}
