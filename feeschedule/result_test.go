package feeschedule

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// TestResultParts: the charge adds every part but refunds; Add sums part by part,
// merging lifetime parts by epochs and refunds by owner in sorted order; an overflow is
// an ErrOverflow and changes nothing.
func TestResultParts(t *testing.T) {
	alice, bob := protocol.IdentityID{1}, protocol.IdentityID{2}
	a := Result{
		Processing: 100, PerpetualStorage: 2000, DeletionPrepay: 30,
		LifetimeStorage: []LifetimeFee{{Epochs: 3, Credits: 7}},
		Refunds:         []Refund{{Owner: bob, PaidIn: 2, StorageFee: 50, Credits: 5}},
		RemovedBytes:    11,
	}
	if c, err := a.Charged(); err != nil || c != 100+2000+30+7 {
		t.Fatalf("charged %d %v", c, err)
	}
	b := Result{
		Processing:      1,
		LifetimeStorage: []LifetimeFee{{Epochs: 40, Credits: 1}, {Epochs: 3, Credits: 2}},
		Refunds:         []Refund{{Owner: alice, PaidIn: 2, StorageFee: 10, Credits: 1}, {Owner: bob, PaidIn: 2, StorageFee: 10, Credits: 1}, {Owner: bob, PaidIn: 1, StorageFee: 7, Credits: 3}},
		RemovedBytes:    1,
	}
	sum, err := a.Add(b)
	if err != nil {
		t.Fatal(err)
	}
	want := Result{
		Processing: 101, PerpetualStorage: 2000, DeletionPrepay: 30,
		LifetimeStorage: []LifetimeFee{{Epochs: 3, Credits: 9}, {Epochs: 40, Credits: 1}},
		Refunds:         []Refund{{Owner: alice, PaidIn: 2, StorageFee: 10, Credits: 1}, {Owner: bob, PaidIn: 1, StorageFee: 7, Credits: 3}, {Owner: bob, PaidIn: 2, StorageFee: 60, Credits: 6}},
		RemovedBytes:    12,
	}
	if !reflect.DeepEqual(sum, want) {
		t.Fatalf("sum %+v, want %+v", sum, want)
	}
	if r, err := sum.RefundTotal(); err != nil || r != 10 {
		t.Fatalf("refunds %d %v", r, err)
	}
	var ov ErrOverflow
	if _, err := (Result{Processing: math.MaxUint64}).Add(Result{Processing: 1}); !errors.As(err, &ov) {
		t.Fatalf("processing overflow: %v", err)
	}
	if _, err := (Result{Processing: math.MaxUint64, DeletionPrepay: 1}).Charged(); !errors.As(err, &ov) {
		t.Fatalf("charge overflow: %v", err)
	}
	if _, err := (Result{LifetimeStorage: []LifetimeFee{{1, math.MaxUint64}}}).Add(Result{LifetimeStorage: []LifetimeFee{{1, 1}}}); !errors.As(err, &ov) {
		t.Fatalf("lifetime overflow: %v", err)
	}
}
