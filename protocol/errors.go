package protocol

import "fmt"

// Code is a stable consensus error code. It goes into the transaction result; the
// readable message goes into the log only. Codes are never renumbered or reused, and
// codes_test.go pins every one of them together with whether the refusal is paid.
type Code uint32

// The codes. The five-digit groups follow the platform: 1xxxx basic (decoding and
// structure), 2xxxx signature and signer, 3xxxx fee, 4xxxx state.
const (
	CodeOK Code = 0

	CodeTxDecode              Code = 10001
	CodeTxTooLarge            Code = 10002
	CodeUnsupportedTxFormat   Code = 10003
	CodeUnknownTransitionType Code = 10004
	CodeInvalidTransition     Code = 10005

	CodeIdentityNotFound Code = 20000
	CodeMissingPublicKey Code = 20001
	CodeInvalidSignature Code = 20002
	CodeAddressNotFound  Code = 20010

	CodeBalanceIsNotEnough Code = 30000

	CodeInvalidIdentityNonce        Code = 40204
	CodeIdentityInsufficientBalance Code = 40210
	CodeRecipientIdentityNotFound   Code = 40211
	CodeInvalidAddressNonce         Code = 40220
	CodeAddressInsufficientBalance  Code = 40221
)

// Paid reports whether a refusal with this code still charges the signer its processing
// fee and consumes its nonce. Only refusals found after the signer is authenticated, its
// nonce accepted and its fee affordable are paid: anything earlier changes nothing, so a
// replayed or forged transition can never drain anyone.
func (c Code) Paid() bool {
	switch c {
	case CodeIdentityInsufficientBalance, CodeRecipientIdentityNotFound,
		CodeAddressInsufficientBalance:
		return true
	}
	return false
}

// Error is a consensus error: it carries its fields and its stable code.
type Error interface {
	error
	Code() Code
}

// CodeOf returns the code of err, or 0 when err is nil. An error that is not a
// consensus error is a broken invariant of the caller and has no code.
func CodeOf(err error) (Code, bool) {
	if err == nil {
		return CodeOK, true
	}
	e, ok := err.(Error)
	if !ok {
		return 0, false
	}
	return e.Code(), true
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
	return fmt.Sprintf("transition of %d bytes exceeds the limit of %d", e.Size, e.Max)
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

// ErrIdentityInsufficientBalance: the identity can pay the fee but not the amount. Paid.
type ErrIdentityInsufficientBalance struct {
	ID      IdentityID
	Balance uint64 // balance before the fee
	Needed  uint64 // amount plus fee
}

func (e ErrIdentityInsufficientBalance) Code() Code { return CodeIdentityInsufficientBalance }
func (e ErrIdentityInsufficientBalance) Error() string {
	return fmt.Sprintf("identity %s balance %d is below the %d needed", e.ID, e.Balance, e.Needed)
}

// ErrAddressInsufficientBalance: the address can pay the fee but not the amount. Paid.
type ErrAddressInsufficientBalance struct {
	Address Address
	Balance uint64
	Needed  uint64
}

func (e ErrAddressInsufficientBalance) Code() Code { return CodeAddressInsufficientBalance }
func (e ErrAddressInsufficientBalance) Error() string {
	return fmt.Sprintf("address %s balance %d is below the %d needed", e.Address, e.Balance, e.Needed)
}

// ErrRecipientIdentityNotFound: a top-up or transfer names an identity that does not
// exist. Paid.
type ErrRecipientIdentityNotFound struct{ ID IdentityID }

func (e ErrRecipientIdentityNotFound) Code() Code { return CodeRecipientIdentityNotFound }
func (e ErrRecipientIdentityNotFound) Error() string {
	return fmt.Sprintf("recipient identity %s not found", e.ID)
}
