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
	// Restored is set when the node joined by state sync: its block store starts after
	// the snapshot it restored, at this height. The replay then starts from the node's
	// own state at that height, whose root must be the app hash of the first stored
	// header (the one the light client verified), and replays every block after it.
	Restored int64 `json:"restored_from_height,omitempty"`
	// VerifiedAhead counts the signature checks verified on the blocks read ahead
	// before their execution.
	VerifiedAhead int64 `json:"signatures_verified_ahead"`
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

// ErrPruned: the block store starts after the initial height, and the node's state
// at the height before its first block, where a replay would start, is not kept.
type ErrPruned struct {
	Base, Initial int64
	Err           error
}

func (e ErrPruned) Error() string {
	return fmt.Sprintf("replay: the block store starts at %d, not at the initial height %d, and the node's state at %d, where the replay would start, is not kept: %v", e.Base, e.Initial, e.Base-1, e.Err)
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

// Run replays the home's blocks: it opens the node's stores read-only (openSource),
// settles the heights to check (span), rebuilds the state from genesis in a temporary
// replica (newReplica, initChain), checks the genesis root against the first header,
// then replays every block up to the last height (session.block), stopping at the
// first mismatch. Blocks are loaded and their signatures verified ahead, on every core
// (readAhead); they execute one at a time, in order.
func Run(ctx context.Context, opts Options) (Summary, error) {
	src, err := openSource(opts.Home)
	if err != nil {
		return Summary{}, err
	}
	defer src.close()
	from, to, err := src.span(opts.From, opts.To)
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{ChainID: src.gen.ChainID, From: from, To: to, Verdict: "match", Restored: src.first - 1}
	if src.first == src.gen.InitialHeight {
		sum.Restored = 0
	}
	rep, err := newReplica(src.gen)
	if err != nil {
		return sum, err
	}
	defer rep.close()
	if sum.Restored > 0 {
		if err = rep.restore(src, sum.Restored); err == nil {
			rep.app, err = newApp(rep.store, opts.Logger, src.gen)
		}
	} else {
		err = rep.genesis(ctx, src, &sum, opts.Logger)
	}
	if err != nil || sum.Mismatch != nil {
		return sum, err
	}
	s := session{opts: opts, src: src, rep: rep}
	start := time.Now()
	ahead := readAhead(ctx, src, rep.app, src.first, to)
	defer ahead.close()
	for sum.Mismatch == nil {
		b, err := ahead.next()
		if err != nil {
			return sum, err
		}
		if b == nil {
			break
		}
		err = s.block(ctx, b, &sum)
		ahead.done(b)
		if err != nil {
			return sum, err
		}
	}
	ahead.close()
	sum.VerifiedAhead = ahead.checked.Load()
	sum.Seconds = time.Since(start).Seconds()
	if sum.Seconds > 0 {
		sum.BlocksPerSecond = float64(sum.Blocks) / sum.Seconds
	}
	return sum, nil
}

// diverged records the first mismatch.
func (s *Summary) diverged(m *Mismatch) { s.Verdict, s.Mismatch = "mismatch", m }

// source is the node's home as the replay reads it: its genesis, its block store,
// CometBFT's state store and the state CometBFT saved last, opened read-only.
type source struct {
	home      string
	gen       *cmttypes.GenesisDoc
	dataDir   string
	blockPath string
	blockDB   cmtdb.DB
	stateDB   cmtdb.DB
	blocks    *store.BlockStore
	states    sm.Store
	saved     sm.State
	// first is the first block replayed: the initial height, or for a node that joined
	// by state sync the first block after its snapshot (span).
	first int64
}

// openSource opens home's block store and state store read-only; close releases them.
// A record that does not decode is an ErrCorruptStore.
func openSource(home string) (src *source, err error) {
	gen, err := node.LoadGenesis(home)
	if err != nil {
		return nil, err
	}
	cfg, err := node.LoadConfig(home)
	if err != nil {
		return nil, err
	}
	dataDir := cfg.DBDir()
	src = &source{home: home, gen: gen, dataDir: dataDir, blockPath: filepath.Join(dataDir, "blockstore.db")}
	if _, err := os.Stat(src.blockPath); errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoBlocks{Home: home}
	}
	defer func() {
		if err != nil {
			src.close()
			src = nil
		}
	}()
	if src.blockDB, err = openReadOnly("blockstore", dataDir); err != nil {
		return src, err
	}
	if src.stateDB, err = openReadOnly("state", dataDir); err != nil {
		return src, err
	}
	if err := node.RecoverCorrupt(src.blockPath, 0, func() { src.blocks = store.NewBlockStore(src.blockDB) }); err != nil {
		return src, err
	}
	src.states = sm.NewStore(src.stateDB, sm.StoreOptions{DiscardABCIResponses: false})
	src.saved, err = node.LoadCometState(src.stateDB, filepath.Join(dataDir, "state.db"))
	return src, err
}

// close releases the stores openSource opened.
func (s *source) close() {
	if s.stateDB != nil {
		s.stateDB.Close()
	}
	if s.blockDB != nil {
		s.blockDB.Close()
	}
}

// span settles the heights whose hashes are compared, from..to, given the options'
// from and to (0: the first and the last block), and the first block replayed: the
// block store holds every block from the initial height on, or, for a node that
// joined by state sync, from the block after its snapshot on; the range must select
// one of them.
func (s *source) span(optFrom, optTo int64) (from, to int64, err error) {
	last := s.blocks.Height()
	if last == 0 {
		return 0, 0, ErrNoBlocks{Home: s.home}
	}
	s.first = max(s.gen.InitialHeight, s.blocks.Base())
	if optFrom < 0 || optTo < 0 || (optTo > 0 && optFrom > optTo) || optFrom > last {
		return 0, 0, ErrEmptyRange{From: optFrom, To: optTo, First: s.first, Last: last}
	}
	to = last
	if optTo > 0 && optTo < last {
		to = optTo
	}
	return max(s.first, optFrom), to, nil
}

// blocksAt loads block h and the meta of h+1; a record that does not decode (the block
// store panics on it) is an ErrCorruptStore at the height it belongs to.
func (s *source) blocksAt(h int64) (block *cmttypes.Block, next *cmttypes.BlockMeta, err error) {
	if err := node.RecoverCorrupt(s.blockPath, h, func() { block = s.blocks.LoadBlock(h) }); err != nil || block == nil {
		return nil, nil, err
	}
	err = node.RecoverCorrupt(s.blockPath, h+1, func() { next = s.blocks.LoadBlockMeta(h + 1) })
	return block, next, err
}

// genesisMismatch compares the genesis state's root with the one the first header
// carries; a mismatch is reported at the height below the initial one.
func (s *source) genesisMismatch(root []byte) (*Mismatch, error) {
	var first *cmttypes.BlockMeta
	if err := node.RecoverCorrupt(s.blockPath, s.gen.InitialHeight, func() { first = s.blocks.LoadBlockMeta(s.gen.InitialHeight) }); err != nil {
		return nil, err
	}
	if first != nil && !bytes.Equal(first.Header.AppHash, root) {
		return &Mismatch{Height: s.gen.InitialHeight - 1, What: "app_hash", Header: HexBytes(first.Header.AppHash), Replayed: root}, nil
	}
	return nil, nil
}

// expected is what block h must come to: the app hash and results hash header h+1
// carries, or for the node's last block, which has no next header yet, the ones
// CometBFT's saved state holds (sum.LastFromState). Nil when the node saved block h and
// stopped before executing it (sum.Unchecked).
func (s *source) expected(h int64, next *cmttypes.BlockMeta, sum *Summary) (app, results []byte) {
	switch {
	case next != nil:
		return next.Header.AppHash, next.Header.LastResultsHash
	case s.saved.LastBlockHeight == h:
		sum.LastFromState = h >= sum.From
		return s.saved.AppHash, s.saved.LastResultsHash
	default:
		sum.Unchecked = h
		return nil, nil
	}
}

// replica is the application the replay rebuilds, in a temporary directory that close
// removes.
type replica struct {
	tmp   string
	db    dbm.DB
	store *drive.Store
	app   *abci.Application
}

// newReplica opens an empty application store at gen's initial height in a new
// temporary directory; its application is made with its first state (genesis, or
// restore and then the application).
func newReplica(gen *cmttypes.GenesisDoc) (r *replica, err error) {
	r = &replica{}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	if r.tmp, err = os.MkdirTemp("", "ttld-replay-"); err != nil {
		return r, err
	}
	if r.db, err = dbm.NewGoLevelDB("application", r.tmp, nil); err != nil {
		return r, err
	}
	r.store, err = drive.NewStore(r.db, drive.Options{InitialVersion: uint64(gen.InitialHeight)})
	return r, err
}

// genesis makes the replica's application and writes the genesis state into it, as
// CometBFT's InitChain does, and checks its root against the first header: a mismatch goes into sum.
func (r *replica) genesis(ctx context.Context, src *source, sum *Summary, log zerolog.Logger) error {
	var err error
	if r.app, err = newApp(r.store, log, src.gen); err != nil {
		return err
	}
	root, err := initChain(ctx, r.app, src.gen)
	if err != nil {
		return err
	}
	m, err := src.genesisMismatch(root)
	if m != nil {
		sum.diverged(m)
	}
	return err
}

// restore copies into the replica the node's own state at height, where its block
// store starts after a state sync, and checks its root against the app hash of the
// first stored header, which the node's light client verified.
func (r *replica) restore(src *source, height int64) error {
	var first *cmttypes.BlockMeta
	if err := node.RecoverCorrupt(src.blockPath, height+1, func() { first = src.blocks.LoadBlockMeta(height + 1) }); err != nil {
		return err
	}
	if first == nil {
		return ErrMissingBlock{Path: src.blockPath, Height: height + 1}
	}
	db, err := dbm.NewGoLevelDBWithOpts("application", src.dataDir, &opt.Options{ReadOnly: true, ErrorIfMissing: true})
	if err != nil {
		return ErrStoreUnavailable{Path: filepath.Join(src.dataDir, "application.db"), Err: err}
	}
	defer db.Close()
	nodeStore, err := drive.NewStore(readOnlyDB{db}, drive.Options{CacheSize: 10_000})
	if err != nil {
		return ErrStoreUnavailable{Path: filepath.Join(src.dataDir, "application.db"), Err: err}
	}
	defer nodeStore.Close()
	imp, err := r.store.Import(height)
	if err != nil {
		return err
	}
	if _, err := nodeStore.Export(height, imp.Add); err != nil {
		imp.Close()
		return ErrPruned{Base: height + 1, Initial: src.gen.InitialHeight, Err: err}
	}
	root, err := imp.Commit()
	if err != nil {
		return err
	}
	if !bytes.Equal(root, first.Header.AppHash) {
		return fmt.Errorf("replay: the node's state at height %d has root %X, the header after it app hash %X", height, root, []byte(first.Header.AppHash))
	}
	return imp.Accept()
}

// close closes the store and its database and removes the directory.
func (r *replica) close() {
	if r.store != nil {
		r.store.Close()
	}
	if r.db != nil {
		r.db.Close()
	}
	if r.tmp != "" {
		os.RemoveAll(r.tmp)
	}
}

// newApp makes the replica's application, which knows the chain's genesis validators as
// a node's does (abci.Application.SetGenesisValidators).
func newApp(store *drive.Store, log zerolog.Logger, gen *cmttypes.GenesisDoc) (*abci.Application, error) {
	app, err := abci.New(store, log, nil)
	if err != nil {
		return nil, err
	}
	vals, err := abci.GenesisValidatorsOf(gen)
	if err != nil {
		return nil, err
	}
	app.SetGenesisValidators(vals)
	return app, nil
}

// initChain runs InitChain on app with the genesis validators as CometBFT's handshake
// hands them, and returns the genesis state's root.
func initChain(ctx context.Context, app *abci.Application, gen *cmttypes.GenesisDoc) ([]byte, error) {
	vals := make([]*cmttypes.Validator, len(gen.Validators))
	for i, v := range gen.Validators {
		vals[i] = cmttypes.NewValidator(v.PubKey, v.Power)
	}
	res, err := app.InitChain(ctx, &abcitypes.RequestInitChain{
		Time: gen.GenesisTime, ChainId: gen.ChainID, InitialHeight: gen.InitialHeight, AppStateBytes: gen.AppState,
		Validators: cmttypes.TM2PB.ValidatorUpdates(cmttypes.NewValidatorSet(vals)),
	})
	if err != nil {
		return nil, err
	}
	return res.AppHash, nil
}

// execute runs block h on the replica and commits it. The app hash is FinalizeBlock's,
// or, when tamper changed the working state, the working state's root.
func (r *replica) execute(ctx context.Context, h int64, req *abcitypes.RequestFinalizeBlock, tamper func(int64, drive.KV, *abcitypes.ResponseFinalizeBlock) error) (*abcitypes.ResponseFinalizeBlock, []byte, error) {
	res, err := r.app.FinalizeBlock(ctx, req)
	if err != nil {
		return nil, nil, fmt.Errorf("replay: block %d: %w", h, err)
	}
	appHash := res.AppHash
	if tamper != nil {
		if err := tamper(h, r.store.Working(), res); err != nil {
			return nil, nil, err
		}
		if appHash, err = r.store.WorkingHash(); err != nil {
			return nil, nil, err
		}
	}
	if _, err := r.app.Commit(ctx, &abcitypes.RequestCommit{}); err != nil {
		return nil, nil, fmt.Errorf("replay: commit %d: %w", h, err)
	}
	return res, appHash, nil
}

// session is one replay under way: the node's stores, the replica, the options.
type session struct {
	opts Options
	src  *source
	rep  *replica
}

// block replays a loaded block: it executes and commits it on the replica, reports
// progress and checks the block against the next header (check).
func (s *session) block(ctx context.Context, b *loaded, sum *Summary) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	res, appHash, err := s.rep.execute(ctx, b.h, b.req, s.opts.Tamper)
	if err != nil {
		return err
	}
	sum.Blocks++
	if s.opts.Progress != nil {
		s.opts.Progress(sum.Blocks, sum.To-s.src.first+1)
	}
	return s.check(b.h, b.next, res, appHash, sum)
}

// check compares block h, from sum.From on, with what the node recorded (expected):
// the app hash, then the results hash; the first that differs is the mismatch. A block
// that matches must also have as many results as the node stored for it.
func (s *session) check(h int64, next *cmttypes.BlockMeta, res *abcitypes.ResponseFinalizeBlock, appHash []byte, sum *Summary) error {
	wantApp, wantResults := s.src.expected(h, next, sum)
	if h < sum.From || wantApp == nil {
		return nil
	}
	sum.Checked++
	if !bytes.Equal(wantApp, appHash) {
		sum.diverged(mismatch(s.rep.store, s.src.dataDir, h, "app_hash", wantApp, appHash))
		return nil
	}
	if rh := sm.TxResultsHash(res.TxResults); !bytes.Equal(wantResults, rh) {
		sum.diverged(mismatch(s.rep.store, s.src.dataDir, h, "results_hash", wantResults, rh))
		return nil
	}
	if stored, err := s.src.states.LoadFinalizeBlockResponse(h); err == nil && len(stored.TxResults) != len(res.TxResults) {
		return fmt.Errorf("replay: block %d: the node stored %d results, the replay made %d", h, len(stored.TxResults), len(res.TxResults))
	}
	return nil
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
		// The evidence the block carries, as CometBFT hands it to FinalizeBlock
		// (state/execution.go): from protocol version 16 on it removes validators.
		Misbehavior: b.Evidence.Evidence.ToABCI(),
	}
}

// mismatch gathers what explains a divergence at height h.
func mismatch(st *drive.Store, dataDir string, h int64, what string, header, replayed []byte) *Mismatch {
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
