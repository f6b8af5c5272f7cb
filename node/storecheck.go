package node

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	cmtdb "github.com/cometbft/cometbft-db"
	cmtjson "github.com/cometbft/cometbft/libs/json"
	cmtstate "github.com/cometbft/cometbft/proto/tendermint/state"
	sm "github.com/cometbft/cometbft/state"
	"github.com/cometbft/cometbft/store"
	cmttypes "github.com/cometbft/cometbft/types"
	lerrors "github.com/syndtr/goleveldb/leveldb/errors"
	"github.com/syndtr/goleveldb/leveldb/opt"

	"github.com/ttld-dev/ttld/drive"
)

// RecoverCorrupt runs fn, which reads the database at path (at height, 0: none in
// particular), and turns a panic into ErrCorruptStore. NB: CometBFT's block store and
// parts of its state store panic on a record that does not decode, instead of
// returning an error.
func RecoverCorrupt(path string, height int64, fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok {
				e = fmt.Errorf("%v", r)
			}
			err = ErrCorruptStore{Path: path, Height: height, Err: e}
		}
	}()
	fn()
	return nil
}

// CorruptOnOpen classifies an error opening the goleveldb database at path: damaged
// or truncated files are ErrCorruptStore; anything else (a lock held by a running
// node, a missing directory) is returned as it is.
func CorruptOnOpen(path string, err error) error {
	if err != nil && lerrors.IsCorrupted(err) {
		return ErrCorruptStore{Path: path, Err: err}
	}
	return err
}

// stateKey is where CometBFT v0.38 keeps its latest state (state/store.go).
var stateKey = []byte("stateKey")

// LoadCometState loads CometBFT's latest state from its state database db at path;
// an empty State when none is saved. NB: sm.Store.Load exits the process (cmtos.Exit)
// on a record that does not decode, so the record is decoded here first.
func LoadCometState(db cmtdb.DB, path string) (sm.State, error) {
	var raw []byte
	var err error
	if perr := RecoverCorrupt(path, 0, func() { raw, err = db.Get(stateKey) }); perr != nil {
		return sm.State{}, perr
	}
	if err != nil {
		return sm.State{}, ErrCorruptStore{Path: path, Err: err}
	}
	if len(raw) > 0 {
		if err := new(cmtstate.State).Unmarshal(raw); err != nil {
			return sm.State{}, ErrCorruptStore{Path: path, Err: fmt.Errorf("saved state: %w", err)}
		}
	}
	var state sm.State
	if perr := RecoverCorrupt(path, 0, func() { state, err = sm.NewStore(db, sm.StoreOptions{}).Load() }); perr != nil {
		return sm.State{}, perr
	}
	if err != nil {
		return sm.State{}, ErrCorruptStore{Path: path, Err: err}
	}
	return state, nil
}

// genesisDocKey is where CometBFT v0.38 keeps, in its state database, the genesis
// document the chain started from (node/setup.go). NB: once it is there CometBFT uses
// it and never reads genesis.json again, so a changed or foreign genesis file goes
// unnoticed unless checked here.
var genesisDocKey = []byte("genesisDoc")

// checkStores reads the home's CometBFT databases before CometBFT opens them and
// refuses, naming the file, what CometBFT would panic on or silently accept: a
// damaged database, a state database made from another genesis, an application state
// ahead of the block store or with another root at the height both hold.
//
// A node that joined by state sync holds, until block sync saves the block after the
// snapshot, an application state at the snapshot's height, CometBFT's state at the same
// height and an empty block store: that is accepted, as CometBFT's handshake accepts it.
// With state sync on and no CometBFT state, an application state is accepted too: it is
// what a restore left that CometBFT did not record, and the next restore replaces it
// (abci.Application.OfferSnapshot).
func checkStores(dbDir, genesisFile string, gen *cmttypes.GenesisDoc, app *drive.Store, stateSync bool) error {
	statePath := filepath.Join(dbDir, "state.db")
	blockPath := filepath.Join(dbDir, "blockstore.db")
	var state sm.State
	if exists(statePath) {
		db, err := cmtdb.NewGoLevelDBWithOpts("state", dbDir, &opt.Options{ReadOnly: true, ErrorIfMissing: true})
		if err != nil {
			return CorruptOnOpen(statePath, err)
		}
		defer db.Close()
		if err := checkGenesis(db, statePath, genesisFile, gen); err != nil {
			return err
		}
		if state, err = LoadCometState(db, statePath); err != nil {
			return err
		}
	}
	var storeHeight int64
	if exists(blockPath) {
		db, err := cmtdb.NewGoLevelDBWithOpts("blockstore", dbDir, &opt.Options{ReadOnly: true, ErrorIfMissing: true})
		if err != nil {
			return CorruptOnOpen(blockPath, err)
		}
		defer db.Close()
		if err := RecoverCorrupt(blockPath, 0, func() {
			bs := store.NewBlockStore(db)
			storeHeight = bs.Height()
			if storeHeight > 0 {
				bs.LoadBlockMeta(storeHeight)
			}
		}); err != nil {
			return err
		}
	}
	appHeight, appHash := app.LastCommit()
	appPath := filepath.Join(dbDir, ApplicationDBName+".db")
	switch {
	case !state.IsEmpty() && state.ChainID != gen.ChainID:
		return ErrGenesisMismatch{StateDB: statePath, GenesisFile: genesisFile, Field: "chain id", Stored: state.ChainID, File: gen.ChainID}
	case appHeight > storeHeight && storeHeight == 0 && appHeight == state.LastBlockHeight && bytes.Equal(appHash, state.AppHash):
	case appHeight > storeHeight && stateSync && state.LastBlockHeight == 0:
	case appHeight > storeHeight:
		return ErrStoresDisagree{ApplicationDB: appPath, Reason: fmt.Sprintf("it holds height %d, the block store only %d (a data directory of another chain, or a block store deleted without it)", appHeight, storeHeight)}
	case appHeight > 0 && appHeight == state.LastBlockHeight && !bytes.Equal(appHash, state.AppHash):
		return ErrStoresDisagree{ApplicationDB: appPath, Reason: fmt.Sprintf("its root at height %d is %X, CometBFT's state has app hash %X", appHeight, appHash, state.AppHash)}
	}
	return nil
}

// checkGenesis compares the genesis CometBFT stored in the state database with the
// home's genesis file, field by field so that formatting does not count.
func checkGenesis(db cmtdb.DB, statePath, genesisFile string, gen *cmttypes.GenesisDoc) error {
	var raw []byte
	var err error
	if perr := RecoverCorrupt(statePath, 0, func() { raw, err = db.Get(genesisDocKey) }); perr != nil {
		return perr
	}
	if err != nil {
		return ErrCorruptStore{Path: statePath, Err: err}
	}
	if len(raw) == 0 {
		return nil
	}
	var stored *cmttypes.GenesisDoc
	if err := cmtjson.Unmarshal(raw, &stored); err != nil {
		return ErrCorruptStore{Path: statePath, Err: fmt.Errorf("stored genesis: %w", err)}
	}
	mismatch := func(field, s, f string) error {
		return ErrGenesisMismatch{StateDB: statePath, GenesisFile: genesisFile, Field: field, Stored: s, File: f}
	}
	switch {
	case stored.ChainID != gen.ChainID:
		return mismatch("chain id", stored.ChainID, gen.ChainID)
	case !stored.GenesisTime.Equal(gen.GenesisTime):
		return mismatch("genesis time", stored.GenesisTime.String(), gen.GenesisTime.String())
	case stored.InitialHeight != gen.InitialHeight && gen.InitialHeight != 0:
		return mismatch("initial height", fmt.Sprint(stored.InitialHeight), fmt.Sprint(gen.InitialHeight))
	case !bytes.Equal(stored.ValidatorHash(), gen.ValidatorHash()):
		return mismatch("validators hash", fmt.Sprintf("%X", stored.ValidatorHash()), fmt.Sprintf("%X", gen.ValidatorHash()))
	case !sameJSON(stored.AppState, gen.AppState):
		return mismatch("app state", "one", "another")
	}
	return nil
}

func sameJSON(a, b []byte) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}
