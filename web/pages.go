package web

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	rpcclient "github.com/cometbft/cometbft/rpc/client"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web/check"
)

// Bounds of what one page reads.
const (
	// BlocksPerPage is how many blocks /blocks lists (CometBFT's blockchain call
	// answers at most 20).
	BlocksPerPage = 20
	// EpochsPerPage is how many epochs /epochs shows, the current one first.
	EpochsPerPage = 10
	// MaxQueryBytes bounds the query JSON /documents takes.
	MaxQueryBytes = 4096
	// MaxProofDataBytes bounds the request data /proof takes: a document query's,
	// its JSON and the contract and type before it.
	MaxProofDataBytes = MaxQueryBytes + 128
)

// validatorRow is one validator as a page shows it.
type validatorRow struct {
	Address string
	Power   int64
}

type overviewPage struct {
	ChainID         string
	Height          int64
	AppHash         string
	BlockTime       time.Time
	ProtocolVersion uint32
	Validators      []validatorRow
	Genesis         []validatorRow
	GenesisHash     string
	// State is the height of the state the app figures below are read at.
	State          int64
	Epoch          drive.CurrentEpoch
	EpochStarted   bool
	StoragePool    uint64
	LifetimePools  int
	PendingRefunds int
	// Backlog counts the expirations tree's entries due at the state's block time, up
	// to proofs.MaxRangeEntries (BacklogMore: at least that many).
	Backlog      int
	BacklogMore  bool
	TotalCredits uint64
	Supply       uint64
	// The proof box of each read the figures come from.
	VersionProof, PoolsProof, BacklogProof, LifetimeProof, RefundsProof, TotalProof, SupplyProof proofBox
}

// rawAnswer is one unproven read: the value, a range's entries and whether the range
// was cut, at Height.
type rawAnswer struct {
	Value   []byte
	Entries []proofs.KV
	More    bool
	Height  int64
}

func (s *Server) overview(r *http.Request) (any, error) {
	ctx := r.Context()
	st, err := s.rpc.Status(ctx)
	if err != nil {
		return nil, err
	}
	h := st.SyncInfo.LatestBlockHeight
	p := overviewPage{ChainID: st.NodeInfo.Network, Height: h, AppHash: st.SyncInfo.LatestAppHash.String(), BlockTime: st.SyncInfo.LatestBlockTime.UTC()}
	vals, err := s.rpc.Validators(ctx, &h, nil, nil)
	if err != nil {
		return nil, err
	}
	for _, v := range vals.Validators {
		p.Validators = append(p.Validators, validatorRow{v.Address.String(), v.VotingPower})
	}
	if t := s.opts.Trusted; t != nil {
		for _, v := range t.Validators {
			p.Genesis = append(p.Genesis, validatorRow{v.Address.String(), v.VotingPower})
		}
		p.GenesisHash = fmt.Sprintf("%X", t.Hash())
	}
	if h < 1 {
		return p, nil
	}
	// Every app figure is read at one state, the latest saved one, and decoded from
	// the very value the browser then checks against its proof.
	reads := []struct {
		path, offline string
		data          []byte
		box           *proofBox
		use           func(a rawAnswer) error
	}{
		{proofs.PathKey, "ttld status and the proof bundle", drive.ProtocolVersionKey(), &p.VersionProof, func(a rawAnswer) error {
			v, err := drive.DecodeProtocolVersion(a.Value)
			p.ProtocolVersion = uint32(v)
			return err
		}},
		{proofs.PathPools, "ttld query pools --prove", nil, &p.PoolsProof, func(a rawAnswer) (err error) {
			kv := client.EntriesKV(a.Entries)
			if p.Epoch, p.EpochStarted, err = drive.GetCurrentEpoch(kv); err != nil {
				return err
			}
			p.StoragePool, err = drive.GetU64(kv, drive.StoragePoolKey())
			return err
		}},
		{proofs.PathLifetimePools, "ttld query pools --prove", nil, &p.LifetimeProof, func(a rawAnswer) error {
			p.LifetimePools = len(a.Entries)
			return nil
		}},
		{proofs.PathPendingRefunds, "ttld query pools --prove", nil, &p.RefundsProof, func(a rawAnswer) error {
			p.PendingRefunds = len(a.Entries)
			return nil
		}},
		{proofs.PathTotalCredits, "ttld query total-credits --prove", nil, &p.TotalProof, func(a rawAnswer) (err error) {
			p.TotalCredits, err = u64(a.Value)
			return err
		}},
		{proofs.PathKey, "ttld query total-credits --prove", drive.SupplyKey(), &p.SupplyProof, func(a rawAnswer) (err error) {
			p.Supply, err = u64(a.Value)
			return err
		}},
	}
	for _, rd := range reads {
		a, err := s.rawRead(ctx, rd.path, rd.data, p.State)
		if err != nil {
			return nil, err
		}
		p.State = a.Height
		if err := rd.use(a); err != nil {
			return nil, err
		}
		if *rd.box, err = s.proofBox(ctx, rd.path, rd.data, a.Height, a.shown(), rd.offline); err != nil {
			return nil, err
		}
	}
	// The backlog: the entries due at the state's block time.
	lb, err := s.rawRead(ctx, proofs.PathKey, drive.LastBlockKey(), p.State)
	if err != nil {
		return nil, err
	}
	last, ok := drive.DecodeLastBlock(lb.Value)
	if !ok {
		return nil, fmt.Errorf("the last block record does not decode")
	}
	data := proofs.ExpirationsData(last.TimeMs, nil)
	due, err := s.rawRead(ctx, proofs.PathExpirations, data, p.State)
	if err != nil {
		return nil, err
	}
	p.Backlog, p.BacklogMore = len(due.Entries), due.More
	p.BacklogProof, err = s.proofBox(ctx, proofs.PathExpirations, data, p.State, due.shown(), "ttld query expirations --prove")
	return p, err
}

// rawRead reads path and data at height (0: the latest) unproven. A page decodes its
// figures from exactly this value, which the browser then checks against the proof.
func (s *Server) rawRead(ctx context.Context, path string, data []byte, height int64) (rawAnswer, error) {
	target, err := proofs.TargetOf(path, data)
	if err != nil {
		return rawAnswer{}, err
	}
	res, err := s.rpc.ABCIQueryWithOptions(ctx, path, data, rpcclient.ABCIQueryOptions{Height: height})
	if err != nil {
		return rawAnswer{}, err
	}
	if res.Response.Code != 0 {
		return rawAnswer{}, fmt.Errorf("%s: query code %d: %s", path, res.Response.Code, res.Response.Log)
	}
	a := rawAnswer{Value: res.Response.Value, Height: res.Response.Height, More: res.Response.Info == proofs.InfoMore}
	if target.Range() {
		if a.Entries, err = proofs.DecodeEntries(a.Value); err != nil {
			return rawAnswer{}, err
		}
		if len(a.Entries) == 0 {
			a.Value = nil // an empty range: the page shows none, which the check proves
		}
	}
	return a, nil
}

// shown is what a page shows of the read: the value's hex, or "" for an absent key or
// an empty range.
func (a rawAnswer) shown() string { return hex.EncodeToString(a.Value) }

func u64(v []byte) (uint64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("a u64 record of %d bytes", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

type blockRow struct {
	Height   int64
	Time     time.Time
	Txs      int
	Proposer string
	AppHash  string
}

type blocksPage struct {
	Blocks        []blockRow
	Older, Newer  int64 // the before= of the next pages; 0: none
	LatestHeight  int64
	FirstListed   int64
	BlocksPerPage int
}

func (s *Server) blocks(r *http.Request) (any, error) {
	ctx := r.Context()
	st, err := s.rpc.Status(ctx)
	if err != nil {
		return nil, err
	}
	latest := st.SyncInfo.LatestBlockHeight
	top := latest
	if v := r.URL.Query().Get("before"); v != "" {
		b, err := strconv.ParseInt(v, 10, 64)
		if err != nil || b < 2 {
			return nil, errBadInput{"before", v, "a height of 2 or more"}
		}
		top = min(b-1, latest)
	}
	p := blocksPage{LatestHeight: latest, BlocksPerPage: BlocksPerPage}
	if top < 1 {
		return p, nil
	}
	bottom := max(1, top-BlocksPerPage+1)
	info, err := s.rpc.BlockchainInfo(ctx, bottom, top)
	if err != nil {
		return nil, err
	}
	for _, m := range info.BlockMetas {
		p.Blocks = append(p.Blocks, blockRow{m.Header.Height, m.Header.Time.UTC(), m.NumTxs, m.Header.ProposerAddress.String(), m.Header.AppHash.String()})
	}
	if bottom > 1 {
		p.Older = bottom
	}
	if top < latest {
		p.Newer = min(latest+1, top+BlocksPerPage+1)
	}
	p.FirstListed = top
	return p, nil
}

type eventRow struct {
	Type  string
	Attrs []attrRow
}

type attrRow struct{ Key, Value string }

type txRow struct {
	Index  int
	Hash   string
	Kind   string
	Signer string
	// SignerIdentity is the signing identity's id (empty for an address signer).
	SignerIdentity string
	Nonce          uint64
	Code           uint32
	CodeName       string
	Fee            uint64
	Log            string
	Events         []eventRow
	Size           int
}

type blockPage struct {
	Height     int64
	Time       time.Time
	Proposer   string
	AppHash    string
	Txs        []txRow
	Events     []eventRow
	Expired    int // documents the block's cleanup deleted
	Prev, Next int64
}

func (s *Server) block(r *http.Request) (any, error) {
	ctx := r.Context()
	v := r.PathValue("height")
	h, err := strconv.ParseInt(v, 10, 64)
	if err != nil || h < 1 {
		return nil, errBadInput{"height", v, "a block height of 1 or more"}
	}
	st, err := s.rpc.Status(ctx)
	if err != nil {
		return nil, err
	}
	if h > st.SyncInfo.LatestBlockHeight {
		return nil, errNotFound{fmt.Sprintf("block %d (the latest is %d)", h, st.SyncInfo.LatestBlockHeight)}
	}
	b, err := s.rpc.Block(ctx, &h)
	if err != nil {
		return nil, err
	}
	res, err := s.rpc.BlockResults(ctx, &h)
	if err != nil {
		return nil, err
	}
	p := blockPage{Height: h, Time: b.Block.Time.UTC(), Proposer: b.Block.ProposerAddress.String(), AppHash: b.Block.AppHash.String(), Prev: h - 1}
	if h < st.SyncInfo.LatestBlockHeight {
		p.Next = h + 1
	}
	ctxRules, err := protocol.ContextFor(protocol.Latest, protocol.BlockTimeMs(b.Block.Time))
	if err != nil {
		return nil, err
	}
	for i, tx := range b.Block.Txs {
		row := txRow{Index: i, Hash: fmt.Sprintf("%X", tx.Hash()), Kind: "undecodable", Size: len(tx)}
		if signed, err := protocol.Decode(tx, ctxRules); err == nil {
			k, _ := protocol.KindOf(signed.Type())
			row.Kind, row.Nonce = k.Name, signed.GetNonce()
			switch sg := signed.Signer(); sg.Kind {
			case protocol.SignerIdentity:
				row.Signer, row.SignerIdentity = sg.Identity.String(), sg.Identity.String()
			default:
				row.Signer = sg.Address().String()
			}
		}
		if i < len(res.TxsResults) {
			tr := res.TxsResults[i]
			row.Code, row.CodeName, row.Fee, row.Log = tr.Code, protocol.Code(tr.Code).String(), uint64(max(tr.GasUsed, 0)), tr.Log
			row.Events = eventRows(tr.Events)
		}
		p.Txs = append(p.Txs, row)
	}
	p.Events = eventRows(res.FinalizeBlockEvents)
	for _, e := range p.Events {
		if e.Type == protocol.EventDocumentExpired {
			p.Expired++
		}
	}
	return p, nil
}

func eventRows(in []abcitypes.Event) []eventRow {
	out := make([]eventRow, 0, len(in))
	for _, e := range in {
		row := eventRow{Type: e.Type}
		for _, a := range e.Attributes {
			row.Attrs = append(row.Attrs, attrRow{a.Key, a.Value})
		}
		out = append(out, row)
	}
	return out
}

type identityPage struct {
	proofBox
	ID      string
	Present bool
	Balance uint64
	Nonce   uint64
	Keys    []string
	Height  int64
}

func (s *Server) identity(r *http.Request) (any, error) {
	id, err := protocol.ParseIdentityID(r.PathValue("id"))
	if err != nil {
		return nil, errBadInput{"identity", r.PathValue("id"), "64 hex digits"}
	}
	// The raw entries, not client.Identity: the page shows them, and the browser checks
	// them against the proven range.
	res, err := s.rpc.ABCIQuery(r.Context(), proofs.PathIdentity, id[:])
	if err != nil {
		return nil, err
	}
	entries, err := proofs.DecodeEntries(res.Response.Value)
	if err != nil {
		return nil, err
	}
	kvs := make([][2][]byte, len(entries))
	for i, e := range entries {
		kvs[i] = [2][]byte{e.Key, e.Value}
	}
	st, present, err := drive.DecodeIdentity(id, kvs)
	if err != nil {
		return nil, err
	}
	p := identityPage{ID: id.String(), Present: present, Balance: st.Balance, Nonce: st.Nonce.Last, Height: res.Response.Height}
	for _, k := range st.Keys {
		p.Keys = append(p.Keys, hex.EncodeToString(k))
	}
	shown := ""
	if present {
		shown = hex.EncodeToString(res.Response.Value)
	}
	p.proofBox, err = s.proofBox(r.Context(), proofs.PathIdentity, id[:], p.Height, shown, "ttld query identity "+id.String()+" --prove")
	return p, err
}

// proofBox is what a page's proof check needs: where its bundle is, the chain, what
// the page shows of the proven value (hex; empty: absence), and whether the build
// carries the WebAssembly check.
type proofBox struct {
	ProofPath, ChainID, Shown, Offline string
	Checkable                          bool
}

// proofBox is the box of the answer to path and data at height, of which the page
// shows shown (hex of the value, or of a range's entries; "" for absence).
func (s *Server) proofBox(ctx context.Context, path string, data []byte, height int64, shown, offline string) (proofBox, error) {
	chainID, err := s.c.ChainID(ctx)
	q := url.Values{"path": {path}, "data": {hex.EncodeToString(data)}, "height": {strconv.FormatInt(height, 10)}}
	return proofBox{ProofPath: "/proof?" + q.Encode(), ChainID: chainID, Shown: shown, Offline: offline, Checkable: s.wasm != nil}, err
}

type addressPage struct {
	proofBox
	Address string
	Present bool
	Balance uint64
	Nonce   uint64
	Changes []client.BalanceChange
	Since   uint64
	Height  int64
}

// AddressChangesBlocks is how far back the address page looks for balance changes.
const AddressChangesBlocks = 10_000

func (s *Server) address(r *http.Request) (any, error) {
	a, err := protocol.ParseAddress(r.PathValue("address"))
	if err != nil {
		return nil, errBadInput{"address", r.PathValue("address"), "40 hex digits"}
	}
	// The raw value, not client.Address: the page shows it, and the browser checks it
	// against the proven one.
	res, err := s.rpc.ABCIQuery(r.Context(), proofs.PathAddress, a[:])
	if err != nil {
		return nil, err
	}
	p := addressPage{Address: a.String(), Height: res.Response.Height}
	if v := res.Response.Value; len(v) > 0 {
		st, err := drive.DecodeAddressState(v)
		if err != nil {
			return nil, err
		}
		p.Present, p.Balance, p.Nonce = true, st.Balance, st.Nonce.Last
	}
	if p.proofBox, err = s.proofBox(r.Context(), proofs.PathAddress, a[:], p.Height, hex.EncodeToString(res.Response.Value), "ttld query address "+a.String()+" --prove"); err != nil {
		return nil, err
	}
	p.Since = uint64(max(1, p.Height-AddressChangesBlocks))
	ch, err := s.c.AddressChanges(r.Context(), a, p.Since, p.Height, false)
	if err != nil {
		return nil, err
	}
	p.Changes = ch.Changes
	return p, nil
}

type indexRow struct {
	Name       string
	Properties string
	Flags      []string
	TimeRange  string
}

type propertyRow struct {
	Name, Type, Required, RefersTo string
	Position                       uint32
}

type typeRow struct {
	Name       string
	TTL        string // "" for none
	Flags      []string
	Properties []propertyRow
	Indices    []indexRow
	Moderators string
}

type contractPage struct {
	proofBox
	ID, Owner  string
	Version    uint32
	Moderators []string
	Types      []typeRow
	Height     int64
	JSON       string
}

func (s *Server) contract(r *http.Request) (any, error) {
	id, err := protocol.ParseContractID(r.PathValue("id"))
	if err != nil {
		return nil, errBadInput{"contract", r.PathValue("id"), "64 hex digits"}
	}
	st, err := s.c.Contract(r.Context(), id, 0, false)
	if err != nil {
		return nil, err
	}
	if !st.Present {
		return nil, errNotFound{"contract " + id.String()}
	}
	p := contractPage{ID: id.String(), Owner: st.Owner.String(), Version: st.Version, Height: st.Height,
		JSON: string(protocol.CanonicalDefinitionJSON(st.Definition()))}
	if m := st.Moderation; m != nil {
		for _, mod := range m.Moderators {
			p.Moderators = append(p.Moderators, mod.String())
		}
	}
	for _, t := range st.DocumentTypes {
		p.Types = append(p.Types, describeType(t))
	}
	// The stored value is the contract's one encoding: what the page shows, re-encoded.
	p.proofBox, err = s.proofBox(r.Context(), proofs.PathContract, id[:], st.Height, hex.EncodeToString(st.Contract.Encode()), "ttld query contract "+id.String()+" --prove")
	return p, err
}

// describeType is a type as the contract page shows it: its ttl as a duration, the
// flags that differ from their defaults, its properties and indexes.
func describeType(t protocol.DocumentType) typeRow {
	row := typeRow{Name: t.Name}
	if t.TTLSeconds > 0 {
		row.TTL = (time.Duration(t.TTLSeconds) * time.Second).String()
	}
	flag := func(on bool, name string) {
		if on {
			row.Flags = append(row.Flags, name)
		}
	}
	flag(!t.DocumentsMutable, "immutable")
	flag(!t.CanBeDeleted, "not deletable by its owner")
	flag(t.Transferable == protocol.TransferableAlways, "transferable")
	flag(t.TradeMode == protocol.TradeModeDirectPurchase, "for sale")
	flag(t.DocumentsKeepHistory, "keeps history")
	flag(t.IndexOnly, "index only")
	flag(t.CreationRestrictionMode == protocol.CreationOwnerOnly, "created by the contract owner only")
	flag(t.CreationRestrictionMode == protocol.CreationNotAllowed, "no creation")
	if a := t.ModeratorAbilities; a != nil && a.Delete {
		m := "moderators delete"
		if a.DeleteWithinSeconds > 0 {
			m += " within " + (time.Duration(a.DeleteWithinSeconds) * time.Second).String()
		}
		if a.DeleteKeepsRecord {
			m += ", keeping a record"
		}
		if a.DeleteRefundsOwner {
			m += ", refunding the owner"
		}
		row.Flags = append(row.Flags, m)
	}
	for _, p := range t.Properties {
		pr := propertyRow{Name: p.Name, Type: p.Type.String(), Position: p.Position}
		if t.IsRequired(p.Name) {
			pr.Required = "required"
		}
		if ref := p.RefersTo; ref != nil {
			pr.RefersTo = ref.Kind.String() + " " + ref.Type
			if ref.Lookup != "" {
				pr.RefersTo += " by " + ref.Lookup
			}
			if ref.Contract != nil {
				pr.RefersTo += " of " + ref.Contract.String()
			}
		}
		row.Properties = append(row.Properties, pr)
	}
	for _, x := range t.Indices {
		ir := indexRow{Name: x.Name}
		var props []string
		for _, ip := range x.Properties {
			dir := "asc"
			if ip.Descending {
				dir = "desc"
			}
			props = append(props, ip.Name+" "+dir)
		}
		ir.Properties = strings.Join(props, ", ")
		for _, f := range []struct {
			on   bool
			name string
		}{{x.Unique, "unique"}, {x.Countable, "countable"}, {x.Ranked, "ranked"}, {x.Summable != "", "sums " + x.Summable}} {
			if f.on {
				ir.Flags = append(ir.Flags, f.name)
			}
		}
		if tr := x.TimeRange; tr != nil {
			ir.TimeRange = fmt.Sprintf("on %s, windows of %s every %s", tr.On, time.Duration(tr.Range)*time.Second, time.Duration(tr.Step)*time.Second)
			if tr.TTL > 0 {
				ir.TimeRange += fmt.Sprintf(", queryable for %s", time.Duration(tr.TTL)*time.Second)
			}
		}
		row.Indices = append(row.Indices, ir)
	}
	return row
}

type docRow struct {
	ID, Owner string
	Revision  uint64
	CreatedAt time.Time
	Data      string
	Expiry    string
}

type documentsPage struct {
	proofBox
	Contract, Type string
	Query          string
	// Next is the query of the next page (startAfter the last document), "" when the
	// page is not full.
	Next      string
	Documents []docRow
	Height    int64
	BlockTime time.Time
}

func (s *Server) documents(r *http.Request) (any, error) {
	c, typeName, err := contractAndType(r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query().Get("q")
	if q == "" {
		q = `{"limit":20}`
	}
	if len(q) > MaxQueryBytes || !json.Valid([]byte(q)) {
		return nil, errBadInput{"q", q, fmt.Sprintf("a document query's JSON of at most %d bytes", MaxQueryBytes)}
	}
	ans, err := s.c.Documents(r.Context(), c, typeName, []byte(q), 0, false)
	if err != nil {
		var qe client.ErrQuery
		switch {
		case errors.As(err, &qe) && qe.Code == proofs.QueryCodeNotFound:
			return nil, errNotFound{fmt.Sprintf("contract %s or its type %q", c, typeName)}
		case errors.As(err, &qe):
			return nil, errBadInput{"q", q, "a query the type's indexes serve: " + qe.Log}
		}
		return nil, err
	}
	at, err := s.c.BlockTime(r.Context(), ans.Height, false)
	if err != nil {
		return nil, err
	}
	p := documentsPage{Contract: c.String(), Type: typeName, Query: q, Height: ans.Height, BlockTime: time.UnixMilli(int64(at)).UTC()}
	// The answer's JSON at the same height: what the list was decoded from, which the
	// browser checks (every document present, none of the ranges read left out).
	data := proofs.DocumentsData(c, typeName, []byte(q))
	raw, err := s.rpc.ABCIQueryWithOptions(r.Context(), proofs.PathDocuments, data, rpcclient.ABCIQueryOptions{Height: ans.Height})
	if err != nil {
		return nil, err
	}
	shown := ""
	if len(ans.Documents) > 0 {
		shown = hex.EncodeToString(raw.Response.Value)
	}
	if n := len(ans.Documents); n > 0 && ans.Query.Limit > 0 && n == int(ans.Query.Limit) {
		p.Next = nextPage(q, ans.Documents[n-1].ID)
	}
	if p.proofBox, err = s.proofBox(r.Context(), proofs.PathDocuments, data, ans.Height, shown, "ttld query documents "+c.String()+" "+typeName+" --prove"); err != nil {
		return nil, err
	}
	for _, d := range ans.Documents {
		row := docRow{ID: d.ID.String(), Owner: d.Owner.String(), Revision: d.Revision, CreatedAt: time.UnixMilli(int64(d.CreatedAt)).UTC(),
			Data: string(client.ReadableDocumentData(ans.Type, d))}
		if exp, ok := ans.Type.ExpiresAtMs(d); ok {
			row.Expiry = expiryText(exp, at)
		}
		p.Documents = append(p.Documents, row)
	}
	return p, nil
}

// nextPage is query q to continue after document last: q with its startAfter set (and
// startAt dropped).
func nextPage(q string, last protocol.DocumentID) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(q), &m) != nil {
		return ""
	}
	delete(m, "startAt")
	m["startAfter"], _ = json.Marshal(last.String())
	out, _ := json.Marshal(m)
	return string(out)
}

// contractAndType reads the {contract} and {type} path values.
func contractAndType(r *http.Request) (protocol.ContractID, string, error) {
	c, err := protocol.ParseContractID(r.PathValue("contract"))
	if err != nil {
		return c, "", errBadInput{"contract", r.PathValue("contract"), "64 hex digits"}
	}
	t := r.PathValue("type")
	if why := protocol.ValidName(t); why != "" {
		return c, "", errBadInput{"document type", t, "a type name: " + why}
	}
	return c, t, nil
}

// expiryText says when a document expires relative to the block time atMs.
func expiryText(expiresMs, atMs uint64) string {
	at := time.UnixMilli(int64(expiresMs)).UTC().Format(time.RFC3339)
	if atMs >= expiresMs {
		return "expired at " + at + ", waiting for cleanup"
	}
	return fmt.Sprintf("expires at %s, in %s", at, (time.Duration(expiresMs-atMs) * time.Millisecond).Round(time.Second))
}

type fieldRow struct{ Name, Value string }

type documentPage struct {
	proofBox
	Contract, Type, ID string
	Present            bool
	Owner              string
	Revision           uint64
	CreatedAt          time.Time
	UpdatedAt          time.Time
	Fields             []fieldRow
	Price              uint64
	TTL                bool
	ExpiresAt          time.Time
	Expired            bool
	Expiry             string
	BlockTime          time.Time
	// Lived is how much of its lifetime the document has used at the block time, in
	// percent (0..100), and LivedX the same in thousandths of the lifetime bar's width.
	Lived, LivedX int
	Height        int64
}

func (s *Server) document(r *http.Request) (any, error) {
	c, typeName, err := contractAndType(r)
	if err != nil {
		return nil, err
	}
	id, err := protocol.ParseDocumentID(r.PathValue("id"))
	if err != nil {
		return nil, errBadInput{"document", r.PathValue("id"), "64 hex digits"}
	}
	st, err := s.c.Document(r.Context(), c, typeName, id, 0, false)
	if err != nil {
		return nil, err
	}
	p := documentPage{Contract: c.String(), Type: typeName, ID: id.String(), Present: st.Present, Height: st.Height,
		BlockTime: time.UnixMilli(int64(st.BlockTimeMs)).UTC()}
	// What the page shows of the document is its encoding (empty: absent), which the
	// browser's check finds at the end of the proven row.
	shown := ""
	if st.Present {
		shown = hex.EncodeToString(st.Document.Encode(st.Type))
	}
	if p.proofBox, err = s.proofBox(r.Context(), proofs.PathDocument, proofs.DocumentData(c, typeName, id), st.Height, shown,
		"ttld query document "+c.String()+" "+typeName+" "+id.String()+" --prove"); err != nil {
		return nil, err
	}
	if !st.Present {
		return p, nil
	}
	p.Owner, p.Revision, p.Price = st.Owner.String(), st.Revision, st.Price
	p.CreatedAt, p.UpdatedAt = time.UnixMilli(int64(st.CreatedAt)).UTC(), time.UnixMilli(int64(st.UpdatedAt)).UTC()
	var data map[string]json.RawMessage
	if err := json.Unmarshal(client.ReadableDocumentData(st.Type, st.Document), &data); err != nil {
		return nil, err
	}
	for _, prop := range st.Type.Properties {
		if v, ok := data[prop.Name]; ok {
			p.Fields = append(p.Fields, fieldRow{prop.Name, string(v)})
		}
	}
	if st.ExpiresAtMs > 0 {
		p.TTL, p.Expired = true, st.Expired
		p.ExpiresAt = time.UnixMilli(int64(st.ExpiresAtMs)).UTC()
		p.Expiry = expiryText(st.ExpiresAtMs, st.BlockTimeMs)
		if life := st.ExpiresAtMs - st.CreatedAt; life > 0 {
			used := min(st.BlockTimeMs, st.ExpiresAtMs) - min(st.BlockTimeMs, st.CreatedAt)
			p.Lived, p.LivedX = int(min(100, used*100/life)), int(min(1000, used*1000/life))
		}
	}
	return p, nil
}

type epochRow struct {
	proofBox
	Index        uint32
	Start        time.Time
	Fees         uint64
	StorageShare uint64
	Proposers    []proposerRow
	Paid         bool
	PaidCredits  uint64
}

type proposerRow struct {
	Address string
	Blocks  uint64
}

type epochsPage struct {
	Current uint32
	LengthS uint64
	Epochs  []epochRow
	Height  int64
}

func (s *Server) epochs(r *http.Request) (any, error) {
	ctx := r.Context()
	pools, err := s.c.Pools(ctx, 0, false)
	if err != nil {
		return nil, err
	}
	p := epochsPage{Current: pools.CurrentEpoch.Index, Height: pools.Height}
	if !pools.Started {
		return p, nil
	}
	// The starts come from the genesis parameters, read once; each epoch's figures
	// from its keys, read raw and checked in the browser.
	g, err := s.rawRead(ctx, proofs.PathKey, drive.GenesisKey(), pools.Height)
	if err != nil {
		return nil, err
	}
	params, err := drive.GetChainParams(client.EntriesKV([]proofs.KV{{Key: drive.GenesisKey(), Value: g.Value}}))
	if err != nil {
		return nil, err
	}
	p.LengthS = params.EpochLengthS
	for i := 0; i < EpochsPerPage && i <= int(p.Current); i++ {
		index := p.Current - uint32(i)
		data := proofs.EpochData(index)
		a, err := s.rawRead(ctx, proofs.PathEpoch, data, pools.Height)
		if err != nil {
			return nil, err
		}
		kv := client.EntriesKV(a.Entries)
		start := protocol.EpochStartMs(params.GenesisTimeMs, params.EpochLengthS, index)
		row := epochRow{Index: index, Start: time.UnixMilli(int64(start)).UTC()}
		if row.Fees, err = drive.GetU64(kv, drive.EpochFeesKey(index)); err != nil {
			return nil, err
		}
		if row.StorageShare, err = drive.GetU64(kv, drive.EpochStorageKey(index)); err != nil {
			return nil, err
		}
		if paid, _ := kv.Get(drive.EpochPaidKey(index)); paid != nil {
			row.Paid = true
			if row.PaidCredits, err = drive.GetU64(kv, drive.EpochPaidKey(index)); err != nil {
				return nil, err
			}
		}
		proposers, err := drive.EpochProposers(kv, index)
		if err != nil {
			return nil, err
		}
		for _, pr := range proposers {
			row.Proposers = append(row.Proposers, proposerRow{strings.ToUpper(hex.EncodeToString(pr.Proposer)), pr.Blocks})
		}
		if row.proofBox, err = s.proofBox(ctx, proofs.PathEpoch, data, a.Height, a.shown(), fmt.Sprintf("ttld query epoch %d --prove", index)); err != nil {
			return nil, err
		}
		p.Epochs = append(p.Epochs, row)
	}
	return p, nil
}

// proof serves, for download and for the browser's check, the bundle of the answer to
// ?path= and ?data= (hex) at ?height= (0 or absent: the latest): any single-key or
// range path of proofs.TargetOf.
func (s *Server) proof(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	path := q.Get("path")
	data, err := hex.DecodeString(q.Get("data"))
	if err != nil || len(data) > MaxProofDataBytes {
		err = errBadInput{"data", q.Get("data"), fmt.Sprintf("at most %d bytes in hex", MaxProofDataBytes)}
	} else if _, terr := proofs.TargetOf(path, data); terr != nil && path != proofs.PathDocuments {
		err = errBadInput{"path", path, "a single-key or range query path and its data, or /documents: " + terr.Error()}
	}
	var height int64
	if v := q.Get("height"); err == nil && v != "" {
		if height, err = strconv.ParseInt(v, 10, 64); err != nil || height < 0 {
			err = errBadInput{"height", v, "a height of 0 (the latest) or more"}
		}
	}
	var raw []byte
	if err == nil {
		raw, err = s.bundle(r.Context(), path, data, height)
	}
	if err != nil {
		s.page("error.html", func(*http.Request) (any, error) { return nil, err })(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="proof.json"`)
	_, _ = w.Write(raw)
}

// bundle reads path and data at height (0: the latest) with a proof and the commit of
// the header after the answer's height, waiting for it to exist, and encodes them as a
// check.Bundle.
func (s *Server) bundle(ctx context.Context, path string, data []byte, height int64) ([]byte, error) {
	res, err := s.rpc.ABCIQueryWithOptions(ctx, path, data, rpcclient.ABCIQueryOptions{Prove: true, Height: height})
	if err != nil {
		return nil, err
	}
	if res.Response.Code != 0 {
		return nil, fmt.Errorf("%s: query code %d: %s", path, res.Response.Code, res.Response.Log)
	}
	next := res.Response.Height + 1
	if _, err := s.c.WaitForHeight(ctx, next); err != nil {
		return nil, err
	}
	commit, err := s.rpc.Commit(ctx, &next)
	if err != nil {
		return nil, err
	}
	chainID, err := s.c.ChainID(ctx)
	if err != nil {
		return nil, err
	}
	return check.Bundle{ChainID: chainID, Path: path, Data: data, Response: res.Response, SignedHeader: &commit.SignedHeader}.Encode()
}

// search sends a typed id to its page: a height, an identity or contract id (64 hex
// digits: the identity when one exists), or an address (40).
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	target := ""
	switch {
	case len(q) == 2*protocol.AddressLen && isHex(q):
		target = "/address/" + strings.ToLower(q)
	case len(q) == 2*protocol.IdentityIDLen && isHex(q):
		target = "/contract/" + strings.ToLower(q)
		if id, err := protocol.ParseIdentityID(strings.ToLower(q)); err == nil {
			if st, err := s.c.Identity(r.Context(), id, 0, false); err == nil && st.Present {
				target = "/identity/" + id.String()
			}
		}
	default:
		if h, err := strconv.ParseInt(q, 10, 64); err == nil && h > 0 {
			target = "/block/" + strconv.FormatInt(h, 10)
		}
	}
	if target == "" {
		s.page("error.html", func(*http.Request) (any, error) {
			return nil, errBadInput{"search", q, "a block height, a 64-hex identity or contract id, or a 40-hex address"}
		})(w, r)
		return
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}
