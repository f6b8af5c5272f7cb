package drive

import (
	"reflect"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

func TestEpochSignals(t *testing.T) {
	kv := NewCache(Empty())
	for _, v := range []protocol.Version{15, 14, 15, 99, 14, 14} {
		if _, err := AddSignal(kv, 3, v); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := GetEpochSignals(kv, 3)
	want := EpochSignals{Counts: []VersionCount{{14, 3}, {15, 2}, {99, 1}}}
	if err != nil || !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v %v %v, want %+v", got, ok, err, want)
	}
	if n := got.AtLeast(15); n != 3 {
		t.Fatalf("at least 15: %d", n)
	}
	got.Blocks = 7
	back, err := DecodeEpochSignals(EncodeEpochSignals(got))
	if err != nil || !reflect.DeepEqual(back, got) {
		t.Fatalf("round trip %+v %v", back, err)
	}
	for _, bad := range [][]byte{nil, make([]byte, 9), append(EncodeEpochSignals(got), EncodeEpochSignals(got)[8:20]...), EncodeEpochSignals(EpochSignals{Counts: []VersionCount{{14, 0}}})} {
		if _, err := DecodeEpochSignals(bad); err == nil {
			t.Errorf("%x decoded", bad)
		}
	}
	if _, err := AddSignal(kv, 4, 14); err != nil {
		t.Fatal(err)
	}
	if err := DeleteSignalsBefore(kv, 4); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := GetEpochSignals(kv, 3); ok {
		t.Fatal("epoch 3's signals kept")
	}
	if _, ok, _ := GetEpochSignals(kv, 4); !ok {
		t.Fatal("epoch 4's signals dropped")
	}
	if _, ok, _ := GetNextVersion(kv); ok {
		t.Fatal("a next version before any was set")
	}
	if err := SetNextVersion(kv, 15); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := GetNextVersion(kv); v != 15 || !ok || err != nil {
		t.Fatalf("next %d %v %v", v, ok, err)
	}
	if e, ok := ParseEpochSignalsKey(EpochSignalsKey(9)); !ok || e != 9 {
		t.Fatal("signals key")
	}
	if _, ok := ParseEpochSignalsKey(NextVersionKey()); ok {
		t.Fatal("next version key read as a signals key")
	}
}
