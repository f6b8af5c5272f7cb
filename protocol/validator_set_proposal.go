package protocol

// TypeValidatorSetProposal: a validator's operator proposes a change of the set
// (protocol version 16 on).
const TypeValidatorSetProposal TransitionType = 9

func init() {
	register(Kind{Type: TypeValidatorSetProposal, Name: "validator_set_proposal", New: func() Transition { return &ValidatorSetProposal{} }})
}

// ValidatorSetProposal proposes Change. Its signer is the operator identity of a
// validator of the current set, whose proposal counts as its approval (docs/STATE.md,
// "Validators").
type ValidatorSetProposal struct {
	Identity IdentityID
	KeyIndex uint8
	Nonce    uint64
	Change   ValidatorChange
}

func (*ValidatorSetProposal) Type() TransitionType { return TypeValidatorSetProposal }
func (t *ValidatorSetProposal) GetNonce() uint64   { return t.Nonce }
func (t *ValidatorSetProposal) SetNonce(n uint64)  { t.Nonce = n }
func (t *ValidatorSetProposal) Signer() Signer {
	return Signer{Kind: SignerIdentity, Identity: t.Identity, KeyIndex: t.KeyIndex}
}

func (t *ValidatorSetProposal) encodeBody(e *encoder) {
	e.bytes(t.Identity[:])
	e.u8(t.KeyIndex)
	e.u64(t.Nonce)
	t.Change.encode(e)
}

func (t *ValidatorSetProposal) decodeBody(d *decoder) {
	copy(t.Identity[:], d.fixed(IdentityIDLen, "identity id"))
	t.KeyIndex = d.u8("key index")
	t.Nonce = d.u64("nonce")
	t.Change.decode(d)
}

func (t *ValidatorSetProposal) validate(ctx Context) error {
	if err := validatorVotes(ctx, TypeValidatorSetProposal); err != nil {
		return err
	}
	return t.Change.validate(ctx.Limits)
}
