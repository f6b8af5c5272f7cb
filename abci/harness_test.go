package abci

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	cmted25519 "github.com/cometbft/cometbft/crypto/ed25519"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/protocol"
)

// testChainID is the chain every harness runs.
const testChainID = "ttld-test"

// genesisTime is the genesis time of every harness chain.
var genesisTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// harness drives a real Application over a real IAVL store through the ABCI calls
// CometBFT makes: InitChain, FinalizeBlock, Commit, CheckTx, Query.
type harness struct {
	t          testing.TB
	db         dbm.DB
	store      *drive.Store
	app        *Application
	height     int64
	identities map[string]protocol.IdentityID // scenario name -> id
	contracts  map[string]protocol.ContractID // scenario name -> id
	documents  map[string]protocol.DocumentID // scenario name -> id
	// validators are the genesis validators; proposer proposes the next blocks (nil:
	// none named), and names maps a validator's consensus address to its name.
	validators []abcitypes.ValidatorUpdate
	proposer   []byte
	names      map[string]string
	// hash is the hash FinalizeBlock is told the next block has (nil: none).
	hash []byte
	// evidence is the misbehaviour the next block carries.
	evidence []abcitypes.Misbehavior
	// processBlocks: the scenario's blocks are processed (ProcessProposal) before
	// FinalizeBlock; roots are the app hashes its blocks committed, in order.
	processBlocks bool
	roots         []string
	// cacheSize is the store's IAVL node cache in nodes; 0: 100,000, what the
	// scenarios and unit tests run with (benchmarks set the node's, benchCache).
	cacheSize int
	// dbDir is the directory of a benchmark's goleveldb database ("" in memory).
	dbDir string
	// readAhead turns reading ahead on.
	readAhead bool
	// writeSlice is the store's drive.Options.WriteSlice; 0: the default.
	writeSlice int
}

func newHarness(t testing.TB) *harness {
	h := &harness{t: t, db: dbm.NewMemDB(), identities: map[string]protocol.IdentityID{}, contracts: map[string]protocol.ContractID{}, documents: map[string]protocol.DocumentID{}, names: map[string]string{}, readAhead: true}
	h.open()
	return h
}

// open (re)opens the store and the application on the harness's database, as a
// restarted node does.
func (h *harness) open() {
	cache := h.cacheSize
	if cache == 0 {
		cache = 100_000
	}
	store, err := drive.NewStore(h.db, drive.Options{CacheSize: cache, KeepRecent: 100, WriteSlice: h.writeSlice})
	if err != nil {
		h.t.Fatal(err)
	}
	app, err := New(store, zerolog.Nop(), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	// Tests always check that every block conserves credits.
	app.CheckInvariants()
	app.ReadAhead(h.readAhead)
	h.store, h.app = store, app
	info, err := app.Info(context.Background(), &abcitypes.RequestInfo{})
	if err != nil {
		h.t.Fatal(err)
	}
	h.height = info.LastBlockHeight
}

// key is the deterministic key of a scenario name.
func key(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("scenario/" + name))
	return ed25519.NewKeyFromSeed(seed[:])
}

func pub(name string) ed25519.PublicKey { return key(name).Public().(ed25519.PublicKey) }

func addr(name string) protocol.Address { return protocol.AddressOf(pub(name)) }

// consensusAddress is the CometBFT address of a scenario validator named name.
func consensusAddress(name string) []byte { return cmted25519.PubKey(pub(name)).Address() }

// consensusOf is the consensus address of key k.
func consensusOf(k ed25519.PublicKey) []byte { return cmted25519.PubKey(k).Address() }

// addValidator makes name a genesis validator of power paid to (and, from version 16
// on, operated by) payout.
func (h *harness) addValidator(name string, payout protocol.IdentityID, power int64, st *genesis.AppState) {
	h.validators = append(h.validators, abcitypes.Ed25519ValidatorUpdate(pub(name), power))
	h.names[string(consensusAddress(name))] = name
	st.Validators = append(st.Validators, genesis.Validator{Address: hex.EncodeToString(consensusAddress(name)), PayoutIdentity: payout.String()})
}

// genesisIdentityID is the id a scenario gives a genesis identity.
func genesisIdentityID(name string) protocol.IdentityID {
	return protocol.IdentityID(sha256.Sum256([]byte("genesis/" + name)))
}

// initChain starts the chain on state, with genesis.DefaultEpochLengthS unless state
// names an epoch length.
func (h *harness) initChain(state genesis.AppState) []byte {
	if state.EpochTimeLengthS == 0 {
		state.EpochTimeLengthS = genesis.DefaultEpochLengthS
	}
	raw := state.Encode()
	res, err := h.app.InitChain(context.Background(), &abcitypes.RequestInitChain{
		ChainId: testChainID, Time: genesisTime, InitialHeight: 1, AppStateBytes: raw, Validators: h.validators,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return res.AppHash
}

// finalize runs FinalizeBlock without committing.
func (h *harness) finalize(at time.Time, txs [][]byte) *abcitypes.ResponseFinalizeBlock {
	res, err := h.app.FinalizeBlock(context.Background(), &abcitypes.RequestFinalizeBlock{
		Height: h.height + 1, Time: at, Txs: txs, ProposerAddress: h.proposer, Hash: h.hash, Misbehavior: h.evidence,
	})
	if err != nil {
		h.t.Fatalf("finalize %d: %v", h.height+1, err)
	}
	return res
}

// block runs FinalizeBlock and Commit, and checks that the committed root is the app
// hash FinalizeBlock returned.
func (h *harness) block(at time.Time, txs [][]byte) *abcitypes.ResponseFinalizeBlock {
	res := h.finalize(at, txs)
	if _, err := h.app.Commit(context.Background(), &abcitypes.RequestCommit{}); err != nil {
		h.t.Fatal(err)
	}
	h.height++
	v, hash := h.store.LastCommit()
	if v != h.height || string(hash) != string(res.AppHash) {
		h.t.Fatalf("committed %d %x, FinalizeBlock said %d %x", v, hash, h.height, res.AppHash)
	}
	h.roots = append(h.roots, fmt.Sprintf("%d:%X", v, hash))
	return res
}

// moveCredits applies fn to the working tree between blocks, through a ledger so the
// running total follows, and checks that fn moved credits without making or losing
// any: how scenarios inject storage fees and refunds that no transition makes yet. The
// next block's app hash covers the change.
func (h *harness) moveCredits(fn func(drive.KV) error) {
	led := drive.NewLedger(h.store.Working())
	if err := fn(led); err != nil {
		h.t.Fatal(err)
	}
	total, err := led.UpdateTotal(uint64(h.height))
	if err != nil {
		h.t.Fatal(err)
	}
	if err := drive.CheckTotal(h.store.Working(), uint64(h.height)); err != nil {
		h.t.Fatalf("the injected change moved the total to %d: %v", total, err)
	}
}

// supplyCheck checks credit conservation on the last saved version.
func (h *harness) supplyCheck() error {
	saved, err := h.store.Saved(0)
	if err != nil {
		return err
	}
	return drive.CheckCredits(saved)
}

// codeName names a code for readable scenario output, from the code registry.
func codeName(c uint32) string { return protocol.Code(c).String() }

// args parses "k=v" words.
func args(words []string) map[string]string {
	m := map[string]string{}
	for _, w := range words {
		k, v, _ := strings.Cut(w, "=")
		m[k] = v
	}
	return m
}

func (h *harness) u64(m map[string]string, k string) uint64 {
	n, err := strconv.ParseUint(m[k], 10, 64)
	if err != nil {
		h.t.Fatalf("%s=%q: %v", k, m[k], err)
	}
	return n
}

// identity resolves a scenario identity name: one created in a block (as=NAME), one
// from genesis, or the hex id itself.
func (h *harness) identity(name string) protocol.IdentityID {
	if id, ok := h.identities[name]; ok {
		return id
	}
	if id, err := protocol.ParseIdentityID(name); err == nil {
		return id
	}
	return genesisIdentityID(name)
}

// identityName is the scenario name of id, or its hex.
func (h *harness) identityName(id protocol.IdentityID) string {
	for _, n := range names(h.identities) {
		if h.identities[n] == id {
			return n
		}
	}
	return id.String()
}

// tx builds one transaction from a scenario line:
//
//	address-transfer from=A nonce=N to=B amount=X
//	identity-create from=A nonce=N amount=X keys=K1,K2 as=NAME
//	top-up from=A nonce=N identity=I amount=X
//	identity-transfer identity=I signer=K nonce=N to=J amount=X [key=0]
//	identity-to-address identity=I signer=K nonce=N to=B amount=X [key=0]
//	contract-create identity=I signer=K nonce=N file=PATH as=NAME [key=0]
//	contract-update identity=I signer=K nonce=N contract=NAME version=V file=PATH [key=0]
//	doc identity=I signer=K nonce=N contract=NAME ACTION... (documentsBatch)
//	propose identity=I signer=K nonce=N add=V power=P operator=J
//	propose identity=I signer=K nonce=N power=V to=P | rotate=V key=W | remove=V
//	approve identity=I signer=K nonce=N proposal=N
//	raw hex=...
//
// PATH is relative to the repository root (docs/examples/note.json); json=TEXT gives
// the definition inline instead (no spaces).
// sign=NAME signs with another key than the signer's; chain=ID signs for another chain.
func (h *harness) tx(line string) []byte {
	words := strings.Fields(line)
	m := args(words[1:])
	var tr protocol.Transition
	signer := m["from"]
	switch words[0] {
	case "raw":
		b, err := hex.DecodeString(m["hex"])
		if err != nil {
			h.t.Fatal(err)
		}
		return b
	case "signal":
		return protocol.EncodeVersionSignal(protocol.Version(h.u64(m, "version")))
	case "address-transfer":
		tr = &protocol.AddressFundsTransfer{PubKey: pub(signer), Nonce: h.u64(m, "nonce"), Recipient: addr(m["to"]), Amount: h.u64(m, "amount")}
	case "identity-create":
		var keys []ed25519.PublicKey
		for _, k := range strings.Split(m["keys"], ",") {
			keys = append(keys, pub(k))
		}
		nonce := h.u64(m, "nonce")
		tr = &protocol.IdentityCreate{PubKey: pub(signer), Nonce: nonce, Amount: h.u64(m, "amount"), Keys: keys}
		if m["as"] != "" {
			h.identities[m["as"]] = protocol.NewIdentityID(addr(signer), nonce)
		}
	case "top-up":
		tr = &protocol.IdentityTopUp{PubKey: pub(signer), Nonce: h.u64(m, "nonce"), Identity: h.identity(m["identity"]), Amount: h.u64(m, "amount")}
	case "identity-transfer", "identity-to-address":
		signer = m["signer"]
		var index uint8
		if m["key"] != "" {
			index = uint8(h.u64(m, "key"))
		}
		if words[0] == "identity-transfer" {
			tr = &protocol.IdentityCreditTransfer{Identity: h.identity(m["identity"]), KeyIndex: index, Nonce: h.u64(m, "nonce"), Recipient: h.identity(m["to"]), Amount: h.u64(m, "amount")}
		} else {
			tr = &protocol.IdentityCreditTransferToAddress{Identity: h.identity(m["identity"]), KeyIndex: index, Nonce: h.u64(m, "nonce"), Recipient: addr(m["to"]), Amount: h.u64(m, "amount")}
		}
	case "contract-create", "contract-update":
		signer = m["signer"]
		var index uint8
		if m["key"] != "" {
			index = uint8(h.u64(m, "key"))
		}
		def := []byte(m["json"])
		if m["file"] != "" {
			b, err := os.ReadFile(filepath.Join("..", m["file"]))
			if err != nil {
				h.t.Fatal(err)
			}
			def = b
		}
		def = h.expandNames(def)
		id, nonce := h.identity(m["identity"]), h.u64(m, "nonce")
		if words[0] == "contract-create" {
			tr = &protocol.DataContractCreate{Identity: id, KeyIndex: index, Nonce: nonce, Definition: def}
			if m["as"] != "" {
				h.contracts[m["as"]] = protocol.NewContractID(id, nonce)
			}
		} else {
			tr = &protocol.DataContractUpdate{Identity: id, KeyIndex: index, Nonce: nonce, Contract: h.contracts[m["contract"]], Version: uint32(h.u64(m, "version")), Definition: def}
		}
	case "doc":
		signer = m["signer"]
		tr = h.documentsBatch(words[1:], m)
	case "propose":
		signer = m["signer"]
		var c protocol.ValidatorChange
		switch {
		case m["add"] != "":
			c = protocol.ValidatorChange{Kind: protocol.ValidatorAdd, PubKey: pub(m["add"]), Power: h.u64(m, "power"), Operator: h.identity(m["operator"])}
			h.names[string(consensusAddress(m["add"]))] = m["add"]
		case m["power"] != "":
			c = protocol.ValidatorChange{Kind: protocol.ValidatorPower, Validator: protocol.ConsensusAddress(consensusAddress(m["power"])), Power: h.u64(m, "to")}
		case m["rotate"] != "":
			c = protocol.ValidatorChange{Kind: protocol.ValidatorRotate, Validator: protocol.ConsensusAddress(consensusAddress(m["rotate"])), PubKey: pub(m["key"])}
			h.names[string(consensusAddress(m["key"]))] = m["key"]
		case m["remove"] != "":
			c = protocol.ValidatorChange{Kind: protocol.ValidatorRemove, Validator: protocol.ConsensusAddress(consensusAddress(m["remove"]))}
		default:
			h.t.Fatalf("propose what? %q", line)
		}
		tr = &protocol.ValidatorSetProposal{Identity: h.identity(m["identity"]), Nonce: h.u64(m, "nonce"), Change: c}
	case "approve":
		signer = m["signer"]
		tr = &protocol.ValidatorSetApproval{Identity: h.identity(m["identity"]), Nonce: h.u64(m, "nonce"), Proposal: h.u64(m, "proposal")}
	default:
		h.t.Fatalf("unknown transaction %q", words[0])
	}
	if m["sign"] != "" {
		signer = m["sign"]
	}
	chain := testChainID
	if m["chain"] != "" {
		chain = m["chain"]
	}
	return protocol.Sign(chain, tr, key(signer))
}

// expandNames replaces, in a contract definition or document data, each <id:NAME> by
// the hex id of identity NAME, each <contract:NAME> by that of contract NAME and each
// <doc:NAME> by the id of document NAME as a JSON byte array: how a scenario names
// moderators, the contract of a reference and the document a reference names.
func (h *harness) expandNames(def []byte) []byte {
	s := string(def)
	for {
		i := strings.Index(s, "<")
		j := strings.Index(s[max(i, 0):], ">")
		if i < 0 || j < 0 {
			return []byte(s)
		}
		kind, name, ok := strings.Cut(s[i+1:i+j], ":")
		var hex string
		switch {
		case ok && kind == "id":
			hex = h.identity(name).String()
		case ok && kind == "contract":
			c, known := h.contracts[name]
			if !known {
				h.t.Fatalf("unknown contract %q", name)
			}
			hex = c.String()
		case ok && kind == "doc":
			id := h.document(name)
			hex = strings.ReplaceAll(fmt.Sprint(id[:]), " ", ",")
		default:
			return []byte(s) // not a name: the definition's own text
		}
		s = s[:i] + hex + s[i+j+1:]
	}
}

// names lists the sorted keys of m.
func names[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
