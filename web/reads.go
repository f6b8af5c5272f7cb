package web

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"

	rpcclient "github.com/cometbft/cometbft/rpc/client"

	"github.com/ttld-dev/ttld/proofs"
)

// Bounds of what one page reads.
const (
	// BlocksPerPage is how many blocks /blocks lists (CometBFT's blockchain call
	// answers at most 20).
	BlocksPerPage = 20
	// EpochsPerPage is how many epochs /epochs shows, the current one first.
	EpochsPerPage = 10
	// MaxQueryBytes bounds the query JSON /documents takes.
	MaxQueryBytes = 4096
	// MaxProofDataBytes bounds the request data /proof takes: a document query's,
	// its JSON and the contract and type before it.
	MaxProofDataBytes = MaxQueryBytes + 128
)

// provenHeight is the state a page reads: the newest whose proof can be handed out at
// once. By the proof height rule (docs/ARCHITECTURE.md) the state after block H is
// proven by header H+1 and its commit; the latest block's header and commit exist, so
// the state after the block before it is proven now, while the latest state's proof
// would wait for the next block.
func (s *Server) provenHeight(ctx context.Context) (int64, error) {
	latest, err := s.latestHeight(ctx)
	if err != nil {
		return 0, err
	}
	return provenBelow(latest)
}

// provenBelow is provenHeight when the latest block is latest.
func provenBelow(latest int64) (int64, error) {
	if latest < 2 {
		return 0, errNotFound{fmt.Sprintf("a proven state (the chain is at block %d; the first is proven by block 2)", latest)}
	}
	return latest - 1, nil
}

// rawAnswer is one unproven read: the value, a range's entries and whether the range
// was cut, at Height.
type rawAnswer struct {
	Value   []byte
	Entries []proofs.KV
	More    bool
	Height  int64
}

// rawRead reads path and data at height (0: the latest) unproven. A page decodes its
// figures from exactly this value, which the browser then checks against the proof.
func (s *Server) rawRead(ctx context.Context, path string, data []byte, height int64) (rawAnswer, error) {
	target, err := proofs.TargetOf(path, data)
	if err != nil {
		return rawAnswer{}, err
	}
	res, err := s.rpc.ABCIQueryWithOptions(ctx, path, data, rpcclient.ABCIQueryOptions{Height: height})
	if err != nil {
		return rawAnswer{}, err
	}
	if res.Response.Code != 0 {
		return rawAnswer{}, fmt.Errorf("%s: query code %d: %s", path, res.Response.Code, res.Response.Log)
	}
	a := rawAnswer{Value: res.Response.Value, Height: res.Response.Height, More: res.Response.Info == proofs.InfoMore}
	if target.Range() {
		if a.Entries, err = proofs.DecodeEntries(a.Value); err != nil {
			return rawAnswer{}, err
		}
		if len(a.Entries) == 0 {
			a.Value = nil // an empty range: the page shows none, which the check proves
		}
	}
	return a, nil
}

// shown is what a page shows of the read: the value's hex, or "" for an absent key or
// an empty range.
func (a rawAnswer) shown() string { return hex.EncodeToString(a.Value) }

// proofBox is what a page's proof check needs: where its bundle is, the chain, what
// the page shows of the proven value (hex; empty: absence), and whether the build
// carries the WebAssembly check, and where (Module).
type proofBox struct {
	ProofPath, ChainID, Shown, Offline, Module string
	Checkable                                  bool
}

// proofBox is the box of the answer to path and data at height, of which the page
// shows shown (hex of the value, or of a range's entries; "" for absence).
func (s *Server) proofBox(ctx context.Context, path string, data []byte, height int64, shown, offline string) (proofBox, error) {
	chainID, err := s.c.ChainID(ctx)
	q := url.Values{"path": {path}, "data": {hex.EncodeToString(data)}, "height": {strconv.FormatInt(height, 10)}}
	box := proofBox{ProofPath: "/proof?" + q.Encode(), ChainID: chainID, Shown: shown, Offline: offline, Checkable: s.module != nil}
	if s.module != nil {
		box.Module = s.module.path
	}
	return box, err
}
