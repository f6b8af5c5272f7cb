package proofs

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// inTarget reports whether key is what t reads: its key, or a key of its range.
func inTarget(t Target, key []byte) bool {
	if !t.Range() {
		return bytes.Equal(t.Key, key)
	}
	return bytes.Compare(key, t.Start) >= 0 && bytes.Compare(key, t.End) < 0
}

// The pool paths read exactly the keys of their kind, built by drive's builders, and
// nothing of the neighbouring kinds.
func TestPoolPathTargets(t *testing.T) {
	proposer := bytes.Repeat([]byte{0xff}, 20)
	every := map[string][]byte{
		"current":        drive.CurrentEpochKey(),
		"storage":        drive.StoragePoolKey(),
		"next-unpaid":    drive.NextUnpaidEpochKey(),
		"fees 6":         drive.EpochFeesKey(6),
		"storage 6":      drive.EpochStorageKey(6),
		"proposer 6":     drive.EpochProposerKey(6, proposer),
		"paid 6":         drive.EpochPaidKey(6),
		"fees 7":         drive.EpochFeesKey(7),
		"paid 5":         drive.EpochPaidKey(5),
		"fees 0":         drive.EpochFeesKey(0),
		"fees max":       drive.EpochFeesKey(1<<32 - 1),
		"refund 0 1":     drive.PendingRefundKey(0, 1),
		"refund 3 4":     drive.PendingRefundKey(3, 4),
		"refund max max": drive.PendingRefundKey(1<<32-1, 1<<32-1),
		"total":          drive.TotalCreditsKey(),
		"supply":         drive.SupplyKey(),
	}
	for _, tc := range []struct {
		path string
		data []byte
		want []string
	}{
		{PathEpoch, EpochData(6), []string{"fees 6", "storage 6", "proposer 6", "paid 6"}},
		{PathEpoch, EpochData(1<<32 - 1), []string{"fees max"}},
		{PathPools, nil, []string{"current", "storage"}},
		{PathPendingRefunds, nil, []string{"refund 0 1", "refund 3 4", "refund max max"}},
		{PathPendingRefunds, PendingRefundsData(0, 2), []string{"refund 3 4", "refund max max"}},
		{PathPendingRefunds, PendingRefundsData(3, 4), []string{"refund 3 4", "refund max max"}},
		{PathTotalCredits, nil, []string{"total"}},
	} {
		target, err := TargetOf(tc.path, tc.data)
		if err != nil {
			t.Fatalf("%s %x: %v", tc.path, tc.data, err)
		}
		want := map[string]bool{}
		for _, n := range tc.want {
			want[n] = true
		}
		for name, key := range every {
			if got := inTarget(target, key); got != want[name] {
				t.Errorf("%s %x: reads %s (%x): %v, want %v", tc.path, tc.data, name, key, got, want[name])
			}
		}
	}
}

func TestPoolPathsRefuseBadData(t *testing.T) {
	for _, tc := range []struct {
		path string
		data []byte
	}{
		{PathEpoch, nil},
		{PathEpoch, []byte{0, 0, 0}},
		{PathEpoch, make([]byte, 8)},
		{PathPools, []byte{0}},
		{PathPendingRefunds, make([]byte, 4)},
		{PathTotalCredits, []byte{1}},
		{PathContract, nil},
		{PathContract, make([]byte, 31)},
	} {
		_, err := TargetOf(tc.path, tc.data)
		var bad ErrBadQuery
		if !errors.As(err, &bad) || bad.Path != tc.path {
			t.Errorf("%s %x: %v, want ErrBadQuery", tc.path, tc.data, err)
		}
	}
}

// PathContract reads the contract's key and nothing else under its prefix.
func TestContractPathTarget(t *testing.T) {
	id := protocol.ContractID{4, 2}
	target, err := TargetOf(PathContract, id[:])
	if err != nil {
		t.Fatal(err)
	}
	if target.Range() || !bytes.Equal(target.Key, drive.ContractKey(id)) {
		t.Fatalf("PathContract reads %+v", target)
	}
	if got, ok := drive.ParseContractKey(target.Key); !ok || got != id {
		t.Fatalf("the key read parses as %v, %v", got, ok)
	}
}
