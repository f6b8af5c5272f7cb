package app

import (
	"slices"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

func init() { handle(protocol.TypeValidatorSetApproval, applyValidatorSetApproval) }

// applyValidatorSetApproval: the operator of a validator of the set approves a pending
// proposal, not past its expiry, that neither passed nor has its approval yet.
func applyValidatorSetApproval(e *execution, t *protocol.ValidatorSetApproval) error {
	set, v, err := operatedValidator(e, t.Identity)
	if err != nil {
		return err
	}
	p, ok, err := drive.GetValidatorProposal(e.cache, t.Proposal)
	if err != nil {
		return err
	}
	if !ok || (p.PassedMs == 0 && p.ExpiresMs <= e.r.ctx.Horizon()) {
		return protocol.ErrValidatorProposalNotFound{Proposal: t.Proposal}
	}
	if p.PassedMs != 0 || slices.Contains(p.Approvals, v.Address) {
		return protocol.ErrValidatorProposalApproved{Proposal: t.Proposal, Validator: v.Address, Passed: p.PassedMs != 0}
	}
	return approve(e, set, p.ValidatorProposal, p.Approvals, v)
}
