package web

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image/color"
	"math"
	"net/http"
	"regexp"
	"strings"
	"time"

	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/dustin/go-humanize"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Chart sizes and the span of heights and epochs they draw.
const (
	chartWidth, chartHeight = vg.Length(560), vg.Length(220)
	// ChartBlocks is how many recent blocks the backlog and block charts read.
	ChartBlocks = 60
	// ChartEpochs is how many epochs from the current one the storage chart reads.
	ChartEpochs = 20
)

var (
	colorLine   = color.RGBA{R: 0x1f, G: 0x5f, B: 0xa8, A: 0xff}
	colorSecond = color.RGBA{R: 0xc0, G: 0x4e, B: 0x1a, A: 0xff}
)

// backlogChart draws, over the last ChartBlocks blocks, the expiration backlog each
// block's cleanup left and the documents it deleted (its documents_cleanup event).
func (s *Server) backlogChart(r *http.Request) ([]byte, error) {
	ctx := r.Context()
	latest, err := s.executedHeight(ctx)
	if err != nil {
		return nil, err
	}
	var backlog, removed plotter.XYs
	for h := max(1, latest-ChartBlocks+1); h <= latest; h++ {
		c, err := s.cleanupAt(ctx, h)
		if err != nil {
			return nil, err
		}
		backlog = append(backlog, plotter.XY{X: float64(h), Y: c.Backlog})
		removed = append(removed, plotter.XY{X: float64(h), Y: c.Removed})
	}
	p := newChart("Expiration backlog and documents expired per block", "height", "documents")
	if err := addLine(p, "backlog after the cleanup", backlog, colorLine); err != nil {
		return nil, err
	}
	if err := addLine(p, "expired in the block", removed, colorSecond); err != nil {
		return nil, err
	}
	return render(p)
}

// recentMetas reads the headers of the last ChartBlocks blocks, newest first.
func (s *Server) recentMetas(ctx context.Context) ([]*cmttypes.BlockMeta, error) {
	latest, err := s.latestHeight(ctx)
	if err != nil {
		return nil, err
	}
	return s.metas(ctx, max(1, latest-ChartBlocks+1), latest)
}

// blocksChart draws the transitions of each of the last ChartBlocks blocks.
func (s *Server) blocksChart(r *http.Request) ([]byte, error) {
	metas, err := s.recentMetas(r.Context())
	if err != nil {
		return nil, err
	}
	var txs plotter.XYs
	for _, m := range metas {
		txs = append(txs, plotter.XY{X: float64(m.Header.Height), Y: float64(m.NumTxs)})
	}
	p := newChart("Transitions per block", "height", "transitions")
	if len(txs) > 0 {
		dots, err := plotter.NewScatter(txs)
		if err != nil {
			return nil, err
		}
		dots.Color = colorLine
		p.Add(dots)
	}
	return render(p)
}

// rateChart draws the block rate, in blocks per minute, over whole minutes: the last
// RateBlocks blocks (or all, on a shorter chain) are counted in bins of whole minutes,
// as many minutes each as keep the bins at most RateBins (a fast chain's blocks span
// minutes, a slow one's days), aligned on the clock. Only whole bins are drawn: one that
// starts before the oldest block read, or ends after the newest, would count only part
// of its blocks. The title says the average over all the blocks read.
func (s *Server) rateChart(r *http.Request) ([]byte, error) {
	ctx := r.Context()
	latest, err := s.latestHeight(ctx)
	if err != nil {
		return nil, err
	}
	p := newChart("Blocks per minute", "minutes before the newest block", "blocks per minute")
	if latest < 2 {
		return render(p)
	}
	metas, err := s.metas(ctx, max(1, latest-RateBlocks+1), latest)
	if err != nil {
		return nil, err
	}
	times := make([]time.Time, len(metas))
	for i, m := range metas {
		times[i] = m.Header.Time
	}
	bins, width := rateBins(times)
	newest, oldest := times[0], times[len(times)-1]
	if span := newest.Sub(oldest); span > 0 {
		p.Title.Text = fmt.Sprintf("Blocks per minute, in %d-minute bins (%.1f on average over the last %d blocks)",
			int(width.Minutes()), float64(len(times)-1)/span.Minutes(), len(times))
		if len(bins) == 0 {
			p.Title.Text = fmt.Sprintf("Blocks per minute: %.1f on average over the last %d blocks, no whole minute yet",
				float64(len(times)-1)/span.Minutes(), len(times))
		}
	}
	var rate plotter.XYs
	for _, b := range bins {
		rate = append(rate, plotter.XY{X: -newest.Sub(b.end).Minutes(), Y: float64(b.blocks) / width.Minutes()})
	}
	if err := addLine(p, "blocks per minute over each bin", rate, colorSecond); err != nil {
		return nil, err
	}
	return render(p)
}

// Bounds of the block rate chart.
const (
	// RateBlocks is how many of the latest blocks the rate chart reads at most (their
	// headers stay kept: HeightsCached is larger).
	RateBlocks = 600
	// RateBins is how many bins it draws at most.
	RateBins = 30
)

// rateWidths are the bin widths the rate chart chooses from, each whole minutes.
var rateWidths = []time.Duration{
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// rateBin is a bin of the rate chart: the blocks whose time is in [end-width, end).
type rateBin struct {
	end    time.Time
	blocks int
}

// rateBins counts the blocks of times (newest first) in the whole bins they span, of
// the narrowest width of rateWidths that gives at most RateBins bins (the widest
// otherwise), oldest first.
func rateBins(times []time.Time) ([]rateBin, time.Duration) {
	newest, oldest := times[0], times[len(times)-1]
	width := rateWidths[len(rateWidths)-1]
	for _, w := range rateWidths {
		if newest.Sub(oldest) <= time.Duration(RateBins)*w {
			width = w
			break
		}
	}
	// Bins start on multiples of width; whole ones start at or after the oldest block
	// read and end at or before the newest.
	first := oldest.Truncate(width)
	if first.Before(oldest) {
		first = first.Add(width)
	}
	var bins []rateBin
	for start := first; !start.Add(width).After(newest); start = start.Add(width) {
		bins = append(bins, rateBin{end: start.Add(width)})
	}
	for _, t := range times {
		if i := int(t.Sub(first) / width); !t.Before(first) && i < len(bins) {
			bins[i].blocks++
		}
	}
	return bins, width
}

// storageChart draws the storage fees distributed to each epoch from the current one
// on: what the proposers of the coming epochs will be paid from storage.
func (s *Server) storageChart(r *http.Request) ([]byte, error) {
	ctx := r.Context()
	pools, err := s.c.Pools(ctx, 0, false)
	if err != nil {
		return nil, err
	}
	var share plotter.Values
	for i := uint32(0); i < ChartEpochs; i++ {
		e, err := s.c.Epoch(ctx, pools.CurrentEpoch.Index+i, pools.Height, false)
		if err != nil {
			return nil, err
		}
		share = append(share, float64(e.StorageShare))
	}
	p := newChart(fmt.Sprintf("Storage fees distributed to epochs %d..%d", pools.CurrentEpoch.Index, pools.CurrentEpoch.Index+ChartEpochs-1), "epochs from the current one", "credits")
	bars, err := plotter.NewBarChart(share, vg.Points(18))
	if err != nil {
		return nil, err
	}
	bars.Color = colorLine
	bars.LineStyle.Width = 0
	p.Add(bars)
	return render(p)
}

// executedHeight is the newest height the application has executed and committed,
// whose results CometBFT has saved. The latest height of /status can be one more:
// CometBFT stores a block, and reports it, before it executes it, and saves its results
// once FinalizeBlock has returned.
func (s *Server) executedHeight(ctx context.Context) (int64, error) {
	info, err := s.rpc.ABCIInfo(ctx)
	if err != nil {
		return 0, err
	}
	return info.Response.LastBlockHeight, nil
}

func (s *Server) latestHeight(ctx context.Context) (int64, error) {
	st, err := s.rpc.Status(ctx)
	if err != nil {
		return 0, err
	}
	return st.SyncInfo.LatestBlockHeight, nil
}

func newChart(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.X.Tick.Marker, p.Y.Tick.Marker = integerTicks{}, integerTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	return p
}

// integerTicks marks an axis at whole numbers only, written in full (heights, epochs,
// counts: 1,250, never 1.25e+03 or 0.5): the default ticks that fall on whole numbers,
// or, over a span too short for two of them, every whole number in it.
type integerTicks struct{}

// maxIntegerTicks bounds the whole numbers a short span is marked at.
const maxIntegerTicks = 10

func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi <= lo { // NB: DefaultTicks panics on an empty range
		v := math.Round(lo)
		return []plot.Tick{{Value: v, Label: humanize.Comma(int64(v))}}
	}
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Value == math.Trunc(t.Value) {
			if t.Label != "" {
				t.Label = humanize.Comma(int64(t.Value))
			}
			out = append(out, t)
		}
	}
	if labelled(out) >= 2 {
		return out
	}
	out = out[:0]
	first, last := math.Ceil(lo), math.Floor(hi)
	step := max(1, math.Ceil((last-first+1)/maxIntegerTicks))
	for v := first; v <= last; v += step {
		out = append(out, plot.Tick{Value: v, Label: humanize.Comma(int64(v))})
	}
	return out
}

// labelled counts the major ticks of ts: those with a label.
func labelled(ts []plot.Tick) int {
	n := 0
	for _, t := range ts {
		if t.Label != "" {
			n++
		}
	}
	return n
}

func addLine(p *plot.Plot, name string, pts plotter.XYs, c color.Color) error {
	if len(pts) == 0 {
		return nil
	}
	l, dots, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	l.Color, l.Width = c, vg.Points(1.5)
	dots.Color, dots.Radius = c, vg.Points(1.5)
	p.Add(l, dots)
	p.Legend.Add(name, l)
	return nil
}

// render draws p as SVG whose styles are presentation attributes, so that a chart
// opened on its own draws as it does in a page: the Content-Security-Policy every
// answer carries allows no inline style, and an SVG document is held to it.
func render(p *plot.Plot) ([]byte, error) {
	w, err := p.WriterTo(chartWidth, chartHeight, "svg")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return nil, err
	}
	return styleRE.ReplaceAllFunc(buf.Bytes(), presentation), nil
}

// styleRE matches a style attribute as gonum's SVG writer writes them: declarations of
// properties that SVG also takes as presentation attributes (fill, stroke, its width
// and dashes, and the font's family, variant, weight, style and size).
var styleRE = regexp.MustCompile(`style="([^"]*)"`)

// presentation writes a matched style attribute as one attribute per declaration.
func presentation(style []byte) []byte {
	var attrs []string
	for _, decl := range strings.Split(string(styleRE.FindSubmatch(style)[1]), ";") {
		if name, value, ok := strings.Cut(decl, ":"); ok {
			attrs = append(attrs, strings.TrimSpace(name)+`="`+html.EscapeString(strings.TrimSpace(value))+`"`)
		}
	}
	return []byte(strings.Join(attrs, " "))
}
