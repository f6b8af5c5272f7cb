package drive

import (
	"fmt"
	"testing"
)

func TestVersionChangesAndDiff(t *testing.T) {
	s, _ := newTestStore(t, 0)
	kv := s.Working()
	_ = kv.Set([]byte("a"), []byte("1"))
	_ = kv.Set([]byte("b"), []byte("2"))
	if _, _, err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	_ = kv.Set([]byte("b"), []byte("3")) // changed
	_ = kv.Delete([]byte("a"))           // removed
	_ = kv.Set([]byte("c"), []byte("4")) // added
	_ = kv.Set([]byte("d"), []byte("5"))
	_ = kv.Delete([]byte("d")) // added and removed in one block: no change
	if _, _, err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	got, err := s.VersionChanges(2)
	if err != nil {
		t.Fatal(err)
	}
	want := "[{removed [97] [49] []} {changed [98] [50] [51]} {added [99] [] [52]}]"
	if fmt.Sprint(got) != want {
		t.Fatalf("changes %v\nwant    %v", got, want)
	}
	v1, _ := s.Saved(1)
	v2, _ := s.Saved(2)
	diff, err := Diff(v1, v2)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(diff) != want {
		t.Fatalf("diff %v\nwant %v", diff, want)
	}
}
