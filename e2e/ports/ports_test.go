package ports

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestFreeBelowTheEphemeralRange: the ports differ, across calls too, lie below the
// ephemeral range, and each can be bound once returned.
func TestFreeBelowTheEphemeralRange(t *testing.T) {
	seen := map[int]bool{}
	for range 20 {
		ps, err := Free(5)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if seen[p] || p < lowest || p >= min(ephemeralLow(), highest) {
				t.Fatalf("port %d: seen before %v, or outside [%d, %d)", p, seen[p], lowest, min(ephemeralLow(), highest))
			}
			seen[p] = true
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				t.Fatal(err)
			}
			l.Close()
		}
	}
}

// TestFreeSkipsABoundPort: a port someone listens on is never handed out.
func TestFreeSkipsABoundPort(t *testing.T) {
	mu.Lock()
	var busy net.Listener
	for p := lowest; busy == nil; p++ {
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil && !handed[p] {
			busy = l
		}
	}
	bp := busy.Addr().(*net.TCPAddr).Port
	// Every other port but bp is taken from the choice, as if handed out before.
	saved := handed
	handed = map[int]bool{}
	for p := lowest; p < highest; p++ {
		if p != bp {
			handed[p] = true
		}
	}
	mu.Unlock()
	defer func() {
		mu.Lock()
		handed = saved
		mu.Unlock()
		busy.Close()
	}()
	if ps, err := Free(1); err == nil {
		t.Fatalf("handed out %v while %d, the only candidate, is bound", ps, bp)
	}
}

// TestClaimSkipsAPortAnotherHolds: a port whose lock file another test process holds
// (an exclusive lock on another open of it) is not claimed; once let go, it is.
func TestClaimSkipsAPortAnotherHolds(t *testing.T) {
	const p = lowest + 7
	if err := os.MkdirAll(claimDir, 0o777); err != nil {
		t.Fatal(err)
	}
	other, err := os.OpenFile(filepath.Join(claimDir, strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		other.Close()
		t.Skipf("port %d's lock is held already (another test process): %v", p, err)
	}
	if claim(p) {
		t.Fatal("claimed a port another holds")
	}
	other.Close()
	if !claim(p) {
		t.Fatal("a port let go was not claimed")
	}
}
