package web

import (
	"bytes"
	"encoding/hex"
	"net/http"
	"strings"

	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/web/check"
)

type validatorPage struct {
	// The payout identity, proven.
	proofBox `json:"proof"`
	Address  string `json:"address"`
	// Its voting power in the latest set and in the genesis set (0: not in it), and
	// the blocks it proposed among the last ChartBlocks: not proven.
	Power        int64      `json:"power"`
	GenesisPower int64      `json:"genesis_power"`
	Proposed     []blockRow `json:"proposed"`
	Latest       int64      `json:"latest"`
	// Signed and Missed count the last ChartBlocks blocks whose commit carries its
	// signature, and those that do not while it was in their set: not proven.
	Signed int `json:"signed"`
	Missed int `json:"missed"`
}

// validator shows a validator, named by its consensus address: the identity its share
// of each epoch's pool is paid to, in a proof box, and, as the node says, its voting
// power and the recent blocks it proposed.
func (s *Server) validator(r *http.Request) (any, error) {
	ctx := r.Context()
	v := r.PathValue("address")
	addr, err := hex.DecodeString(v)
	if err != nil || len(addr) != drive.ConsensusAddressLen {
		return nil, errBadInput{"validator", v, "a consensus address of 40 hex digits"}
	}
	p := validatorPage{Address: strings.ToUpper(v)}
	if p.Latest, err = s.latestHeight(ctx); err != nil {
		return nil, err
	}
	h, err := provenBelow(p.Latest)
	if err != nil {
		return nil, err
	}
	payout, err := s.rawRead(ctx, proofs.PathKey, drive.PayoutIdentityKey(addr), h)
	if err != nil {
		return nil, err
	}
	if p.proofBox, err = s.proofBox(ctx, []check.Answer{payout}); err != nil {
		return nil, err
	}
	vals, err := s.rpc.Validators(ctx, &p.Latest, nil, nil)
	if err != nil {
		return nil, err
	}
	for _, val := range vals.Validators {
		if bytes.Equal(val.Address, addr) {
			p.Power = val.VotingPower
		}
	}
	if t := s.opts.Trusted; t != nil {
		for _, val := range t.Validators {
			if bytes.Equal(val.Address, addr) {
				p.GenesisPower = val.VotingPower
			}
		}
	}
	metas, err := s.metas(ctx, max(1, p.Latest-ChartBlocks+1), p.Latest)
	if err != nil {
		return nil, err
	}
	var headers []*cmttypes.Header
	for _, m := range metas {
		if bytes.Equal(m.Header.ProposerAddress, addr) {
			p.Proposed = append(p.Proposed, blockRowOf(m))
		}
		headers = append(headers, &m.Header)
	}
	rows, err := s.activity(ctx, headers)
	if err != nil {
		return nil, err
	}
	if r := rows[p.Address]; r != nil {
		p.Signed, p.Missed = r.Signed, r.Missed
	}
	return p, nil
}
