package check

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// Answer is one answer a page reads figures from: the query (Path, Data) and the
// node's answer at state Height: its value (a range's entries encoded, a document
// query's JSON) and, for a range, whether it was cut at proofs.MaxRangeEntries.
type Answer struct {
	Path   string
	Data   []byte
	Height int64
	Value  []byte
	More   bool
}

// AnswerOf is the Answer that resp gives to path and data.
func AnswerOf(path string, data []byte, resp abci.ResponseQuery) Answer {
	return Answer{Path: path, Data: data, Height: resp.Height, Value: resp.Value, More: resp.Info == proofs.InfoMore}
}

// Figures are what a set of answers shows, each figure by name and written as a page
// shows it (the functions of format.go). A page shows every figure of its proof box
// exactly once, in an element that carries its name (docs/PROOFS.md, "Proof bundles
// (the web view)"); FigureChain and FigureHeight it may show anywhere, any number of
// times.
type Figures map[string]string

// The figures every set of answers has: the chain and the state they are about.
const (
	FigureChain  = "chain"
	FigureHeight = "height"
)

// anyTimes reports whether figure name may be shown any number of times.
func anyTimes(name string) bool { return name == FigureChain || name == FigureHeight }

// Name is the name of a figure of a list: its parts joined by dots (doc.3.id).
func Name(parts ...any) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ".")
}

// ErrAnswers: a set of answers that no page of the view reads its figures from: a
// figure it needs is missing, an answer is there twice, or answers disagree. Its
// message is made visible (Visible): a reason may quote what a bundle holds.
type ErrAnswers struct{ Reason string }

func (e ErrAnswers) Error() string { return "the answers do not make a page: " + Visible(e.Reason) }

// answers is a set of answers sorted by what they read: the single keys of /key by
// key, then each path. An answer a page does not read figures from has no slot.
type answers struct {
	version, supply, lastBlock, genesis                  *Answer
	pools, lifetime, refunds, total, expirations         *Answer
	address, compacted, blocks, identity, contract, docs *Answer
	document, count, payout, upgrades                    *Answer
	validators, proposals, misbehavior                   *Answer
	epochs                                               []Answer
}

// sort places each answer of list in its slot.
func (s *answers) sort(list []Answer) error {
	for i := range list {
		a := &list[i]
		var slot **Answer
		switch a.Path {
		case proofs.PathKey:
			switch {
			case bytes.Equal(a.Data, drive.ProtocolVersionKey()):
				slot = &s.version
			case bytes.Equal(a.Data, drive.SupplyKey()):
				slot = &s.supply
			case bytes.Equal(a.Data, drive.LastBlockKey()):
				slot = &s.lastBlock
			case bytes.Equal(a.Data, drive.GenesisKey()):
				slot = &s.genesis
			default:
				if _, ok := drive.ParsePayoutIdentityKey(a.Data); ok {
					slot = &s.payout
					break
				}
				return ErrAnswers{fmt.Sprintf("no page shows key %X", a.Data)}
			}
		case proofs.PathPools:
			slot = &s.pools
		case proofs.PathLifetimePools:
			slot = &s.lifetime
		case proofs.PathPendingRefunds:
			slot = &s.refunds
		case proofs.PathTotalCredits:
			slot = &s.total
		case proofs.PathUpgrades:
			slot = &s.upgrades
		case proofs.PathValidators:
			slot = &s.validators
		case proofs.PathValidatorProposals:
			slot = &s.proposals
		case proofs.PathMisbehavior:
			slot = &s.misbehavior
		case proofs.PathExpirations:
			slot = &s.expirations
		case proofs.PathAddress:
			slot = &s.address
		case proofs.PathAddressChangesCompacted:
			slot = &s.compacted
		case proofs.PathAddressChangesBlocks:
			slot = &s.blocks
		case proofs.PathIdentity:
			slot = &s.identity
		case proofs.PathContract:
			slot = &s.contract
		case proofs.PathDocument:
			slot = &s.document
		case proofs.PathDocuments:
			slot = &s.docs
		case proofs.PathCount:
			slot = &s.count
		case proofs.PathEpoch:
			s.epochs = append(s.epochs, *a)
			continue
		default:
			return ErrAnswers{"no page shows the answers of " + a.Path}
		}
		if *slot != nil {
			return ErrAnswers{fmt.Sprintf("two answers to %s %X", a.Path, a.Data)}
		}
		*slot = a
	}
	return nil
}

// Read returns the figures that answers, all about one state of chain chainID, show.
// The server draws a page's figures with it from the answers it read, and the browser
// its proven figures from the answers it verified. A figure drawn from several answers
// takes them all: a document's expiry is its $createdAt and its type's ttl (the
// contract, decoded under the protocol version) and is said relative to the block
// time; the cleanup backlog counts the expirations due at the block time; the epochs
// are the current one and those just before it, each starting when the genesis
// parameters say.
func Read(chainID string, list []Answer) (Figures, error) {
	f, _, _, err := read(chainID, list)
	return f, err
}

// Draw returns the figures that answers show, as Read does, and the drawing of their
// proof box around them (draw.go): what the server writes of a box, and what the
// browser's check draws again from the proven answers.
func Draw(chainID string, list []Answer) (Figures, []Node, error) {
	f, s, links, err := read(chainID, list)
	if err != nil {
		return nil, nil, err
	}
	return f, draw(s.kind(), f, links), nil
}

// read is Read, with the answers sorted and the links of the figures that link
// another page by what the answers hold beyond the figure's text (a document's full
// id, where its figure is abbreviated).
func read(chainID string, list []Answer) (Figures, answers, map[string]string, error) {
	var s answers
	if len(list) == 0 {
		return nil, s, nil, ErrAnswers{"no answer"}
	}
	for _, a := range list[1:] {
		if a.Height != list[0].Height {
			return nil, s, nil, ErrAnswers{fmt.Sprintf("answers at heights %d and %d", list[0].Height, a.Height)}
		}
	}
	if err := s.sort(list); err != nil {
		return nil, s, nil, err
	}
	f := Figures{FigureChain: Visible(chainID), FigureHeight: strconv.FormatInt(list[0].Height, 10)}
	links := map[string]string{}
	withLinks := func(reader func(Figures, map[string]string, answers) error) func(Figures, answers) error {
		return func(f Figures, s answers) error { return reader(f, links, s) }
	}
	for _, reader := range []func(Figures, answers) error{
		readSingleKeys, readPools, readUpgrades, readCredits, readBacklog, readEpochs,
		withLinks(readAddress), readIdentity, withLinks(readContract), readDocument, withLinks(readDocuments), readCount, readPayout, readValidators,
	} {
		part := Figures{}
		if err := reader(part, s); err != nil {
			return nil, s, nil, err
		}
		// NB: a figure has one source: answers of two subjects (an identity's and an
		// address's) would both have a state, and a page could show either one's.
		for name, text := range part {
			if _, twice := f[name]; twice {
				return nil, s, nil, ErrAnswers{"two of the answers show a figure " + name}
			}
			f[name] = text
		}
	}
	return f, s, links, nil
}

// page is the path of the view's page that shows the answers s: the page of their
// subject (a document, a list of documents, a contract, an identity, an address, a
// validator), or the epochs, or the overview.
func (s answers) page() string {
	switch s.kind() {
	case boxValidators:
		return "/validators"
	case boxValidator:
		v, _ := drive.ParsePayoutIdentityKey(s.payout.Data)
		return "/validator/" + strings.ToUpper(hex.EncodeToString(v))
	case boxDocument:
		c, typeName, id, _ := proofs.ParseDocumentsData(proofs.PathDocument, s.document.Data)
		return "/document/" + c.String() + "/" + typeName + "/" + hex.EncodeToString(id)
	case boxDocuments:
		c, typeName, _, _ := proofs.ParseDocumentsData(proofs.PathDocuments, s.docs.Data)
		return "/documents/" + c.String() + "/" + typeName
	case boxContract:
		return "/contract/" + hex.EncodeToString(s.contract.Data)
	case boxIdentity:
		return "/identity/" + hex.EncodeToString(s.identity.Data)
	case boxAddress:
		return "/address/" + hex.EncodeToString(s.address.Data)
	case boxEpochs:
		return "/epochs"
	}
	return "/"
}

// boxKind is which page's proof box a set of answers makes (docs/PROOFS.md, "Proof
// boxes and figures"): what its drawing is.
type boxKind int

const (
	boxOverview boxKind = iota
	boxIdentity
	boxAddress
	boxContract
	boxDocument
	boxDocuments
	boxValidator
	boxValidators
	boxEpochs
)

// kind is the box the answers s make: that of their subject, as page names it.
func (s answers) kind() boxKind {
	switch {
	case s.validators != nil:
		return boxValidators
	case s.payout != nil:
		return boxValidator
	case s.document != nil:
		return boxDocument
	case s.docs != nil:
		return boxDocuments
	case s.contract != nil:
		return boxContract
	case s.identity != nil:
		return boxIdentity
	case s.address != nil:
		return boxAddress
	case s.genesis != nil:
		return boxEpochs
	}
	return boxOverview
}

// samePage reports whether path, the page a reader is on, is want, a page's path as
// page writes it: the ids in it compared whatever the case of their hex digits, as the
// view's routes read them, and everything else (a document type's name) exactly.
func samePage(path, want string) bool {
	p, w := strings.Split(path, "/"), strings.Split(want, "/")
	if len(p) != len(w) {
		return false
	}
	for i := range w {
		typeName := i == 3 && (w[1] == "document" || w[1] == "documents")
		if p[i] != w[i] && (typeName || !strings.EqualFold(p[i], w[i])) {
			return false
		}
	}
	return true
}

// readSingleKeys: the protocol version, the block time and the epoch length.
func readSingleKeys(f Figures, s answers) error {
	if a := s.version; a != nil {
		v, err := drive.DecodeProtocolVersion(a.Value)
		if err != nil {
			return ErrAnswers{"the protocol version: " + err.Error()}
		}
		f["protocol-version"] = strconv.FormatUint(uint64(v), 10)
	}
	if s.lastBlock != nil {
		b, err := lastBlock(s)
		if err != nil {
			return err
		}
		f["block-time"] = When(msTime(b.TimeMs), time.Time{})
	}
	if s.genesis != nil {
		p, err := genesis(s)
		if err != nil {
			return err
		}
		f["epoch-length"] = strconv.FormatUint(p.EpochLengthS, 10) + " s"
	}
	return nil
}

func lastBlock(s answers) (drive.LastBlock, error) {
	if s.lastBlock == nil {
		return drive.LastBlock{}, ErrAnswers{"no block time (the last block record)"}
	}
	b, ok := drive.DecodeLastBlock(s.lastBlock.Value)
	if !ok {
		return b, ErrAnswers{"the last block record does not decode"}
	}
	return b, nil
}

func genesis(s answers) (drive.ChainParams, error) {
	if s.genesis == nil {
		return drive.ChainParams{}, ErrAnswers{"no genesis parameters"}
	}
	p, err := drive.GetChainParams(proofs.SingleKV(drive.GenesisKey(), s.genesis.Value))
	if err != nil {
		return p, ErrAnswers{"the genesis parameters: " + err.Error()}
	}
	return p, nil
}

// entries decodes a range answer that a page shows in full, or counts (cut: whether
// it may be cut).
func entries(a *Answer, cut bool) ([]proofs.KV, error) {
	if a.More && !cut {
		return nil, ErrAnswers{a.Path + " cut short"}
	}
	e, err := proofs.DecodeEntries(a.Value)
	if err != nil {
		return nil, ErrAnswers{a.Path + ": " + err.Error()}
	}
	return e, nil
}

// noData refuses an answer to a range a page shows from its start, read from
// elsewhere: a pending refunds answer that skips the first ones would sum fewer.
func noData(a *Answer) error {
	if len(a.Data) != 0 {
		return ErrAnswers{fmt.Sprintf("%s read from %X, not from its start", a.Path, a.Data)}
	}
	return nil
}

// readPools: the current epoch, the storage pool, and the credits the lifetime pools
// hold and the pending refunds returned (which the next epoch change takes back from
// the epochs' pools).
func readPools(f Figures, s answers) error {
	if a := s.pools; a != nil {
		e, err := entries(a, false)
		if err != nil {
			return err
		}
		cur, started, err := drive.GetCurrentEpoch(proofs.EntriesKV(e))
		if err != nil {
			return ErrAnswers{"the current epoch: " + err.Error()}
		}
		f["epoch"] = "not started"
		if started {
			f["epoch"] = fmt.Sprintf("%d, from height %d", cur.Index, cur.FirstHeight)
		}
		pool, err := drive.GetU64(proofs.EntriesKV(e), drive.StoragePoolKey())
		if err != nil {
			return ErrAnswers{"the storage pool: " + err.Error()}
		}
		f["storage-pool"] = Credits(pool)
	}
	if a := s.lifetime; a != nil {
		e, err := fromStart(a)
		if err != nil {
			return err
		}
		pools, err := drive.LifetimePools(proofs.EntriesKV(e), protocol.MaxEpoch)
		if err != nil {
			return ErrAnswers{"the lifetime pools: " + err.Error()}
		}
		credits := make([]uint64, len(pools))
		for i, p := range pools {
			credits[i] = p.Credits
		}
		f["lifetime-pools"] = atLeast(creditsSum(credits), a.More)
	}
	if a := s.refunds; a != nil {
		e, err := fromStart(a)
		if err != nil {
			return err
		}
		refunds, err := drive.PendingRefunds(proofs.EntriesKV(e))
		if err != nil {
			return ErrAnswers{"the pending refunds: " + err.Error()}
		}
		credits := make([]uint64, len(refunds))
		for i, r := range refunds {
			credits[i] = r.Refunded
		}
		f["pending-refunds"] = atLeast(creditsSum(credits), a.More)
	}
	return nil
}

// fromStart decodes a range answer a page sums from its start: one read from
// elsewhere would sum less (noData), one cut sums what it holds (atLeast).
func fromStart(a *Answer) ([]proofs.KV, error) {
	if err := noData(a); err != nil {
		return nil, err
	}
	return entries(a, true)
}

// atLeast writes a sum over a range answer: "at least" it when the answer was cut.
func atLeast(sum string, cut bool) string {
	if cut {
		return "at least " + sum
	}
	return sum
}

// readUpgrades: the upgrade in place under way (docs/STATE.md, "Protocol upgrades"):
// the version decided for the next epoch change, and the current epoch's blocks so far
// that signalled the next version or a later one, against the threshold of the version
// in force; read with the version, the current epoch and the last block.
func readUpgrades(f Figures, s answers) error {
	a := s.upgrades
	if a == nil {
		return nil
	}
	if s.version == nil || s.pools == nil || s.lastBlock == nil {
		return ErrAnswers{"the upgrade records without the protocol version, the current epoch and the last block"}
	}
	if err := noData(a); err != nil {
		return err
	}
	e, err := entries(a, false)
	if err != nil {
		return err
	}
	v, err := drive.DecodeProtocolVersion(s.version.Value)
	if err != nil {
		return ErrAnswers{"the protocol version: " + err.Error()}
	}
	pools, err := entries(s.pools, false)
	if err != nil {
		return err
	}
	cur, started, err := drive.GetCurrentEpoch(proofs.EntriesKV(pools))
	if err != nil {
		return ErrAnswers{"the current epoch: " + err.Error()}
	}
	last, err := lastBlock(s)
	if err != nil {
		return err
	}
	kv := proofs.EntriesKV(e)
	next, decided, err := drive.GetNextVersion(kv)
	if err != nil {
		return ErrAnswers{"the next version: " + err.Error()}
	}
	f["next-version"] = "none decided"
	if decided {
		f["next-version"] = fmt.Sprintf("%d, from the next epoch change", next)
	}
	signals, _, err := drive.GetEpochSignals(kv, cur.Index)
	if err != nil {
		return ErrAnswers{"the version signals: " + err.Error()}
	}
	var blocks uint64
	if started && last.Height >= cur.FirstHeight {
		blocks = last.Height - cur.FirstHeight + 1
	}
	text := fmt.Sprintf("%s of the %s blocks of epoch %d so far signalled %d or later", strconv.FormatUint(signals.AtLeast(v+1), 10), strconv.FormatUint(blocks, 10), cur.Index, v+1)
	if lim, err := protocol.LimitsFor(v); err == nil {
		text += fmt.Sprintf("; %d%% of an epoch's blocks decide", lim.UpgradeThresholdPercent)
	}
	f["upgrade-signals"] = text
	return nil
}

// readCredits: the credits in state and those supplied at genesis, and whether they
// are equal.
func readCredits(f Figures, s answers) error {
	var total, supply uint64
	var err error
	if a := s.total; a != nil {
		if total, err = drive.GetU64(proofs.SingleKV(drive.TotalCreditsKey(), a.Value), drive.TotalCreditsKey()); err != nil {
			return ErrAnswers{"the total credits: " + err.Error()}
		}
		f["total-credits"] = Credits(total)
	}
	if a := s.supply; a != nil {
		if supply, err = drive.GetSupply(proofs.SingleKV(drive.SupplyKey(), a.Value)); err != nil {
			return ErrAnswers{"the supply: " + err.Error()}
		}
		f["supply"] = Credits(supply)
	}
	if s.total != nil && s.supply != nil {
		f["conserved"] = "conserved"
		if total != supply {
			f["conserved"] = "differ"
		}
	}
	return nil
}

// readBacklog: the documents expired and waiting for the cleanup, the expirations due
// at the block time (no earlier: an answer until an earlier time would count fewer).
func readBacklog(f Figures, s answers) error {
	a := s.expirations
	if a == nil {
		return nil
	}
	b, err := lastBlock(s)
	if err != nil {
		return err
	}
	if !bytes.Equal(a.Data, proofs.ExpirationsData(b.TimeMs, nil)) {
		return ErrAnswers{fmt.Sprintf("the expirations read are not those due at the block time %d", b.TimeMs)}
	}
	e, err := entries(a, true)
	if err != nil {
		return err
	}
	f["backlog"] = count(len(e), a.More)
	return nil
}

// readEpochs: each epoch's start, fees, storage share, proposers and payout; the
// epochs are the current one and those right before it, none left out.
func readEpochs(f Figures, s answers) error {
	if len(s.epochs) == 0 {
		return nil
	}
	params, err := genesis(s)
	if err != nil {
		return err
	}
	if s.pools == nil {
		return ErrAnswers{"epochs without the current epoch"}
	}
	e, err := entries(s.pools, false)
	if err != nil {
		return err
	}
	cur, started, err := drive.GetCurrentEpoch(proofs.EntriesKV(e))
	if err != nil || !started {
		return ErrAnswers{"epochs before the first epoch started"}
	}
	sort.Slice(s.epochs, func(i, j int) bool { return bytes.Compare(s.epochs[i].Data, s.epochs[j].Data) > 0 })
	for i, a := range s.epochs {
		if uint32(i) > cur.Index || len(a.Data) != 4 || binary.BigEndian.Uint32(a.Data) != cur.Index-uint32(i) {
			return ErrAnswers{fmt.Sprintf("the epochs are not the current one (%d) and those right before it", cur.Index)}
		}
		if err := readEpoch(f, params, cur.Index-uint32(i), &a); err != nil {
			return err
		}
	}
	return nil
}

func readEpoch(f Figures, params drive.ChainParams, index uint32, a *Answer) error {
	e, err := entries(a, false)
	if err != nil {
		return err
	}
	kv := proofs.EntriesKV(e)
	fees, err := drive.GetU64(kv, drive.EpochFeesKey(index))
	if err != nil {
		return ErrAnswers{fmt.Sprintf("epoch %d: %v", index, err)}
	}
	storage, err := drive.GetU64(kv, drive.EpochStorageKey(index))
	if err != nil {
		return ErrAnswers{fmt.Sprintf("epoch %d: %v", index, err)}
	}
	proposers, err := drive.EpochProposers(kv, index)
	if err != nil {
		return ErrAnswers{fmt.Sprintf("epoch %d: %v", index, err)}
	}
	f[Name("epoch", index, "index")] = strconv.FormatUint(uint64(index), 10)
	f[Name("epoch", index, "start")] = When(msTime(protocol.EpochStartMs(params.GenesisTimeMs, params.EpochLengthS, index)), time.Time{})
	f[Name("epoch", index, "fees")] = Credits(fees)
	f[Name("epoch", index, "storage")] = Credits(storage)
	for j, p := range proposers {
		f[Name("epoch", index, "proposer", j, "address")] = Short(strings.ToUpper(hex.EncodeToString(p.Proposer)))
		f[Name("epoch", index, "proposer", j, "blocks")] = strconv.FormatUint(p.Blocks, 10)
	}
	f[Name("epoch", index, "payout")] = "not yet"
	if paid, _ := kv.Get(drive.EpochPaidKey(index)); paid != nil {
		credits, err := drive.GetU64(kv, drive.EpochPaidKey(index))
		if err != nil {
			return ErrAnswers{fmt.Sprintf("epoch %d: %v", index, err)}
		}
		f[Name("epoch", index, "payout")] = "paid " + Credits(credits)
	}
	return nil
}

// readAddress: an address's balance and last nonce, and its balance changes since a
// height, which take the address's answer and both records' answers from that height.
func readAddress(f Figures, links map[string]string, s answers) error {
	a := s.address
	if a == nil {
		if s.compacted != nil || s.blocks != nil {
			return ErrAnswers{"balance changes without their address"}
		}
		return nil
	}
	if len(a.Data) != protocol.AddressLen {
		return ErrAnswers{"an address of " + strconv.Itoa(len(a.Data)) + " bytes"}
	}
	var addr protocol.Address
	copy(addr[:], a.Data)
	f["address"] = addr.String()
	if len(a.Value) == 0 {
		f["state"] = "holds nothing"
	} else {
		st, err := drive.DecodeAddressState(a.Value)
		if err != nil {
			return ErrAnswers{"the address: " + err.Error()}
		}
		f["balance"] = Credits(st.Balance)
		f["nonce"] = strconv.FormatUint(st.Nonce.Last, 10)
	}
	if s.compacted == nil && s.blocks == nil {
		return nil
	}
	changes, err := BalanceChanges(addr, s.compacted, s.blocks)
	if err != nil {
		return err
	}
	f["since"] = strconv.FormatUint(changes.Since, 10)
	for i, c := range changes.List {
		heights := strconv.FormatUint(c.From, 10)
		if c.To != c.From {
			heights += "–" + strconv.FormatUint(c.To, 10)
		}
		f[Name("change", i, "heights")] = heights
		f[Name("change", i, "balance")] = Credits(c.Balance)
		links[Name("change", i, "heights")] = "/block/" + strconv.FormatUint(c.To, 10)
	}
	if changes.Cut {
		f["changes-cut"] = "more records than one answer holds: the list stops here"
	}
	return nil
}

// BalanceChange is an address's balance after blocks From..To (a per-block record:
// From == To).
type BalanceChange struct {
	From    uint64 `json:"from"`
	To      uint64 `json:"to"`
	Balance uint64 `json:"balance"`
}

// AddressChanges are an address's balance changes since a height, oldest first: those
// of the compacted records that end at or after it, then those of the block records.
// Cut: one of the two answers was cut, so that changes may be missing after the last
// of its records.
type AddressChanges struct {
	Since uint64
	List  []BalanceChange
	Cut   bool
}

// BalanceChanges reads the changes of addr from the answers to both address-changes
// paths, asked from the same height.
func BalanceChanges(addr protocol.Address, compacted, blocks *Answer) (AddressChanges, error) {
	if compacted == nil || blocks == nil || !bytes.Equal(compacted.Data, blocks.Data) || len(blocks.Data) != 8 {
		return AddressChanges{}, ErrAnswers{"the balance changes take the compacted and the block records from one height"}
	}
	out := AddressChanges{Since: binary.BigEndian.Uint64(blocks.Data), Cut: compacted.More || blocks.More}
	for _, a := range []*Answer{compacted, blocks} {
		e, err := entries(a, true)
		if err != nil {
			return out, err
		}
		for _, kv := range e {
			from, to, ok := drive.ParseCompactedChangesKey(kv.Key)
			if a == blocks {
				from, ok = drive.ParseBlockChangesKey(kv.Key)
				to = from
			}
			if !ok {
				return out, ErrAnswers{fmt.Sprintf("%s: key %X is not of its records", a.Path, kv.Key)}
			}
			changes, err := drive.DecodeBalanceChanges(kv.Value)
			if err != nil {
				return out, ErrAnswers{err.Error()}
			}
			for _, c := range changes {
				if c.Address == addr {
					out.List = append(out.List, BalanceChange{From: from, To: to, Balance: c.Balance})
				}
			}
		}
	}
	return out, nil
}

// readIdentity: an identity's balance, last nonce and keys.
func readIdentity(f Figures, s answers) error {
	a := s.identity
	if a == nil {
		return nil
	}
	if len(a.Data) != protocol.IdentityIDLen {
		return ErrAnswers{"an identity id of " + strconv.Itoa(len(a.Data)) + " bytes"}
	}
	var id protocol.IdentityID
	copy(id[:], a.Data)
	e, err := entries(a, false)
	if err != nil {
		return err
	}
	raw := make([][2][]byte, len(e))
	for i, kv := range e {
		raw[i] = [2][]byte{kv.Key, kv.Value}
	}
	idn, present, err := drive.DecodeIdentity(id, raw)
	if err != nil {
		return ErrAnswers{"the identity: " + err.Error()}
	}
	f["id"] = id.String()
	if !present {
		f["state"] = "no such identity"
		return nil
	}
	f["balance"] = Credits(idn.Balance)
	f["nonce"] = strconv.FormatUint(idn.Nonce.Last, 10)
	for i, k := range idn.Keys {
		f[Name("key", i)] = fmt.Sprintf("%d: %s", i, hex.EncodeToString(k))
	}
	return nil
}

// contractOf decodes the contract of answer a under the proven protocol version.
func contractOf(s answers, a *Answer) (protocol.Contract, bool, error) {
	if len(a.Data) != protocol.ContractIDLen {
		return protocol.Contract{}, false, ErrAnswers{"a contract id of " + strconv.Itoa(len(a.Data)) + " bytes"}
	}
	if len(a.Value) == 0 {
		return protocol.Contract{}, false, nil
	}
	if s.version == nil {
		return protocol.Contract{}, false, ErrAnswers{"a contract without the protocol version it is decoded under"}
	}
	v, err := drive.DecodeProtocolVersion(s.version.Value)
	if err != nil {
		return protocol.Contract{}, false, ErrAnswers{"the protocol version: " + err.Error()}
	}
	c, err := protocol.DecodeContract(a.Value, v)
	if err != nil {
		return c, false, ErrAnswers{"the contract: " + err.Error()}
	}
	if !bytes.Equal(c.ID[:], a.Data) {
		return c, false, ErrAnswers{"the stored contract names another id"}
	}
	return c, true, nil
}

// readContract: a contract, its types, their properties and indexes, and its
// definition, unless the contract is read to decode a document (readDocument).
func readContract(f Figures, links map[string]string, s answers) error {
	a := s.contract
	if a == nil || s.document != nil {
		return nil
	}
	c, present, err := contractOf(s, a)
	if err != nil {
		return err
	}
	f["id"] = hex.EncodeToString(a.Data)
	if !present {
		f["state"] = "no such contract"
		return nil
	}
	f["owner"] = c.Owner.String()
	f["version"] = strconv.FormatUint(uint64(c.Version), 10)
	if m := c.Moderation; m != nil {
		for i, id := range m.Moderators {
			f[Name("moderator", i)] = id.String()
		}
	}
	for i, t := range c.DocumentTypes {
		describeType(f, i, t)
		links[Name("type", i, "name")] = documentsHref(c.ID.String(), t.Name)
	}
	f["definition"] = Visible(string(protocol.CanonicalDefinitionJSON(c.Definition())))
	return nil
}

// readDocument: a document's system fields, its values, and its expiry and the part
// of its lifetime used at the block time; the type comes from the contract at the same
// state, decoded under the protocol version there.
func readDocument(f Figures, s answers) error {
	a := s.document
	if a == nil {
		return nil
	}
	c, typeName, rest, err := proofs.ParseDocumentsData(proofs.PathDocument, a.Data)
	if err != nil || len(rest) != protocol.DocumentIDLen {
		return ErrAnswers{"a document's request names no document id"}
	}
	var id protocol.DocumentID
	copy(id[:], rest)
	if s.contract == nil || !bytes.Equal(s.contract.Data, c[:]) {
		return ErrAnswers{"a document without its contract"}
	}
	contract, present, err := contractOf(s, s.contract)
	if err != nil {
		return err
	}
	b, err := lastBlock(s)
	if err != nil {
		return err
	}
	f["id"], f["contract"], f["type"] = id.String(), c.String(), Visible(typeName)
	t, ok := contract.DocumentType(typeName)
	if len(a.Value) == 0 {
		f["state"] = "no such document"
		return nil
	}
	if !present || !ok {
		return ErrAnswers{"a document of a type its contract does not have"}
	}
	d, err := drive.DecodeStoredDocument(drive.DocumentKey(c, typeName, id), a.Value, t)
	if err != nil || d.ID != id {
		return ErrAnswers{"the stored document is not the one asked"}
	}
	f["owner"] = d.Owner.String()
	f["revision"] = strconv.FormatUint(d.Revision, 10)
	f["created"], f["updated"] = When(msTime(d.CreatedAt), msTime(b.TimeMs)), When(msTime(d.UpdatedAt), msTime(b.TimeMs))
	if d.Price > 0 {
		f["price"] = Credits(d.Price)
	}
	if d.RenewedAt != 0 {
		f["renewed"] = When(msTime(d.RenewedAt), msTime(b.TimeMs))
	}
	if exp, ok := t.ExpiresAtMs(d.Document); ok {
		f["expiry"] = Expiry(exp, b.TimeMs)
		f["lifetime"] = strconv.FormatUint(Lived(d.CreatedAt, exp, b.TimeMs, 100), 10) + "%"
		// A renewed document's lifetime runs from its creation to the expiry its last
		// renewal set (docs/STATE.md, "Renewal"): where on it that renewal fell.
		if d.RenewedAt != 0 {
			f["renewal"] = strconv.FormatUint(Lived(d.CreatedAt, exp, d.RenewedAt, 100), 10) + "%"
		}
	}
	readValues(f, []any{"field"}, t, d.Document)
	return nil
}

// Lived is how much of a lifetime from createdMs to expiresMs has passed at atMs, in
// parts of scale (100: percent).
func Lived(createdMs, expiresMs, atMs, scale uint64) uint64 {
	if expiresMs <= createdMs {
		return scale
	}
	life := expiresMs - createdMs
	used := min(atMs, expiresMs) - min(atMs, createdMs)
	return min(scale, used*scale/life)
}

// readValues writes the values of d that are set, each with its property's name,
// numbered from 0 under prefix.
func readValues(f Figures, prefix []any, t protocol.DocumentType, d protocol.Document) {
	j := 0
	for _, p := range t.Properties {
		v := d.Value(p.Position)
		if !v.Set {
			continue
		}
		f[Name(append(prefix, j, "name")...)] = Visible(p.Name)
		f[Name(append(prefix, j, "value")...)] = Value(p.Type, v)
		j++
	}
}

// readDocuments: the documents a query returns, in its order, with their expiry at the
// block time; the contract and the protocol version come with the answer.
func readDocuments(f Figures, links map[string]string, s answers) error {
	a := s.docs
	if a == nil {
		return nil
	}
	c, typeName, query, err := proofs.ParseDocumentsData(proofs.PathDocuments, a.Data)
	if err != nil {
		return ErrAnswers{err.Error()}
	}
	b, err := lastBlock(s)
	if err != nil {
		return err
	}
	ans, err := proofs.DecodeDocumentsAnswer(a.Value)
	if err != nil {
		return ErrAnswers{err.Error()}
	}
	v, err := drive.DecodeProtocolVersion(ans.ProtocolVersion)
	if err != nil {
		return ErrAnswers{"the protocol version: " + err.Error()}
	}
	contract, err := protocol.DecodeContract(ans.Contract, v)
	if err != nil || contract.ID != c {
		return ErrAnswers{"the answer's contract is not the one asked"}
	}
	t, ok := contract.DocumentType(typeName)
	if !ok {
		return ErrAnswers{"the contract has no type " + typeName}
	}
	f["contract"], f["type"], f["query"] = c.String(), Visible(typeName), Visible(string(query))
	for i, row := range ans.Documents {
		d, err := drive.DecodeStoredDocument(nil, row, t)
		if err != nil {
			return ErrAnswers{fmt.Sprintf("document %d: %v", i, err)}
		}
		f[Name("doc", i, "id")] = Short(d.ID.String())
		f[Name("doc", i, "owner")] = Short(d.Owner.String())
		links[Name("doc", i, "id")] = "/document/" + c.String() + "/" + url.PathEscape(typeName) + "/" + d.ID.String()
		links[Name("doc", i, "owner")] = "/identity/" + d.Owner.String()
		f[Name("doc", i, "revision")] = strconv.FormatUint(d.Revision, 10)
		f[Name("doc", i, "created")] = When(msTime(d.CreatedAt), msTime(b.TimeMs))
		if exp, ok := t.ExpiresAtMs(d.Document); ok {
			f[Name("doc", i, "expiry")] = Expiry(exp, b.TimeMs)
		}
		readValues(f, []any{"doc", i, "field"}, t, d.Document)
	}
	return nil
}

// CountQuery is the query of the count of what documents query q lists: its where
// clauses and its window, without the order, the limit or the start a count does not
// take; nil (every document of the type) when q has neither. ok is false when q is
// not a JSON object.
func CountQuery(q []byte) (count []byte, ok bool) {
	var members map[string]json.RawMessage
	if json.Unmarshal(q, &members) != nil || members == nil {
		return nil, false
	}
	kept := map[string]json.RawMessage{}
	for _, name := range []string{"where", "window"} {
		if m, ok := members[name]; ok {
			kept[name] = m
		}
	}
	if len(kept) == 0 {
		return nil, true
	}
	out, err := json.Marshal(kept)
	return out, err == nil
}

// readCount: how many documents the documents' query matches, from the count record
// of a countable index that the query's where clauses name exactly (docs/PROOFS.md,
// "The query"): the count asked must be the one of those clauses (CountQuery), of the
// same contract and type, the index chosen by the node's rules.
func readCount(f Figures, s answers) error {
	a := s.count
	if a == nil {
		return nil
	}
	if s.docs == nil {
		return ErrAnswers{"a count without the documents it counts"}
	}
	c, typeName, q, err := proofs.ParseDocumentsData(proofs.PathDocuments, s.docs.Data)
	if err != nil {
		return ErrAnswers{err.Error()}
	}
	want, ok := CountQuery(q)
	if !ok || !bytes.Equal(a.Data, proofs.CountData(c, typeName, "", want)) {
		return ErrAnswers{"the count is not of the listed documents' where clauses"}
	}
	ans, err := proofs.DecodeCountAnswer(a.Value)
	if err != nil {
		return ErrAnswers{err.Error()}
	}
	var n uint64
	if len(ans.Record) > 0 {
		rec, ok := drive.DecodeIndexCount(ans.Record)
		if !ok {
			return ErrAnswers{"not a count record"}
		}
		n = rec.Count
	}
	f["count"] = strconv.FormatUint(n, 10)
	return nil
}

// readPayout: the identity a validator's share of each epoch's pool is paid to.
func readPayout(f Figures, s answers) error {
	a := s.payout
	if a == nil {
		return nil
	}
	validator, _ := drive.ParsePayoutIdentityKey(a.Data)
	f["validator"] = strings.ToUpper(hex.EncodeToString(validator))
	if len(a.Value) == 0 {
		f["state"] = "no payout identity"
		return nil
	}
	id, _, err := drive.GetPayoutIdentity(proofs.SingleKV(a.Data, a.Value), validator)
	if err != nil {
		return ErrAnswers{"the payout identity: " + err.Error()}
	}
	f["payout-identity"] = id.String()
	return nil
}

// readValidators: the validator set in state (docs/STATE.md, "Validators"), each
// validator with its power, share and operator; the pending proposals, each with its
// change, its approvals and the power they hold of the set's, and its expiry; the
// evidence handled. The three answers come together, each read from its start and
// whole.
func readValidators(f Figures, s answers) error {
	if s.validators == nil && s.proposals == nil && s.misbehavior == nil {
		return nil
	}
	if s.validators == nil || s.proposals == nil || s.misbehavior == nil {
		return ErrAnswers{"the validator set, its proposals and its evidence come together"}
	}
	var lists [3][]proofs.KV
	for i, a := range []*Answer{s.validators, s.proposals, s.misbehavior} {
		if err := noData(a); err != nil {
			return err
		}
		e, err := entries(a, false)
		if err != nil {
			return err
		}
		lists[i] = e
	}
	set, err := drive.ReadValidatorSet(proofs.EntriesKV(lists[0]))
	if err != nil {
		return ErrAnswers{"the validator set: " + err.Error()}
	}
	f["validators"] = fmt.Sprintf("%d, total power %s", len(set.List), Credits(set.Total))
	if len(set.List) == 0 {
		f["validators"] = "none in state: the chain runs a protocol version before 16, whose set is its genesis's"
	}
	for i, v := range set.List {
		f[Name("validator", i, "address")] = strings.ToUpper(v.Address.String())
		f[Name("validator", i, "power")] = fmt.Sprintf("%s (%s)", Credits(v.Power), Percent(v.Power, set.Total))
		f[Name("validator", i, "operator")] = v.Operator.String()
	}
	proposals, err := drive.ValidatorProposals(proofs.EntriesKV(lists[1]))
	if err != nil {
		return ErrAnswers{"the validator proposals: " + err.Error()}
	}
	f["proposals"] = count(len(proposals), false)
	for i, p := range proposals {
		var approved uint64
		for _, a := range p.Approvals {
			if v, ok := set.Get(a); ok {
				approved += v.Power
			}
		}
		state := "pending, expires " + When(msTime(p.ExpiresMs), time.Time{})
		if p.PassedMs != 0 {
			state = "passed, applied by the end of a block"
		}
		f[Name("proposal", i, "id")] = strconv.FormatUint(p.ID, 10)
		f[Name("proposal", i, "change")] = change(p.Change)
		f[Name("proposal", i, "proposer")] = strings.ToUpper(p.Proposer.String())
		f[Name("proposal", i, "approvals")] = fmt.Sprintf("%d, holding %s of %s power (%s)", len(p.Approvals), Credits(approved), Credits(set.Total), Percent(approved, set.Total))
		f[Name("proposal", i, "state")] = state
	}
	evidence, err := drive.Misbehaviors(proofs.EntriesKV(lists[2]))
	if err != nil {
		return ErrAnswers{"the evidence: " + err.Error()}
	}
	f["evidence"] = count(len(evidence), false)
	for i, m := range evidence {
		outcome := "removed it"
		if !m.Removed {
			outcome = "removed nothing (not in the set, or its last validator)"
		}
		f[Name("evidence", i, "validator")] = strings.ToUpper(m.Validator.String())
		f[Name("evidence", i, "what")] = fmt.Sprintf("%s at height %d, handled at height %d (power %s): %s", strings.ReplaceAll(m.Kind.String(), "_", " "), m.Height, m.RecordedAt, Credits(m.Power), outcome)
	}
	return nil
}

// change writes what a validator set proposal changes.
func change(c protocol.ValidatorChange) string {
	target := strings.ToUpper(c.Target().String())
	switch c.Kind {
	case protocol.ValidatorAdd:
		return fmt.Sprintf("add %s, power %s, operated by %s", target, Credits(c.Power), c.Operator)
	case protocol.ValidatorPower:
		return fmt.Sprintf("set the power of %s to %s", target, Credits(c.Power))
	case protocol.ValidatorRotate:
		return fmt.Sprintf("rotate %s to the key %X (address %s)", target, []byte(c.PubKey), strings.ToUpper(protocol.ConsensusAddressOf(c.PubKey).String()))
	case protocol.ValidatorRemove:
		return "remove " + target
	}
	return c.Kind.String()
}

// Percent writes part of total as a percentage with two decimals, in integers.
func Percent(part, total uint64) string {
	if total == 0 {
		return "0%"
	}
	bp := part * 10_000 / total
	return fmt.Sprintf("%d.%02d%%", bp/100, bp%100)
}
