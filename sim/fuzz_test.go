package sim

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"math/rand"
	"testing"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/sim/invariants"
)

// choices reads the fuzzer's bytes as a sequence of choices; past the end every choice
// is 0.
type choices struct{ data []byte }

func (c *choices) byte() byte {
	if len(c.data) == 0 {
		return 0
	}
	b := c.data[0]
	c.data = c.data[1:]
	return b
}

func (c *choices) done() bool { return len(c.data) == 0 }

func (c *choices) n(max int) int { return int(c.byte()) % max }

func (c *choices) u64() uint64 {
	var b [8]byte
	for i := range b {
		b[i] = c.byte()
	}
	return binary.BigEndian.Uint64(b[:])
}

func fuzzKey(i int) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte{'f', byte(i)})
	return ed25519.NewKeyFromSeed(seed[:])
}

// blockFuzz is one fuzzed chain: accounts, what the fuzzer knows of them, and the state.
type blockFuzz struct {
	t          testing.TB
	c          *choices
	kv         *drive.Cache
	keys       []ed25519.PrivateKey
	identities []identity
	contracts  []contract // created or attempted
	// validatorKeys are the consensus keys the set's changes name, the first three
	// the genesis set's; operators operate the genesis validators.
	validatorKeys []ed25519.PublicKey
	operators     []identity
	documents     *documentBatches  // documents created or attempted, by contract
	nonces        map[string]uint64 // the next nonce the fuzzer hands out, by signer
}

// balance reads an account's balance for the boundary amounts; absent accounts have 0.
func (f *blockFuzz) addressBalance(a protocol.Address) uint64 {
	st, _, err := drive.GetAddress(f.kv, a)
	if err != nil {
		f.t.Fatal(err)
	}
	return st.Balance
}

func (f *blockFuzz) identityBalance(id protocol.IdentityID) uint64 {
	b, _, err := drive.GetIdentityBalance(f.kv, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

// nonce hands out the next nonce of a signer, or now and then a stale or far one.
func (f *blockFuzz) nonce(signer []byte) uint64 {
	k := string(signer)
	if f.nonces[k] == 0 {
		f.nonces[k] = 1
	}
	switch f.c.n(16) {
	case 0:
		return 0
	case 1:
		return math.MaxUint64
	case 2:
		return f.nonces[k] + 30
	}
	n := f.nonces[k]
	f.nonces[k]++
	return n
}

// address picks a recipient address: a funded one, the signer itself, or nobody's.
func (f *blockFuzz) address(self protocol.Address) protocol.Address {
	switch f.c.n(6) {
	case 0:
		return self
	case 1:
		return protocol.Address{byte(f.c.byte()), 0xee}
	}
	return protocol.AddressOf(f.keys[f.c.n(len(f.keys))].Public().(ed25519.PublicKey))
}

// identity picks an identity: a created one, or one that does not exist.
func (f *blockFuzz) identity() identity {
	if len(f.identities) == 0 || f.c.n(6) == 0 {
		return identity{id: protocol.IdentityID{f.c.byte(), 0xee}, key: f.keys[0]}
	}
	return f.identities[f.c.n(len(f.identities))]
}

// amount is a boundary amount around bal half the time, else a modest share of it (so
// transfers succeed and the state grows identities and balances to push on).
func (f *blockFuzz) amount(bal uint64) uint64 {
	if f.c.n(2) == 0 {
		return BoundaryAmount(f.c.u64(), bal)
	}
	return 1 + f.c.u64()%(bal/4+1)
}

// tx builds one transaction of any kind with boundary amounts and accounts.
func (f *blockFuzz) tx() []byte {
	signer := f.keys[f.c.n(len(f.keys))]
	pub := signer.Public().(ed25519.PublicKey)
	from := protocol.AddressOf(pub)
	var tr protocol.Transition
	switch f.c.n(9) {
	case 8:
		tr, signer = f.validatorTx()
	case 6, 7:
		// A documents batch on a contract created before (or on none): actions of every
		// kind on documents created before, valid and not (documents.go). Before any
		// contract, the shop contract is created for them.
		if len(f.contracts) == 0 || (len(f.contracts) == 1 && f.c.n(4) == 0) {
			idn := f.identity()
			def := shopDefinition
			if f.c.n(2) == 0 {
				def = ttlDefinition
			}
			t := &protocol.DataContractCreate{Identity: idn.id, Nonce: f.nonce(idn.id[:]), Definition: []byte(def)}
			f.contracts = append(f.contracts, contract{id: t.ContractID(), owner: idn, ttl: def == ttlDefinition})
			tr, signer = t, idn.key
			break
		}
		c := protocol.ContractID{f.c.byte(), 0xee}
		if f.c.n(8) > 0 {
			c = f.contracts[f.c.n(len(f.contracts))].id
		}
		idns := f.identities
		if len(idns) == 0 {
			idns = []identity{f.identity()}
		}
		b, idn, err := f.documents.batch(f.kv, c, idns, f.c.n(4) == 0)
		if err != nil {
			f.t.Fatal(err)
		}
		b.Nonce, signer = f.nonce(idn.id[:]), idn.key
		tr = b
	case 5:
		// A contract create by an identity, or an update of one created before, by its
		// owner or not, at a version near the next: the definitions are valid, an
		// invalid update, and refusals of structure (generator.go's
		// contractDefinitions).
		idn := f.identity()
		signer = idn.key
		def := []byte(contractDefinitions[f.c.n(len(contractDefinitions))])
		if len(f.contracts) == 0 || f.c.n(2) == 0 {
			t := &protocol.DataContractCreate{Identity: idn.id, Nonce: f.nonce(idn.id[:]), Definition: def}
			f.contracts = append(f.contracts, contract{id: t.ContractID(), owner: idn})
			tr = t
			break
		}
		c := f.contracts[f.c.n(len(f.contracts))]
		if f.c.n(4) > 0 {
			idn, signer = c.owner, c.owner.key
		}
		tr = &protocol.DataContractUpdate{Identity: idn.id, Nonce: f.nonce(idn.id[:]), Contract: c.id, Version: uint32(f.c.n(4)), Definition: def}
	case 0:
		to := f.address(from)
		bal := f.addressBalance(from)
		if f.c.n(2) == 0 {
			bal = f.addressBalance(to)
		}
		tr = &protocol.AddressFundsTransfer{PubKey: pub, Nonce: f.nonce(from[:]), Recipient: to, Amount: f.amount(bal)}
	case 1:
		nonce := f.nonce(from[:])
		keys := []ed25519.PublicKey{pub}
		if f.c.n(8) == 0 {
			keys = append(keys, pub) // a repeated key: a structure refusal
		}
		tr = &protocol.IdentityCreate{PubKey: pub, Nonce: nonce, Amount: f.amount(f.addressBalance(from)), Keys: keys}
		f.identities = append(f.identities, identity{id: protocol.NewIdentityID(from, nonce), key: signer})
	case 2:
		to := f.identity()
		bal := f.addressBalance(from)
		if f.c.n(2) == 0 {
			bal = f.identityBalance(to.id)
		}
		tr = &protocol.IdentityTopUp{PubKey: pub, Nonce: f.nonce(from[:]), Identity: to.id, Amount: f.amount(bal)}
	case 3:
		idn, to := f.identity(), f.identity()
		signer = idn.key
		bal := f.identityBalance(idn.id)
		if f.c.n(2) == 0 {
			bal = f.identityBalance(to.id)
		}
		tr = &protocol.IdentityCreditTransfer{Identity: idn.id, KeyIndex: uint8(f.c.n(2)), Nonce: f.nonce(idn.id[:]), Recipient: to.id, Amount: f.amount(bal)}
	default:
		idn := f.identity()
		signer = idn.key
		to := f.address(protocol.Address{})
		bal := f.identityBalance(idn.id)
		if f.c.n(2) == 0 {
			bal = f.addressBalance(to)
		}
		tr = &protocol.IdentityCreditTransferToAddress{Identity: idn.id, Nonce: f.nonce(idn.id[:]), Recipient: to, Amount: f.amount(bal)}
	}
	if f.c.n(16) == 0 {
		signer = f.keys[f.c.n(len(f.keys))] // perhaps a forged signature
	}
	return protocol.Sign(ChainID, tr, signer)
}

// validatorTx is a validator set proposal of any kind, or an approval of a proposal
// made or not, signed by an operator of a validator (of the set or no more) or by
// another identity; powers and keys at the bounds.
func (f *blockFuzz) validatorTx() (protocol.Transition, ed25519.PrivateKey) {
	signer := f.operators[f.c.n(len(f.operators))]
	if f.c.n(8) == 0 {
		signer = f.identity()
	}
	if f.c.n(2) == 0 {
		next, err := drive.GetU64(f.kv, drive.NextValidatorProposalKey())
		if err != nil {
			f.t.Fatal(err)
		}
		return &protocol.ValidatorSetApproval{Identity: signer.id, Nonce: f.nonce(signer.id[:]), Proposal: uint64(f.c.n(int(next) + 2))}, signer.key
	}
	key := f.validatorKeys[f.c.n(len(f.validatorKeys))]
	c := protocol.ValidatorChange{Kind: protocol.ValidatorChangeKind(1 + f.c.n(4)), Validator: protocol.ConsensusAddressOf(key),
		PubKey: f.validatorKeys[f.c.n(len(f.validatorKeys))], Power: []uint64{0, 1, 3, 4, 5, 9, 10, 14, 1_000_000, 1_000_001}[f.c.n(10)]}
	if c.Kind == protocol.ValidatorAdd {
		c.PubKey = key
		c.Operator = f.identity().id
		if f.c.n(2) == 0 {
			c.Operator = f.operators[f.c.n(len(f.operators))].id
		}
	}
	return &protocol.ValidatorSetProposal{Identity: signer.id, Nonce: f.nonce(signer.id[:]), Change: c}, signer.key
}

// misbehavior is a block's evidence: now and then one or two pieces against the
// fuzzer's consensus keys, in the set or not, at heights up to the block's.
func (f *blockFuzz) misbehavior(height uint64) []app.Misbehavior {
	var out []app.Misbehavior
	for i := f.c.n(16); i < 2; i++ {
		out = append(out, app.Misbehavior{Kind: protocol.MisbehaviorKind(1 + f.c.n(2)),
			Validator: protocol.ConsensusAddressOf(f.validatorKeys[f.c.n(len(f.validatorKeys))]), Height: uint64(f.c.n(int(height) + 1))})
	}
	return out
}

// signal is a proposer's version signal in any form: of the versions around those this
// binary implements or any u32, or malformed (a signal's first byte, another length).
func (f *blockFuzz) signal() []byte {
	switch f.c.n(8) {
	case 0:
		return append([]byte{protocol.VersionSignalFormat}, make([]byte, f.c.n(9))...)
	case 1:
		return protocol.EncodeVersionSignal(protocol.Version(binary.BigEndian.Uint32(binary.BigEndian.AppendUint64(nil, f.c.u64())[4:])))
	}
	return protocol.EncodeVersionSignal(protocol.V13 + protocol.Version(f.c.n(int(protocol.Latest-protocol.V13)+3)))
}

// runBlockFuzz builds a genesis holding the whole u64 supply and runs blocks of
// transitions of every kind with boundary values, block times that cross epochs (and
// several at once, and hour-long documents' expiries at the millisecond) and proposers
// with and without a payout identity, on protocol version 13, 14, the latest, or 13
// upgrading to 14; half the blocks start with a version signal, and signals in any form stand
// anywhere among the transitions. No change of an expired document succeeds, and after
// every block the documents cleanup left nothing due unless it used its budget
// (CheckCleanup). ExecuteBlock must never return a Fault on a healthy store, and
// credits must be conserved after every block, by the running total and by a full
// count; at the end, the documents tree passes invariants.CheckDocuments. The one stop
// allowed is the designed one: the blocks' signals decided on a version this binary
// does not implement, and an epoch change switches to it (app.ErrUpgradeNeeded), which
// ends the run.
// It returns how many results of each code the blocks gave.
func runBlockFuzz(t testing.TB, data []byte) map[protocol.Code]int {
	codes := map[protocol.Code]int{}
	f := &blockFuzz{t: t, c: &choices{data: data}, kv: drive.NewCache(drive.Empty()), nonces: map[string]uint64{}}
	f.documents = newDocumentBatches(f.c)
	for i := 0; i < 4; i++ {
		f.keys = append(f.keys, fuzzKey(i))
	}
	// The chain starts on protocol version 13, on 14, on the latest, or on 13 with the
	// upgrade to 14 at height 2.
	st := genesis.AppState{EpochTimeLengthS: EpochLengthS, ProtocolVersion: protocol.V14}
	switch f.c.n(4) {
	case 0:
		st.ProtocolVersion = protocol.V13
	case 1:
		st.ProtocolVersion, st.Upgrade = protocol.V13, &genesis.Upgrade{Version: protocol.V14, Height: 2}
	case 2:
		st.ProtocolVersion = protocol.Latest
	}
	// The operators of the three genesis validators hold operatorFunds each.
	const operatorFunds = 1 << 36
	rest := uint64(math.MaxUint64) - 3*operatorFunds
	// Most runs start with an identity funded at genesis (keys[1]'s), so that contracts
	// and their documents are written from the first block on.
	if f.c.n(4) > 0 {
		const funded = 1 << 40
		idn := identity{id: protocol.IdentityID(sha256.Sum256([]byte("fuzz-identity"))), key: f.keys[1]}
		st.Identities = append(st.Identities, genesis.Identity{ID: idn.id.String(), Balance: funded, Keys: []string{hex.EncodeToString(f.keys[1].Public().(ed25519.PublicKey))}})
		f.identities = append(f.identities, idn)
		rest -= funded
	}
	for i, k := range f.keys {
		b := BoundaryAmount(f.c.u64(), rest)
		if i == len(f.keys)-1 || b > rest {
			b = rest
		}
		rest -= b
		if b > 0 {
			st.Addresses = append(st.Addresses, genesis.Address{Address: protocol.AddressOf(k.Public().(ed25519.PublicKey)).String(), Balance: b})
		}
	}
	if len(st.Addresses) == 0 {
		st.Addresses = append(st.Addresses, genesis.Address{Address: protocol.AddressOf(f.keys[0].Public().(ed25519.PublicKey)).String(), Balance: 1})
	}
	// Three validators of power 10, each operated by its payout identity (whose key is
	// one of the fuzzer's); blocks are proposed by one of them, by a proposer without
	// a payout identity, or name none, so epochs are paid, rolled on, or both. From
	// version 16 on the set changes: the operators propose and approve changes of it
	// among six consensus keys, and blocks carry evidence against them.
	var genesisSet []drive.GenesisValidator
	proposers := [][]byte{[]byte("a-stranger-proposer!"), nil}
	for i := 0; i < 6; i++ {
		f.validatorKeys = append(f.validatorKeys, ed25519.NewKeyFromSeed(bytes.Repeat([]byte{'v', byte(i)}, ed25519.SeedSize/2)).Public().(ed25519.PublicKey))
	}
	for i, k := range f.validatorKeys[:3] {
		a := protocol.ConsensusAddressOf(k)
		payout := protocol.PayoutIdentityID(a[:])
		st.Identities = append(st.Identities, genesis.Identity{ID: payout.String(), Balance: operatorFunds, Keys: []string{hex.EncodeToString(f.keys[i].Public().(ed25519.PublicKey))}})
		st.Validators = append(st.Validators, genesis.Validator{Address: a.String(), PayoutIdentity: payout.String()})
		f.operators = append(f.operators, identity{id: payout, key: f.keys[i]})
		genesisSet = append(genesisSet, drive.GenesisValidator{PubKey: k, Power: 10})
		proposers = append(proposers, a[:])
	}
	start := uint64(GenesisTime.UnixMilli())
	if err := genesis.InitChain(f.kv, genesis.Params{ChainID: ChainID, GenesisTimeMs: start, InitialHeight: 1, Validators: genesisSet}, st.Encode()); err != nil {
		t.Fatal(err)
	}
	comet := CometSet{}
	for _, v := range genesisSet {
		comet[string(v.PubKey)] = int64(v.Power)
	}
	at := start
	blocks := 1 + f.c.n(4)
	for h := 1; h <= blocks && (h == 1 || !f.c.done()); h++ {
		// A millisecond or a second on, the last millisecond before an hour-long
		// document's expiry, the expiry itself and the one after, or up to 30 hours on
		// (address records expire). Now and then a time no header carries: 1970 (before
		// genesis: time run back), the last millisecond of 9999 or an hour before it,
		// or past it, up to 2^64-1 (the block reads it as the last millisecond).
		sent := at
		switch f.c.n(64) {
		case 0:
			sent = 0
		case 1:
			sent = protocol.MaxBlockTimeMs - []uint64{0, 3_600_000}[f.c.n(2)]
		case 2:
			sent = math.MaxUint64 - f.c.u64()%(math.MaxUint64-protocol.MaxBlockTimeMs)
		default:
			sent += []uint64{1, 1000, 3_599_999, 3_600_000, 3_600_001, 36_000_000, 72_000_000, 108_000_000}[f.c.n(8)]
		}
		at = min(sent, protocol.MaxBlockTimeMs)
		f.documents.nowMs = at
		var txs [][]byte
		var expiredChanges []bool
		if f.c.n(2) == 0 {
			txs, expiredChanges = append(txs, f.signal()), append(expiredChanges, false)
		}
		for i, n := 0, 1+f.c.n(12); i < n && !f.c.done(); i++ {
			f.documents.expiredChange, f.documents.expiredUnique = false, false
			if f.c.n(16) == 0 {
				txs, expiredChanges = append(txs, f.signal()), append(expiredChanges, false)
				continue
			}
			txs = append(txs, f.tx())
			expiredChanges = append(expiredChanges, f.documents.expiredChange || f.documents.expiredUnique)
		}
		next, decided, err := drive.GetNextVersion(f.kv)
		if err != nil {
			t.Fatal(err)
		}
		res, err := app.ExecuteBlock(f.kv, app.Block{Height: uint64(h), TimeMs: sent, Proposer: proposers[f.c.n(len(proposers))], Txs: txs,
			Misbehavior: f.misbehavior(uint64(h)), GenesisValidators: genesisSet})
		var need app.ErrUpgradeNeeded
		if errors.As(err, &need) && decided && next == need.Version && !protocol.Known(next) {
			codes[codeUpgradeNeeded]++
			break
		}
		if err != nil {
			t.Fatalf("block %d: ExecuteBlock returned a Fault: %v", h, err)
		}
		if res.Switched {
			codes[codeSwitched]++
		}
		if len(res.ValidatorUpdates) > 0 {
			codes[codeSetChanged]++
		}
		if len(res.TxResults) != len(txs) {
			t.Fatalf("block %d: %d results for %d transactions", h, len(res.TxResults), len(txs))
		}
		for i, tr := range res.TxResults {
			codes[tr.Code]++
			if expiredChanges[i] && tr.Code == protocol.CodeOK {
				t.Fatalf("block %d: transaction %d changed a document expired at %d, or created unique values it holds, and succeeded", h, i, at)
			}
		}
		cl, err := CleanupOf(res)
		if err == nil {
			err = CheckCleanup(f.kv, at, cl)
		}
		if err != nil {
			t.Fatalf("block %d: %v", h, err)
		}
		if err := res.Credits.Conserved(); err != nil {
			t.Fatalf("block %d: %v", h, err)
		}
		if err := drive.CheckCredits(f.kv); err != nil {
			t.Fatalf("block %d: %v", h, err)
		}
		updates := make([]abcitypes.ValidatorUpdate, len(res.ValidatorUpdates))
		for i, u := range res.ValidatorUpdates {
			updates[i] = abcitypes.Ed25519ValidatorUpdate(u.PubKey, int64(u.Power))
		}
		if err := comet.Follow(f.kv, updates); err != nil {
			t.Fatalf("block %d: %v", h, err)
		}
	}
	if err := invariants.CheckDocuments(f.kv); err != nil {
		t.Fatal(err)
	}
	return codes
}

// Among runBlockFuzz's results, beside the transactions' codes: codeSwitched counts the
// blocks that switched the protocol version, codeUpgradeNeeded the runs that ended at a
// switch to a version this binary does not implement, codeSetChanged the blocks that
// changed the validator set.
const (
	codeUpgradeNeeded protocol.Code = math.MaxUint32 - iota
	codeSwitched
	codeSetChanged
)

// FuzzBlocks: no sequence of transitions halts the chain or creates or destroys credits.
// `make fuzz` runs it; `go test` runs its seeds.
func FuzzBlocks(f *testing.F) {
	f.Add([]byte{})
	// The overflow that once halted the chain: the whole supply at one address, a
	// transfer of 2^63 to another, then the second address's balance overflowing.
	// (The leading 0, 0: protocol version 13, no identity funded at genesis.)
	f.Add([]byte{0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0})
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 8; i++ {
		seed := make([]byte, 64+rng.Intn(400))
		rng.Read(seed)
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { _ = runBlockFuzz(t, data) })
}

// TestBlocksProperty runs the block fuzz body over random inputs, so `make test` covers
// more than the seeds.
func TestBlocksProperty(t *testing.T) {
	t.Parallel()
	runs := 2000
	if testing.Short() {
		runs = 200
	}
	rng := rand.New(rand.NewSource(*seedFlag))
	codes := map[protocol.Code]int{}
	for i := 0; i < runs; i++ {
		data := make([]byte, 32+rng.Intn(600))
		rng.Read(data)
		for c, n := range runBlockFuzz(t, data) {
			codes[c] += n
		}
	}
	// The inputs reach successes and the refusals that guard balances.
	for _, c := range []protocol.Code{protocol.CodeOK, protocol.CodeAddressInsufficientBalance, protocol.CodeIdentityInsufficientBalance, protocol.CodeInvalidTransition, protocol.CodeInvalidSignature, protocol.CodeInvalidVersionSignal} {
		if codes[c] == 0 {
			t.Errorf("no %s in %d runs: %v", c, runs, codes)
		}
	}
	// Documents batches reach the documents' own refusals, and signals switch versions
	// and stop the binary at a version it does not implement (the full run only: the
	// short one is too few inputs to be sure of them).
	if !testing.Short() {
		for _, c := range []protocol.Code{protocol.CodeInvalidDocument, protocol.CodeDocumentTypeNotFound, protocol.CodeDuplicateUniqueIndex, codeSwitched, codeUpgradeNeeded,
			protocol.CodeNotAValidatorOperator, protocol.CodeValidatorPowerMoveTooLarge, protocol.CodeValidatorProposalNotFound, codeSetChanged} {
			if codes[c] == 0 {
				t.Errorf("no %s in %d runs: %v", c, runs, codes)
			}
		}
	}
	t.Logf("%d runs, results by code: %v", runs, codes)
}
