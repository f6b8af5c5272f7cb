package web

import (
	"bytes"
	"context"
	"net/http"

	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// validatorsPage shows the validator set in state, its pending proposals and the
// evidence handled, proven in one box (docs/STATE.md, "Validators"), and the changes of
// the set blocks made, as CometBFT's block index finds them (not proven).
type validatorsPage struct {
	proofBox `json:"proof"`
	Changes  []setChange `json:"changes"`
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

// missed counts, over the blocks of headers, those whose commit carries validator's
// signature, and those whose commit does not while it was in their set (each set read
// once, by its hash).
func (s *Server) missed(ctx context.Context, validator []byte, headers []*cmttypes.Header) (signed, missed int, err error) {
	member := map[string]bool{} // validators hash -> whether validator is in that set
	for _, hdr := range headers {
		h := hdr.Height
		in, known := member[string(hdr.ValidatorsHash)]
		if !known {
			vals, err := s.rpc.Validators(ctx, &h, nil, nil)
			if err != nil {
				return 0, 0, err
			}
			for _, v := range vals.Validators {
				in = in || bytes.Equal(v.Address, validator)
			}
			member[string(hdr.ValidatorsHash)] = in
		}
		if !in {
			continue
		}
		c, err := s.rpc.Commit(ctx, &h)
		if err != nil {
			return 0, 0, err
		}
		found := false
		for _, sig := range c.Commit.Signatures {
			found = found || (sig.BlockIDFlag == cmttypes.BlockIDFlagCommit && bytes.Equal(sig.ValidatorAddress, validator))
		}
		if found {
			signed++
		} else {
			missed++
		}
	}
	return signed, missed, nil
}
