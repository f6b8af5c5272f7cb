package protocol

import (
	"errors"
	"fmt"
)

// CodeOf returns the code of err (found through wrapping), or CodeOK when err is nil.
// An error that carries no code is a broken invariant of the caller: ok is false.
func CodeOf(err error) (code Code, ok bool) {
	if err == nil {
		return CodeOK, true
	}
	var e Error
	if !errors.As(err, &e) {
		return 0, false
	}
	return e.Code(), true
}

// Error is a consensus error: it carries its fields and its stable code.
type Error interface {
	error
	Code() Code
}

// ErrTxDecode: the bytes are not a transition of this encoding.
type ErrTxDecode struct {
	Offset int    // where decoding stopped
	Reason string // what was expected there
}

func (e ErrTxDecode) Code() Code { return CodeTxDecode }
func (e ErrTxDecode) Error() string {
	return fmt.Sprintf("transition decode error at byte %d: %s", e.Offset, e.Reason)
}

// ErrTxTooLarge: the encoded transition exceeds the version's MaxTxBytes.
type ErrTxTooLarge struct{ Size, Max int }

func (e ErrTxTooLarge) Code() Code { return CodeTxTooLarge }
func (e ErrTxTooLarge) Error() string {
	return fmt.Sprintf("transition of %d bytes exceeds the limit of %d, signature and every action's data included (a document's data JSON fits in about %d bytes less its type name: docs/CONTRACTS.md, What fits in a transaction)", e.Size, e.Max, e.Max-documentsBatchCreateOverhead)
}

// ErrUnsupportedTxFormat: the leading format byte names an encoding this version lacks.
type ErrUnsupportedTxFormat struct{ Format uint8 }

func (e ErrUnsupportedTxFormat) Code() Code { return CodeUnsupportedTxFormat }
func (e ErrUnsupportedTxFormat) Error() string {
	return fmt.Sprintf("unsupported transition format %d", e.Format)
}

// ErrUnknownTransitionType: the type byte names no transition.
type ErrUnknownTransitionType struct{ Type uint8 }

func (e ErrUnknownTransitionType) Code() Code { return CodeUnknownTransitionType }
func (e ErrUnknownTransitionType) Error() string {
	return fmt.Sprintf("unknown transition type %d", e.Type)
}

// ErrInvalidTransition: a field breaks a structure rule (zero amount, self transfer,
// duplicate or missing keys, ...).
type ErrInvalidTransition struct {
	Field  string
	Reason string
}

func (e ErrInvalidTransition) Code() Code { return CodeInvalidTransition }
func (e ErrInvalidTransition) Error() string {
	return fmt.Sprintf("invalid transition: %s: %s", e.Field, e.Reason)
}

// ErrIdentityNotFound: the signing identity does not exist.
type ErrIdentityNotFound struct{ ID IdentityID }

func (e ErrIdentityNotFound) Code() Code { return CodeIdentityNotFound }
func (e ErrIdentityNotFound) Error() string {
	return fmt.Sprintf("identity %s not found", e.ID)
}

// ErrMissingPublicKey: the signing identity has no key at the index the transition names.
type ErrMissingPublicKey struct {
	ID       IdentityID
	KeyIndex uint8
}

func (e ErrMissingPublicKey) Code() Code { return CodeMissingPublicKey }
func (e ErrMissingPublicKey) Error() string {
	return fmt.Sprintf("identity %s has no public key %d", e.ID, e.KeyIndex)
}

// ErrInvalidSignature: the signature does not verify over the transition's sign bytes.
type ErrInvalidSignature struct{ Type TransitionType }

func (e ErrInvalidSignature) Code() Code { return CodeInvalidSignature }
func (e ErrInvalidSignature) Error() string {
	return fmt.Sprintf("invalid signature on %s", e.Type)
}

// ErrAddressNotFound: the signing address holds no balance.
type ErrAddressNotFound struct{ Address Address }

func (e ErrAddressNotFound) Code() Code { return CodeAddressNotFound }
func (e ErrAddressNotFound) Error() string {
	return fmt.Sprintf("address %s not found", e.Address)
}

// ErrBalanceIsNotEnough: the payer cannot pay the processing fee. Unpaid.
type ErrBalanceIsNotEnough struct{ Balance, Fee uint64 }

func (e ErrBalanceIsNotEnough) Code() Code { return CodeBalanceIsNotEnough }
func (e ErrBalanceIsNotEnough) Error() string {
	return fmt.Sprintf("balance %d cannot pay the processing fee %d", e.Balance, e.Fee)
}

// ErrMaxFeeNotCovered: CheckTx only, never in a block (docs/TX.md, "What accepted
// means"). Payer's balance covers the Amount the transaction moves and its fee at the
// earliest time of the next block, but not the amount and MaxFee, the largest fee a
// later block may charge it (the dry run's max_fee).
type ErrMaxFeeNotCovered struct {
	Payer                        string
	Balance, Amount, Fee, MaxFee uint64
}

func (e ErrMaxFeeNotCovered) Code() Code { return CodeMaxFeeNotCovered }
func (e ErrMaxFeeNotCovered) Error() string {
	return fmt.Sprintf("%s holds %d, which covers the amount %d and the fee %d at the next block's earliest time but not the fee a later block may charge, at most %d%s",
		e.Payer, e.Balance, e.Amount, e.Fee, e.MaxFee, checkOnly)
}

// NonceReason says why a nonce was refused.
type NonceReason uint8

const (
	// NonceStale: the nonce is at or below the last one used (a replay).
	NonceStale NonceReason = 1
	// NonceTooFarInFuture: the nonce is more than MaxNonceGap past the last one.
	NonceTooFarInFuture NonceReason = 2
)

func (r NonceReason) String() string {
	switch r {
	case NonceStale:
		return "stale (already used)"
	case NonceTooFarInFuture:
		return "too far in the future"
	}
	return fmt.Sprintf("NonceReason(%d)", uint8(r))
}

// ErrInvalidIdentityNonce: an identity's transition carries a replayed or out-of-range nonce.
type ErrInvalidIdentityNonce struct {
	ID     IdentityID
	Last   uint64 // last nonce the identity used
	Got    uint64
	Reason NonceReason
}

func (e ErrInvalidIdentityNonce) Code() Code { return CodeInvalidIdentityNonce }
func (e ErrInvalidIdentityNonce) Error() string {
	return fmt.Sprintf("identity %s nonce %d is %s (last used %d)", e.ID, e.Got, e.Reason, e.Last)
}

// ErrInvalidAddressNonce: an address's transition carries a replayed or out-of-range nonce.
type ErrInvalidAddressNonce struct {
	Address Address
	Last    uint64
	Got     uint64
	Reason  NonceReason
}

func (e ErrInvalidAddressNonce) Code() Code { return CodeInvalidAddressNonce }
func (e ErrInvalidAddressNonce) Error() string {
	return fmt.Sprintf("address %s nonce %d is %s (last used %d)", e.Address, e.Got, e.Reason, e.Last)
}

// FeeParts is a transition's fee by the parts it is charged in (the charged parts of
// feeschedule.Result), for a refusal to name what a balance had to cover and for the
// transition event to report what was charged.
type FeeParts struct {
	Processing       uint64
	PerpetualStorage uint64
	LifetimeStorage  uint64 // every lifetime pool's part summed
	DeletionPrepay   uint64
}

// Total is the sum of the parts, capped at 2^64-1.
func (p FeeParts) Total() uint64 {
	var sum uint64
	for _, n := range []uint64{p.Processing, p.PerpetualStorage, p.LifetimeStorage, p.DeletionPrepay} {
		if sum+n < sum {
			return ^uint64(0)
		}
		sum += n
	}
	return sum
}

// String names every part that is not zero, processing always.
func (p FeeParts) String() string {
	out := fmt.Sprintf("processing %d", p.Processing)
	for _, part := range []struct {
		name string
		n    uint64
	}{{"perpetual storage", p.PerpetualStorage}, {"lifetime storage", p.LifetimeStorage}, {"deletion prepay", p.DeletionPrepay}} {
		if part.n > 0 {
			out += fmt.Sprintf(", %s %d", part.name, part.n)
		}
	}
	return out
}

// ErrIdentityInsufficientBalance: the identity can pay the processing of its
// authentication but not the amount and the transition's whole fee as well. Paid: it is
// charged Charged.
type ErrIdentityInsufficientBalance struct {
	ID      IdentityID
	Balance uint64   // balance before the transition
	Amount  uint64   // what the transition moves out
	Fee     FeeParts // the transition's whole fee, which the balance had to cover with the amount
	Charged uint64   // what the refusal is charged instead: its authentication's processing
}

func (e ErrIdentityInsufficientBalance) Code() Code { return CodeIdentityInsufficientBalance }
func (e ErrIdentityInsufficientBalance) Error() string {
	return fmt.Sprintf("identity %s balance %d cannot pay the amount %d plus the fee %d (%s); the refusal is charged %d", e.ID, e.Balance, e.Amount, e.Fee.Total(), e.Fee, e.Charged)
}

// ErrAddressInsufficientBalance: the address can pay the processing of its
// authentication but not the amount and the transition's whole fee as well. Paid: it is
// charged Charged.
type ErrAddressInsufficientBalance struct {
	Address Address
	Balance uint64
	Amount  uint64
	Fee     FeeParts
	Charged uint64
}

func (e ErrAddressInsufficientBalance) Code() Code { return CodeAddressInsufficientBalance }
func (e ErrAddressInsufficientBalance) Error() string {
	return fmt.Sprintf("address %s balance %d cannot pay the amount %d plus the fee %d (%s); the refusal is charged %d", e.Address, e.Balance, e.Amount, e.Fee.Total(), e.Fee, e.Charged)
}

// ErrRecipientIdentityNotFound: a top-up or transfer names an identity that does not
// exist. Paid.
type ErrRecipientIdentityNotFound struct{ ID IdentityID }

func (e ErrRecipientIdentityNotFound) Code() Code { return CodeRecipientIdentityNotFound }
func (e ErrRecipientIdentityNotFound) Error() string {
	return fmt.Sprintf("recipient identity %s not found", e.ID)
}

// ErrCreditOverflow: a credit would take an account's balance, or a sum of fees, past
// 2^64-1. While credits are conserved this cannot happen (genesis caps the supply at
// 2^64-1); it is a refusal all the same, so that no state a transaction reaches can make
// a block fail. Unpaid.
type ErrCreditOverflow struct {
	Account string // the account or pool credited
	Balance uint64
	Amount  uint64
}

func (e ErrCreditOverflow) Code() Code { return CodeCreditOverflow }
func (e ErrCreditOverflow) Error() string {
	return fmt.Sprintf("crediting %d to %s (balance %d) would overflow", e.Amount, e.Account, e.Balance)
}
