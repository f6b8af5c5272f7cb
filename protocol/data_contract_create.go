package protocol

// TypeDataContractCreate: an identity registers a data contract.
const TypeDataContractCreate TransitionType = 6

func init() {
	register(Kind{Type: TypeDataContractCreate, Name: "data_contract_create", New: func() Transition { return &DataContractCreate{} }})
}

// DataContractCreate registers the document types of Definition (the JSON of
// docs/CONTRACTS.md) as a contract owned by the signing identity, at version 1, under
// the id NewContractID(Identity, Nonce).
type DataContractCreate struct {
	Identity IdentityID
	KeyIndex uint8
	Nonce    uint64
	// Definition is the contract JSON as the owner wrote it; what is stored is its
	// canonical form.
	Definition []byte

	// parsed holds Definition's types once structure validation parsed them, and the
	// version it parsed them under.
	parsed parsedDefinition
}

// parsedDefinition is a contract definition parsed by structure validation, so that
// state validation does not parse it again.
type parsedDefinition struct {
	version Version
	minTTL  uint64 // the ttl minimum it was parsed under (a local chain may lower it)
	def     Definition
	ok      bool
}

// parse returns definition parsed under v: what structure validation kept, or a fresh
// parse when it ran under another version (or not at all). A create's or an update's
// definition is a submitted one: the ttl bounds apply to it
// (ParseSubmittedDefinitionIn).
func (p *parsedDefinition) parse(definition []byte, ctx Context) (Definition, error) {
	if p.ok && p.version == ctx.Version && p.minTTL == ctx.Limits.MinDocumentTTLSeconds {
		return p.def, nil
	}
	d, err := ParseSubmittedDefinitionIn(definition, ctx)
	if err != nil {
		return Definition{}, err
	}
	*p = parsedDefinition{version: ctx.Version, minTTL: ctx.Limits.MinDocumentTTLSeconds, def: d, ok: true}
	return d, nil
}

func (*DataContractCreate) Type() TransitionType { return TypeDataContractCreate }
func (t *DataContractCreate) GetNonce() uint64   { return t.Nonce }
func (t *DataContractCreate) SetNonce(n uint64)  { t.Nonce = n }
func (t *DataContractCreate) Signer() Signer {
	return Signer{Kind: SignerIdentity, Identity: t.Identity, KeyIndex: t.KeyIndex}
}

// ContractID is the id of the contract the transition creates.
func (t *DataContractCreate) ContractID() ContractID { return NewContractID(t.Identity, t.Nonce) }

// Contract is the contract the transition creates, its definition parsed under the
// rules of ctx.
func (t *DataContractCreate) Contract(ctx Context) (Contract, error) {
	d, err := t.parsed.parse(t.Definition, ctx)
	if err != nil {
		return Contract{}, err
	}
	return Contract{ID: t.ContractID(), Owner: t.Identity, Version: 1, Moderation: d.Moderation, DocumentTypes: d.DocumentTypes}, nil
}

func (t *DataContractCreate) encodeBody(e *encoder) {
	e.bytes(t.Identity[:])
	e.u8(t.KeyIndex)
	e.u64(t.Nonce)
	e.sized(t.Definition)
}

func (t *DataContractCreate) decodeBody(d *decoder) {
	copy(t.Identity[:], d.fixed(IdentityIDLen, "identity id"))
	t.KeyIndex = d.u8("key index")
	t.Nonce = d.u64("nonce")
	t.Definition = d.sized("contract definition")
}

// validate parses the definition with the version's parser, ttl bounds included: a
// contract that does not parse is refused before any state is read, unpaid.
func (t *DataContractCreate) validate(ctx Context) error {
	_, err := t.parsed.parse(t.Definition, ctx)
	return err
}
