package app

import (
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

func init() { handle(protocol.TypeValidatorSetProposal, applyValidatorSetProposal) }

// applyValidatorSetProposal: the operator of a validator of the set proposes a change,
// which checkChange judges against the set as it is, and approves it. It gets the next
// number, expires ValidatorProposalLifetimeMs later unless passed, and passes at once
// when the proposer holds more than two thirds of the power.
func applyValidatorSetProposal(e *execution, t *protocol.ValidatorSetProposal) error {
	l := e.r.ctx.Limits
	set, proposer, err := operatedValidator(e, t.Identity)
	if err != nil {
		return err
	}
	pending, err := drive.ValidatorProposals(e.cache)
	if err != nil {
		return err
	}
	mine := 0
	for _, p := range pending {
		if p.Proposer == proposer.Address && p.PassedMs == 0 {
			mine++
		}
	}
	if mine >= l.MaxValidatorProposals {
		return protocol.ErrTooManyValidatorProposals{Operator: t.Identity, Max: l.MaxValidatorProposals}
	}
	if _, err := checkChange(e.cache, set, t.Change, l); err != nil {
		return err
	}
	id, err := drive.TakeValidatorProposalID(e.cache)
	if err != nil {
		return err
	}
	now := e.r.ctx.BlockTimeMs
	p := drive.ValidatorProposal{ID: id, Change: t.Change, Proposer: proposer.Address, CreatedMs: now, ExpiresMs: now + l.ValidatorProposalLifetimeMs}
	e.events = append(e.events, protocol.NewValidatorProposalEvent(id, t.Change, proposer.Address, p.ExpiresMs))
	return approve(e, set, p, nil, proposer)
}

// operatedValidator reads the set and the validator identity operates in it, refusing
// an identity that operates none.
func operatedValidator(e *execution, identity protocol.IdentityID) (drive.ValidatorSet, drive.Validator, error) {
	set, err := drive.ReadValidatorSet(e.cache)
	if err != nil {
		return set, drive.Validator{}, err
	}
	v, ok := set.Operated(identity)
	if !ok {
		return set, v, protocol.ErrNotAValidatorOperator{Identity: identity}
	}
	return set, v, nil
}

// approve records v's approval of proposal p, which earlier holds, and passes p when
// the approvals hold more than two thirds of the set's power.
func approve(e *execution, set drive.ValidatorSet, p drive.ValidatorProposal, earlier []protocol.ConsensusAddress, v drive.Validator) error {
	now := e.r.ctx.BlockTimeMs
	if err := drive.ApproveValidatorProposal(e.cache, p.ID, v.Address, now); err != nil {
		return err
	}
	approved := approvedPower(set, append(earlier, v.Address))
	passed := protocol.Passes(approved, set.Total)
	if passed {
		p.PassedMs = now
	}
	if err := drive.SetValidatorProposal(e.cache, p); err != nil {
		return err
	}
	e.events = append(e.events, protocol.NewValidatorApprovalEvent(p.ID, v.Address, approved, set.Total, passed))
	return nil
}
