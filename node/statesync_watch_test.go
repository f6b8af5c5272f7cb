package node

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	cmtlog "github.com/cometbft/cometbft/libs/log"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/abci"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/sim"
	"github.com/ttld-dev/ttld/snapshot"
)

// sourceSnapshot is a snapshot of a simulated chain after one block, and its chunks.
func sourceSnapshot(t *testing.T) (snapshot.Manifest, [][]byte) {
	t.Helper()
	c, err := sim.Open(dbm.NewMemDB())
	if err != nil {
		t.Fatal(err)
	}
	g := sim.NewGenerator(7, 20)
	if _, err := c.InitChain(g.Genesis(), g.Validators()...); err != nil {
		t.Fatal(err)
	}
	at, txs, err := c.NextBlock(g, 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Block(at, txs); err != nil {
		t.Fatal(err)
	}
	var chunks [][]byte
	m, err := snapshot.Export(c.Store, c.Height, 0, func(_ uint32, chunk []byte) error {
		chunks = append(chunks, chunk)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, chunks
}

// A joining node whose peers all serve a snapshot with a corrupt chunk, as CometBFT's
// syncer drives it: the application refuses the chunk from MaxChunkRefusals senders,
// then the snapshot; the syncer, with no snapshot left, finds none StateSyncGiveUpRounds
// times in a row and the node halts, saying what was refused and what to do. Rounds
// before any offer (peers with no snapshot yet) do not count, nor rounds before the
// last offer.
func TestStateSyncGivesUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, chunks := sourceSnapshot(t)
	home := t.TempDir()
	if _, err := Init(InitOptions{Home: home, ChainID: "statesync-watch", Timeouts: TestTimeouts}); err != nil {
		t.Fatal(err)
	}
	cfg, err := SetStateSync(home, StateSyncTrust{Height: 1, Hash: bytes.Repeat([]byte{1}, 32), RPCServers: []string{"http://127.0.0.1:1", "http://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	store, err := drive.NewStore(dbm.NewMemDB(), drive.Options{CacheSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	app, err := abci.New(store, zerolog.Nop(), nil)
	if err != nil {
		t.Fatal(err)
	}
	app.ServeSnapshots(nil, 0, 0)
	log := watchStateSync(cmtlog.NewNopLogger(), newStateSyncWatch(cfg, "statesync-watch", app)).With("module", "statesync")
	halted := func() bool {
		select {
		case <-app.Halted():
			return true
		default:
			return false
		}
	}
	noSnapshot := func(rounds int) {
		t.Helper()
		for range rounds {
			log.Info(syncerNoSnapshot, "msg", "Discovering snapshots for 15s")
		}
	}

	noSnapshot(2 * StateSyncGiveUpRounds)
	if halted() {
		t.Fatalf("halted before any snapshot was offered: %v", app.HaltErr())
	}
	s := &abcitypes.Snapshot{Height: uint64(m.Height), Format: m.Format, Chunks: uint32(len(chunks)), Hash: m.Hash(), Metadata: m.Encode()}
	if res, err := app.OfferSnapshot(ctx, &abcitypes.RequestOfferSnapshot{Snapshot: s, AppHash: m.Root}); err != nil || res.Result != abcitypes.ResponseOfferSnapshot_ACCEPT {
		t.Fatalf("offer: %v %v", res, err)
	}
	bad := bytes.Clone(chunks[0])
	bad[0] ^= 1
	var res *abcitypes.ResponseApplySnapshotChunk
	for _, sender := range []string{"a", "b", "c"} {
		if res, err = app.ApplySnapshotChunk(ctx, &abcitypes.RequestApplySnapshotChunk{Index: 0, Chunk: bad, Sender: sender}); err != nil {
			t.Fatal(err)
		}
	}
	if res.Result != abcitypes.ResponseApplySnapshotChunk_REJECT_SNAPSHOT {
		t.Fatalf("the third refused chunk: %v", res)
	}
	noSnapshot(StateSyncGiveUpRounds - 1)
	// Another snapshot offered (refused: a format this binary does not restore) starts
	// the count again.
	other := *s
	other.Format = 3
	if res, err := app.OfferSnapshot(ctx, &abcitypes.RequestOfferSnapshot{Snapshot: &other, AppHash: m.Root}); err != nil || res.Result != abcitypes.ResponseOfferSnapshot_REJECT_FORMAT {
		t.Fatalf("offer of format 3: %v %v", res, err)
	}
	noSnapshot(StateSyncGiveUpRounds - 1)
	if halted() {
		t.Fatalf("halted %d rounds after the last offer: %v", StateSyncGiveUpRounds-1, app.HaltErr())
	}
	noSnapshot(1)
	if !halted() {
		t.Fatalf("not halted after %d rounds without a snapshot", StateSyncGiveUpRounds)
	}
	var exhausted ErrStateSyncExhausted
	if !errors.As(app.HaltErr(), &exhausted) || exhausted.Rounds != StateSyncGiveUpRounds || exhausted.Discovery != cfg.StateSync.DiscoveryTime ||
		exhausted.Status != (abci.RestoreStatus{Offered: 2, Refused: 2, ChunksRefused: abci.MaxChunkRefusals}) {
		t.Fatalf("halted with %+v", app.HaltErr())
	}
	if v, _ := store.LastCommit(); v != 0 {
		t.Fatalf("the store holds height %d", v)
	}
	t.Log(app.HaltErr())
}

// The state sync's other ends (the state restored but the node cannot go on from it)
// halt the node too, with CometBFT's error.
func TestStateSyncEndsHalt(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if _, err := Init(InitOptions{Home: home, ChainID: "statesync-watch", Timeouts: TestTimeouts}); err != nil {
		t.Fatal(err)
	}
	cfg, err := readConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	cfg.StateSync.RPCServers = nil
	store, err := drive.NewStore(dbm.NewMemDB(), drive.Options{CacheSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	app, err := abci.New(store, zerolog.Nop(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("disk full")
	watchStateSync(cmtlog.NewNopLogger(), newStateSyncWatch(cfg, "statesync-watch", app)).Error("Failed to bootstrap node with new state", "err", cause)
	select {
	case <-app.Halted():
	case <-time.After(10 * time.Second):
		t.Fatal("not halted")
	}
	var failed ErrStateSyncFailed
	if !errors.As(app.HaltErr(), &failed) || !errors.Is(failed, cause) || len(failed.Servers) != 0 {
		t.Fatalf("halted with %v", app.HaltErr())
	}
}
