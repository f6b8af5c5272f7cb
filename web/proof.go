package web

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"time"

	rpcclient "github.com/cometbft/cometbft/rpc/client"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/web/check"
)

// proof serves, for download and for the browser's check, the bundle of the answer to
// ?path= and ?data= (hex) at ?height= (0 or absent: the newest state proven now, see
// provenHeight): any single-key or range path of proofs.TargetOf, /documents or /count.
func (s *Server) proof(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	path := q.Get("path")
	data, err := hex.DecodeString(q.Get("data"))
	if err != nil || len(data) > MaxProofDataBytes {
		err = errBadInput{"data", q.Get("data"), fmt.Sprintf("at most %d bytes in hex", MaxProofDataBytes)}
	} else if _, terr := proofs.TargetOf(path, data); terr != nil && path != proofs.PathDocuments && path != proofs.PathCount {
		err = errBadInput{"path", path, "a single-key or range query path and its data, /documents or /count: " + terr.Error()}
	}
	var height int64
	if v := q.Get("height"); err == nil && v != "" {
		if height, err = strconv.ParseInt(v, 10, 64); err != nil || height < 0 {
			err = errBadInput{"height", v, "a height of 0 (the latest) or more"}
		}
	}
	var raw []byte
	if err == nil {
		raw, err = s.bundle(r.Context(), path, data, height)
	}
	if err != nil {
		s.page("error.html", func(*http.Request) (any, error) { return nil, err })(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="proof.json"`)
	_, _ = w.Write(raw)
}

// bundle reads path and data at height (0: provenHeight) with a proof and the commit of
// the header after the answer's height, and encodes them as a check.Bundle. That
// header must exist already: a state the latest block does not prove yet is not found,
// rather than waited for.
func (s *Server) bundle(ctx context.Context, path string, data []byte, height int64) ([]byte, error) {
	latest, err := s.latestHeight(ctx)
	if err != nil {
		return nil, err
	}
	if height == 0 {
		if height, err = provenBelow(latest); err != nil {
			return nil, err
		}
	}
	if height >= latest {
		return nil, errNotFound{fmt.Sprintf("signed header %d, which proves the state after block %d (the latest block is %d),", height+1, height, latest)}
	}
	res, err := s.rpc.ABCIQueryWithOptions(ctx, path, data, rpcclient.ABCIQueryOptions{Prove: true, Height: height})
	if err != nil {
		return nil, err
	}
	if res.Response.Code != 0 {
		return nil, fmt.Errorf("%s: query code %d: %s", path, res.Response.Code, res.Response.Log)
	}
	next := res.Response.Height + 1
	commit, err := s.rpc.Commit(ctx, &next)
	if err != nil {
		return nil, err
	}
	chainID, err := s.c.ChainID(ctx)
	if err != nil {
		return nil, err
	}
	b := check.Bundle{ChainID: chainID, Path: path, Data: data, Response: res.Response, SignedHeader: &commit.SignedHeader}
	if s.opts.Trusted != nil && !bytes.Equal(commit.ValidatorsHash, s.opts.Trusted.Hash()) {
		if b.Trace, err = s.trace(ctx, next); err != nil {
			return nil, err
		}
	}
	return b.Encode()
}

// lightBlockCache is how many light blocks a view keeps for its traces.
const lightBlockCache = 1024

// lightBlock returns the light block of height, from the cache or the node.
func (s *Server) lightBlock(ctx context.Context, height int64) (*cmttypes.LightBlock, error) {
	if lb, ok := s.lightBlocks.Get(height); ok {
		return lb, nil
	}
	lb, err := proofs.FetchLightBlock(ctx, s.rpc, height)
	if err != nil {
		return nil, err
	}
	s.lightBlocks.Add(height, lb)
	return lb, nil
}

// trace returns the light blocks that lead from the chain's first block, which the
// genesis set signed, to the block of height to, each a step CometBFT's light client
// takes (proofs.BuildTrace): what a browser that pinned the genesis set follows to a
// header another set signed (docs/PROOFS.md, "Following the validator set").
func (s *Server) trace(ctx context.Context, to int64) ([]*cmttypes.LightBlock, error) {
	first, err := s.lightBlock(ctx, max(s.opts.InitialHeight, 1))
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(first.ValidatorsHash, s.opts.Trusted.Hash()) {
		return nil, fmt.Errorf("the chain's first block %d names set %X, not the genesis set %X", first.Height, first.ValidatorsHash, s.opts.Trusted.Hash())
	}
	return proofs.BuildTrace(ctx, s.lightBlock, first, to, time.Now(), 0)
}
