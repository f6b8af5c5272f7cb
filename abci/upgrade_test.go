package abci

import (
	"context"
	"errors"
	"testing"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/protocol"
)

// A node whose saved state runs a version its binary does not implement (started
// again on an older binary after its chain moved on) is refused at start, halted, with
// the version and the height of the next block; the store is left as it was.
func TestNewRefusesAStateOnAnUnknownVersion(t *testing.T) {
	h := newHarness(t)
	h.initChain(genesis.AppState{ProtocolVersion: protocol.V14})
	h.block(genesisTime, nil)
	// The chain moved on past this binary: its state says a later version.
	if err := drive.SetProtocolVersion(h.store.Working(), protocol.Newest()+1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.store.Commit(); err != nil {
		t.Fatal(err)
	}
	saved, root := h.store.LastCommit()
	store, err := drive.NewStore(h.db, drive.Options{CacheSize: 1000, KeepRecent: 100})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(store, zerolog.Nop(), nil)
	var need app.ErrUpgradeNeeded
	if !errors.As(err, &need) || need.Version != protocol.Newest()+1 || need.Height != uint64(saved)+1 || need.Newest != protocol.Newest() {
		t.Fatalf("New on a state of version %d: %v", protocol.Newest()+1, err)
	}
	if v, r := store.LastCommit(); v != saved || string(r) != string(root) {
		t.Fatalf("the store moved from %d %x to %d %x", saved, root, v, r)
	}
}

// The genesis sets the headers' app version to the chain's first protocol version, and
// a block that switches it updates it from the next height on (the switch itself:
// testdata/upgrades.txt).
func TestInitChainSetsAppVersion(t *testing.T) {
	for _, v := range []protocol.Version{protocol.V13, protocol.V14} {
		h := newHarness(t)
		res, err := h.app.InitChain(context.Background(), &abcitypes.RequestInitChain{
			Time: genesisTime, ChainId: "ttld-test", InitialHeight: 1, AppStateBytes: genesis.AppState{ProtocolVersion: v, EpochTimeLengthS: genesis.DefaultEpochLengthS}.Encode(),
		})
		if err != nil {
			t.Fatal(err)
		}
		if p := res.ConsensusParams; p == nil || p.Version == nil || p.Version.App != uint64(v) {
			t.Fatalf("genesis on %d: consensus params %+v", v, p)
		}
	}
}
