package lightchain

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/cometbft/cometbft/crypto/ed25519"
	"github.com/cometbft/cometbft/crypto/tmhash"
	"github.com/cometbft/cometbft/light/provider"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmtversion "github.com/cometbft/cometbft/proto/tendermint/version"
	"github.com/cometbft/cometbft/types"
	"github.com/cometbft/cometbft/version"
)

// Member is a validator of a height's set: the index of its key and its power.
type Member struct {
	Key   int
	Power int64
}

// Key returns the private validator of key index i (ed25519, from a secret of i).
func Key(i int) types.MockPV {
	return types.NewMockPVWithParams(ed25519.GenPrivKeyFromSecret([]byte(fmt.Sprintf("lightchain key %d", i))), false, false)
}

// SetOf returns the validator set of members.
func SetOf(members []Member) *types.ValidatorSet {
	vals := make([]*types.Validator, len(members))
	for i, m := range members {
		vals[i] = Key(m.Key).ExtractIntoValidator(m.Power)
	}
	return types.NewValidatorSet(vals)
}

// Chain is a chain of light blocks from height 1, one a second from Start.
type Chain struct {
	ChainID string
	Start   time.Time
	// Blocks are by height, from 1.
	Blocks []*types.LightBlock
	// fork names the chain's app hashes, so that a fork's headers differ.
	fork string
}

// New makes n light blocks of chain chainID, the set of height h being setAt(h); block
// h's time is start plus h seconds.
func New(chainID string, start time.Time, n int, setAt func(h int64) []Member) (*Chain, error) {
	c := &Chain{ChainID: chainID, Start: start}
	return c, c.extend(n, setAt)
}

// Fork returns a chain that shares c's blocks below height from and then goes on to
// height n with other app hashes, its sets setAt(h), each block signed by its set.
func (c *Chain) Fork(from int64, n int, setAt func(h int64) []Member) (*Chain, error) {
	f := &Chain{ChainID: c.ChainID, Start: c.Start, Blocks: append([]*types.LightBlock(nil), c.Blocks[:from-1]...), fork: fmt.Sprintf("fork at %d", from)}
	return f, f.extend(n, setAt)
}

// Genesis is the set of height 1.
func (c *Chain) Genesis() *types.ValidatorSet { return c.Blocks[0].ValidatorSet }

// At returns the light block of height h (nil past the chain's end).
func (c *Chain) At(h int64) *types.LightBlock {
	if h < 1 || h > int64(len(c.Blocks)) {
		return nil
	}
	return c.Blocks[h-1]
}

// extend adds blocks up to height n.
func (c *Chain) extend(n int, setAt func(h int64) []Member) error {
	for h := int64(len(c.Blocks)) + 1; h <= int64(n); h++ {
		lb, err := c.block(h, SetOf(setAt(h)), SetOf(setAt(h+1)), setAt(h))
		if err != nil {
			return err
		}
		c.Blocks = append(c.Blocks, lb)
	}
	return nil
}

// block makes the light block of height h, of set vals, naming next as the set after
// it, signed by every member of signers.
func (c *Chain) block(h int64, vals, next *types.ValidatorSet, signers []Member) (*types.LightBlock, error) {
	var last types.BlockID
	if prev := c.At(h - 1); prev != nil {
		last = prev.Commit.BlockID
	}
	app := sha256.Sum256(binary.BigEndian.AppendUint64([]byte("app hash "+c.fork), uint64(h)))
	header := &types.Header{
		Version:            cmtversion.Consensus{Block: version.BlockProtocol, App: 16},
		ChainID:            c.ChainID,
		Height:             h,
		Time:               c.Start.Add(time.Duration(h) * time.Second),
		LastBlockID:        last,
		LastCommitHash:     tmhash.Sum([]byte("last commit")),
		DataHash:           tmhash.Sum([]byte("data")),
		ValidatorsHash:     vals.Hash(),
		NextValidatorsHash: next.Hash(),
		ConsensusHash:      tmhash.Sum([]byte("consensus params")),
		AppHash:            app[:],
		LastResultsHash:    tmhash.Sum([]byte("results")),
		EvidenceHash:       tmhash.Sum([]byte("evidence")),
		ProposerAddress:    vals.Validators[0].Address,
	}
	commit, err := Sign(c.ChainID, header, vals, signers)
	if err != nil {
		return nil, err
	}
	return &types.LightBlock{SignedHeader: &types.SignedHeader{Header: header, Commit: commit}, ValidatorSet: vals}, nil
}

// Sign returns the commit of header by the members of set vals among signers (a member
// of signers outside vals does not sign: a commit holds votes of the set only).
func Sign(chainID string, header *types.Header, vals *types.ValidatorSet, signers []Member) (*types.Commit, error) {
	id := types.BlockID{Hash: header.Hash(), PartSetHeader: types.PartSetHeader{Total: 1, Hash: tmhash.Sum([]byte("parts"))}}
	set := types.NewVoteSet(chainID, header.Height, 0, cmtproto.PrecommitType, vals)
	for _, m := range signers {
		pv := Key(m.Key)
		pub, _ := pv.GetPubKey()
		idx, _ := vals.GetByAddress(pub.Address())
		if idx < 0 {
			continue
		}
		vote := &types.Vote{ValidatorAddress: pub.Address(), ValidatorIndex: idx, Height: header.Height, Type: cmtproto.PrecommitType, BlockID: id, Timestamp: header.Time}
		if _, err := types.SignAndCheckVote(vote, pv, chainID, false); err != nil {
			return nil, err
		}
		if _, err := set.AddVote(vote); err != nil {
			return nil, err
		}
	}
	return set.MakeExtendedCommit(types.ABCIParams{}).ToCommit(), nil
}

// Provider serves a chain to CometBFT's light client (light/provider.Provider). Height
// 0 is its last block; a height past it is provider.ErrHeightTooHigh. It records the
// evidence reported to it.
type Provider struct {
	Chain *Chain
	Name  string

	mu       sync.Mutex
	evidence []types.Evidence
}

var _ provider.Provider = (*Provider)(nil)

func (p *Provider) ChainID() string { return p.Chain.ChainID }
func (p *Provider) String() string  { return p.Name }

// LightBlock returns the block of height (0: the last).
func (p *Provider) LightBlock(_ context.Context, height int64) (*types.LightBlock, error) {
	if height == 0 {
		height = int64(len(p.Chain.Blocks))
	}
	if height > int64(len(p.Chain.Blocks)) {
		return nil, provider.ErrHeightTooHigh
	}
	lb := p.Chain.At(height)
	if lb == nil {
		return nil, provider.ErrLightBlockNotFound
	}
	return lb, nil
}

// ReportEvidence records ev.
func (p *Provider) ReportEvidence(_ context.Context, ev types.Evidence) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.evidence = append(p.evidence, ev)
	return nil
}

// Evidence returns what was reported to p.
func (p *Provider) Evidence() []types.Evidence {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]types.Evidence(nil), p.evidence...)
}

// Forge returns header made again to name the set of members, and signed by them: a
// header of the same height, time and app hash that a set the chain never moved to
// signed.
func Forge(header *types.Header, members []Member) (*types.LightBlock, error) {
	set := SetOf(members)
	h := *header
	h.ValidatorsHash = set.Hash()
	commit, err := Sign(h.ChainID, &h, set, members)
	if err != nil {
		return nil, err
	}
	return &types.LightBlock{SignedHeader: &types.SignedHeader{Header: &h, Commit: commit}, ValidatorSet: set}, nil
}
