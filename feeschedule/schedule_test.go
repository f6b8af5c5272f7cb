package feeschedule

import (
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// TestFeeVersion1Pinned pins the first table: the platform's processing figures (its fee
// table: 2,000 per seek, 400 per byte written, 20 per byte loaded, 100 + 300 per hash
// block), our ed25519 check and the perpetual storage price (27,000 per byte). Changing a figure needs a new fee version.
func TestFeeVersion1Pinned(t *testing.T) {
	s, err := For(protocol.V13)
	if err != nil {
		t.Fatal(err)
	}
	want := Processing{SeekCost: 2000, LoadedPerByte: 20, WrittenPerByte: 400, HashBase: 100, HashPerBlock: 300, SignatureVerify: 3000}
	if s.Version != FeeVersion1 || s.Processing != want || s.StoragePerByte != 27000 {
		t.Fatalf("protocol 13 uses %+v", s)
	}
	if _, err := For(protocol.Version(12)); err == nil {
		t.Fatal("a fee table for an unknown protocol version")
	}
}

// TestPerpetualStorageFee: the platform's 27,000 credits per byte added, and an
// overflow refused rather than wrapped.
func TestPerpetualStorageFee(t *testing.T) {
	s, err := For(protocol.V13)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ bytes, want uint64 }{{0, 0}, {1, 27000}, {300, 8_100_000}} {
		if got, err := s.PerpetualStorageFee(c.bytes); err != nil || got != c.want {
			t.Errorf("PerpetualStorageFee(%d) = %d, %v; want %d", c.bytes, got, err, c.want)
		}
	}
	var o ErrOverflow
	if _, err := s.PerpetualStorageFee(math.MaxUint64/27000 + 1); !errors.As(err, &o) {
		t.Errorf("an overflowing storage fee gave %v", err)
	}
	if got, err := s.PerpetualStorageFee(math.MaxUint64 / 27000); err != nil || got != math.MaxUint64/27000*27000 {
		t.Errorf("the largest storage fee gave %d, %v", got, err)
	}
}

// TestProcessingFeeAgainstReference checks the pricing function against a plain
// operation-by-operation sum, with random counts.
func TestProcessingFeeAgainstReference(t *testing.T) {
	s, _ := For(protocol.V13)
	rng := rand.New(rand.NewSource(11))
	for i := 0; i < 10_000; i++ {
		var ops Operations
		var want uint64
		for n := rng.Intn(50); n > 0; n-- {
			switch rng.Intn(5) {
			case 0:
				ops.Seeks++
				want += 2000
			case 1:
				b := uint64(rng.Intn(300))
				ops.BytesLoaded += b
				want += 20 * b
			case 2:
				b := uint64(rng.Intn(300))
				ops.BytesWritten += b
				want += 400 * b
			case 3:
				size := rng.Intn(500)
				ops.HashCalls++
				ops.HashBlocks += HashBlocksOf(size)
				want += 100 + 300*uint64((size+63)/64)
			case 4:
				ops.Signatures++
				want += 3000
			}
		}
		if got := s.ProcessingFee(ops); got != want {
			t.Fatalf("ProcessingFee(%+v) = %d, want %d", ops, got, want)
		}
		if got := s.ProcessingFee(ops.Add(Operations{})); got != want {
			t.Fatal("adding nothing changed the fee")
		}
	}
}

func TestHashBlocksOf(t *testing.T) {
	for n, want := range map[int]uint64{0: 0, 1: 1, 64: 1, 65: 2, 128: 2, 129: 3} {
		if got := HashBlocksOf(n); got != want {
			t.Errorf("HashBlocksOf(%d) = %d, want %d", n, got, want)
		}
	}
}
