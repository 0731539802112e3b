package bench_test

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The plot is drawn with gonum.org/v1/plot: six grouped bar charts in a 3x2 grid under a
// title and a legend of the ways; the last row is the sharding comparison, whose bars
// are replicas, with a legend of their own.

// plotWidth and plotHeight are the size of the PNG in pixels at plotDPI.
const plotWidth, plotHeight, plotDPI = 1400, 1380, 96

// replicaColors is the fill of the bars of each replica of the sharding panels, in the
// order of shardReplicaNames.
var replicaColors = []color.RGBA{
	{0x94, 0x67, 0xbd, 0xff},
	{0x8c, 0x56, 0x4b, 0xff},
	{0xe3, 0x77, 0xc2, 0xff},
}

// wayColors is the fill of each way's bars.
var wayColors = map[way]color.RGBA{
	naiveSSA:       {0xd6, 0x27, 0x28, 0xff},
	sdkApplier:     {0x2c, 0xa0, 0x2c, 0xff},
	createOrUpdate: {0x1f, 0x77, 0xb4, 0xff},
}

// sans is the typeface of every text of the plot: Liberation Sans, which gonum plot
// embeds.
const sans font.Variant = "Sans"

// pixels converts a length in pixels of the PNG to a vg.Length.
func pixels(n float64) vg.Length { return vg.Length(n) * vg.Inch / plotDPI }

// panel is one grouped bar chart: one group per label along x, in each one bar per
// series (per way, unless series is set).
type panel struct {
	title, yLabel string
	groups        []string
	// series names the bars of each group and their colour, shown in a legend of the
	// panel; nil means one bar per way, in wayColors, with the header's legend.
	series []series
	// values[g][i] is the value of series i (ways[i]) in group g; NaN is no bar,
	// labelled n/a unless missing is true, when it is left out silently.
	values  [][]float64
	missing bool
	// target, when positive, is drawn as a dashed horizontal line at that value.
	target float64
	// format renders a value above its bar.
	format func(float64) string
}

// series is one bar of every group of a panel.
type series struct {
	name  string
	color color.RGBA
}

// bars is the panel's series: its own, or the ways.
func (pn panel) bars() []series {
	if pn.series != nil {
		return pn.series
	}
	out := make([]series, len(ways))
	for i, wy := range ways {
		out[i] = series{string(wy), wayColors[wy]}
	}
	return out
}

// writePlot draws four bar charts, one bar per way: requests per converged pass,
// kube-apiserver CPU per converged pass and requests to converge (grouped by number of
// owners), and the operator heap (grouped by number of unrelated objects); and two of
// the sharding comparison, one bar per replica grouped by way: the CR watch events and
// the CR cache heap of each replica as a percentage of the single replica's, with the
// 40% target. It writes them as a plotWidth x plotHeight PNG to path.
func writePlot(path string, results []result, heap []heapResult, shards []shardResult) error {
	c := vgimg.NewWith(vgimg.UseWH(pixels(plotWidth), pixels(plotHeight)), vgimg.UseDPI(plotDPI),
		vgimg.UseBackgroundColor(color.White))
	dc := draw.New(c)
	if err := drawHeader(dc, "reconciler-sdk: one workload, three ways, one envtest run"); err != nil {
		return err
	}
	tiles := draw.Tiles{Rows: 3, Cols: 2, PadTop: pixels(90), PadBottom: pixels(10), PadLeft: pixels(10),
		PadRight: pixels(20), PadX: pixels(40), PadY: pixels(30)}
	for i, pn := range append(plotPanels(results, heap), shardPanels(shards)...) {
		p, err := pn.plot()
		if err != nil {
			return fmt.Errorf("plot %q: %w", pn.title, err)
		}
		p.Draw(tiles.At(dc, i%2, i/2))
	}

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// plotPanels lays the results out as the four panels, in reading order.
func plotPanels(results []result, heap []heapResult) []panel {
	var owners []int
	byOwners := map[int]map[way]result{}
	for _, r := range results {
		if byOwners[r.owners] == nil {
			byOwners[r.owners] = map[way]result{}
			owners = append(owners, r.owners)
		}
		byOwners[r.owners][r.way] = r
	}
	groups := make([]string, len(owners))
	for i, n := range owners {
		groups[i] = fmt.Sprintf("%d owners", n)
	}
	series := func(f func(result) float64) [][]float64 {
		out := make([][]float64, len(owners))
		for i, n := range owners {
			for _, wy := range ways {
				out[i] = append(out[i], f(byOwners[n][wy]))
			}
		}
		return out
	}
	integer := func(v float64) string { return fmt.Sprintf("%.0f", v) }

	var heapGroups []string
	var heapValues [][]float64
	if len(heap) > 0 {
		heapGroups = []string{fmt.Sprintf("%d unrelated", 2*heap[0].unrelated), fmt.Sprintf("%d unrelated", 20*heap[0].unrelated)}
		heapValues = make([][]float64, 2)
		for _, hr := range heap {
			heapValues[0] = append(heapValues[0], float64(hr.base)/(1<<20))
			heapValues[1] = append(heapValues[1], float64(hr.grown)/(1<<20))
		}
	}
	return []panel{
		{title: "API requests per converged pass", yLabel: "requests", groups: groups,
			values: series(func(r result) float64 { return r.passRequests }), format: num},
		{title: "kube-apiserver CPU per converged pass", yLabel: "CPU ms", groups: groups,
			values: series(func(r result) float64 { return r.apiserverCPU * 1000 }), format: integer},
		{title: "API requests to converge from creation", yLabel: "requests", groups: groups,
			values: series(func(r result) float64 { return float64(r.convergeRequests) }), format: integer},
		{title: "Operator heap", yLabel: "MiB", groups: heapGroups, values: heapValues,
			format: func(v float64) string { return fmt.Sprintf("%.1f", v) }},
	}
}

// shardPanels lays the sharding comparison out as two panels: per way, the CR watch
// events and the CR cache heap of each replica, as a percentage of the single
// replica's.
func shardPanels(shards []shardResult) []panel {
	single := singleReplica(shards)
	var groups []string
	var events, heap [][]float64
	for _, w := range shardWays {
		evs, hs := make([]float64, len(shardReplicaNames)), make([]float64, len(shardReplicaNames))
		for i := range evs {
			evs[i], hs[i] = math.NaN(), math.NaN()
		}
		found := false
		for _, r := range shards {
			if i := slices.Index(shardReplicaNames, r.replica); r.way == w && i >= 0 {
				evs[i], hs[i] = pct(r.watchEvents, single.watchEvents), pct(r.heap, single.heap)
				found = true
			}
		}
		if found {
			groups = append(groups, strings.TrimPrefix(string(w), "3 replicas, "))
			events, heap = append(events, evs), append(heap, hs)
		}
	}
	ss := make([]series, len(shardReplicaNames))
	for i, name := range shardReplicaNames {
		ss[i] = series{"replica " + strings.TrimPrefix(name, shardFieldManager+"-"), replicaColors[i]}
	}
	format := func(v float64) string { return fmt.Sprintf("%.0f%%", v) }
	return []panel{
		{title: "Sharding: CR watch events per replica", yLabel: "% of 1 replica", groups: groups, series: ss,
			values: events, missing: true, target: 40, format: format},
		{title: "Sharding: CR cache heap per replica", yLabel: "% of 1 replica", groups: groups, series: ss,
			values: heap, missing: true, target: 40, format: format},
	}
}

// pct is v as a percentage of of; NaN when of is not positive.
func pct(v, of int64) float64 {
	if of <= 0 {
		return math.NaN()
	}
	return 100 * float64(v) / float64(of)
}

// drawHeader writes the title at the top left of dc and the legend of the ways at its
// top right.
func drawHeader(dc draw.Canvas, title string) error {
	sty := plot.New().Title.TextStyle
	sty.Font.Size, sty.Font.Variant = vg.Points(18), sans
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
	dc.FillText(sty, vg.Point{X: dc.Min.X + pixels(20), Y: dc.Max.Y - pixels(20)}, title)

	l := plot.NewLegend()
	l.Top = true
	l.XOffs, l.YOffs = -pixels(20), -pixels(10)
	l.TextStyle.Font.Size, l.TextStyle.Font.Variant = vg.Points(11), sans
	l.ThumbnailWidth = pixels(28)
	l.Padding = pixels(4)
	for _, wy := range ways {
		swatch, err := plotter.NewBarChart(plotter.Values{1}, 1)
		if err != nil {
			return err
		}
		swatch.Color = wayColors[wy]
		swatch.LineStyle.Width = 0
		l.Add(string(wy), swatch)
	}
	l.Draw(dc)
	return nil
}

// plot builds the panel's chart: bars of each way side by side in each group, the value
// above each bar, horizontal grid lines, and the y axis from zero.
func (pn panel) plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pn.title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Y.Label.Text = pn.yLabel
	for _, f := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font} {
		f.Variant = sans
	}
	p.Y.Min, p.Y.Max = 0, 1
	if len(pn.groups) == 0 {
		p.NominalX("no measurement")
		return p, nil
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid)

	barW := pixels(64)
	if pn.series != nil {
		barW = pixels(40) // a group of the sharding panels holds three replicas' bars
	}
	maxV := pn.target
	all := pn.bars()
	for i, se := range all {
		vals := make(plotter.Values, len(pn.groups))
		var labels plotter.XYLabels
		for g := range pn.groups {
			v := pn.values[g][i]
			switch {
			case !math.IsNaN(v):
				vals[g] = v
				labels.XYs = append(labels.XYs, plotter.XY{X: float64(g), Y: v})
				labels.Labels = append(labels.Labels, pn.format(v))
				maxV = math.Max(maxV, v)
			case !pn.missing:
				labels.XYs = append(labels.XYs, plotter.XY{X: float64(g)})
				labels.Labels = append(labels.Labels, "n/a")
			}
		}
		bars, err := plotter.NewBarChart(vals, barW)
		if err != nil {
			return nil, err
		}
		bars.Color = se.color
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(i-len(all)/2) * (barW + pixels(8))
		p.Add(bars)
		if pn.series != nil {
			p.Legend.Add(se.name, bars)
		}
		if len(labels.Labels) == 0 {
			continue
		}
		text, err := plotter.NewLabels(labels)
		if err != nil {
			return nil, err
		}
		for j := range text.TextStyle {
			text.TextStyle[j].XAlign, text.TextStyle[j].YAlign = draw.XCenter, draw.YBottom
			text.TextStyle[j].Font.Size, text.TextStyle[j].Font.Variant = vg.Points(10), sans
		}
		text.Offset = vg.Point{X: bars.Offset, Y: pixels(4)}
		p.Add(text)
	}
	if pn.target > 0 {
		line, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: pn.target}, {X: float64(len(pn.groups)) - 0.5, Y: pn.target}})
		if err != nil {
			return nil, err
		}
		line.Color = color.RGBA{0x40, 0x40, 0x40, 0xff}
		line.Width = pixels(2)
		line.Dashes = []vg.Length{pixels(8), pixels(6)}
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("target: %s", pn.format(pn.target)), line)
	}
	if pn.series != nil || pn.target > 0 {
		p.Legend.Top = true
		p.Legend.TextStyle.Font.Variant = sans
		p.Legend.TextStyle.Font.Size = vg.Points(10)
		p.Legend.ThumbnailWidth = pixels(24)
	}
	switch {
	case maxV > 0 && (pn.series != nil || pn.target > 0):
		p.Y.Max = maxV * 1.35 // room for the values and the legend above the tallest bar
	case maxV > 0:
		p.Y.Max = maxV * 1.12 // room for the value above the tallest bar
	}
	p.NominalX(pn.groups...)
	// Half a group of room either side, for the outer bars and the grid lines.
	p.X.Min, p.X.Max = -0.5, float64(len(pn.groups))-0.5
	return p, nil
}

// The report's plot is a PNG of plotWidth x plotHeight pixels showing every way's bars
// in its colour and, with the sharding comparison, every replica's bars in its colour,
// with text (titles, axes, legend, values) in dark grey or black; with no heap and no
// sharding measured it is still drawn.
func TestWritePlot(t *testing.T) {
	var results []result
	for _, n := range []int{50, 500} {
		for i, wy := range ways {
			results = append(results, result{way: wy, owners: n, passRequests: float64(16 * n * (2 - i) / 2),
				apiserverCPU: []float64{0.02 * float64(n), math.NaN(), 0.003}[i], convergeRequests: 32*n - 10*i*n,
				convergeTime: time.Second})
		}
	}
	heap := []heapResult{{naiveSSA, 200, 300 << 10, 310 << 10}, {sdkApplier, 200, 35 << 20, 36 << 20},
		{createOrUpdate, 200, 35 << 20, 46 << 20}}
	shards := []shardResult{{way: oneReplica, replica: shardReplicaNames[0], watchEvents: 900, heap: 900 << 10}}
	for _, w := range []shardWay{serverSide, clientSide} {
		for i, name := range shardReplicaNames {
			r := shardResult{way: w, replica: name, watchEvents: 900, heap: 900 << 10}
			if w == serverSide {
				r.watchEvents, r.heap = int64(250+50*i), int64(250+50*i)<<10
			}
			shards = append(shards, r)
		}
	}
	for _, tc := range []struct {
		name   string
		heap   []heapResult
		shards []shardResult
	}{{"every panel", heap, shards}, {"no heap or sharding measured", nil, nil}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bench.png")
			if err := writePlot(path, results, tc.heap, tc.shards); err != nil {
				t.Fatalf("writePlot: %v", err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			img, err := png.Decode(f)
			if err != nil {
				t.Fatalf("%s is not a PNG: %v", path, err)
			}
			if got := img.Bounds().Size(); got != image.Pt(plotWidth, plotHeight) {
				t.Fatalf("size %v, want %dx%d", got, plotWidth, plotHeight)
			}
			byColor := map[color.RGBA]int{}
			grey := 0 // text and axes: black and grey, anti-aliased
			for y := range plotHeight {
				for x := range plotWidth {
					r, g, b, _ := img.At(x, y).RGBA()
					c := color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0xff}
					byColor[c]++
					if hi, lo := max(c.R, c.G, c.B), min(c.R, c.G, c.B); hi-lo < 0x20 && hi < 0xa0 {
						grey++
					}
				}
			}
			// Ten bars at least 64 pixels wide, a swatch of the legend: thousands of
			// pixels of each way's colour.
			for _, wy := range ways {
				if n := byColor[wayColors[wy]]; n < 2000 {
					t.Errorf("%d pixels in the colour of %s, want its bars and legend swatch", n, wy)
				}
			}
			// Per sharding panel, each replica has a bar of at least 25% of 1 replica
			// and one legend swatch.
			for i, c := range replicaColors {
				n := byColor[c]
				if tc.shards != nil && n < 2000 {
					t.Errorf("%d pixels in the colour of replica %d, want its bars and legend swatches", n, i)
				}
				if tc.shards == nil && n != 0 {
					t.Errorf("%d pixels in the colour of replica %d with no sharding measured", n, i)
				}
			}
			if grey < 8000 {
				t.Errorf("%d grey or black pixels: the titles, axes and labels are missing", grey)
			}
			if white := byColor[color.RGBA{0xff, 0xff, 0xff, 0xff}]; white < plotWidth*plotHeight/2 {
				t.Errorf("%d white pixels of %d: the background is not white", white, plotWidth*plotHeight)
			}
		})
	}
}
