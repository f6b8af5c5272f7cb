package client

import (
	"context"
	"encoding/binary"
	"errors"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// ValidatorSetState is the validator set in state at one height and the misbehaviour
// recorded (docs/STATE.md, "Validators"); before protocol version 16 the set is not
// state and List is empty.
type ValidatorSetState struct {
	Height   int64
	Verified bool
	List     []drive.Validator // by address
	Total    uint64
	// Misbehavior is every piece of evidence handled, by validator and height.
	Misbehavior []drive.Misbehavior
}

var errNotValidatorKey = errors.New("not a validator set record")

// Validators reads the validator set and the misbehaviour recorded at height (0: the
// latest), both at the height the first answered; with prove, each range is checked
// complete against the signed header after it.
func (c *Client) Validators(ctx context.Context, height int64, prove bool) (ValidatorSetState, error) {
	entries, h, err := c.rangeRead(ctx, proofs.PathValidators, nil, height, prove, cutShort(proofs.PathValidators))
	if err != nil {
		return ValidatorSetState{}, err
	}
	out := ValidatorSetState{Height: h, Verified: prove}
	set, err := drive.ReadValidatorSet(proofs.EntriesKV(entries))
	if err != nil {
		return ValidatorSetState{}, corrupt(err)
	}
	if len(set.List) != len(entries) {
		return ValidatorSetState{}, ErrCorruptValue{Key: drive.ValidatorSetPrefix(), Err: errNotValidatorKey}
	}
	out.List, out.Total = set.List, set.Total
	evidence, _, err := c.rangeRead(ctx, proofs.PathMisbehavior, nil, h, prove, func(last proofs.KV) ([]byte, error) {
		a, at, ok := drive.ParseMisbehaviorKey(last.Key)
		if !ok {
			return nil, ErrCorruptValue{Key: last.Key, Err: errNotValidatorKey}
		}
		return binary.BigEndian.AppendUint64(a[:], at), nil
	})
	if err != nil {
		return ValidatorSetState{}, err
	}
	if out.Misbehavior, err = drive.Misbehaviors(proofs.EntriesKV(evidence)); err != nil {
		return ValidatorSetState{}, corrupt(err)
	}
	return out, nil
}

// ValidatorProposal is a pending proposal with its approvals and what they hold of the
// set's power at the same height.
type ValidatorProposal struct {
	drive.ValidatorProposalEntry
	// Approved is the power, in the set, of the validators that approved it (approvals
	// of validators that left count nothing); it passes above two thirds of Total.
	Approved, Total uint64
}

// ValidatorProposalsState is the pending proposals at one height.
type ValidatorProposalsState struct {
	Height   int64
	Verified bool
	// Proposals are by number; NextID is the number the next proposal gets.
	Proposals []ValidatorProposal
	NextID    uint64
}

// ValidatorProposals reads the pending proposals with their approvals, the set they are
// counted against and the next proposal's number at height (0: the latest), every read
// at the height the first answered; with prove, each is checked (the ranges complete)
// against the signed header after it.
func (c *Client) ValidatorProposals(ctx context.Context, height int64, prove bool) (ValidatorProposalsState, error) {
	entries, h, err := c.rangeRead(ctx, proofs.PathValidatorProposals, nil, height, prove, func(last proofs.KV) ([]byte, error) {
		id, a, approval, ok := drive.ParseValidatorProposalKey(last.Key)
		if !ok {
			return nil, ErrCorruptValue{Key: last.Key, Err: errNotValidatorKey}
		}
		if !approval {
			return proofs.ValidatorProposalsData(id, nil), nil
		}
		return proofs.ValidatorProposalsData(id, &a), nil
	})
	if err != nil {
		return ValidatorProposalsState{}, err
	}
	pending, err := drive.ValidatorProposals(proofs.EntriesKV(entries))
	if err != nil {
		return ValidatorProposalsState{}, corrupt(err)
	}
	set, err := c.Validators(ctx, h, prove)
	if err != nil {
		return ValidatorProposalsState{}, err
	}
	out := ValidatorProposalsState{Height: h, Verified: prove}
	for _, p := range pending {
		vp := ValidatorProposal{ValidatorProposalEntry: p, Total: set.Total}
		for _, a := range p.Approvals {
			for _, v := range set.List {
				if v.Address == a {
					vp.Approved += v.Power
				}
			}
		}
		out.Proposals = append(out.Proposals, vp)
	}
	key := drive.NextValidatorProposalKey()
	v, _, err := c.single(ctx, proofs.PathKey, key, h, prove)
	if err != nil {
		return ValidatorProposalsState{}, err
	}
	if out.NextID, err = drive.GetU64(proofs.SingleKV(key, v), key); err != nil {
		return ValidatorProposalsState{}, corrupt(err)
	}
	out.NextID = max(out.NextID, 1)
	return out, nil
}

// Operated returns the validator identity operates in the set s; ok is false when it
// operates none.
func (s ValidatorSetState) Operated(identity protocol.IdentityID) (drive.Validator, bool) {
	return drive.ValidatorSet{List: s.List, Total: s.Total}.Operated(identity)
}
