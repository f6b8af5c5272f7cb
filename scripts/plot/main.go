package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Every plot is Width x Height points (1/72 inch) drawn at DPI: 900 x 500 pixels.
const (
	Width  vg.Length = 675
	Height vg.Length = 375
	DPI              = 96
)

// chart is one PNG drawn from one CSV file of docs/bench.
type chart struct {
	input, output string
	columns       []string
	draw          func(rows []row) (*plot.Plot, error)
}

// row is one CSV record by column name.
type row map[string]string

var charts = []chart{
	{"throughput.csv", "throughput.png", []string{"system", "workload", "t_s", "tx_per_s"}, throughput},
	{"cleanup.csv", "cleanup.png", []string{"live_documents", "indexes", "cleanup_ms"}, cleanup},
	{"flood.csv", "backlog.png", []string{"rate", "block", "live", "backlog", "oldest_overdue_s"}, backlog},
}

func main() {
	in := flag.String("in", "docs/bench", "directory of the benchmarks' CSV files")
	out := flag.String("out", "docs", "directory the PNG files are written to")
	flag.Parse()
	if err := run(*in, *out, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "plot:", err)
		os.Exit(1)
	}
}

// run draws every chart whose CSV file is in dir in, into dir out, and says on log what
// it wrote and which inputs it skipped because they are missing.
func run(in, out string, log io.Writer) error {
	for _, c := range charts {
		rows, err := readCSV(filepath.Join(in, c.input), c.columns)
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(log, "skipping %s: no %s\n", c.output, filepath.Join(in, c.input))
			continue
		}
		if err != nil {
			return err
		}
		p, err := c.draw(rows)
		if err != nil {
			return fmt.Errorf("%s: %w", c.input, err)
		}
		path := filepath.Join(out, c.output)
		if err := save(p, path); err != nil {
			return err
		}
		fmt.Fprintf(log, "wrote %s from %d rows of %s\n", path, len(rows), filepath.Join(in, c.input))
	}
	return nil
}

// readCSV reads a CSV file with a header that names at least columns.
func readCSV(path string, columns []string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("%s: no header", path)
	}
	header := map[string]int{}
	for i, name := range records[0] {
		header[name] = i
	}
	for _, c := range columns {
		if _, ok := header[c]; !ok {
			return nil, fmt.Errorf("%s: no column %q (want %v)", path, c, columns)
		}
	}
	rows := make([]row, 0, len(records)-1)
	for _, rec := range records[1:] {
		r := row{}
		for name, i := range header {
			r[name] = rec[i]
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func (r row) number(column string) (float64, error) {
	v, err := strconv.ParseFloat(r[column], 64)
	if err != nil {
		return 0, fmt.Errorf("column %s: %w", column, err)
	}
	return v, nil
}

// series gathers points by a series name, in the order the rows give them.
type series struct {
	names  []string
	points map[string]plotter.XYs
}

func (s *series) add(name string, x, y float64) {
	if s.points == nil {
		s.points = map[string]plotter.XYs{}
	}
	if _, ok := s.points[name]; !ok {
		s.names = append(s.names, name)
	}
	s.points[name] = append(s.points[name], plotter.XY{X: x, Y: y})
}

// gather reads x and y of every row into the series that name gives it.
func gather(rows []row, name func(row) string, x, y string) (*series, error) {
	s := &series{}
	for _, r := range rows {
		xv, err := r.number(x)
		if err != nil {
			return nil, err
		}
		yv, err := r.number(y)
		if err != nil {
			return nil, err
		}
		s.add(name(r), xv, yv)
	}
	if len(s.names) == 0 {
		return nil, errors.New("no rows")
	}
	sort.Strings(s.names)
	return s, nil
}

// throughput draws tx/s over time, one line per system and workload.
func throughput(rows []row) (*plot.Plot, error) {
	s, err := gather(rows, func(r row) string { return r["system"] + " " + r["workload"] }, "t_s", "tx_per_s")
	if err != nil {
		return nil, err
	}
	p := newPlot("Throughput", "time (s)", "transactions/s")
	for i, name := range s.names {
		pts := s.points[name]
		sort.SliceStable(pts, func(a, b int) bool { return pts[a].X < pts[b].X })
		if err := addLine(p, name, pts, i, false); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// cleanup draws every measured cleanup block against the live documents (log scale),
// and a line through the mean of each size measured, one series per index count.
func cleanup(rows []row) (*plot.Plot, error) {
	s, err := gather(rows, func(r row) string { return r["indexes"] }, "live_documents", "cleanup_ms")
	if err != nil {
		return nil, err
	}
	p := newPlot("expire_documents: a block of 128 expiries", "live documents", "cleanup block (ms)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = countTicks{}
	p.Y.Min = 0
	for i, name := range s.names {
		pts := s.points[name]
		for _, pt := range pts {
			if pt.X <= 0 {
				return nil, fmt.Errorf("live_documents %v: a log scale needs counts above 0", pt.X)
			}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle.Color = plotutil.Color(i)
		sc.GlyphStyle.Shape = plotutil.Shape(i)
		p.Add(sc)
		label := name + " indexes"
		if name == "1" {
			label = "1 index"
		}
		if err := addLine(p, label+" (mean)", sizeMeans(pts), i, false); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// countTicks are log-scale ticks labelled as plain counts (1000000, not 1e+06).
type countTicks struct{}

func (countTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.LogTicks{Prec: -1}.Ticks(min, max)
	for i, t := range ticks {
		if t.Label != "" {
			ticks[i].Label = strconv.FormatFloat(t.Value, 'f', -1, 64)
		}
	}
	return ticks
}

// sizeMeans averages the points of each size measured: the state shrinks as a
// benchmark runs, so the live counts of one size spread below it. Points sorted by x
// belong to one size while each is within a factor of 2 of the one before; each size
// is drawn at the mean of its x and of its y.
func sizeMeans(pts plotter.XYs) plotter.XYs {
	sorted := append(plotter.XYs(nil), pts...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].X < sorted[b].X })
	var out plotter.XYs
	var sum plotter.XY
	n := 0
	for i, pt := range sorted {
		if i > 0 && pt.X > 2*sorted[i-1].X {
			out = append(out, plotter.XY{X: sum.X / float64(n), Y: sum.Y / float64(n)})
			sum, n = plotter.XY{}, 0
		}
		sum.X += pt.X
		sum.Y += pt.Y
		n++
	}
	return append(out, plotter.XY{X: sum.X / float64(n), Y: sum.Y / float64(n)})
}

// means averages the y of the points that share an x, in x order.
func means(pts plotter.XYs) plotter.XYs {
	sum, n := map[float64]float64{}, map[float64]int{}
	var xs []float64
	for _, pt := range pts {
		if n[pt.X] == 0 {
			xs = append(xs, pt.X)
		}
		sum[pt.X] += pt.Y
		n[pt.X]++
	}
	sort.Float64s(xs)
	out := make(plotter.XYs, len(xs))
	for i, x := range xs {
		out[i] = plotter.XY{X: x, Y: sum[x] / float64(n[x])}
	}
	return out
}

// backlog draws the live documents (solid) and the backlog (dashed) after each block of
// a flood, one colour per rate; repeated runs of a rate are averaged per block.
func backlog(rows []row) (*plot.Plot, error) {
	live, err := gather(rows, func(r row) string { return r["rate"] }, "block", "live")
	if err != nil {
		return nil, err
	}
	left, err := gather(rows, func(r row) string { return r["rate"] }, "block", "backlog")
	if err != nil {
		return nil, err
	}
	sortNumerically(live.names)
	p := newPlot("A steady flood of one-hour documents", "block", "documents")
	for i, rate := range live.names {
		if err := addLine(p, rate+"/block: live", means(live.points[rate]), i, false); err != nil {
			return nil, err
		}
		if err := addLine(p, rate+"/block: backlog", means(left.points[rate]), i, true); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// sortNumerically orders names that are numbers by value.
func sortNumerically(names []string) {
	sort.SliceStable(names, func(a, b int) bool {
		x, errX := strconv.ParseFloat(names[a], 64)
		y, errY := strconv.ParseFloat(names[b], 64)
		if errX != nil || errY != nil {
			return names[a] < names[b]
		}
		return x < y
	})
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p
}

// addLine adds a line of colour i (dashed when asked) and its legend entry.
func addLine(p *plot.Plot, name string, pts plotter.XYs, i int, dashed bool) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	l.Color = plotutil.Color(i)
	l.Width = vg.Points(1.5)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	}
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

// save writes p as a PNG of Width x Height points at DPI.
func save(p *plot.Plot, path string) error {
	c := vgimg.NewWith(vgimg.UseWH(Width, Height), vgimg.UseDPI(DPI))
	p.Draw(draw.New(c))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
