package sim

import (
	"crypto/ed25519"
	"encoding/binary"
	"encoding/hex"
	"math/rand"
	"strings"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	cmted25519 "github.com/cometbft/cometbft/crypto/ed25519"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/protocol"
)

// Generator makes random blocks from a seed. It reads nonces and balances from the
// chain's saved state before each block, so its blocks stay mostly valid however the
// earlier ones went; a share of every block is invalid on purpose.
type Generator struct {
	rng        *rand.Rand
	keys       []ed25519.PrivateKey
	identities []identity // created or attempted, in order
	contracts  []contract // created or attempted, in order
	documents  *documentBatches
	time       time.Time
	// InvalidPercent is the share of transactions made invalid on purpose.
	InvalidPercent int
	// Version is the protocol version the chain starts on and Upgrade, when not 0, the
	// height its upgrade to the latest version is scheduled at (genesis
	// protocol_upgrade): an even seed starts on the latest version, an odd one on 13
	// and upgrades, turning document time to live on and making the genesis validators
	// the set in state in one block.
	Version protocol.Version
	Upgrade uint64
	// Flood makes most transactions batches of creates of the ttl contract's hour-long
	// types, and block times mostly seconds apart with jumps of tens of minutes: a
	// backlog of expired documents builds, which the cleanup drains at its budget.
	Flood bool
	// floodHeavy: this block's flood creates mostly heavy documents.
	floodHeavy bool
	// ExpiredChanges marks the transactions of the last block that replace, transfer,
	// buy or reprice a document that has expired at the block's time (Document Time To Live: "each
	// is refused, paid, with DocumentExpiredError (40140)"); none may succeed.
	ExpiredChanges []bool
	// ExpiredUniques marks those that create the unique values of a document expired
	// and not yet deleted (documentBatches.expiredUnique); none may succeed.
	ExpiredUniques []bool
}

type identity struct {
	id  protocol.IdentityID
	key ed25519.PrivateKey
}

type contract struct {
	id    protocol.ContractID
	owner identity
	ttl   bool // made of ttlDefinition
	forum bool // made of forumDefinition
}

// contractDefinitions are what contract transitions carry: valid ones (a second type
// added to the first is a valid update of it, a changed property is not; shop's types
// have unique, countable and summable indexes, history, transfers and sales), and ones
// structure validation refuses.
var contractDefinitions = []string{
	shopDefinition,
	`{"documentSchemas":{"note":{"type":"object","properties":{"text":{"type":"string","maxLength":280,"position":0}},"additionalProperties":false}}}`,
	`{"documentSchemas":{"note":{"type":"object","properties":{"text":{"type":"string","maxLength":280,"position":0}},"additionalProperties":false},"story":{"type":"object","properties":{"caption":{"type":"string","maxLength":200,"position":0},"url":{"type":"string","maxLength":500,"position":1}},"required":["url"],"additionalProperties":false}}}`,
	`{"documentSchemas":{"note":{"type":"object","properties":{"text":{"type":"string","maxLength":100,"position":0}},"additionalProperties":false}}}`,
	`{"documentSchemas":{"note":{"type":"object","properties":{"n":{"type":"number","position":0}},"additionalProperties":false}}}`,
	`{"documentSchemas":{`,
	ttlDefinition,
	ttlDefinition,
	forumDefinition,
	forumDefinition,
	// A ttl added to note on an update (40212), one below the minimum (10231).
	`{"documentSchemas":{"note":{"type":"object","ttl":7200,"properties":{"text":{"type":"string","maxLength":280,"position":0}},"required":["$createdAt"],"additionalProperties":false}}}`,
	`{"documentSchemas":{"note":{"type":"object","ttl":60,"properties":{"text":{"type":"string","maxLength":280,"position":0}},"required":["$createdAt"],"additionalProperties":false}}}`,
}

// ttlDefinition is the contract of document time to live (protocol version 14; a
// version-13 chain refuses the keyword): "offer" lives the minimum, an hour, is
// mutable, transferable and for sale, cannot be deleted by its owner, and has a unique
// index on name (few values: creates meet the names of expired documents the cleanup
// has not reached) and a countable index on tag summing qty; "story" lives two weeks,
// unique by owner and caption, counted and summed by n; "ping" (an hour, one index
// level) and "heavy" (an hour, nine index levels: weight 10, so 102 fill the weight
// budget) are what a flood creates; "like" (a day) has two time-range indexes sharing
// a ttl'd grid of two-hour windows every hour (one ranked, one summable) and a
// permanent ranked one on $updatedAt, so the generator's block times drain windows and
// replaces move entries between windows.
const ttlDefinition = `{"documentSchemas":{` +
	`"offer":{"type":"object","ttl":3600,"canBeDeleted":false,"transferable":1,"tradeMode":1,"properties":{` +
	`"name":{"type":"string","minLength":1,"maxLength":8,"position":0},` +
	`"tag":{"type":"string","maxLength":4,"position":1},` +
	`"qty":{"type":"integer","minimum":-3,"maximum":40,"position":2}},` +
	`"required":["$createdAt","name","qty"],"additionalProperties":false,"indices":[` +
	`{"name":"byName","properties":[{"name":"asc"}],"unique":true},` +
	`{"name":"byTag","properties":[{"tag":"asc"},{"qty":"desc"}],"countable":true,"summable":"qty"}]},` +
	`"story":{"type":"object","ttl":1209600,"transferable":1,"properties":{` +
	`"caption":{"type":"string","minLength":1,"maxLength":12,"position":0},"n":{"type":"integer","minimum":0,"maximum":20,"position":1}},` +
	`"required":["$createdAt","caption"],"additionalProperties":false,"indices":[` +
	`{"name":"byCaption","properties":[{"$ownerId":"asc"},{"caption":"asc"}],"unique":true},` +
	`{"name":"byN","properties":[{"n":"asc"}],"countable":true,"summable":"n"}]},` +
	`"ping":{"type":"object","ttl":3600,"properties":{"n":{"type":"integer","minimum":0,"maximum":9,"position":0}},` +
	`"required":["$createdAt","n"],"additionalProperties":false,"indices":[{"name":"byN","properties":[{"n":"asc"}],"countable":true}]},` +
	`"heavy":{"type":"object","ttl":3600,"properties":{` +
	`"a":{"type":"integer","minimum":0,"maximum":3,"position":0},"b":{"type":"integer","minimum":0,"maximum":3,"position":1},"c":{"type":"integer","minimum":0,"maximum":3,"position":2}},` +
	`"required":["$createdAt","a","b","c"],"additionalProperties":false,"indices":[` +
	`{"name":"abc","properties":[{"a":"asc"},{"b":"asc"},{"c":"asc"}],"countable":true},` +
	`{"name":"bca","properties":[{"b":"asc"},{"c":"asc"},{"a":"asc"}]},` +
	`{"name":"cab","properties":[{"c":"asc"},{"a":"asc"},{"b":"asc"}]}]},` +
	`"like":{"type":"object","ttl":86400,"properties":{` +
	`"post":{"type":"string","minLength":1,"maxLength":2,"position":0},"w":{"type":"integer","minimum":0,"maximum":3,"position":1}},` +
	`"required":["$createdAt","post"],"additionalProperties":false,"indices":[` +
	`{"name":"trending","properties":[{"post":"asc"}],"countable":true,"ranked":true,"timeRange":{"on":"$createdAt","range":7200,"step":3600,"ttl":7200}},` +
	`{"name":"weighed","properties":[{"w":"asc"},{"post":"desc"}],"summable":"w","timeRange":{"on":"$createdAt","range":7200,"step":3600,"ttl":7200}},` +
	`{"name":"recent","properties":[{"post":"asc"}],"countable":true,"ranked":true,"timeRange":{"on":"$updatedAt","range":3600,"step":3600}}]}}}`

// forumDefinition is the contract of moderators and references; moderatorsPlaceholder
// stands for its moderators, known identities chosen when it is registered (now and then
// one that does not exist). "member" never loses documents (canBeDeleted false, no ttl,
// no moderators) and never changes its nick: what permanent references name, by id or
// by nick. "topic" lives two
// hours, its moderators delete it within an hour of its last change and keep a record,
// and it refers to a member by id and by nick; "reply" is deleted by its owner or
// moderators (without a record, refunding its owner), refers to a topic it may lose and
// lists up to three members; a "note" lives until its owner or a moderator deletes it,
// the moderator keeping a record, so that restores find it unexpired.
const forumDefinition = `{"config":{"moderation":{"moderators":[` + moderatorsPlaceholder + `]}},"documentSchemas":{` +
	`"member":{"type":"object","canBeDeleted":false,"documentsMutable":false,"properties":{"nick":{"type":"string","minLength":1,"maxLength":3,"position":0}},` +
	`"required":["nick"],"additionalProperties":false,"indices":[{"name":"byNick","properties":[{"nick":"asc"}],"unique":true}]},` +
	`"topic":{"type":"object","ttl":7200,"canBeDeleted":false,"moderatorAbilities":{"delete":true,"deleteWithin":3600},"properties":{` +
	`"title":{"type":"string","maxLength":6,"position":0},` +
	`"by":{"type":"array","byteArray":true,"minItems":32,"maxItems":32,"contentMediaType":"application/x.dash.dpp.identifier","position":1,"refersTo":{"type":"member","kind":"permanentDocument"}},` +
	`"nick":{"type":"string","maxLength":3,"position":2,"refersTo":{"type":"member","kind":"permanentDocument","lookup":"byNick"}}},` +
	`"required":["$createdAt","by"],"additionalProperties":false,"indices":[{"name":"byBy","properties":[{"by":"asc"}],"countable":true}]},` +
	`"reply":{"type":"object","moderatorAbilities":{"delete":true,"deleteKeepsRecord":false,"deleteRefundsOwner":true},"properties":{` +
	`"topic":{"type":"array","byteArray":true,"minItems":32,"maxItems":32,"contentMediaType":"application/x.dash.dpp.identifier","position":0,"refersTo":{"type":"topic","kind":"deletableDocument"}},` +
	`"cc":{"type":"array","maxItems":3,"position":1,"items":{"type":"array","byteArray":true,"minItems":32,"maxItems":32,"contentMediaType":"application/x.dash.dpp.identifier","refersTo":{"type":"member","kind":"listElement"}}},` +
	`"text":{"type":"string","maxLength":8,"position":2}},` +
	`"required":["topic"],"additionalProperties":false},` +
	`"note":{"type":"object","moderatorAbilities":{"delete":true},"properties":{"text":{"type":"string","maxLength":4,"position":0}},"additionalProperties":false}}}`

// moderatorsPlaceholder is replaced in forumDefinition by its moderators' ids.
const moderatorsPlaceholder = `"MODERATORS"`

// shopDefinition is the contract most documents batches write to: "item" is mutable,
// keeps history, is transferable and for sale, with a unique index on owner and name
// and a countable index on tag summing qty; "memo" is immutable and cannot be deleted,
// counted by owner.
const shopDefinition = `{"documentSchemas":{` +
	`"item":{"type":"object","documentsKeepHistory":true,"transferable":1,"tradeMode":1,"properties":{` +
	`"name":{"type":"string","minLength":1,"maxLength":8,"position":0},` +
	`"tag":{"type":"string","maxLength":4,"position":1},` +
	`"qty":{"type":"integer","minimum":-3,"maximum":40,"position":2},` +
	`"blob":{"type":"array","byteArray":true,"maxItems":24,"position":3},` +
	`"seller":{"type":"array","byteArray":true,"minItems":32,"maxItems":32,"contentMediaType":"application/x.dash.dpp.identifier","position":4},` +
	`"on":{"type":"boolean","position":5}},` +
	`"required":["$createdAt","name","qty"],"additionalProperties":false,"indices":[` +
	`{"name":"ownerName","properties":[{"$ownerId":"asc"},{"name":"asc"}],"unique":true},` +
	`{"name":"byTag","properties":[{"tag":"asc"},{"qty":"desc"}],"countable":true,"summable":"qty"},` +
	`{"name":"bySeller","properties":[{"seller":"asc"},{"$updatedAt":"desc"}],"unique":true}]},` +
	`"memo":{"type":"object","documentsMutable":false,"canBeDeleted":false,"properties":{` +
	`"text":{"type":"string","maxLength":16,"position":0},"n":{"type":"integer","position":1}},` +
	`"additionalProperties":false,"indices":[{"name":"byOwner","properties":[{"$ownerId":"asc"},{"n":"asc"}],"countable":true,"summable":"n"}]}}}`

// EpochLengthS is the epoch length of simulated chains: an hour, so the generator's
// block times (seconds to days apart) cross epochs often, several at once now and then.
const EpochLengthS = 3600

// NewGenerator makes a generator over accounts funded addresses.
func NewGenerator(seed int64, accounts int) *Generator {
	g := &Generator{rng: rand.New(rand.NewSource(seed)), time: GenesisTime, InvalidPercent: 15, Version: protocol.Latest}
	if seed%2 != 0 {
		g.Version, g.Upgrade = protocol.V13, uint64(10+seed%30)
	}
	g.documents = newDocumentBatches(rngChooser{g.rng})
	for i := 0; i < accounts; i++ {
		var s [32]byte
		binary.BigEndian.PutUint64(s[:], uint64(i))
		binary.BigEndian.PutUint64(s[8:], uint64(seed))
		g.keys = append(g.keys, ed25519.NewKeyFromSeed(s[:]))
	}
	return g
}

// Genesis funds every account's address with a random balance.
func (g *Generator) Genesis() genesis.AppState {
	st := genesis.AppState{EpochTimeLengthS: EpochLengthS, ProtocolVersion: g.Version}
	if g.Upgrade > 0 {
		st.Upgrade = &genesis.Upgrade{Version: protocol.Latest, Height: g.Upgrade}
	}
	for _, k := range g.keys {
		st.Addresses = append(st.Addresses, genesis.Address{
			Address: protocol.AddressOf(pubOf(k)).String(),
			Balance: 1_000_000 + uint64(g.rng.Int63n(1_000_000_000_000)),
		})
	}
	// Every consensus key of the set's changes has an identity to operate it, funded,
	// signed for with the first key; the genesis validators' are their payout
	// identities.
	for i := 0; i < validatorKeyCount; i++ {
		addr := cmted25519.PubKey(validatorKey(i)).Address()
		payout := protocol.PayoutIdentityID(addr)
		st.Identities = append(st.Identities, genesis.Identity{ID: payout.String(), Balance: operatorFunds, Keys: []string{hex.EncodeToString(pubOf(g.keys[0]))}})
		if i < validatorCount {
			st.Validators = append(st.Validators, genesis.Validator{Address: addr.String(), PayoutIdentity: payout.String()})
		}
	}
	return st
}

// operatorFunds is what each operator identity holds at genesis.
const operatorFunds = 10_000_000_000

// validatorCount is how many validators simulated chains have; their blocks are
// proposed in turn, with now and then a proposer the genesis does not know.
const validatorCount = 3

// Validators are the genesis validators of the generator's chains, with their payout
// identities in Genesis.
func (g *Generator) Validators() []abcitypes.ValidatorUpdate {
	out := make([]abcitypes.ValidatorUpdate, validatorCount)
	for i := range out {
		out[i] = abcitypes.Ed25519ValidatorUpdate(validatorKey(i), 10)
	}
	return out
}

func pubOf(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

// nextTime advances the block time: mostly seconds, sometimes minutes, hours, or days
// (so compacted address records expire while the chain runs).
func (g *Generator) nextTime() time.Time {
	var d time.Duration
	switch p := g.rng.Intn(100); {
	case g.Flood && p < 85:
		d = time.Duration(1+g.rng.Intn(5)) * time.Second
	case g.Flood:
		d = time.Duration(10+g.rng.Intn(60)) * time.Minute
	case p < 70:
		d = time.Duration(1+g.rng.Intn(5)) * time.Second
	case p < 90:
		d = time.Duration(1+g.rng.Intn(60)) * time.Minute
	case p < 98:
		d = time.Duration(1+g.rng.Intn(12)) * time.Hour
	default:
		d = time.Duration(1+g.rng.Intn(3)) * 24 * time.Hour
	}
	g.time = g.time.Add(d + time.Duration(g.rng.Intn(1000))*time.Millisecond)
	return g.time
}

// Block makes the next block's time and transactions against state kv (the last
// saved version), at most maxTxs of them.
func (g *Generator) Block(kv drive.KV, maxTxs int) (time.Time, [][]byte, error) {
	at := g.nextTime()
	g.documents.nowMs = protocol.BlockTimeMs(at)
	n := g.rng.Intn(maxTxs + 1)
	used := map[string]uint64{} // nonces handed out in this block, by signer
	var txs [][]byte
	g.ExpiredChanges, g.ExpiredUniques = g.ExpiredChanges[:0], g.ExpiredUniques[:0]
	g.floodHeavy = g.rng.Intn(2) == 0
	for i := 0; i < n; i++ {
		g.documents.expiredChange, g.documents.expiredUnique = false, false
		var tx []byte
		var err error
		if g.Flood && g.rng.Intn(10) < 6 {
			tx, err = g.floodTx(kv, used)
		}
		if tx == nil && err == nil {
			tx, err = g.tx(kv, used)
		}
		if err != nil {
			return at, nil, err
		}
		txs = append(txs, tx)
		g.ExpiredChanges = append(g.ExpiredChanges, g.documents.expiredChange)
		g.ExpiredUniques = append(g.ExpiredUniques, g.documents.expiredUnique)
	}
	return at, txs, nil
}

func (g *Generator) addressNonce(kv drive.KV, a protocol.Address, used map[string]uint64) (uint64, uint64, error) {
	st, _, err := drive.GetAddress(kv, a)
	if err != nil {
		return 0, 0, err
	}
	k := string(a[:])
	if used[k] < st.Nonce.Last {
		used[k] = st.Nonce.Last
	}
	used[k]++
	return used[k], st.Balance, nil
}

func (g *Generator) identityNonce(kv drive.KV, id protocol.IdentityID, used map[string]uint64) (uint64, uint64, error) {
	last, err := drive.GetIdentityNonce(kv, id)
	if err != nil {
		return 0, 0, err
	}
	bal, _, err := drive.GetIdentityBalance(kv, id)
	if err != nil {
		return 0, 0, err
	}
	k := string(id[:])
	if used[k] < last.Last {
		used[k] = last.Last
	}
	used[k]++
	return used[k], bal, nil
}

// amount picks an amount: usually a small share of balance, sometimes more than all
// of it, and now and then a boundary amount (BoundaryAmount).
func (g *Generator) amount(balance uint64) uint64 {
	if g.rng.Intn(100) < 4 {
		return BoundaryAmount(g.rng.Uint64(), balance)
	}
	if balance < 10 || g.rng.Intn(100) < 5 {
		return balance + 1 + uint64(g.rng.Intn(1000))
	}
	return 1 + uint64(g.rng.Int63n(int64(balance/10)+1))
}

func (g *Generator) tx(kv drive.KV, used map[string]uint64) ([]byte, error) {
	invalid := g.rng.Intn(100) < g.InvalidPercent
	if invalid && g.rng.Intn(4) == 0 {
		junk := make([]byte, g.rng.Intn(200))
		g.rng.Read(junk)
		if len(junk) > 1 && g.rng.Intn(2) == 0 {
			junk[0], junk[1] = protocol.TxFormat1, byte(1+g.rng.Intn(5))
		}
		return junk, nil
	}
	signer := g.keys[g.rng.Intn(len(g.keys))]
	from := protocol.AddressOf(pubOf(signer))
	var tr protocol.Transition
	if g.rng.Intn(16) == 0 {
		t, ok, err := g.validatorTx(kv, used)
		if err != nil {
			return nil, err
		}
		if ok {
			tr, signer = t, g.keys[0]
		}
	}
	switch kind := g.rng.Intn(7); {
	case tr != nil:
	case kind == 0 || (kind >= 3 && len(g.identities) == 0):
		nonce, bal, err := g.addressNonce(kv, from, used)
		if err != nil {
			return nil, err
		}
		to := protocol.AddressOf(pubOf(g.keys[g.rng.Intn(len(g.keys))]))
		if to == from {
			g.rng.Read(to[:])
		}
		tr = &protocol.AddressFundsTransfer{PubKey: pubOf(signer), Nonce: nonce, Recipient: to, Amount: g.amount(bal)}
	case kind == 1:
		nonce, bal, err := g.addressNonce(kv, from, used)
		if err != nil {
			return nil, err
		}
		g.identities = append(g.identities, identity{id: protocol.NewIdentityID(from, nonce), key: signer})
		tr = &protocol.IdentityCreate{PubKey: pubOf(signer), Nonce: nonce, Amount: g.amount(bal), Keys: []ed25519.PublicKey{pubOf(signer)}}
	case kind == 2:
		nonce, bal, err := g.addressNonce(kv, from, used)
		if err != nil {
			return nil, err
		}
		to := g.someIdentity()
		tr = &protocol.IdentityTopUp{PubKey: pubOf(signer), Nonce: nonce, Identity: to, Amount: g.amount(bal)}
	case kind == 5 || (kind >= 6 && len(g.contracts) == 0):
		var err error
		if tr, signer, err = g.contractTx(kv, used); err != nil {
			return nil, err
		}
	case kind >= 6:
		c := g.contracts[g.rng.Intn(len(g.contracts))]
		for i := 0; i < 3; i++ { // mostly a stored contract
			if b, err := drive.GetContractBytes(kv, c.id); err != nil {
				return nil, err
			} else if b != nil {
				break
			}
			c = g.contracts[g.rng.Intn(len(g.contracts))]
		}
		if g.rng.Intn(4) == 0 { // the first stored forum, so that its documents gather
			forum, err := g.firstForum(kv)
			if err != nil {
				return nil, err
			}
			if forum != nil {
				c = *forum
			}
		}
		if g.rng.Intn(3) == 0 { // a contract with documents expired and not yet deleted
			due, ok, err := g.documents.dueContract(kv)
			if err != nil {
				return nil, err
			} else if ok {
				c.id = due
			}
		}
		b, idn, err := g.documents.batch(kv, c.id, g.identities, g.rng.Intn(100) < g.InvalidPercent)
		if err != nil {
			return nil, err
		}
		if b.Nonce, _, err = g.identityNonce(kv, idn.id, used); err != nil {
			return nil, err
		}
		tr, signer = b, idn.key
	default:
		idn := g.identities[g.rng.Intn(len(g.identities))]
		signer = idn.key
		nonce, bal, err := g.identityNonce(kv, idn.id, used)
		if err != nil {
			return nil, err
		}
		if kind == 3 {
			to := g.someIdentity()
			if to == idn.id {
				to[0] ^= 1
			}
			tr = &protocol.IdentityCreditTransfer{Identity: idn.id, Nonce: nonce, Recipient: to, Amount: g.amount(bal)}
		} else {
			to := protocol.AddressOf(pubOf(g.keys[g.rng.Intn(len(g.keys))]))
			tr = &protocol.IdentityCreditTransferToAddress{Identity: idn.id, Nonce: nonce, Recipient: to, Amount: g.amount(bal)}
		}
	}
	if invalid {
		switch g.rng.Intn(3) {
		case 0: // forged: signed by another key
			signer = g.keys[g.rng.Intn(len(g.keys))]
			if pubOf(signer).Equal(pubOf(g.keys[0])) {
				signer = g.keys[len(g.keys)-1]
			}
		case 1: // signed for another chain
			return protocol.Sign("other-chain", tr, signer), nil
		default: // a truncated transaction
			tx := protocol.Sign(ChainID, tr, signer)
			return tx[:g.rng.Intn(len(tx))], nil
		}
	}
	return protocol.Sign(ChainID, tr, signer), nil
}

// someIdentity picks a known identity, or now and then one that does not exist.
func (g *Generator) someIdentity() protocol.IdentityID {
	if len(g.identities) == 0 || g.rng.Intn(10) == 0 {
		var id protocol.IdentityID
		g.rng.Read(id[:])
		return id
	}
	return g.identities[g.rng.Intn(len(g.identities))].id
}

// firstForum is the first forum contract that is stored, if any.
func (g *Generator) firstForum(kv drive.KV) (*contract, error) {
	for i := range g.contracts {
		if !g.contracts[i].forum {
			continue
		}
		if b, err := drive.GetContractBytes(kv, g.contracts[i].id); err != nil || b != nil {
			return &g.contracts[i], err
		}
	}
	return nil, nil
}

// storedIdentity picks a known identity that exists, trying a few; failing those (or
// now and then) one that may not.
func (g *Generator) storedIdentity(kv drive.KV) (protocol.IdentityID, error) {
	for i := 0; i < 8; i++ {
		id := g.someIdentity()
		if ok, err := drive.IdentityExists(kv, id); err != nil || ok {
			return id, err
		}
	}
	return g.someIdentity(), nil
}

// contractTx makes a contract create by a known identity or, now and then, an update of
// a known contract: mostly by its owner at the next version, sometimes not.
func (g *Generator) contractTx(kv drive.KV, used map[string]uint64) (protocol.Transition, ed25519.PrivateKey, error) {
	def := []byte(contractDefinitions[g.rng.Intn(len(contractDefinitions))])
	if string(def) == forumDefinition {
		var mods []string
		for i := 0; i < 1+g.rng.Intn(2); i++ {
			id, err := g.storedIdentity(kv)
			if err != nil {
				return nil, nil, err
			}
			mods = append(mods, `"`+id.String()+`"`)
		}
		def = []byte(strings.Replace(forumDefinition, moderatorsPlaceholder, strings.Join(mods, ","), 1))
	}
	if len(g.contracts) == 0 || g.rng.Intn(3) > 0 {
		idn := g.identities[g.rng.Intn(len(g.identities))]
		nonce, _, err := g.identityNonce(kv, idn.id, used)
		if err != nil {
			return nil, nil, err
		}
		t := &protocol.DataContractCreate{Identity: idn.id, Nonce: nonce, Definition: def}
		g.contracts = append(g.contracts, contract{id: t.ContractID(), owner: idn, ttl: string(def) == ttlDefinition,
			forum: strings.HasPrefix(string(def), forumDefinition[:strings.Index(forumDefinition, moderatorsPlaceholder)])})
		return t, idn.key, nil
	}
	c := g.contracts[g.rng.Intn(len(g.contracts))]
	idn := c.owner
	if g.rng.Intn(8) == 0 {
		idn = g.identities[g.rng.Intn(len(g.identities))]
	}
	nonce, _, err := g.identityNonce(kv, idn.id, used)
	if err != nil {
		return nil, nil, err
	}
	version := uint32(2)
	if b, err := drive.GetContractBytes(kv, c.id); err != nil {
		return nil, nil, err
	} else if len(b) > 0 {
		v, err := drive.GetProtocolVersion(kv)
		if err != nil {
			return nil, nil, err
		}
		if stored, err := protocol.DecodeContract(b, v); err == nil {
			version = stored.Version + 1
		}
	}
	if g.rng.Intn(8) == 0 {
		version += uint32(g.rng.Intn(3))
	}
	return &protocol.DataContractUpdate{Identity: idn.id, Nonce: nonce, Contract: c.id, Version: version, Definition: def}, idn.key, nil
}

// floodTx makes a batch of creates of the hour-long "ping" or (in half the blocks,
// so that their expiries come together) mostly "heavy" documents of a stored ttl
// contract by a funded identity; nil when there is no such contract or
// identity yet.
func (g *Generator) floodTx(kv drive.KV, used map[string]uint64) ([]byte, error) {
	var ttl []contract
	for _, c := range g.contracts {
		if c.ttl {
			ttl = append(ttl, c)
		}
	}
	if len(ttl) == 0 || len(g.identities) == 0 {
		return nil, nil
	}
	c := ttl[g.rng.Intn(len(ttl))]
	ct, found, err := drive.GetContract(kv, c.id, protocol.V14)
	if err != nil || !found {
		return nil, err
	}
	idn := g.identities[g.rng.Intn(len(g.identities))]
	if bal, _, err := drive.GetIdentityBalance(kv, idn.id); err != nil || bal < 1_000_000_000 {
		return nil, err
	}
	b := g.documents.flood(ct, idn.id, 1+g.rng.Intn(10), g.floodHeavy)
	if b.Nonce, _, err = g.identityNonce(kv, idn.id, used); err != nil {
		return nil, err
	}
	return protocol.Sign(ChainID, b, idn.key), nil
}
