package web

import (
	"strings"
	"testing"
	"time"
)

// TestRateBins: the block rate is counted over whole bins of whole minutes, as wide as
// keep them at most RateBins, whatever the rate: a bin the blocks read do not cover
// whole, at either end, is left out.
func TestRateBins(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 30, 0, time.UTC)
	// blocks returns n block times every interval from start, newest first.
	blocks := func(n int, interval time.Duration) []time.Time {
		out := make([]time.Time, n)
		for i := range out {
			out[n-1-i] = start.Add(time.Duration(i) * interval)
		}
		return out
	}
	for _, c := range []struct {
		name   string
		times  []time.Time
		width  time.Duration
		bins   int
		perBin int
	}{
		// 600 blocks a second apart: 10 minutes, the first and last partial.
		{"a block a second", blocks(600, time.Second), time.Minute, 9, 60},
		// 600 blocks ten minutes apart: 99 hours 50 minutes from 03:04:30, 16 whole
		// 6-hour bins of 36 blocks.
		{"a block every ten minutes", blocks(600, 10*time.Minute), 6 * time.Hour, 16, 36},
		// 600 blocks ten a second: a minute, no whole bin.
		{"ten blocks a second", blocks(600, 100*time.Millisecond), time.Minute, 0, 0},
	} {
		bins, width := rateBins(c.times)
		if width != c.width || len(bins) != c.bins {
			t.Errorf("%s: %d bins of %s, want %d of %s", c.name, len(bins), width, c.bins, c.width)
			continue
		}
		for _, b := range bins {
			if b.blocks != c.perBin {
				t.Errorf("%s: the bin ending %s holds %d blocks, want %d", c.name, b.end, b.blocks, c.perBin)
			}
			if b.end.After(c.times[0]) || b.end.Add(-width).Before(c.times[len(c.times)-1]) {
				t.Errorf("%s: the bin ending %s is not whole within the blocks read", c.name, b.end)
			}
		}
	}
}

// TestIntegerTicks: a chart's axes are marked at whole numbers written in full, over a
// span of heights in the thousands, of counts from 0 to 1 and within one number.
func TestIntegerTicks(t *testing.T) {
	for _, c := range []struct{ lo, hi float64 }{{1_240, 1_299}, {0, 1}, {0, 0.4}, {3, 3}, {0, 250_000}} {
		ticks := integerTicks{}.Ticks(c.lo, c.hi)
		labels := 0
		for _, tk := range ticks {
			if tk.Value != float64(int64(tk.Value)) || strings.ContainsAny(tk.Label, ".e") {
				t.Errorf("%v..%v: a tick at %v labelled %q", c.lo, c.hi, tk.Value, tk.Label)
			}
			if tk.Label != "" {
				labels++
			}
		}
		if c.hi-c.lo >= 1 && labels < 2 {
			t.Errorf("%v..%v: %d labelled ticks", c.lo, c.hi, labels)
		}
	}
}
