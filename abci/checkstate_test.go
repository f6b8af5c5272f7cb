package abci

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// checked is one CheckTx answer of a concurrent run, with its place in the serial order.
type checked struct {
	tx       []byte
	code     protocol.Code
	charged  uint64
	position uint64
}

// serialOrder sorts answers into the serial order the check state claims: by position,
// a transaction that staged its writes before those that only read after it.
func serialOrder(answers []checked) {
	sort.SliceStable(answers, func(i, j int) bool {
		if answers[i].position != answers[j].position {
			return answers[i].position < answers[j].position
		}
		return answers[i].code == protocol.CodeOK && answers[j].code != protocol.CodeOK
	})
}

// stateOf lists every key and value of kv, in order.
func stateOf(t *testing.T, kv drive.KV) [][2][]byte {
	t.Helper()
	var out [][2][]byte
	err := kv.Iterate(nil, nil, func(k, v []byte) (bool, error) {
		out = append(out, [2][]byte{append([]byte(nil), k...), append([]byte(nil), v...)})
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// replaySerially runs answers, in their serial order, one at a time through app.CheckTx
// on a plain cache over the saved version (what the check state was before it was
// concurrent), and fails t unless every answer and the final state are the same.
func replaySerially(t *testing.T, h *harness, cs *checkState, answers []checked) {
	t.Helper()
	saved, err := h.store.Saved(0)
	if err != nil {
		t.Fatal(err)
	}
	ref := drive.NewCache(drive.NewMemo(saved))
	serialOrder(answers)
	for i, a := range answers {
		res, err := app.CheckTx(ref, a.tx, app.Judge{LastMs: cs.lastMs, MarginMs: cs.marginMs})
		if err != nil {
			t.Fatal(err)
		}
		if res.Code != a.code || res.Charged != a.charged {
			t.Fatalf("answer %d at position %d: code %s charged %d concurrently, %s charged %d serially (%s)", i, a.position, a.code, a.charged, res.Code, res.Charged, res.Log)
		}
	}
	got, want := stateOf(t, checkReader{cs}), stateOf(t, ref)
	if len(got) != len(want) {
		t.Fatalf("the check state holds %d keys, the serial replay %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i][0], want[i][0]) || !bytes.Equal(got[i][1], want[i][1]) {
			t.Fatalf("key %d: %x = %x concurrently, %x = %x serially", i, got[i][0], got[i][1], want[i][0], want[i][1])
		}
	}
}

// contention is a chain of a few address and identity signers that send to each other,
// some of them too poor to pay more than a few fees, and the transactions they send.
type contention struct {
	h          *harness
	addresses  []string
	identities []string
	txs        [][]byte
}

func newContention(t *testing.T, seed int64) *contention {
	c := &contention{h: newHarness(t)}
	var st genesis.AppState
	for i := 0; i < 6; i++ {
		name := fmt.Sprintf("payer%d", i)
		c.addresses = append(c.addresses, name)
		balance := uint64(1_000_000_000_000)
		if i%2 == 1 {
			balance = 0 // set below, from the fee of a transfer
		}
		st.Addresses = append(st.Addresses, genesis.Address{Address: addr(name).String(), Balance: balance})
	}
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("holder%d", i)
		c.identities = append(c.identities, name)
		balance := uint64(1_000_000_000_000)
		if i%2 == 1 {
			balance = 0
		}
		st.Identities = append(st.Identities, genesis.Identity{ID: genesisIdentityID(name).String(), Balance: balance, Keys: []string{hex.EncodeToString(pub(name))}})
	}
	// The poor pay about three transfers' fees: whether their later transactions pass
	// depends on what the others sent them first.
	fee := transferFee(t)
	for i := range st.Addresses {
		if st.Addresses[i].Balance == 0 {
			st.Addresses[i].Balance = 3 * fee
		}
	}
	for i := range st.Identities {
		if st.Identities[i].Balance == 0 {
			st.Identities[i].Balance = 3 * fee
		}
	}
	c.h.initChain(st)
	c.h.block(genesisTime.Add(time.Second), nil)

	rng := rand.New(rand.NewSource(seed))
	amount := func() uint64 {
		if rng.Intn(10) == 0 {
			return 1_000_000_000_000_000 // more than anyone holds
		}
		return 1 + uint64(rng.Int63n(int64(fee)))
	}
	add := func(line string) {
		tx := c.h.tx(line)
		c.txs = append(c.txs, tx)
		switch rng.Intn(8) {
		case 0: // the same bytes again
			c.txs = append(c.txs, tx)
		case 1: // another transaction with the same nonce
			c.txs = append(c.txs, c.h.tx(line+fmt.Sprintf(" amount=%d", amount())))
		}
	}
	for _, a := range c.addresses {
		for nonce := 1; nonce <= 10; nonce++ {
			switch k := rng.Intn(10); {
			case k < 6:
				add(fmt.Sprintf("address-transfer from=%s nonce=%d to=%s amount=%d", a, nonce, c.addresses[rng.Intn(len(c.addresses))], amount()))
			case k < 9:
				add(fmt.Sprintf("top-up from=%s nonce=%d identity=%s amount=%d", a, nonce, c.identities[rng.Intn(len(c.identities))], amount()))
			default:
				add(fmt.Sprintf("identity-create from=%s nonce=%d amount=%d keys=%s", a, nonce, amount(), a))
			}
		}
	}
	for _, id := range c.identities {
		for nonce := 1; nonce <= 10; nonce++ {
			switch k := rng.Intn(10); {
			case k < 5:
				add(fmt.Sprintf("identity-transfer identity=%s signer=%s nonce=%d to=%s amount=%d", id, id, nonce, c.identities[rng.Intn(len(c.identities))], amount()))
			case k < 9:
				add(fmt.Sprintf("identity-to-address identity=%s signer=%s nonce=%d to=%s amount=%d", id, id, nonce, c.addresses[rng.Intn(len(c.addresses))], amount()))
			default:
				// A contract: a transaction that reads ranges, judged holding the
				// whole check state, among the others.
				add(fmt.Sprintf("contract-create identity=%s signer=%s nonce=%d file=docs/examples/note.json", id, id, nonce))
			}
		}
	}
	rng.Shuffle(len(c.txs), func(i, j int) { c.txs[i], c.txs[j] = c.txs[j], c.txs[i] })
	return c
}

// transferFee is what an address transfer is charged on a fresh chain.
func transferFee(t *testing.T) uint64 {
	h := fundedHarness(t, "alice")
	res := h.checkTx(h.tx("address-transfer from=alice nonce=1 to=bob amount=1"))
	if res.Code != 0 || res.GasWanted <= 0 {
		t.Fatalf("a transfer: code %d fee %d", res.Code, res.GasWanted)
	}
	return uint64(res.GasWanted)
}

// storm sends txs to the check state from workers goroutines at once and returns every
// answer.
func storm(t *testing.T, a *Application, cs *checkState, txs [][]byte, workers int) []checked {
	answers := make([]checked, len(txs))
	onWorkers(len(txs), workers, func(i int) {
		res, position, err := cs.checkTx(txs[i], true, a.signatures)
		if err != nil {
			t.Errorf("tx %d: %v", i, err)
			return
		}
		answers[i] = checked{tx: txs[i], code: res.Code, charged: res.Charged, position: position}
	})
	return answers
}

// TestCheckTxConcurrent: many goroutines send CheckTx at once for signers that overlap
// (address transfers and identity transitions between the same accounts, valid ones,
// duplicates and reused nonces, amounts beyond the balance, contracts among them), while
// others ask the pending nonce and dry runs. Every answer, and the check state after
// them, is what one serial order of the same transactions gives through the serial
// check (app.CheckTx on a cache over the saved version): per signer the accepted nonces
// are each used once, and the balances and the staged writes are the serial replay's.
// After a block of the first accepted, the rest rechecked on the new state answer as the
// serial replay there does. Run it with -race.
func TestCheckTxConcurrent(t *testing.T) {
	for round := int64(0); round < 4; round++ {
		c := newContention(t, round)
		h := c.h
		cs := h.app.check.Load()

		stop := make(chan struct{})
		var readers sync.WaitGroup
		readers.Add(1)
		go func() {
			defer readers.Done()
			c.readWhileSending(t, stop)
		}()
		answers := storm(t, h.app, cs, c.txs, 16)
		close(stop)
		readers.Wait()
		if t.Failed() {
			return
		}
		counts := map[protocol.Code]int{}
		for _, a := range answers {
			counts[a.code]++
		}
		if counts[protocol.CodeOK] == 0 || counts[protocol.CodeInvalidAddressNonce] == 0 || counts[protocol.CodeInvalidIdentityNonce] == 0 || len(counts) < 4 {
			t.Fatalf("round %d: answers by code %v: the run must accept, refuse nonces and refuse balances", round, counts)
		}
		replaySerially(t, h, cs, answers)

		// A block of the first half of what was accepted, in the serial order; the rest
		// is rechecked, one at a time as the mempool does, on the state after it.
		var accepted [][]byte
		for _, a := range answers {
			if a.code == protocol.CodeOK {
				accepted = append(accepted, a.tx)
			}
		}
		half := len(accepted) / 2
		h.block(genesisTime.Add(2*time.Second), accepted[:half])
		cs = h.app.check.Load()
		var rechecked []checked
		for _, tx := range accepted[half:] {
			res, err := h.app.CheckTx(context.Background(), &abcitypes.RequestCheckTx{Tx: tx, Type: abcitypes.CheckTxType_Recheck})
			if err != nil {
				t.Fatal(err)
			}
			rechecked = append(rechecked, checked{tx: tx, code: protocol.Code(res.Code), charged: uint64(res.GasWanted), position: uint64(len(rechecked))})
		}
		replaySerially(t, h, cs, rechecked)
	}
}

// readWhileSending asks the pending nonce of every signer and dry runs until stop:
// the pending nonces never go back, and a dry run never fails inside the node.
func (c *contention) readWhileSending(t *testing.T, stop chan struct{}) {
	last := map[string]uint64{}
	dry := c.h.tx("address-transfer from=payer0 nonce=11 to=payer1 amount=1")
	for {
		select {
		case <-stop:
			return
		default:
		}
		for _, name := range append(append([]string(nil), c.addresses...), c.identities...) {
			data := addr(name)
			key := data[:]
			if name[0] == 'h' {
				id := genesisIdentityID(name)
				key = id[:]
			}
			res, err := c.h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathPendingNonce, Data: key})
			if err != nil || res.Code != 0 {
				t.Errorf("pending nonce of %s: %v %d %s", name, err, res.GetCode(), res.GetLog())
				return
			}
			n := binary.BigEndian.Uint64(res.Value)
			if n < last[name] {
				t.Errorf("the pending nonce of %s went back from %d to %d", name, last[name], n)
				return
			}
			last[name] = n
		}
		res, err := c.h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathDryRun, Data: dry})
		var ans proofs.DryRunAnswer
		if err == nil {
			err = json.Unmarshal(res.Value, &ans)
		}
		if err != nil || ans.Codespace != "" {
			t.Errorf("dry run: %v %+v", err, ans)
			return
		}
	}
}

// TestCheckStateRuns: a run that read a key another transaction staged since is run
// again and sees it; a run that iterates runs holding every shard; positions count the
// transactions that staged writes.
func TestCheckStateRuns(t *testing.T) {
	cs, err := newCheckState(drive.Empty(), func(kv drive.KV) error {
		return genesis.InitChain(kv, genesis.Params{ChainID: testChainID, GenesisTimeMs: protocol.BlockTimeMs(genesisTime), InitialHeight: 1}, genesis.AppState{EpochTimeLengthS: genesis.DefaultEpochLengthS}.Encode())
	}, 0, MempoolLimits{})
	if err != nil {
		t.Fatal(err)
	}
	start := cs.applied.Load()
	k := []byte("counter")
	runs := 0
	// The first run reads k, then another transaction stages it before the first
	// settles: the first runs again, on the new value.
	position, err := cs.judge(func(kv drive.KV) error {
		runs++
		v, err := kv.Get(k)
		if err != nil {
			return err
		}
		if runs == 1 {
			if _, err := cs.judge(func(kv drive.KV) error { return kv.Set(k, []byte{7}) }); err != nil {
				return err
			}
		}
		return kv.Set(k, append(v, 1))
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 2 || position != start+2 {
		t.Fatalf("%d runs, position %d; want 2 runs, position %d", runs, position, start+2)
	}
	if v, _ := (checkReader{cs}).Get(k); !bytes.Equal(v, []byte{7, 1}) {
		t.Fatalf("k = %v, want [7 1]", v)
	}
	var locked []bool
	var seen []string
	if _, err := cs.judge(func(kv drive.KV) error {
		locked = append(locked, kv.(*run).locked)
		return kv.Iterate([]byte("co"), []byte("cp"), func(key, _ []byte) (bool, error) {
			seen = append(seen, string(key))
			return false, nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if len(locked) != 2 || locked[0] || !locked[1] || len(seen) != 1 || seen[0] != "counter" {
		t.Fatalf("an iteration: runs locked %v, saw %q; want a run without locks, one with, and counter", locked, seen)
	}
	if p, _ := cs.judge(func(kv drive.KV) error { _, err := kv.Get(k); return err }); p != start+2 {
		t.Fatalf("a read-only run at position %d; want %d", p, start+2)
	}
}

// failingOnce is a store that fails the first read of one key.
type failingOnce struct {
	drive.KV
	key    []byte
	failed bool
}

var errInjected = errors.New("abci test: an injected storage failure")

func (f *failingOnce) Get(key []byte) ([]byte, error) {
	if !f.failed && bytes.Equal(key, f.key) {
		f.failed = true
		return nil, errInjected
	}
	return f.KV.Get(key)
}

// TestIntakeFailureRefuses: a storage failure while reading a transaction's signer key
// before it is judged (the intake) refuses the transaction as a failure inside the
// node, even when the judgement's own read of the key would succeed.
func TestIntakeFailureRefuses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := genesisIdentityID("gina")
	h.identities["gina"] = id
	h.initChain(genesis.AppState{Identities: []genesis.Identity{{ID: id.String(), Balance: 1_000_000_000, Keys: []string{hex.EncodeToString(pub("gina"))}}}})
	h.block(genesisTime.Add(time.Second), nil)
	saved, err := h.store.Saved(0)
	if err != nil {
		t.Fatal(err)
	}
	base := &failingOnce{KV: drive.NewMemo(saved), key: drive.IdentityKeyKey(id, 0)}
	cs, err := newCheckState(base, nil, 0, MempoolLimits{})
	if err != nil {
		t.Fatal(err)
	}
	tx := h.tx("identity-to-address identity=gina signer=gina nonce=1 to=bob amount=5")
	res, _, err := cs.checkTx(tx, true, h.app.signatures)
	if !errors.Is(err, errInjected) {
		t.Fatalf("checkTx: code %s, error %v; want the intake's storage failure", res.Code, err)
	}
	if cs.accepted.size() != 0 {
		t.Fatal("the transaction was accepted")
	}
}
