package abci

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// queryPaths is every path Query serves, and one it does not.
var queryPaths = []string{
	proofs.PathKey, proofs.PathAddress, proofs.PathIdentity, proofs.PathAddressChangesBlocks,
	proofs.PathAddressChangesCompacted, proofs.PathEpoch, proofs.PathPools, proofs.PathPendingRefunds,
	proofs.PathTotalCredits, proofs.PathContract, proofs.PathDocument, proofs.PathExpirations,
	proofs.PathLifetimePools, proofs.PathRemovals, proofs.PathDocuments, proofs.PathCount,
	proofs.PathSum, proofs.PathRanked, proofs.PathPendingNonce, proofs.PathDryRun, proofs.PathUpgrades, proofs.PathValidators,
	proofs.PathValidatorProposals, proofs.PathMisbehavior, proofs.PathStatistics, "/no-such-path",
}

// queryCodes is every code a query answer may carry (docs/ERRORS.md, "Query codes"),
// QueryCodeInternal left out: it says the node failed, which no request may cause.
var queryCodes = map[uint32]bool{
	0: true, proofs.QueryCodeBadRequest: true, proofs.QueryCodeVersionMissing: true,
	proofs.QueryCodeNotJSON: true, proofs.QueryCodeUnknownField: true, proofs.QueryCodeFieldNotIndexed: true,
	proofs.QueryCodeUnsupportedOperator: true, proofs.QueryCodeWrongValueType: true,
	proofs.QueryCodeLimitTooLarge: true, proofs.QueryCodeBothStarts: true, proofs.QueryCodeNotFound: true,
	proofs.QueryCodeWindowExpired: true,
}

// queryBudget bounds the time of one answer to any request: a request that makes the
// node walk far more than an answer holds is a way to stall it.
const queryBudget = 5 * time.Second

// newQueryChain is a chain with something under every query path: the market
// contract and its listings (unique, countable and summable indexes), likes in a
// ranked time-range index, documents with a ttl and a moderator's removal record.
func newQueryChain(tb testing.TB) *harness {
	h := newHarness(tb)
	var st genesis.AppState
	st.ProtocolVersion = protocol.V14
	for _, n := range []string{"gina", "mona"} {
		h.identities[n] = genesisIdentityID(n)
		st.Identities = append(st.Identities, genesis.Identity{ID: genesisIdentityID(n).String(), Balance: 1_000_000_000_000, Keys: []string{hexKey(n)}})
	}
	st.Addresses = append(st.Addresses, genesis.Address{Address: addr("al").String(), Balance: 1_000_000_000})
	h.initChain(st)
	ok := func(res *abcitypes.ResponseFinalizeBlock) {
		for i, r := range res.TxResults {
			if r.Code != 0 {
				tb.Fatalf("the query chain's block %d: transaction %d refused: %d %s", h.height, i, r.Code, r.Log)
			}
		}
	}
	ok(h.block(genesisTime.Add(time.Second), [][]byte{
		h.tx("contract-create identity=gina signer=gina nonce=1 file=docs/examples/market.json as=market"),
		h.tx("contract-create identity=gina signer=gina nonce=2 file=docs/examples/likes.json as=likes"),
		h.tx(`contract-create identity=gina signer=gina nonce=3 json={"config":{"moderation":{"moderators":["<id:mona>"]}},"documentSchemas":{"story":{"type":"object","ttl":3600,"moderatorAbilities":{"delete":true},"properties":{"caption":{"type":"string","maxLength":63,"position":0}},"required":["$createdAt"],"additionalProperties":false}}} as=site`),
		h.tx("address-transfer from=al nonce=1 to=bo amount=1000"),
	}))
	ok(h.block(genesisTime.Add(2*time.Second), [][]byte{
		h.tx(`doc identity=gina signer=gina nonce=4 contract=market create:listing:lamp:{"sku":"LAMP-1","category":"home","quantity":3,"seller":[7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7]} create:listing:desk:{"sku":"DESK-1","category":"home","quantity":1,"seller":[7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7]}`),
		h.tx(`doc identity=gina signer=gina nonce=5 contract=likes create:like:l1:{"post":"a"} create:like:l2:{"post":"b"}`),
		h.tx(`doc identity=gina signer=gina nonce=6 contract=site create:story:s1:{"caption":"morning"} create:story:s2:{"caption":"noon"}`),
	}))
	ok(h.block(genesisTime.Add(3*time.Second), [][]byte{
		h.tx("doc identity=mona signer=mona nonce=1 contract=site moderate-delete:story:s1:spam"),
	}))
	return h
}

// hexKey is the hex public key of a scenario key name, as genesis takes it.
func hexKey(name string) string { return hex.EncodeToString(pub(name)) }

// queryOnce asks Query, failing the test on a panic, an error, a code outside
// queryCodes or an answer over queryBudget.
func queryOnce(t *testing.T, h *harness, req *abcitypes.RequestQuery) *abcitypes.ResponseQuery {
	t.Helper()
	start := time.Now()
	var res *abcitypes.ResponseQuery
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("query %s data %x height %d: panic: %v", req.Path, req.Data, req.Height, r)
			}
		}()
		res, err = h.app.Query(context.Background(), req)
	}()
	if took := time.Since(start); took > queryBudget {
		t.Fatalf("query %s data %x height %d: answered in %v, over %v", req.Path, req.Data, req.Height, took, queryBudget)
	}
	if err != nil {
		t.Fatalf("query %s data %x height %d: %v", req.Path, req.Data, req.Height, err)
	}
	if !queryCodes[res.Code] {
		t.Fatalf("query %s data %x height %d: code %d (%s)", req.Path, req.Data, req.Height, res.Code, res.Log)
	}
	if req.Path == proofs.PathDryRun && res.Code == 0 {
		var ans proofs.DryRunAnswer
		if err := json.Unmarshal(res.Value, &ans); err != nil || ans.Codespace != "" {
			t.Fatalf("dry run of %x: %s (%v)", req.Data, res.Value, err)
		}
	}
	return res
}

// A type or index name of any length a length byte can state (255 bytes included)
// gets a query code: the length is read as a number, never wrapped in a byte.
func TestQueryNameAtLengthLimit(t *testing.T) {
	h := newQueryChain(t)
	c := h.contracts["market"]
	for _, n := range []int{254, 255} {
		long := strings.Repeat("t", n)
		for _, tc := range []struct {
			path string
			data []byte
			want uint32
		}{
			{proofs.PathDocuments, proofs.DocumentsData(c, long, []byte(`{}`)), proofs.QueryCodeNotFound},
			{proofs.PathRanked, proofs.DocumentsData(c, long, []byte(`{}`)), proofs.QueryCodeNotFound},
			{proofs.PathCount, proofs.CountData(c, long, "", nil), proofs.QueryCodeNotFound},
			{proofs.PathSum, proofs.CountData(c, long, "", nil), proofs.QueryCodeNotFound},
			{proofs.PathCount, proofs.CountData(c, "listing", long, nil), proofs.QueryCodeFieldNotIndexed},
			{proofs.PathSum, proofs.CountData(c, "listing", long, nil), proofs.QueryCodeFieldNotIndexed},
			{proofs.PathDocument, proofs.DocumentData(c, long, protocol.DocumentID{1}), 0},
			{proofs.PathRemovals, proofs.RemovalsData(c, long, nil), 0},
			// The name's length byte says more than follows.
			{proofs.PathDocuments, proofs.DocumentsData(c, long, nil)[:protocol.ContractIDLen+n], proofs.QueryCodeBadRequest},
			{proofs.PathCount, proofs.CountData(c, "listing", long, nil)[:protocol.ContractIDLen+1+len("listing")+n], proofs.QueryCodeBadRequest},
		} {
			res := queryOnce(t, h, &abcitypes.RequestQuery{Path: tc.path, Data: tc.data, Prove: true})
			if res.Code != tc.want {
				t.Errorf("%s with a %d-byte name: code %d (%s), want %d", tc.path, n, res.Code, res.Log, tc.want)
			}
		}
	}
}

// An expirations cursor past until names an empty range: a bad request, not a failure
// of the node.
func TestQueryEmptyRange(t *testing.T) {
	h := newQueryChain(t)
	res := queryOnce(t, h, &abcitypes.RequestQuery{Path: proofs.PathExpirations, Data: proofs.ExpirationsData(1000, &drive.ExpirationEntry{ExpiresAtMs: 2000}), Prove: true})
	if res.Code != proofs.QueryCodeBadRequest {
		t.Fatalf("code %d (%s), want %d", res.Code, res.Log, proofs.QueryCodeBadRequest)
	}
	res = queryOnce(t, h, &abcitypes.RequestQuery{Path: proofs.PathExpirations, Data: proofs.ExpirationsData(2000, &drive.ExpirationEntry{ExpiresAtMs: 2000}), Prove: true})
	if res.Code != 0 {
		t.Fatalf("a cursor at until: code %d (%s), want 0", res.Code, res.Log)
	}
}

// FuzzQueryPaths: any bytes on any path, at any height, with or without a proof, get
// an answer with a query code, never a panic, an error or the internal code, within
// queryBudget. `make fuzz` runs it; `go test` runs its seeds.
func FuzzQueryPaths(f *testing.F) {
	h := newQueryChain(f)
	market, likes, site := h.contracts["market"], h.contracts["likes"], h.contracts["site"]
	alAddr, gina := addr("al"), h.identities["gina"]
	seeds := map[string][][]byte{
		proofs.PathKey:                     {{0x00}, {0xff, 0xff}},
		proofs.PathAddress:                 {alAddr[:]},
		proofs.PathIdentity:                {gina[:]},
		proofs.PathAddressChangesBlocks:    {proofs.SinceData(1)},
		proofs.PathAddressChangesCompacted: {proofs.SinceData(0)},
		proofs.PathEpoch:                   {proofs.EpochData(0), proofs.EpochData(1<<32 - 1)},
		proofs.PathPools:                   {nil},
		proofs.PathPendingRefunds:          {nil, proofs.PendingRefundsData(0, 1)},
		proofs.PathTotalCredits:            {nil},
		proofs.PathContract:                {market[:]},
		proofs.PathDocument:                {proofs.DocumentData(market, "listing", h.document("lamp")), proofs.DocumentRevisionData(market, "listing", h.document("lamp"), 1)},
		proofs.PathExpirations:             {proofs.ExpirationsData(1<<63, nil)},
		proofs.PathLifetimePools:           {nil},
		proofs.PathUpgrades:                {nil},
		proofs.PathValidators:              {nil},
		proofs.PathValidatorProposals:      {nil, binary.BigEndian.AppendUint64(nil, 2)},
		proofs.PathMisbehavior:             {nil, make([]byte, protocol.ConsensusAddressLen)},
		proofs.PathRemovals:                {proofs.RemovalsData(site, "", nil), proofs.RemovalsData(site, "story", nil)},
		proofs.PathDocuments: {
			proofs.DocumentsData(market, "listing", []byte(`{"where":[["category","==","home"]],"orderBy":[["category","asc"]],"limit":10}`)),
			proofs.DocumentsData(likes, "like", []byte(`{"index":"trending","window":{"newest":true},"where":[["post","==","a"]]}`)),
		},
		proofs.PathCount: {proofs.CountData(market, "listing", "", []byte(`{"where":[["category","==","home"]]}`))},
		proofs.PathSum:   {proofs.CountData(market, "listing", "", nil)},
		proofs.PathRanked: {
			proofs.DocumentsData(likes, "like", []byte(`{"index":"trending","window":{"newest":true},"limit":5}`)),
		},
		proofs.PathPendingNonce: {alAddr[:], gina[:]},
		proofs.PathDryRun:       {h.tx("address-transfer from=al nonce=2 to=bo amount=5")},
	}
	for i, p := range queryPaths {
		for _, d := range seeds[p] {
			f.Add(uint8(i), d, int64(0), true)
		}
		f.Add(uint8(i), []byte{}, int64(-1), false)
		f.Add(uint8(i), []byte{0xff}, int64(h.height+1), true)
	}
	f.Fuzz(func(t *testing.T, path uint8, data []byte, height int64, prove bool) {
		req := &abcitypes.RequestQuery{Path: queryPaths[int(path)%len(queryPaths)], Data: data, Height: height, Prove: prove}
		queryOnce(t, h, req)
		// The same bytes under a long name: a length byte of 255 and whatever follows.
		if len(data) > protocol.ContractIDLen {
			long := append(append(append([]byte(nil), data[:protocol.ContractIDLen]...), 0xff), data[protocol.ContractIDLen:]...)
			queryOnce(t, h, &abcitypes.RequestQuery{Path: req.Path, Data: long, Height: height, Prove: prove})
		}
	})
}
