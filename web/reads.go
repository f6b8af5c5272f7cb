package web

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"strings"

	rpcclient "github.com/cometbft/cometbft/rpc/client"

	"github.com/ttld-dev/ttld/web/check"
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

// rawRead reads path and data at height (0: the latest) unproven. A page draws its
// figures from exactly this answer (check.Read), and the browser draws them again from
// the proven one.
func (s *Server) rawRead(ctx context.Context, path string, data []byte, height int64) (check.Answer, error) {
	res, err := s.rpc.ABCIQueryWithOptions(ctx, path, data, rpcclient.ABCIQueryOptions{Height: height})
	if err != nil {
		return check.Answer{}, err
	}
	if res.Response.Code != 0 {
		return check.Answer{}, fmt.Errorf("%s: query code %d: %s", path, res.Response.Code, res.Response.Log)
	}
	return check.AnswerOf(path, data, res.Response), nil
}

// read is one query of a proof box: a path and its data.
type read struct {
	path string
	data []byte
}

// rawReads reads each query at height, unproven, in order.
func (s *Server) rawReads(ctx context.Context, height int64, reads ...read) ([]check.Answer, error) {
	out := make([]check.Answer, len(reads))
	for i, r := range reads {
		var err error
		if out[i], err = s.rawRead(ctx, r.path, r.data, height); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// proofBox is a page's proof box: the figures it shows, drawn from answers about one
// state, and the bundles that prove those answers, which the browser checks and draws
// the figures from again (docs/PROOFS.md, "Proof bundles (the web view)").
type proofBox struct {
	// F are the figures of the answers; the page shows each once, in Drawing: the box's
	// labels, units, links and bars around them, as the browser's check draws them
	// again from the proven answers (check.Draw).
	F       check.Figures `json:"figures"`
	Drawing template.HTML `json:"-"`
	// Bundles are the URLs of the answers' proof bundles, all at the answers' height.
	Bundles []string `json:"bundle_urls"`
	// Proofs are the bundles themselves, in Bundles' order: the JSON API's answers
	// carry them, the pages do not.
	Proofs []json.RawMessage `json:"bundles,omitempty"`
	// Offline are the commands that read the same answers checked.
	Offline []string `json:"offline"`
	// Checkable: the build carries the WebAssembly check, served at Module.
	Checkable bool   `json:"-"`
	Module    string `json:"-"`
}

// proofBox is the box of answers, all at one height: their figures and bundles, and
// the commands that read them checked offline. An API request's box carries the
// bundles inline.
func (s *Server) proofBox(ctx context.Context, answers []check.Answer, offline ...string) (proofBox, error) {
	chainID, err := s.c.ChainID(ctx)
	if err != nil {
		return proofBox{}, err
	}
	f, nodes, err := check.Draw(chainID, answers)
	if err != nil {
		return proofBox{}, err
	}
	var drawing strings.Builder
	if err := check.WriteHTML(&drawing, nodes); err != nil {
		return proofBox{}, err
	}
	b := proofBox{F: f, Drawing: template.HTML(drawing.String()), Offline: offline, Checkable: s.module != nil}
	if s.module != nil {
		b.Module = s.module.path
	}
	for _, a := range answers {
		q := url.Values{"path": {a.Path}, "data": {hex.EncodeToString(a.Data)}, "height": {strconv.FormatInt(a.Height, 10)}}
		b.Bundles = append(b.Bundles, "/proof?"+q.Encode())
		if isAPI(ctx) {
			raw, err := s.bundle(ctx, a.Path, a.Data, a.Height)
			if err != nil {
				return proofBox{}, err
			}
			b.Proofs = append(b.Proofs, raw)
		}
	}
	return b, nil
}
