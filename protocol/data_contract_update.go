package protocol

// TypeDataContractUpdate: a contract's owner replaces its document types.
const TypeDataContractUpdate TransitionType = 7

func init() {
	register(Kind{Type: TypeDataContractUpdate, Name: "data_contract_update", New: func() Transition { return &DataContractUpdate{} }})
}

// DataContractUpdate replaces the document types of contract Contract with those of
// Definition, as version Version. Only the owner may sign it; Version must be the
// stored version plus one, and the new types must pass CheckContractUpdate against the
// stored ones.
type DataContractUpdate struct {
	Identity   IdentityID
	KeyIndex   uint8
	Nonce      uint64
	Contract   ContractID
	Version    uint32
	Definition []byte

	parsed parsedDefinition // see DataContractCreate
}

// Updated is the contract the update makes, Definition parsed under the rules of ctx
// (once, as a submitted definition: ParseSubmittedDefinitionIn) and owned by the
// signer; whether it may replace the stored one is the handler's to check.
func (t *DataContractUpdate) Updated(ctx Context) (Contract, error) {
	d, err := t.parsed.parse(t.Definition, ctx)
	if err != nil {
		return Contract{}, err
	}
	return Contract{ID: t.Contract, Owner: t.Identity, Version: t.Version, Moderation: d.Moderation, DocumentTypes: d.DocumentTypes}, nil
}

func (*DataContractUpdate) Type() TransitionType { return TypeDataContractUpdate }
func (t *DataContractUpdate) GetNonce() uint64   { return t.Nonce }
func (t *DataContractUpdate) SetNonce(n uint64)  { t.Nonce = n }
func (t *DataContractUpdate) Signer() Signer {
	return Signer{Kind: SignerIdentity, Identity: t.Identity, KeyIndex: t.KeyIndex}
}

func (t *DataContractUpdate) encodeBody(e *encoder) {
	e.bytes(t.Identity[:])
	e.u8(t.KeyIndex)
	e.u64(t.Nonce)
	e.bytes(t.Contract[:])
	e.u32(t.Version)
	e.sized(t.Definition)
}

func (t *DataContractUpdate) decodeBody(d *decoder) {
	copy(t.Identity[:], d.fixed(IdentityIDLen, "identity id"))
	t.KeyIndex = d.u8("key index")
	t.Nonce = d.u64("nonce")
	copy(t.Contract[:], d.fixed(ContractIDLen, "contract id"))
	t.Version = d.u32("contract version")
	t.Definition = d.sized("contract definition")
}

// validate parses the definition with the version's parser, ttl bounds included, and
// refuses version 1 and below (a create makes version 1); the rest needs the stored
// contract.
func (t *DataContractUpdate) validate(ctx Context) error {
	if t.Version < 2 {
		return ErrInvalidTransition{Field: "version", Reason: "an update makes version 2 or later"}
	}
	_, err := t.parsed.parse(t.Definition, ctx)
	return err
}
