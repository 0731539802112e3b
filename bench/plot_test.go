package bench_test

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The plot is drawn with gonum.org/v1/plot: four grouped bar charts in a 2x2 grid under
// a title and a legend of the ways.

// plotWidth and plotHeight are the size of the PNG in pixels at plotDPI.
const plotWidth, plotHeight, plotDPI = 1400, 920, 96

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

// panel is one grouped bar chart: one group per label along x, in each one bar per way.
type panel struct {
	title, yLabel string
	groups        []string
	// values[g][i] is the value of ways[i] in group g; NaN is no bar, labelled n/a.
	values [][]float64
	// format renders a value above its bar.
	format func(float64) string
}

// writePlot draws four bar charts, one bar per way: requests per converged pass,
// kube-apiserver CPU per converged pass and requests to converge (grouped by number of
// owners), and the operator heap (grouped by number of unrelated objects). It writes
// them as a plotWidth x plotHeight PNG to path.
func writePlot(path string, results []result, heap []heapResult) error {
	c := vgimg.NewWith(vgimg.UseWH(pixels(plotWidth), pixels(plotHeight)), vgimg.UseDPI(plotDPI),
		vgimg.UseBackgroundColor(color.White))
	dc := draw.New(c)
	if err := drawHeader(dc, "reconciler-sdk: one workload, three ways, one envtest run"); err != nil {
		return err
	}
	tiles := draw.Tiles{Rows: 2, Cols: 2, PadTop: pixels(90), PadBottom: pixels(10), PadLeft: pixels(10),
		PadRight: pixels(20), PadX: pixels(40), PadY: pixels(30)}
	for i, pn := range plotPanels(results, heap) {
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
	maxV := 0.0
	for i, wy := range ways {
		vals := make(plotter.Values, len(pn.groups))
		labels := plotter.XYLabels{XYs: make(plotter.XYs, len(pn.groups)), Labels: make([]string, len(pn.groups))}
		for g := range pn.groups {
			v := pn.values[g][i]
			labels.XYs[g].X = float64(g)
			labels.Labels[g] = "n/a"
			if !math.IsNaN(v) {
				vals[g] = v
				labels.XYs[g].Y = v
				labels.Labels[g] = pn.format(v)
				maxV = math.Max(maxV, v)
			}
		}
		bars, err := plotter.NewBarChart(vals, barW)
		if err != nil {
			return nil, err
		}
		bars.Color = wayColors[wy]
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(i-len(ways)/2) * (barW + pixels(8))
		text, err := plotter.NewLabels(labels)
		if err != nil {
			return nil, err
		}
		for j := range text.TextStyle {
			text.TextStyle[j].XAlign, text.TextStyle[j].YAlign = draw.XCenter, draw.YBottom
			text.TextStyle[j].Font.Size, text.TextStyle[j].Font.Variant = vg.Points(10), sans
		}
		text.Offset = vg.Point{X: bars.Offset, Y: pixels(4)}
		p.Add(bars, text)
	}
	if maxV > 0 {
		p.Y.Max = maxV * 1.12 // room for the value above the tallest bar
	}
	p.NominalX(pn.groups...)
	// Half a group of room either side, for the outer bars and the grid lines.
	p.X.Min, p.X.Max = -0.5, float64(len(pn.groups))-0.5
	return p, nil
}

// The report's plot is a PNG of plotWidth x plotHeight pixels showing every way's bars
// in its colour, with text (titles, axes, legend, values) in dark grey or black; with no
// heap measured it is still drawn.
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
	for _, tc := range []struct {
		name string
		heap []heapResult
	}{{"every panel", heap}, {"no heap measured", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bench.png")
			if err := writePlot(path, results, tc.heap); err != nil {
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
			if grey < 8000 {
				t.Errorf("%d grey or black pixels: the titles, axes and labels are missing", grey)
			}
			if white := byColor[color.RGBA{0xff, 0xff, 0xff, 0xff}]; white < plotWidth*plotHeight/2 {
				t.Errorf("%d white pixels of %d: the background is not white", white, plotWidth*plotHeight)
			}
		})
	}
}
