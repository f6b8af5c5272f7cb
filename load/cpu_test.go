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
