package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	cmtdb "github.com/cometbft/cometbft-db"
	abcitypes "github.com/cometbft/cometbft/abci/types"
	sm "github.com/cometbft/cometbft/state"
	"github.com/cometbft/cometbft/store"
	cmttypes "github.com/cometbft/cometbft/types"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/rs/zerolog"
	"github.com/syndtr/goleveldb/leveldb/opt"

	"github.com/ttld-dev/ttld/abci"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/node"
)

// Options configure a replay.
type Options struct {
	Home string
	// From is the first height whose hashes are compared (0: the first block). Blocks
	// before it are executed all the same: the state is rebuilt from genesis.
	From int64
	// To is the last height replayed (0: the store's last block).
	To int64
	// Progress, when set, is called after every block with the count done and the total.
	Progress func(done, total int64)
	Logger   zerolog.Logger
	// Tamper, when set, runs on the working state and the block's results after a block
	// executes and before its hashes are taken: a test's way to build an application
	// that applies one height differently, so the replay must pinpoint it.
	Tamper func(height int64, kv drive.KV, res *abcitypes.ResponseFinalizeBlock) error
}

// Summary is the outcome of a replay.
type Summary struct {
	ChainID         string    `json:"chain_id"`
	From            int64     `json:"from"`
	To              int64     `json:"to"`
	Blocks          int64     `json:"blocks_replayed"`
	Checked         int64     `json:"blocks_checked"`
	Seconds         float64   `json:"seconds"`
	BlocksPerSecond float64   `json:"blocks_per_second"`
	Verdict         string    `json:"verdict"` // "match" or "mismatch"
	Mismatch        *Mismatch `json:"mismatch,omitempty"`
	// Unchecked names the last block when the node stored it but saved no state after
	// it (it stopped before executing it): no header and no saved state carry its app
	// hash. The last block the node executed is checked against its saved state.
	Unchecked int64 `json:"unchecked_height,omitempty"`
	// LastFromState: the last block checked had no next header and was checked
	// against CometBFT's saved state.
	LastFromState bool `json:"last_checked_against_saved_state,omitempty"`
}

// Mismatch describes the first divergence.
type Mismatch struct {
	Height int64  `json:"height"`
	What   string `json:"what"` // "app_hash" or "results_hash"
	// Header is the hash the next header carries (for the node's last block: the one
	// its saved state holds); Replayed what the replay computed.
	Header   HexBytes `json:"header"`
	Replayed HexBytes `json:"replayed"`
	// Changes are the state changes the replayed block made.
	Changes []Change `json:"changes"`
	// NodeDiff lists the keys where the node's own state at Height differs from the
	// replay (Old: the node's, New: the replay's); NodeDiffNote says why it is absent.
	NodeDiff     []Change `json:"node_diff,omitempty"`
	NodeDiffNote string   `json:"node_diff_note,omitempty"`
}

// Change is a drive.Change rendered for people and JSON.
type Change struct {
	Kind string   `json:"kind"`
	Key  HexBytes `json:"key"`
	Old  HexBytes `json:"old,omitempty"`
	New  HexBytes `json:"new,omitempty"`
}

// HexBytes marshal as upper-case hex, like CometBFT's hashes.
type HexBytes []byte

func (h HexBytes) MarshalText() ([]byte, error) { return []byte(fmt.Sprintf("%X", []byte(h))), nil }
func (h HexBytes) String() string               { return fmt.Sprintf("%X", []byte(h)) }

// ErrNoBlocks: the home's block store holds no block.
type ErrNoBlocks struct{ Home string }

func (e ErrNoBlocks) Error() string { return fmt.Sprintf("replay: %s has no blocks to replay", e.Home) }

// ErrStoreUnavailable: a database of the home cannot be opened read-only: missing,
// corrupt, or locked by a running node.
type ErrStoreUnavailable struct {
	Path string
	Err  error
}

func (e ErrStoreUnavailable) Error() string {
	return fmt.Sprintf("replay: cannot open %s read-only (is the node still running? stop it or replay a copy of its data): %v", e.Path, e.Err)
}
func (e ErrStoreUnavailable) Unwrap() error { return e.Err }

// ErrEmptyRange: --from and --to select no block of the store: nothing would be
// checked, which is not a match.
type ErrEmptyRange struct{ From, To, First, Last int64 }

func (e ErrEmptyRange) Error() string {
	to := "the last block"
	if e.To != 0 {
		to = fmt.Sprint(e.To)
	}
	return fmt.Sprintf("replay: --from %d to %s selects no block to check: the block store holds heights %d to %d", e.From, to, e.First, e.Last)
}

// ErrMissingBlock: the block store says it holds a height whose block it cannot find.
type ErrMissingBlock struct {
	Path   string
	Height int64
}

func (e ErrMissingBlock) Error() string {
	return fmt.Sprintf("replay: %s has no block at height %d, below its last height", e.Path, e.Height)
}

// ErrPruned: the block store no longer holds the blocks from genesis on.
type ErrPruned struct{ Base, Initial int64 }

func (e ErrPruned) Error() string {
	return fmt.Sprintf("replay: the block store starts at %d, not at the initial height %d: blocks were pruned", e.Base, e.Initial)
}

func openReadOnly(name, dir string) (cmtdb.DB, error) {
	path := filepath.Join(dir, name+".db")
	if _, err := os.Stat(path); err != nil {
		return nil, ErrStoreUnavailable{Path: path, Err: err}
	}
	db, err := cmtdb.NewGoLevelDBWithOpts(name, dir, &opt.Options{ReadOnly: true, ErrorIfMissing: true})
	if err != nil {
		if corrupt := node.CorruptOnOpen(path, err); corrupt != err {
			return nil, corrupt
		}
		return nil, ErrStoreUnavailable{Path: path, Err: err}
	}
	return db, nil
}

// Run replays the home's blocks.
func Run(ctx context.Context, opts Options) (Summary, error) {
	gen, err := node.LoadGenesis(opts.Home)
	if err != nil {
		return Summary{}, err
	}
	cfg, err := node.LoadConfig(opts.Home)
	if err != nil {
		return Summary{}, err
	}
	dataDir := cfg.DBDir()
	if _, err := os.Stat(filepath.Join(dataDir, "blockstore.db")); errors.Is(err, os.ErrNotExist) {
		return Summary{}, ErrNoBlocks{Home: opts.Home}
	}
	blockDB, err := openReadOnly("blockstore", dataDir)
	if err != nil {
		return Summary{}, err
	}
	defer blockDB.Close()
	stateDB, err := openReadOnly("state", dataDir)
	if err != nil {
		return Summary{}, err
	}
	defer stateDB.Close()
	blockPath := filepath.Join(dataDir, "blockstore.db")
	statePath := filepath.Join(dataDir, "state.db")
	var blocks *store.BlockStore
	if err := node.RecoverCorrupt(blockPath, 0, func() { blocks = store.NewBlockStore(blockDB) }); err != nil {
		return Summary{}, err
	}
	states := sm.NewStore(stateDB, sm.StoreOptions{DiscardABCIResponses: false})
	saved, err := node.LoadCometState(stateDB, statePath)
	if err != nil {
		return Summary{}, err
	}

	last := blocks.Height()
	if last == 0 {
		return Summary{}, ErrNoBlocks{Home: opts.Home}
	}
	if blocks.Base() > gen.InitialHeight {
		return Summary{}, ErrPruned{Base: blocks.Base(), Initial: gen.InitialHeight}
	}
	if opts.From < 0 || opts.To < 0 || (opts.To > 0 && opts.From > opts.To) || opts.From > last {
		return Summary{}, ErrEmptyRange{From: opts.From, To: opts.To, First: gen.InitialHeight, Last: last}
	}
	to := last
	if opts.To > 0 && opts.To < last {
		to = opts.To
	}
	from := gen.InitialHeight
	if opts.From > from {
		from = opts.From
	}
	sum := Summary{ChainID: gen.ChainID, From: from, To: to, Verdict: "match"}
	// blocksAt loads block h and the meta of h+1; a record that does not decode (the
	// block store panics on it) is an ErrCorruptStore at the height it belongs to.
	blocksAt := func(h int64) (block *cmttypes.Block, next *cmttypes.BlockMeta, err error) {
		if err := node.RecoverCorrupt(blockPath, h, func() { block = blocks.LoadBlock(h) }); err != nil || block == nil {
			return nil, nil, err
		}
		err = node.RecoverCorrupt(blockPath, h+1, func() { next = blocks.LoadBlockMeta(h + 1) })
		return block, next, err
	}

	tmp, err := os.MkdirTemp("", "ttld-replay-")
	if err != nil {
		return sum, err
	}
	defer os.RemoveAll(tmp)
	appDB, err := dbm.NewGoLevelDB("application", tmp, nil)
	if err != nil {
		return sum, err
	}
	defer appDB.Close()
	st, err := drive.NewStore(appDB, drive.Options{InitialVersion: uint64(gen.InitialHeight)})
	if err != nil {
		return sum, err
	}
	defer st.Close()
	app, err := abci.New(st, opts.Logger, nil)
	if err != nil {
		return sum, err
	}
	// The genesis validators, as CometBFT's handshake hands them to InitChain.
	vals := make([]*cmttypes.Validator, len(gen.Validators))
	for i, v := range gen.Validators {
		vals[i] = cmttypes.NewValidator(v.PubKey, v.Power)
	}
	initRes, err := app.InitChain(ctx, &abcitypes.RequestInitChain{
		Time: gen.GenesisTime, ChainId: gen.ChainID, InitialHeight: gen.InitialHeight, AppStateBytes: gen.AppState,
		Validators: cmttypes.TM2PB.ValidatorUpdates(cmttypes.NewValidatorSet(vals)),
	})
	if err != nil {
		return sum, err
	}
	// The first header carries the genesis state's root.
	var first *cmttypes.BlockMeta
	if err := node.RecoverCorrupt(blockPath, gen.InitialHeight, func() { first = blocks.LoadBlockMeta(gen.InitialHeight) }); err != nil {
		return sum, err
	}
	if first != nil && !bytes.Equal(first.Header.AppHash, initRes.AppHash) {
		sum.Verdict = "mismatch"
		sum.Mismatch = &Mismatch{Height: gen.InitialHeight - 1, What: "app_hash", Header: HexBytes(first.Header.AppHash), Replayed: initRes.AppHash}
		return sum, nil
	}

	start := time.Now()
	total := to - gen.InitialHeight + 1
	for h := gen.InitialHeight; h <= to; h++ {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		block, next, err := blocksAt(h)
		if err != nil {
			return sum, err
		}
		if block == nil {
			return sum, ErrMissingBlock{Path: blockPath, Height: h}
		}
		res, err := app.FinalizeBlock(ctx, finalizeRequest(block))
		if err != nil {
			return sum, fmt.Errorf("replay: block %d: %w", h, err)
		}
		appHash := res.AppHash
		if opts.Tamper != nil {
			if err := opts.Tamper(h, st.Working(), res); err != nil {
				return sum, err
			}
			appHash = st.WorkingHash()
		}
		if _, err := app.Commit(ctx, &abcitypes.RequestCommit{}); err != nil {
			return sum, fmt.Errorf("replay: commit %d: %w", h, err)
		}
		sum.Blocks++
		if opts.Progress != nil {
			opts.Progress(sum.Blocks, total)
		}
		// The app hash and results hash of block h are in header h+1; for the last
		// block, which has no next header yet, CometBFT's saved state holds them.
		var wantApp, wantResults []byte
		switch {
		case next != nil:
			wantApp, wantResults = next.Header.AppHash, next.Header.LastResultsHash
		case saved.LastBlockHeight == h:
			wantApp, wantResults = saved.AppHash, saved.LastResultsHash
			sum.LastFromState = h >= from
		default:
			// The node saved block h and stopped before executing it.
			sum.Unchecked = h
		}
		if h < from || wantApp == nil {
			continue
		}
		sum.Checked++
		if !bytes.Equal(wantApp, appHash) {
			sum.Mismatch = mismatch(st, opts.Home, dataDir, h, "app_hash", wantApp, appHash)
		} else if rh := sm.TxResultsHash(res.TxResults); !bytes.Equal(wantResults, rh) {
			sum.Mismatch = mismatch(st, opts.Home, dataDir, h, "results_hash", wantResults, rh)
		}
		if sum.Mismatch != nil {
			sum.Verdict = "mismatch"
			break
		}
		if stored, err := states.LoadFinalizeBlockResponse(h); err == nil && len(stored.TxResults) != len(res.TxResults) {
			return sum, fmt.Errorf("replay: block %d: the node stored %d results, the replay made %d", h, len(stored.TxResults), len(res.TxResults))
		}
	}
	sum.Seconds = time.Since(start).Seconds()
	if sum.Seconds > 0 {
		sum.BlocksPerSecond = float64(sum.Blocks) / sum.Seconds
	}
	return sum, nil
}

func finalizeRequest(b *cmttypes.Block) *abcitypes.RequestFinalizeBlock {
	txs := make([][]byte, len(b.Txs))
	for i, tx := range b.Txs {
		txs[i] = tx
	}
	return &abcitypes.RequestFinalizeBlock{
		Txs:                txs,
		Hash:               b.Hash(),
		Height:             b.Height,
		Time:               b.Time,
		NextValidatorsHash: b.NextValidatorsHash,
		ProposerAddress:    b.ProposerAddress,
	}
}

// mismatch gathers what explains a divergence at height h.
func mismatch(st *drive.Store, home, dataDir string, h int64, what string, header, replayed []byte) *Mismatch {
	m := &Mismatch{Height: h, What: what, Header: header, Replayed: replayed}
	if changes, err := st.VersionChanges(h); err == nil {
		m.Changes = render(changes)
	}
	m.NodeDiff, m.NodeDiffNote = nodeDiff(st, dataDir, h)
	return m
}

// nodeDiff compares the node's own saved state at h with the replay's.
func nodeDiff(st *drive.Store, dataDir string, h int64) ([]Change, string) {
	db, err := dbm.NewGoLevelDBWithOpts("application", dataDir, &opt.Options{ReadOnly: true, ErrorIfMissing: true})
	if err != nil {
		return nil, "the node's application state cannot be opened: " + err.Error()
	}
	defer db.Close()
	nodeStore, err := drive.NewStore(readOnlyDB{db}, drive.Options{CacheSize: 10_000})
	if err != nil {
		return nil, "the node's application state cannot be loaded: " + err.Error()
	}
	nodeState, err := nodeStore.Saved(h)
	if err != nil {
		return nil, "the node no longer keeps its state of this height: " + err.Error()
	}
	ours, err := st.Saved(h)
	if err != nil {
		return nil, err.Error()
	}
	diff, err := drive.Diff(nodeState, ours)
	if err != nil {
		return nil, err.Error()
	}
	if len(diff) == 0 {
		return nil, "the node's state at this height equals the replay's: the node's header disagrees with its own state"
	}
	return render(diff), ""
}

func render(in []drive.Change) []Change {
	out := make([]Change, len(in))
	for i, c := range in {
		out[i] = Change{Kind: string(c.Kind), Key: c.Key, Old: c.Old, New: c.New}
	}
	return out
}

// readOnlyDB refuses writes, so loading the node's tree can never change its home.
type readOnlyDB struct{ dbm.DB }

var errReadOnly = errors.New("replay: the node's database is opened read-only")

func (r readOnlyDB) Set([]byte, []byte) error     { return errReadOnly }
func (r readOnlyDB) SetSync([]byte, []byte) error { return errReadOnly }
func (r readOnlyDB) Delete([]byte) error          { return errReadOnly }
func (r readOnlyDB) DeleteSync([]byte) error      { return errReadOnly }
