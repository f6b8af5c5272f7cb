package abci

import (
	"context"
	"errors"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/protocol"
)

// Every block time CometBFT can deliver, and every one it cannot, executes: a time
// before 1970 is read as 1970 and one past 9999 as its last millisecond
// (protocol.MaxBlockTimeMs, docs/STATE.md "Block time"), so no header halts the chain.
// The chain holds a storage fee to spread, so that the epoch change such a time makes
// spreads it over 2,000 epochs.
func TestBlockTimesOutsideTheRange(t *testing.T) {
	maxTime := time.UnixMilli(int64(protocol.MaxBlockTimeMs)).UTC()
	for _, tc := range []struct {
		name string
		at   time.Time
		want uint64 // the block time the application reads, ms
	}{
		{"the last millisecond before 1970", time.Unix(0, 0).Add(-time.Millisecond), 0},
		{"year 1", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), 0},
		{"1970", time.Unix(0, 0), 0},
		{"the last millisecond of 9999", maxTime, protocol.MaxBlockTimeMs},
		{"year 10000", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), protocol.MaxBlockTimeMs},
		{"past int64 milliseconds", time.Unix(1<<62, 0), protocol.MaxBlockTimeMs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newQueryChain(t)
			h.block(tc.at, nil)
			saved, err := h.store.Saved(0)
			if err != nil {
				t.Fatal(err)
			}
			last, _, err := drive.GetLastBlock(saved)
			if err != nil {
				t.Fatal(err)
			}
			if last.TimeMs != tc.want {
				t.Fatalf("the last block's time is %d ms, want %d", last.TimeMs, tc.want)
			}
			// The next block, an hour on, executes too.
			h.block(tc.at.Add(time.Hour), nil)
			if got := protocol.BlockTimeMs(tc.at); got != tc.want {
				t.Fatalf("BlockTimeMs(%s) = %d, want %d", tc.at, got, tc.want)
			}
			if err := h.supplyCheck(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A genesis before 1970 or past 9999 is refused by InitChain with a clear error: its
// blocks' times could not be counted in milliseconds since 1970.
func TestGenesisTimeOutsideTheRange(t *testing.T) {
	for _, at := range []time.Time{
		time.Unix(0, 0).Add(-time.Millisecond),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		h := newHarness(t)
		st := genesis.AppState{EpochTimeLengthS: genesis.DefaultEpochLengthS, Addresses: []genesis.Address{{Address: addr("al").String(), Balance: 1}}}
		_, err := h.app.InitChain(context.Background(), &abcitypes.RequestInitChain{ChainId: testChainID, Time: at, InitialHeight: 1, AppStateBytes: st.Encode()})
		var inv genesis.ErrInvalid
		if !errors.As(err, &inv) {
			t.Fatalf("InitChain at %s: %v, want genesis.ErrInvalid", at, err)
		}
	}
	for _, at := range []time.Time{time.Unix(0, 0), time.UnixMilli(int64(protocol.MaxBlockTimeMs))} {
		if err := genesis.CheckTime(at); err != nil {
			t.Fatalf("genesis at %s: %v", at, err)
		}
	}
}
