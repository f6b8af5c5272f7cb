package sim

import (
	"fmt"

	dbm "github.com/cosmos/cosmos-db"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/sim/invariants"
)

// Config sets up one simulation.
type Config struct {
	Seed     int64
	Blocks   int
	Accounts int // funded genesis addresses; 0 means 20
	MaxTxs   int // per block; 0 means 40
	// Flood: mostly creates of hour-long documents, blocks mostly seconds apart
	// (Generator.Flood).
	Flood bool
}

// Failure names the seed and height that reproduce a failed run.
type Failure struct {
	Seed   int64
	Height int64
	Err    error
}

func (f Failure) Error() string {
	return fmt.Sprintf("sim: seed %d, height %d: %v", f.Seed, f.Height, f.Err)
}

func (f Failure) Unwrap() error { return f.Err }

// Result is what a run produced: the app hash after every height (index 0: genesis)
// and the counts of transaction results by code.
type Result struct {
	AppHashes [][]byte
	Codes     map[uint32]int
	// Events counts the blocks' own events by type (epoch_change, epoch_paid, ...);
	// TxEvents those of the accepted transactions (document_create, ...).
	Events, TxEvents map[string]int
	// ExpiredChanges counts the transactions that changed an expired document (all
	// refused); FullCleanups the blocks whose documents cleanup left a backlog after
	// using its full count budget, WeightCleanups its full weight budget; MaxBacklog is
	// the most entries any block left due.
	ExpiredChanges, FullCleanups, WeightCleanups, MaxBacklog int
	// ExpiredUniques counts the creates of unique values an expired document not yet
	// deleted holds (all refused).
	ExpiredUniques int
	// RemovalsPinned counts the removal records whose hash CheckRemovals compared with
	// the document they removed.
	RemovalsPinned int
}

// FullScanEvery is how often (in blocks) a run counts every credit in state against the
// running total; every block checks the running total against the supply, at the cost
// of two reads, and the last block is always scanned.
const FullScanEvery = 100

// Invariants are checked on the saved state after the block of height h: the running
// total of credits against the supply, and on every FullScanEvery-th block (or when
// last is set) a full count of every credit against both and the documents tree the
// long way (invariants.CheckDocuments).
func Invariants(kv drive.KV, h int64, last bool) error {
	if last || h%FullScanEvery == 0 {
		if err := drive.CheckCredits(kv); err != nil {
			return err
		}
		return invariants.CheckDocuments(kv)
	}
	return drive.CheckTotal(kv, uint64(h))
}

// Run executes a simulation on a fresh in-memory database.
func Run(cfg Config) (Result, error) {
	if cfg.Accounts == 0 {
		cfg.Accounts = 20
	}
	if cfg.MaxTxs == 0 {
		cfg.MaxTxs = 40
	}
	res := Result{Codes: map[uint32]int{}, Events: map[string]int{}, TxEvents: map[string]int{}}
	fail := func(h int64, err error) (Result, error) { return res, Failure{Seed: cfg.Seed, Height: h, Err: err} }
	c, err := Open(dbm.NewMemDB())
	if err != nil {
		return fail(0, err)
	}
	defer c.Close()
	g := NewGenerator(cfg.Seed, cfg.Accounts)
	g.Flood = cfg.Flood
	l14, err := protocol.LimitsFor(protocol.V14)
	if err != nil {
		return fail(0, err)
	}
	hash, err := c.InitChain(g.Genesis(), g.Validators()...)
	if err != nil {
		return fail(0, err)
	}
	res.AppHashes = append(res.AppHashes, hash)
	for i := 0; i < cfg.Blocks; i++ {
		at, txs, err := c.NextBlock(g, cfg.MaxTxs)
		if err != nil {
			return fail(c.Height+1, err)
		}
		fb, err := c.Block(at, txs)
		if err != nil {
			return fail(c.Height+1, err)
		}
		for i, tr := range fb.TxResults {
			res.Codes[tr.Code]++
			for _, e := range tr.Events {
				res.TxEvents[e.Type]++
			}
			if g.ExpiredChanges[i] {
				res.ExpiredChanges++
				if tr.Code == 0 {
					return fail(c.Height, fmt.Errorf("transaction %d changed a document expired at the block's time %d and succeeded", i, protocol.BlockTimeMs(at)))
				}
			}
			if g.ExpiredUniques[i] {
				res.ExpiredUniques++
				if tr.Code == 0 {
					return fail(c.Height, fmt.Errorf("transaction %d created the unique values of a document expired at the block's time %d, not yet deleted, and succeeded", i, protocol.BlockTimeMs(at)))
				}
			}
		}
		for _, e := range fb.Events {
			res.Events[e.Type]++
		}
		res.AppHashes = append(res.AppHashes, fb.AppHash)
		saved, err := c.Saved()
		if err != nil {
			return fail(c.Height, err)
		}
		if err := Invariants(saved, c.Height, i == cfg.Blocks-1); err != nil {
			return fail(c.Height, err)
		}
		before, err := c.Store.Saved(c.Height - 1)
		if err != nil {
			return fail(c.Height, err)
		}
		pinned, err := CheckRemovals(before, saved, fb, protocol.BlockTimeMs(at))
		if err != nil {
			return fail(c.Height, err)
		}
		res.RemovalsPinned += pinned
		cl, err := CleanupOfEvents(fb.Events)
		if err == nil {
			err = CheckCleanup(saved, protocol.BlockTimeMs(at), cl)
		}
		if err != nil {
			return fail(c.Height, err)
		}
		if st := cl.Stats; st.Backlog > 0 {
			if st.Removed == l14.MaxDocumentExpirationsPerBlock {
				res.FullCleanups++
			} else {
				res.WeightCleanups++
			}
			res.MaxBacklog = max(res.MaxBacklog, st.Backlog)
		}
	}
	return res, nil
}
