package protocol

import (
	"errors"
	"math"
	"testing"
)

func TestVersionSignalEncoding(t *testing.T) {
	tx := EncodeVersionSignal(V14)
	if len(tx) != VersionSignalLen || !IsVersionSignal(tx) {
		t.Fatalf("signal %x", tx)
	}
	if v, err := DecodeVersionSignal(tx, 0, V13); err != nil || v != V14 {
		t.Fatalf("decoded %d, %v", v, err)
	}
	for _, bad := range [][]byte{{VersionSignalFormat}, {VersionSignalFormat, 0, 0, 14}, append(EncodeVersionSignal(V14), 0)} {
		_, err := DecodeVersionSignal(bad, 3, V13)
		var e ErrInvalidVersionSignal
		if !errors.As(err, &e) || e.Code() != CodeInvalidVersionSignal || e.Position != 3 || e.InForce != V13 {
			t.Errorf("%x: %v", bad, err)
		}
	}
	if IsVersionSignal(nil) || IsVersionSignal([]byte{TxFormat1}) {
		t.Fatal("a transition read as a signal")
	}
}

// Only a proposer adds a signal: Decode, which CheckTx runs, refuses every one with
// its code, however it is formed, before anything else about the bytes.
func TestDecodeRefusesSignals(t *testing.T) {
	ctx, err := ContextFor(V14, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range [][]byte{EncodeVersionSignal(V14), {VersionSignalFormat}, append(EncodeVersionSignal(99), make([]byte, 100)...)} {
		_, err := Decode(tx, ctx)
		if code, _ := CodeOf(err); code != CodeInvalidVersionSignal {
			t.Errorf("%x: %v", tx, err)
		}
	}
}

func TestUpgradeReached(t *testing.T) {
	l, err := LimitsFor(V13)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		signals, blocks uint64
		want            bool
	}{
		{3, 4, true},  // 75%: at the threshold
		{2, 4, false}, // below
		{4, 4, true},
		{0, 1, false},
		{749, 1000, false},
		{750, 1000, true},
		{math.MaxUint64, math.MaxUint64, true}, // no overflow
		{math.MaxUint64 / 4 * 3, math.MaxUint64, false},
	} {
		if got := l.UpgradeReached(c.signals, c.blocks); got != c.want {
			t.Errorf("%d of %d blocks: %v, want %v", c.signals, c.blocks, got, c.want)
		}
	}
}

// A binary built without a link-time limit implements every version this source
// declares, the newest being Latest.
func TestNewest(t *testing.T) {
	if newestLimit != "" {
		t.Skip("built with a link-time limit")
	}
	if Newest() != Latest || !Known(Latest) || Known(Latest+1) {
		t.Fatalf("newest %d, latest %d", Newest(), Latest)
	}
	if vs := Supported(); vs[len(vs)-1] != Newest() {
		t.Fatalf("supported %v", vs)
	}
}
