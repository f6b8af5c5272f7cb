package protocol

import "fmt"

// The refusals of the validator set's transitions (docs/STATE.md, "Validators"). All
// are paid: they are found against state, after the signer is authenticated.

// ErrNotAValidatorOperator: the signing identity operates no validator of the set.
type ErrNotAValidatorOperator struct{ Identity IdentityID }

func (e ErrNotAValidatorOperator) Code() Code { return CodeNotAValidatorOperator }
func (e ErrNotAValidatorOperator) Error() string {
	return fmt.Sprintf("identity %s operates no validator of the current set", e.Identity)
}

// ErrValidatorNotFound: the change names a validator that is not in the set.
type ErrValidatorNotFound struct{ Validator ConsensusAddress }

func (e ErrValidatorNotFound) Code() Code { return CodeValidatorNotFound }
func (e ErrValidatorNotFound) Error() string {
	return fmt.Sprintf("validator %X is not in the current set", e.Validator[:])
}

// ErrValidatorAlreadyPresent: the key added or rotated to is in the set already.
type ErrValidatorAlreadyPresent struct{ Validator ConsensusAddress }

func (e ErrValidatorAlreadyPresent) Code() Code { return CodeValidatorAlreadyPresent }
func (e ErrValidatorAlreadyPresent) Error() string {
	return fmt.Sprintf("validator %X is in the current set already", e.Validator[:])
}

// ErrValidatorPowerMoveTooLarge: the change moves Moved of the set's Total power, a
// third or more.
type ErrValidatorPowerMoveTooLarge struct{ Moved, Total uint64 }

func (e ErrValidatorPowerMoveTooLarge) Code() Code { return CodeValidatorPowerMoveTooLarge }
func (e ErrValidatorPowerMoveTooLarge) Error() string {
	return fmt.Sprintf("the change moves %d of the set's %d power, a third or more: move it in smaller steps", e.Moved, e.Total)
}

// ErrValidatorSetWouldBeEmpty: the removal leaves no validator.
type ErrValidatorSetWouldBeEmpty struct{ Validator ConsensusAddress }

func (e ErrValidatorSetWouldBeEmpty) Code() Code { return CodeValidatorSetWouldBeEmpty }
func (e ErrValidatorSetWouldBeEmpty) Error() string {
	return fmt.Sprintf("removing validator %X would leave the set empty", e.Validator[:])
}

// ErrTooManyValidators: the set holds Max validators already.
type ErrTooManyValidators struct{ Max int }

func (e ErrTooManyValidators) Code() Code { return CodeTooManyValidators }
func (e ErrTooManyValidators) Error() string {
	return fmt.Sprintf("the set holds %d validators, the most it may", e.Max)
}

// ErrInvalidValidatorOperator: the operator named for a new validator does not exist
// (Exists false) or operates a validator of the set already.
type ErrInvalidValidatorOperator struct {
	Operator IdentityID
	Exists   bool
}

func (e ErrInvalidValidatorOperator) Code() Code { return CodeInvalidValidatorOperator }
func (e ErrInvalidValidatorOperator) Error() string {
	if !e.Exists {
		return fmt.Sprintf("operator identity %s does not exist", e.Operator)
	}
	return fmt.Sprintf("identity %s operates a validator of the set already", e.Operator)
}

// ErrValidatorProposalNotFound: no pending proposal has the number.
type ErrValidatorProposalNotFound struct{ Proposal uint64 }

func (e ErrValidatorProposalNotFound) Code() Code { return CodeValidatorProposalNotFound }
func (e ErrValidatorProposalNotFound) Error() string {
	return fmt.Sprintf("no pending validator set proposal %d (never made, applied, or expired)", e.Proposal)
}

// ErrValidatorProposalApproved: the validator approved the proposal already, or it
// has passed (Passed).
type ErrValidatorProposalApproved struct {
	Proposal  uint64
	Validator ConsensusAddress
	Passed    bool
}

func (e ErrValidatorProposalApproved) Code() Code { return CodeValidatorProposalApproved }
func (e ErrValidatorProposalApproved) Error() string {
	if e.Passed {
		return fmt.Sprintf("validator set proposal %d has passed already", e.Proposal)
	}
	return fmt.Sprintf("validator %X approved proposal %d already", e.Validator[:], e.Proposal)
}

// ErrTooManyValidatorProposals: the operator has Max proposals pending.
type ErrTooManyValidatorProposals struct {
	Operator IdentityID
	Max      int
}

func (e ErrTooManyValidatorProposals) Code() Code { return CodeTooManyValidatorProposals }
func (e ErrTooManyValidatorProposals) Error() string {
	return fmt.Sprintf("identity %s has %d validator set proposals pending, the most it may", e.Operator, e.Max)
}
