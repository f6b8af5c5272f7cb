package web

import (
	"context"
	"fmt"
	"strconv"

	cmtbytes "github.com/cometbft/cometbft/libs/bytes"
	rpcclient "github.com/cometbft/cometbft/rpc/client"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	cmttypes "github.com/cometbft/cometbft/types"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// What a committed height holds never changes: its header, its block and results and
// the state saved after it. The view keeps, bounded, what it read of them, so that a
// chart asks the node only for the heights it has not drawn yet, a block's
// transactions are read once for the pages that list them, and the address pages of
// one height share their scan.
const (
	// HeightsCached is how many heights the headers and the cleanup figures the
	// charts draw are kept for: many times ChartBlocks.
	HeightsCached = 1024
	// ScansCached is how many address-changes answers are kept: an address page reads
	// two at its height (more when a range is cut), the same for every address.
	ScansCached = 16
	// MaxScanBytes bounds the value of a kept address-changes answer; a larger one is
	// read each time.
	MaxScanBytes = 1 << 20
	// BlocksCached is how many blocks' transactions and results are kept, for the
	// transaction rows of the overview, the blocks and the transactions: fewer than
	// HeightsCached, since a block may be large.
	BlocksCached = 64
)

// heights holds the per-height caches.
type heights struct {
	metas    *lru.Cache[int64, *cmttypes.BlockMeta]
	cleanups *lru.Cache[int64, cleanup]
	// versions are the protocol versions blocks executed under, as the state after
	// each read them.
	versions *lru.Cache[int64, protocol.Version]
	blocks   *lru.Cache[int64, blockTxs]
}

func newHeights() (heights, error) {
	metas, err := lru.New[int64, *cmttypes.BlockMeta](HeightsCached)
	if err != nil {
		return heights{}, fmt.Errorf("web: a cache of %d headers: %w", HeightsCached, err)
	}
	cleanups, err := lru.New[int64, cleanup](HeightsCached)
	if err != nil {
		return heights{}, fmt.Errorf("web: a cache of %d cleanups: %w", HeightsCached, err)
	}
	versions, err := lru.New[int64, protocol.Version](HeightsCached)
	if err != nil {
		return heights{}, fmt.Errorf("web: a cache of %d protocol versions: %w", HeightsCached, err)
	}
	blocks, err := lru.New[int64, blockTxs](BlocksCached)
	if err != nil {
		return heights{}, fmt.Errorf("web: a cache of %d blocks: %w", BlocksCached, err)
	}
	return heights{metas: metas, cleanups: cleanups, versions: versions, blocks: blocks}, nil
}

// cleanup is what a block's documents_cleanup event reported: the expiration backlog
// the cleanup left and the documents it expired; both 0 for a block whose cleanup
// found nothing due, which reports nothing.
type cleanup struct{ Backlog, Removed float64 }

// cleanupAt is the cleanup of block h, from its results.
func (s *Server) cleanupAt(ctx context.Context, h int64) (cleanup, error) {
	if c, ok := s.heights.cleanups.Get(h); ok {
		return c, nil
	}
	res, err := s.rpc.BlockResults(ctx, &h)
	if err != nil {
		return cleanup{}, err
	}
	var c cleanup
	for _, e := range res.FinalizeBlockEvents {
		if e.Type != protocol.EventDocumentsCleanup {
			continue
		}
		for _, a := range e.Attributes {
			n, err := strconv.ParseFloat(a.Value, 64)
			if err != nil {
				continue
			}
			switch a.Key {
			case protocol.AttrBacklog:
				c.Backlog = n
			case protocol.AttrRemoved:
				c.Removed = n
			}
		}
	}
	s.heights.cleanups.Add(h, c)
	return c, nil
}

// metas returns the headers of heights top down to bottom (bottom <= top <= the
// latest), newest first: the kept ones, and the others read in runs of at most
// BlocksPerPage (CometBFT's blockchain call answers no more).
func (s *Server) metas(ctx context.Context, bottom, top int64) ([]*cmttypes.BlockMeta, error) {
	var out []*cmttypes.BlockMeta
	for h := top; h >= bottom; {
		if m, ok := s.heights.metas.Get(h); ok {
			out = append(out, m)
			h--
			continue
		}
		low := h
		for low > bottom && h-low+1 < BlocksPerPage && !s.heights.metas.Contains(low-1) {
			low--
		}
		info, err := s.rpc.BlockchainInfo(ctx, low, h)
		if err != nil {
			return nil, err
		}
		for _, m := range info.BlockMetas {
			s.heights.metas.Add(m.Header.Height, m)
		}
		out = append(out, info.BlockMetas...)
		h = low - 1
	}
	return out, nil
}

// scanRPC is the node's RPC with the address-changes answers at a height kept: the
// records they hold are every address's, so the address pages of one height share
// them.
type scanRPC struct {
	rpcclient.Client
	answers *lru.Cache[scanKey, *coretypes.ResultABCIQuery]
}

type scanKey struct {
	path, data string
	height     int64
}

func newScanRPC(rpc rpcclient.Client) (scanRPC, error) {
	answers, err := lru.New[scanKey, *coretypes.ResultABCIQuery](ScansCached)
	if err != nil {
		return scanRPC{}, fmt.Errorf("web: a cache of %d address-changes answers: %w", ScansCached, err)
	}
	return scanRPC{Client: rpc, answers: answers}, nil
}

// ABCIQueryWithOptions answers an unproven address-changes read at a height from the
// kept answers, or asks the node; any other query goes to the node.
//
// NB: a kept answer is handed to every reader of it; readers only decode it.
func (r scanRPC) ABCIQueryWithOptions(ctx context.Context, path string, data cmtbytes.HexBytes, opts rpcclient.ABCIQueryOptions) (*coretypes.ResultABCIQuery, error) {
	if opts.Prove || opts.Height <= 0 || (path != proofs.PathAddressChangesBlocks && path != proofs.PathAddressChangesCompacted) {
		return r.Client.ABCIQueryWithOptions(ctx, path, data, opts)
	}
	k := scanKey{path: path, data: string(data), height: opts.Height}
	if res, ok := r.answers.Get(k); ok {
		return res, nil
	}
	res, err := r.Client.ABCIQueryWithOptions(ctx, path, data, opts)
	if err == nil && res.Response.Code == 0 && res.Response.Height == opts.Height && len(res.Response.Value) <= MaxScanBytes {
		r.answers.Add(k, res)
	}
	return res, err
}
