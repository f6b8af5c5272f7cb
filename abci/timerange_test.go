package abci

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
	"github.com/cosmos/iavl"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/query"
	"github.com/ttld-dev/ttld/sim/invariants"
)

// likesContract: a like of a post lies in the hourly windows of a countable, ranked
// index whose windows are queryable for an hour past their start (overlap 1, trees 4:
// an entry, two count records, a rank; so a write's budget is max(32, 2 × 1 × 4) = 32).
const likesContract = `{"documentSchemas":{"like":{"type":"object","properties":{"post":{"type":"string","maxLength":63,"position":0}},"required":["$createdAt","post"],"additionalProperties":false,"indices":[{"name":"trending","properties":[{"post":"asc"}],"countable":true,"ranked":true,"timeRange":{"on":"$createdAt","range":3600,"step":3600,"ttl":3600}}]}}}`

// likesChain starts a chain of n funded identities and registers likesContract.
func likesChain(t *testing.T, n int) (*harness, []benchIdentity, drive.DocumentType) {
	return likesChainWith(t, n, 0)
}

// likesChainWith is likesChain with epochs of epochS seconds (0: the default).
func likesChainWith(t *testing.T, n int, epochS uint64) (*harness, []benchIdentity, drive.DocumentType) {
	h := newHarness(t)
	ids := make([]benchIdentity, n)
	st := genesis.AppState{ProtocolVersion: protocol.V14, EpochTimeLengthS: epochS}
	for i := range ids {
		var seed [32]byte
		binary.BigEndian.PutUint64(seed[:], uint64(i)+1<<32)
		ids[i].key = ed25519.NewKeyFromSeed(seed[:])
		ids[i].id = protocol.IdentityID(sha256.Sum256(seed[:]))
		st.Identities = append(st.Identities, genesis.Identity{ID: ids[i].id.String(), Balance: 1_000_000_000_000,
			Keys: []string{hex.EncodeToString(ids[i].key.Public().(ed25519.PublicKey))}})
	}
	h.initChain(st)
	owner := &ids[0]
	owner.nonce++
	res := h.block(genesisTime.Add(time.Second), [][]byte{protocol.Sign(testChainID, &protocol.DataContractCreate{Identity: owner.id, Nonce: owner.nonce, Definition: []byte(likesContract)}, owner.key)})
	if res.TxResults[0].Code != 0 {
		t.Fatalf("contract refused: %s", res.TxResults[0].Log)
	}
	c, _, err := drive.GetContract(h.store.Working(), protocol.NewContractID(owner.id, owner.nonce), protocol.V14)
	if err != nil {
		t.Fatal(err)
	}
	dt, _ := c.DocumentType("like")
	return h, ids, drive.DocumentType{Contract: c.ID, DocumentType: dt}
}

// likeActions signs one documents batch of w's: the actions given.
func likeBatch(w *benchIdentity, t drive.DocumentType, actions ...protocol.DocumentAction) []byte {
	w.nonce++
	return protocol.Sign(testChainID, &protocol.DocumentsBatch{Identity: w.id, Nonce: w.nonce, Contract: t.Contract, Actions: actions}, w.key)
}

func likeCreate(t drive.DocumentType, post string, seq uint64) protocol.DocumentAction {
	var entropy [32]byte
	binary.BigEndian.PutUint64(entropy[:], seq)
	return protocol.DocumentAction{Kind: protocol.ActionCreate, Type: t.Name, Entropy: entropy, Data: []byte(fmt.Sprintf(`{"post":%q}`, post))}
}

// windowKeys counts the keys standing in the window of t's trending index at startMs.
func windowKeys(t *testing.T, h *harness, dt drive.DocumentType, startMs uint64) int {
	ix := dt.Indices[0]
	prefix := drive.WindowPrefix(dt.Contract, dt.Name, ix.TimeRange.Grid(), startMs)
	n := 0
	if err := h.store.Working().Iterate(prefix, drive.PrefixEnd(prefix), func(_, _ []byte) (bool, error) { n++; return false, nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestViralWindowDrainsAcrossWrites: a window that took thousands of likes of hundreds
// of posts is drained after its ttl by the writes that follow, at most the budget a
// write earns each time (Time-Range Index TTL: "Large expired buckets drain across writes"; "Each
// grid's per-write drop budget is max(SystemLimits::min_time_range_ttl_drop_operations
// _per_write, 2 × overlap × trees)"), deepest first, and never by a write before its
// ttl has passed. Between writes it stands partly drained, and a user's delete and
// replace of documents with entries in it remove what stands and skip what is gone
// ("Removal walkers skip only paths already removed from expired buckets and delete
// standing entries normally"); CheckDocuments holds after every block.
func TestViralWindowDrainsAcrossWrites(t *testing.T) {
	t.Parallel()
	h, ids, dt := likesChain(t, 20)
	grid := dt.Indices[0].TimeRange.Grid()
	budget := drive.DrainBudget(dt.DocumentType, grid, mustLimits(t))
	if budget != 32 || drive.WindowTrees(dt.DocumentType, grid) != 4 {
		t.Fatalf("budget %d, trees %d; want 32 and 4", budget, drive.WindowTrees(dt.DocumentType, grid))
	}
	// The viral hour: 2,000 likes of 200 posts, 10 to a batch, within the first hour.
	hour := uint64(genesisTime.UnixMilli()) + 3_600_000
	var seq uint64
	var firstLikes []protocol.DocumentID
	for blk := 0; blk < 20; blk++ {
		var txs [][]byte
		for i := range ids {
			var actions []protocol.DocumentAction
			for range 5 {
				seq++
				actions = append(actions, likeCreate(dt, fmt.Sprintf("post-%03d", seq%200), seq))
			}
			txs = append(txs, likeBatch(&ids[i], dt, actions...))
		}
		res := h.block(time.UnixMilli(int64(hour)+int64(blk)*1000+1000), txs)
		for i, r := range res.TxResults {
			if r.Code != 0 {
				t.Fatalf("block %d tx %d: %d %s", blk, i, r.Code, r.Log)
			}
		}
	}
	if err := invariants.CheckDocuments(h.store.Working()); err != nil {
		t.Fatal(err)
	}
	// 2,000 entries, 200 groups' counts and the window's, 200 ranks.
	standing := windowKeys(t, h, dt, hour)
	if standing != 2000+201+200 {
		t.Fatalf("the viral window holds %d keys, want %d", standing, 2000+201+200)
	}
	prefix := drive.DocumentsPrefix(dt.Contract, dt.Name)
	w := &ids[0]
	if err := h.store.Working().Iterate(prefix, drive.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		sd, err := drive.DecodeStoredDocument(k, v, dt.DocumentType)
		if err == nil && sd.Owner == w.id {
			firstLikes = append(firstLikes, sd.ID)
		}
		return len(firstLikes) == 2, err
	}); err != nil {
		t.Fatal(err)
	}

	// At the horizon itself (start + ttl) a write drains nothing: the window is still
	// queryable.
	seq++
	h.block(time.UnixMilli(int64(hour+3_600_000)), [][]byte{likeBatch(w, dt, likeCreate(dt, "late", seq))})
	if got := windowKeys(t, h, dt, hour); got != standing {
		t.Fatalf("a write at the horizon drained %d keys", standing-got)
	}
	// Past it, each write of one document drains at most its budget.
	at := hour + 3_600_000 + 1
	writes := 0
	for standing > 0 {
		at += 1000
		seq++
		var tx []byte
		own := 0 // the write's own entry in the window, which a delete or replace removes if it stands
		switch writes {
		case 5:
			// A delete of a like whose entry the drain may have taken: it removes
			// what stands, the rest is skipped. A delete earns a budget too.
			tx = likeBatch(w, dt, protocol.DocumentAction{Kind: protocol.ActionDelete, Type: dt.Name, ID: firstLikes[0]})
			own = 1
		case 6:
			tx = likeBatch(w, dt, protocol.DocumentAction{Kind: protocol.ActionReplace, Type: dt.Name, ID: firstLikes[1], Revision: 2, Data: []byte(`{"post":"moved"}`)})
			own = 1
		default:
			tx = likeBatch(w, dt, likeCreate(dt, "fresh", seq))
		}
		res := h.block(time.UnixMilli(int64(at)), [][]byte{tx})
		if res.TxResults[0].Code != 0 {
			t.Fatalf("write %d: %d %s", writes, res.TxResults[0].Code, res.TxResults[0].Log)
		}
		writes++
		got := windowKeys(t, h, dt, hour)
		drained := standing - got
		if drained > budget+own || (drained < budget && got > 0) {
			t.Fatalf("write %d drained %d keys of %d standing: the budget is %d", writes, drained, standing, budget)
		}
		standing = got
		if err := invariants.CheckDocuments(h.store.Working()); err != nil {
			t.Fatalf("after write %d: %v", writes, err)
		}
	}
	if want := (2000 + 201 + 200 - 2 + budget - 1) / budget; writes != want {
		t.Fatalf("the window drained in %d writes, want %d", writes, want)
	}
}

func mustLimits(t *testing.T) protocol.Limits {
	l, err := protocol.LimitsFor(protocol.V14)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestVerifierRefusesExpiredWindow: a node that answers for a window past its horizon,
// with every proof sound (the window's entries still stand: no write has drained them),
// is refused by the verifier from the proven block time, as the node itself refuses
// the query (Time-Range Index TTL: "byStart resolution rejects any start past the expiry horizon
// ..., on the server from committed block time and on the verifier from the
// quorum-signed response time_ms — so a node cannot serve an expired window's
// remnants past a verifying client"). The same hand-built answer one block earlier,
// within the horizon, verifies.
func TestVerifierRefusesExpiredWindow(t *testing.T) {
	h, ids, dt := likesChain(t, 2)
	hour := uint64(genesisTime.UnixMilli()) + 3_600_000
	w := &ids[1]
	h.block(time.UnixMilli(int64(hour)+1000), [][]byte{likeBatch(w, dt, likeCreate(dt, "p", 1), likeCreate(dt, "q", 2))})
	data := proofs.DocumentsData(dt.Contract, dt.Name, []byte(fmt.Sprintf(`{"window":{"index":"trending","byStart":%d}}`, hour)))
	// Within the horizon (start + ttl, included), then one block past it with no write.
	h.block(time.UnixMilli(int64(hour+3_600_000)), nil)
	live := h.height
	h.block(time.UnixMilli(int64(hour+3_600_001)), nil)
	past := h.height

	if res := h.query(proofs.PathDocuments, data, past); res.Code != proofs.QueryCodeWindowExpired {
		t.Fatalf("the node answered the expired window: code %d", res.Code)
	}
	for _, c := range []struct {
		height int64
		ok     bool
	}{{live, true}, {past, false}} {
		a, ops := remnantsAnswer(t, h, dt, hour, c.height)
		if len(a.Documents) != 2 {
			t.Fatalf("height %d: %d documents stand in the window", c.height, len(a.Documents))
		}
		_, err := proofs.VerifyDocuments(h.rootAt(c.height), data, a, ops)
		var qe query.ErrInvalid
		switch {
		case c.ok && err != nil:
			t.Fatalf("height %d: the answer within the horizon does not verify: %v", c.height, err)
		case !c.ok && (!errors.As(err, &qe) || qe.Kind != query.WindowExpired):
			t.Fatalf("height %d: the expired window's remnants: %v, want query.WindowExpired", c.height, err)
		}
	}
}

// remnantsAnswer builds, as a node ignoring the horizon would, the answer to a query
// of the whole window at startMs at saved version v: every proof sound.
func remnantsAnswer(t *testing.T, h *harness, dt drive.DocumentType, startMs uint64, v int64) (proofs.DocumentsAnswer, *cmtcrypto.ProofOps) {
	var a proofs.DocumentsAnswer
	var ops []cmtcrypto.ProofOp
	err := h.store.View(v, func(tree *iavl.ImmutableTree) error {
		for _, k := range [][]byte{drive.ProtocolVersionKey(), drive.ContractKey(dt.Contract), drive.LastBlockKey()} {
			val, op, err := proofs.Prove(tree, k)
			if err != nil {
				return err
			}
			ops = append(ops, op.Ops...)
			switch {
			case bytes.Equal(k, drive.ProtocolVersionKey()):
				a.ProtocolVersion = val
			case bytes.Equal(k, drive.LastBlockKey()):
				a.LastBlock = val
			default:
				a.Contract = val
			}
		}
		prefix := drive.WindowEntriesPrefix(dt.Contract, dt.Name, dt.Indices[0].TimeRange.Grid(), startMs, "trending")
		entries, more, rops, err := proofs.ProveRange(tree, prefix, drive.PrefixEnd(prefix), 0)
		if err != nil {
			return err
		}
		a.Ranges = []proofs.RangeAnswer{{Entries: proofs.EncodeEntries(entries), More: more}}
		ops = append(ops, rops.Ops...)
		for _, e := range entries {
			row, op, err := proofs.Prove(tree, drive.DocumentKey(dt.Contract, dt.Name, drive.EntryDocumentID(e.Key)))
			if err != nil {
				return err
			}
			a.Documents = append(a.Documents, row)
			ops = append(ops, op.Ops...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return a, &cmtcrypto.ProofOps{Ops: ops}
}

// TestRankedPageTampered: a ranked page with a group left out, or with the block time
// its window was judged at changed, does not verify; the honest page does.
func TestRankedPageTampered(t *testing.T) {
	h, ids, dt := likesChain(t, 2)
	hour := uint64(genesisTime.UnixMilli()) + 3_600_000
	w := &ids[1]
	h.block(time.UnixMilli(int64(hour)+1000), [][]byte{likeBatch(w, dt, likeCreate(dt, "p", 1), likeCreate(dt, "p", 2), likeCreate(dt, "q", 3))})
	h.block(time.UnixMilli(int64(hour)+2000), nil)
	data := proofs.DocumentsData(dt.Contract, dt.Name, []byte(`{"window":{"index":"trending","newest":true}}`))
	res := h.query(proofs.PathRanked, data, 0)
	a, err := proofs.DecodeRankedAnswer(res.Value)
	if err != nil || res.Code != 0 {
		t.Fatalf("%d %s %v", res.Code, res.Log, err)
	}
	root := h.rootAt(res.Height)
	r, err := proofs.VerifyRanked(root, data, a, res.ProofOps)
	if err != nil || len(r.Groups) != 2 || r.Groups[0].Count != 2 || r.Groups[1].Count != 1 {
		t.Fatalf("the honest page: %+v, %v", r.Groups, err)
	}
	entries, _ := proofs.DecodeEntries(a.Ranks.Entries)
	dropped := a
	dropped.Ranks.Entries = proofs.EncodeEntries(entries[1:])
	if _, err := proofs.VerifyRanked(root, data, dropped, res.ProofOps); err == nil {
		t.Error("a page without its top group verified")
	}
	later := a
	later.LastBlock = drive.EncodeLastBlock(drive.LastBlock{Height: uint64(res.Height), TimeMs: hour + 10*3_600_000})
	if _, err := proofs.VerifyRanked(root, data, later, res.ProofOps); err == nil {
		t.Error("a page judged at a block time the state does not hold verified")
	}
}

// TestEpochSweepAndBacklogMetric: a window nobody writes into after its ttl is drained
// by the epoch changes, 4,096 keys each (max_time_range_sweep_drops_per_epoch), and the
// keys still standing in expired windows show in ttld_app_time_range_expired_keys.
func TestEpochSweepAndBacklogMetric(t *testing.T) {
	t.Parallel()
	h, ids, dt := likesChainWith(t, 20, 3600)
	hour := uint64(genesisTime.UnixMilli()) + 3_600_000
	var seq uint64
	for blk := range 21 { // 4,200 likes of one post: 4,200 entries, 2 counts, a rank
		var txs [][]byte
		for i := range ids {
			var actions []protocol.DocumentAction
			for range 10 {
				seq++
				actions = append(actions, likeCreate(dt, "viral", seq))
			}
			txs = append(txs, likeBatch(&ids[i], dt, actions...))
		}
		h.block(time.UnixMilli(int64(hour)+int64(blk+1)*1000), txs)
	}
	grid := dt.Indices[0].TimeRange.Grid()
	label := fmt.Sprintf("%s/%d/%d/%d", grid.On, grid.Range, grid.Step, grid.Phase)
	gauge := func() float64 {
		return testutil.ToFloat64(h.app.metrics.TimeRangeExpired.WithLabelValues(dt.Contract.String(), dt.Name, label))
	}
	// The next epoch change, an hour on: the window is past its ttl (start + 3600 s).
	res := h.block(time.UnixMilli(int64(hour+3_600_000+1)), nil)
	if got := sweptKeys(res.Events); got != 4096 {
		t.Fatalf("the epoch change swept %d keys, want 4,096", got)
	}
	if left := windowKeys(t, h, dt, hour); left != 4203-4096 || gauge() != float64(left) {
		t.Fatalf("%d keys stand, the metric says %v", left, gauge())
	}
	res = h.block(time.UnixMilli(int64(hour+2*3_600_000+1)), nil)
	if got := sweptKeys(res.Events); got != 107 || windowKeys(t, h, dt, hour) != 0 || gauge() != 0 {
		t.Fatalf("the next epoch change swept %d, the metric says %v", got, gauge())
	}
	if err := invariants.CheckDocuments(h.store.Working()); err != nil {
		t.Fatal(err)
	}
}

func sweptKeys(evs []abcitypes.Event) int {
	for _, e := range evs {
		if e.Type == protocol.EventTimeRangeSweep {
			for _, a := range e.Attributes {
				if a.Key == protocol.AttrRemoved {
					n, _ := strconv.Atoi(a.Value)
					return n
				}
			}
		}
	}
	return -1
}
