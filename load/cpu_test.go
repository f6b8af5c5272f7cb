package load

import (
	"crypto/sha256"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestProcessCPUCountsThisProcess: the CPU time read from /proc grows while this
// process computes, and never by more than the wall time on every core (plus a tick).
func TestProcessCPUCountsThisProcess(t *testing.T) {
	before, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	start := time.Now()
	sum := sha256.Sum256(nil)
	var used time.Duration
	for used < 100*time.Millisecond && time.Since(start) < 10*time.Second {
		for range 10_000 {
			sum = sha256.Sum256(sum[:])
		}
		now, err := ProcessCPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		used = now - before
	}
	wall := time.Since(start)
	if used < 100*time.Millisecond || used > wall*time.Duration(runtime.NumCPU())+time.Second/userHZ {
		t.Fatalf("%s of computing used %s of CPU", wall, used)
	}
	if _, err := ProcessCPU(-1); err == nil {
		t.Fatal("the CPU time of no process was read")
	}
}

// TestPeakRSSCountsThisProcess: the peak resident set of this process grows past a
// buffer it touches, and is read in bytes.
func TestPeakRSSCountsThisProcess(t *testing.T) {
	before, err := PeakRSS(os.Getpid())
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	buf := make([]byte, before+64<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	after, err := PeakRSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after < int64(len(buf)) {
		t.Fatalf("peak resident set %d bytes after touching %d", after, len(buf))
	}
	runtime.KeepAlive(buf)
}
