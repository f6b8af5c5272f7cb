package drive

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"
)

// An export reads its version through a tree of its own: blocks commit while it runs
// (it holds no lock of the working tree), pruning leaves its version alone until it
// ends, and it gives the version's nodes and root all the same.
func TestExportWhileCommitting(t *testing.T) {
	s, _ := newTestStore(t, 2)
	commit := func(v int) {
		t.Helper()
		for i := range 50 {
			if err := s.Working().Set([]byte(fmt.Sprintf("k%03d", (v*7+i)%120)), []byte(fmt.Sprintf("v%d", v))); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := s.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	for v := 1; v <= 3; v++ {
		commit(v)
	}
	var want []TreeNode
	wantRoot, err := s.Export(2, func(n TreeNode) error {
		want = append(want, n)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	started, resume := make(chan struct{}), make(chan struct{})
	type result struct {
		nodes []TreeNode
		root  []byte
		err   error
	}
	done := make(chan result)
	go func() {
		var r result
		r.root, r.err = s.Export(2, func(n TreeNode) error {
			if len(r.nodes) == 0 {
				close(started)
				<-resume
			}
			r.nodes = append(r.nodes, n)
			return nil
		})
		done <- r
	}()
	<-started
	committed := make(chan struct{})
	go func() {
		for v := 4; v <= 8; v++ {
			commit(v)
		}
		close(committed)
	}()
	select {
	case <-committed:
	case <-time.After(time.Minute):
		t.Fatal("blocks waited for the export")
	}
	close(resume)
	r := <-done
	if r.err != nil || !bytes.Equal(r.root, wantRoot) || len(r.nodes) != len(want) {
		t.Fatalf("export during commits: %d nodes, root %X, %v; want %d, %X", len(r.nodes), r.root, r.err, len(want), wantRoot)
	}
	for i := range want {
		if !bytes.Equal(r.nodes[i].Key, want[i].Key) || !bytes.Equal(r.nodes[i].Value, want[i].Value) || r.nodes[i].Version != want[i].Version || r.nodes[i].Height != want[i].Height {
			t.Fatalf("node %d: %+v, want %+v", i, r.nodes[i], want[i])
		}
	}
	// Released, version 2 goes with the next pruning (in the background).
	commit(9)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := s.Saved(2)
		if errors.As(err, new(ErrVersionNotKept)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("version 2 still kept after the export: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := s.Export(2, func(TreeNode) error { return nil }); !errors.As(err, new(ErrVersionNotKept)) {
		t.Fatalf("export of a pruned version: %v", err)
	}
}
