package sim

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	cmted25519 "github.com/cometbft/cometbft/crypto/ed25519"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/abci"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
)

// ChainID is the chain id of simulated chains.
const ChainID = "ttld-sim"

// GenesisTime is the genesis time of simulated chains.
var GenesisTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Chain is an application over a store, driven through the ABCI calls CometBFT makes.
type Chain struct {
	DB     dbm.DB
	Store  *drive.Store
	App    *abci.Application
	Height int64 // last committed height
	// Proposers are the consensus addresses blocks are proposed by, in turn (by
	// height); empty: blocks name no proposer.
	Proposers [][]byte
	// Comet is the validator set CometBFT would hold, following every committed
	// block's updates (CometSet.Follow).
	Comet CometSet
}

// Open opens (or reopens, as a restarted node does) the application on db. A reopened
// chain is given its genesis validators, as a node reads them from its genesis file
// (abci.Application.SetGenesisValidators); InitChain gives them to a new one.
func Open(db dbm.DB, genesisValidators ...abcitypes.ValidatorUpdate) (*Chain, error) {
	store, err := drive.NewStore(db, drive.Options{CacheSize: 200_000, KeepRecent: 50})
	if err != nil {
		return nil, err
	}
	app, err := abci.New(store, zerolog.Nop(), nil)
	if err != nil {
		return nil, err
	}
	// Every block checks the running total of credits against the supply.
	app.CheckInvariants()
	vals, err := abci.GenesisValidators(genesisValidators)
	if err != nil {
		return nil, err
	}
	app.SetGenesisValidators(vals)
	info, err := app.Info(context.Background(), &abcitypes.RequestInfo{})
	if err != nil {
		return nil, err
	}
	c := &Chain{DB: db, Store: store, App: app, Height: info.LastBlockHeight, Comet: NewCometSet(genesisValidators)}
	if c.Height > 0 {
		// A restarted chain proposes as before: in turn by its genesis validators, or,
		// when it is not told them, by those genesis gave a payout identity.
		saved, err := c.Saved()
		if err != nil {
			return nil, err
		}
		c.Proposers = proposersOf(genesisValidators)
		if len(genesisValidators) == 0 {
			if c.Proposers, err = drive.PayoutValidators(saved); err != nil {
				return nil, err
			}
		}
		// From version 16 on CometBFT holds the set in state.
		set, err := drive.Validators(saved)
		if err != nil {
			return nil, err
		}
		if len(set) > 0 {
			c.Comet = CometSet{}
			for _, v := range set {
				c.Comet[string(v.PubKey)] = int64(v.Power)
			}
		}
	}
	return c, nil
}

// proposersOf are the consensus addresses of vals in address order, the order blocks
// are proposed in.
func proposersOf(vals []abcitypes.ValidatorUpdate) [][]byte {
	var out [][]byte
	for _, v := range vals {
		out = append(out, cmted25519.PubKey(v.PubKey.GetEd25519()).Address())
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i], out[j]) < 0 })
	return out
}

// Close releases the store; the database stays open for a reopen.
func (c *Chain) Close() error { return c.Store.Close() }

// InitChain writes the genesis state with the genesis validators vals, whose blocks
// the chain then proposes in turn, and returns the genesis app hash.
func (c *Chain) InitChain(state genesis.AppState, vals ...abcitypes.ValidatorUpdate) ([]byte, error) {
	c.Proposers, c.Comet = proposersOf(vals), NewCometSet(vals)
	res, err := c.App.InitChain(context.Background(), &abcitypes.RequestInitChain{
		ChainId: ChainID, Time: GenesisTime, InitialHeight: 1, AppStateBytes: state.Encode(), Validators: vals,
	})
	if err != nil {
		return nil, err
	}
	return res.AppHash, nil
}

// EvidenceEvery: every EvidenceEvery-th block carries evidence of a duplicate vote at
// the height before it against one of the genesis validators, in turn (in the set or
// not by then).
const EvidenceEvery = 97

// Finalize runs FinalizeBlock for the next height without committing.
func (c *Chain) Finalize(at time.Time, txs [][]byte) (*abcitypes.ResponseFinalizeBlock, error) {
	req := &abcitypes.RequestFinalizeBlock{Height: c.Height + 1, Time: at, Txs: txs}
	if n := int64(len(c.Proposers)); n > 0 {
		req.ProposerAddress = c.Proposers[req.Height%n]
		if req.Height%7 == 0 {
			req.ProposerAddress = []byte("a proposer no genesis")[:20] // no payout identity
		}
		if req.Height%EvidenceEvery == 0 {
			req.Misbehavior = []abcitypes.Misbehavior{{Type: abcitypes.MisbehaviorType_DUPLICATE_VOTE,
				Validator: abcitypes.Validator{Address: c.Proposers[(req.Height/EvidenceEvery)%n], Power: 10}, Height: req.Height - 1, Time: at}}
		}
	}
	return c.App.FinalizeBlock(context.Background(), req)
}

// Commit saves the finalized block and checks the saved root is the app hash
// FinalizeBlock returned.
func (c *Chain) Commit(finalized *abcitypes.ResponseFinalizeBlock) error {
	if _, err := c.App.Commit(context.Background(), &abcitypes.RequestCommit{}); err != nil {
		return err
	}
	c.Height++
	v, hash := c.Store.LastCommit()
	if v != c.Height || !bytes.Equal(hash, finalized.AppHash) {
		return fmt.Errorf("committed %d %X, FinalizeBlock returned %d %X", v, hash, c.Height, finalized.AppHash)
	}
	saved, err := c.Saved()
	if err != nil {
		return err
	}
	if err := c.Comet.Follow(saved, finalized.ValidatorUpdates); err != nil {
		return fmt.Errorf("block %d: %w", c.Height, err)
	}
	return nil
}

// Block finalizes and commits the next block.
func (c *Chain) Block(at time.Time, txs [][]byte) (*abcitypes.ResponseFinalizeBlock, error) {
	res, err := c.Finalize(at, txs)
	if err != nil {
		return nil, err
	}
	return res, c.Commit(res)
}

// Saved returns the last saved state for reads.
func (c *Chain) Saved() (drive.KV, error) { return c.Store.Saved(0) }

// NextBlockState is the state the next block starts from, for a generator to read:
// the last saved version, or before the first commit the staged genesis state.
func (c *Chain) NextBlockState() (drive.KV, error) {
	if c.Height == 0 {
		return c.Store.Working(), nil
	}
	return c.Saved()
}

// NextBlock asks g for the next block against the state it starts from.
func (c *Chain) NextBlock(g *Generator, maxTxs int) (time.Time, [][]byte, error) {
	kv, err := c.NextBlockState()
	if err != nil {
		return time.Time{}, nil, err
	}
	return g.Block(kv, maxTxs)
}
