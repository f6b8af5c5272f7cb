package protocol

// TypeValidatorSetApproval: a validator's operator approves a pending proposal
// (protocol version 16 on).
const TypeValidatorSetApproval TransitionType = 10

func init() {
	register(Kind{Type: TypeValidatorSetApproval, Name: "validator_set_approval", New: func() Transition { return &ValidatorSetApproval{} }})
}

// ValidatorSetApproval approves the pending proposal numbered Proposal. Its signer is
// the operator identity of a validator of the current set (docs/STATE.md,
// "Validators").
type ValidatorSetApproval struct {
	Identity IdentityID
	KeyIndex uint8
	Nonce    uint64
	Proposal uint64
}

func (*ValidatorSetApproval) Type() TransitionType { return TypeValidatorSetApproval }
func (t *ValidatorSetApproval) GetNonce() uint64   { return t.Nonce }
func (t *ValidatorSetApproval) SetNonce(n uint64)  { t.Nonce = n }
func (t *ValidatorSetApproval) Signer() Signer {
	return Signer{Kind: SignerIdentity, Identity: t.Identity, KeyIndex: t.KeyIndex}
}

func (t *ValidatorSetApproval) encodeBody(e *encoder) {
	e.bytes(t.Identity[:])
	e.u8(t.KeyIndex)
	e.u64(t.Nonce)
	e.u64(t.Proposal)
}

func (t *ValidatorSetApproval) decodeBody(d *decoder) {
	copy(t.Identity[:], d.fixed(IdentityIDLen, "identity id"))
	t.KeyIndex = d.u8("key index")
	t.Nonce = d.u64("nonce")
	t.Proposal = d.u64("proposal")
}

func (t *ValidatorSetApproval) validate(ctx Context) error {
	return validatorVotes(ctx, TypeValidatorSetApproval)
}
