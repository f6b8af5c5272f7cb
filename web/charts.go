package web

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image/color"
	"net/http"
	"regexp"
	"strings"

	cmttypes "github.com/cometbft/cometbft/types"
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
	latest, err := s.latestHeight(ctx)
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

// rateChart draws the blocks made in each minute the last ChartBlocks blocks span.
func (s *Server) rateChart(r *http.Request) ([]byte, error) {
	metas, err := s.recentMetas(r.Context())
	if err != nil {
		return nil, err
	}
	perMinute := map[int64]float64{}
	first, last := int64(0), int64(0)
	for i, m := range metas {
		minute := m.Header.Time.Unix() / 60
		perMinute[minute]++
		if i == 0 || minute < first {
			first = minute
		}
		last = max(last, minute)
	}
	first = max(first, last-24*60+1) // a day at most: blocks may be days apart
	var rate plotter.XYs
	for m := first; len(metas) > 0 && m <= last; m++ {
		rate = append(rate, plotter.XY{X: float64(m - first), Y: perMinute[m]})
	}
	p := newChart("Blocks per minute", "minutes since the first block drawn", "blocks")
	if err := addLine(p, "blocks", rate, colorSecond); err != nil {
		return nil, err
	}
	return render(p)
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
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	return p
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
