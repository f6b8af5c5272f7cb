package main

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/rs/zerolog"
)

// TestSetGCPercent: app.toml's gc_percent becomes the garbage collector's target, but
// not when the GOGC environment variable set the process's own.
func TestSetGCPercent(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	setGCPercent(zerolog.Nop(), 250)
	if got := debug.SetGCPercent(100); got != 250 {
		t.Fatalf("without GOGC: the target is %d, want app.toml's 250", got)
	}

	t.Setenv("GOGC", "150")
	setGCPercent(zerolog.Nop(), 250)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set: the target is %d, want it left at 100", got)
	}
}
