package web

import (
	"context"
	"fmt"
	"net/http"
	"sort"

	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// validatorsPage shows the validator set in state, its pending proposals and the
// evidence handled, proven in one box (docs/STATE.md, "Validators"), and the changes of
// the set blocks made, as CometBFT's block index finds them (not proven).
type validatorsPage struct {
	proofBox `json:"proof"`
	// Activity is what each validator did over the last ChartBlocks blocks, the most
	// powerful first (not proven).
	Activity []activityRow `json:"activity"`
	Changes  []setChange   `json:"changes"`
	// Searched: the node's block index answered; false: the list is unavailable.
	Searched bool `json:"searched"`
}

// setChange is one validator_update event of a block.
type setChange struct {
	Height    int64  `json:"height"`
	Validator string `json:"validator"`
	Power     string `json:"power"`
	Reason    string `json:"reason"`
}

// ValidatorChangesPerPage bounds the set's changes the validators page lists.
const ValidatorChangesPerPage = 20

// searchSetChange is the block event attribute the validators page searches for.
var searchSetChange = protocol.SearchedAttr{Type: protocol.EventValidatorUpdate, Key: protocol.AttrValidator}

func (s *Server) validators(r *http.Request) (any, error) {
	ctx := r.Context()
	h, err := s.provenHeight(ctx)
	if err != nil {
		return nil, err
	}
	answers, err := s.rawReads(ctx, h, read{proofs.PathValidators, nil}, read{proofs.PathValidatorProposals, nil}, read{proofs.PathMisbehavior, nil})
	if err != nil {
		return nil, err
	}
	var p validatorsPage
	if p.proofBox, err = s.proofBox(ctx, answers, "ttld query validators --prove", "ttld query validator-proposals --prove"); err != nil {
		return nil, err
	}
	latest, err := s.latestHeight(ctx)
	if err != nil {
		return nil, err
	}
	metas, err := s.metas(ctx, max(1, latest-ChartBlocks+1), latest)
	if err != nil {
		return nil, err
	}
	headers := make([]*cmttypes.Header, len(metas))
	for i, m := range metas {
		headers[i] = &m.Header
	}
	rows, err := s.activity(ctx, headers)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		p.Activity = append(p.Activity, *r)
	}
	sort.Slice(p.Activity, func(i, j int) bool {
		a, b := p.Activity[i], p.Activity[j]
		if a.Power != b.Power {
			return a.Power > b.Power
		}
		return a.Address < b.Address
	})
	p.Changes, p.Searched = s.setChanges(ctx)
	return p, nil
}

// setChanges lists the newest changes of the set, from the blocks CometBFT's block
// index finds with a validator_update event; false when the node keeps no such index.
func (s *Server) setChanges(ctx context.Context) ([]setChange, bool) {
	page, perPage := 1, ValidatorChangesPerPage
	res, err := s.rpc.BlockSearch(ctx, searchSetChange.Query()+" EXISTS", &page, &perPage, "desc")
	if err != nil {
		return nil, false
	}
	var out []setChange
	for _, b := range res.Blocks {
		h := b.Block.Height
		results, err := s.rpc.BlockResults(ctx, &h)
		if err != nil {
			return nil, false
		}
		for _, e := range results.FinalizeBlockEvents {
			if e.Type != protocol.EventValidatorUpdate {
				continue
			}
			c := setChange{Height: h}
			for _, a := range e.Attributes {
				switch a.Key {
				case protocol.AttrValidator:
					c.Validator = a.Value
				case protocol.AttrPower:
					c.Power = a.Value
				case protocol.AttrReason:
					c.Reason = a.Value
				case protocol.AttrProposal:
					c.Reason += " " + a.Value
				case protocol.AttrHeight:
					c.Reason += " at height " + a.Value
				}
			}
			if c.Power == "0" {
				c.Power = "removed"
			}
			out = append(out, c)
		}
	}
	return out, true
}

// activityRow is what a validator did over the blocks of a window: the blocks it
// proposed, and of those whose set held it, the commits that carry its signature and
// those that do not.
type activityRow struct {
	Address  string `json:"address"`
	Power    int64  `json:"power"`
	Proposed int    `json:"proposed"`
	Signed   int    `json:"signed"`
	Missed   int    `json:"missed"`
}

// activity is what each validator did over the blocks of headers, by address (upper-
// case hex): every validator of the blocks' sets (each set read once, by its hash) and
// every proposer, with its power in the newest set that held it.
func (s *Server) activity(ctx context.Context, headers []*cmttypes.Header) (map[string]*activityRow, error) {
	out := map[string]*activityRow{}
	row := func(addr []byte) *activityRow {
		k := fmt.Sprintf("%X", addr)
		if out[k] == nil {
			out[k] = &activityRow{Address: k}
		}
		return out[k]
	}
	sets := map[string][]*cmttypes.Validator{}
	for _, hdr := range headers { // newest first
		h := hdr.Height
		row(hdr.ProposerAddress).Proposed++
		set, known := sets[string(hdr.ValidatorsHash)]
		if !known {
			vals, err := s.rpc.Validators(ctx, &h, nil, nil)
			if err != nil {
				return nil, err
			}
			set = vals.Validators
			sets[string(hdr.ValidatorsHash)] = set
		}
		c, err := s.rpc.Commit(ctx, &h)
		if err != nil {
			return nil, err
		}
		signed := map[string]bool{}
		for _, sig := range c.Commit.Signatures {
			if sig.BlockIDFlag == cmttypes.BlockIDFlagCommit {
				signed[string(sig.ValidatorAddress)] = true
			}
		}
		for _, v := range set {
			r := row(v.Address)
			if r.Signed+r.Missed == 0 {
				r.Power = v.VotingPower
			}
			if signed[string(v.Address)] {
				r.Signed++
			} else {
				r.Missed++
			}
		}
	}
	return out, nil
}
