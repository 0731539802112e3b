package bench_test

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"strings"
)

// The plot is drawn with the standard library only: filled rectangles and a 5x7 bitmap
// font (upper case, digits and a little punctuation).

var (
	white     = color.RGBA{0xff, 0xff, 0xff, 0xff}
	black     = color.RGBA{0x22, 0x22, 0x22, 0xff}
	grey      = color.RGBA{0x99, 0x99, 0x99, 0xff}
	wayColors = map[way]color.RGBA{
		naiveSSA:       {0xd6, 0x27, 0x28, 0xff},
		sdkApplier:     {0x2c, 0xa0, 0x2c, 0xff},
		createOrUpdate: {0x1f, 0x77, 0xb4, 0xff},
	}
)

// writePlot draws four bar charts, one bar per way: requests per converged pass,
// kube-apiserver CPU per converged pass and requests to converge (grouped by number of
// owners), and the operator heap (grouped by number of unrelated objects).
func writePlot(path string, results []result, heap []heapResult) error {
	const w, h = 1400, 920
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(white), image.Point{}, draw.Src)
	drawText(img, 30, 24, "RECONCILER-SDK: ONE WORKLOAD, THREE WAYS, ONE ENVTEST RUN", 3, black)
	x := 30
	for _, wy := range ways {
		fill(img, image.Rect(x, 78, x+22, 100), wayColors[wy])
		drawText(img, x+32, 82, string(wy), 2, black)
		x += 32 + textWidth(string(wy), 2) + 50
	}

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
		groups[i] = fmt.Sprintf("%d OWNERS", n)
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
	count := func(v float64) string { return num(v) }
	panelW, panelH := 660, 380
	drawPanel(img, image.Rect(30, 130, 30+panelW, 130+panelH), "API REQUESTS PER CONVERGED PASS",
		groups, series(func(r result) float64 { return r.passRequests }), count)
	drawPanel(img, image.Rect(710, 130, 710+panelW, 130+panelH), "KUBE-APISERVER CPU MS PER CONVERGED PASS",
		groups, series(func(r result) float64 { return r.apiserverCPU * 1000 }), func(v float64) string { return fmt.Sprintf("%.0f", v) })
	drawPanel(img, image.Rect(30, 530, 30+panelW, 530+panelH), "API REQUESTS TO CONVERGE FROM CREATION",
		groups, series(func(r result) float64 { return float64(r.convergeRequests) }), count)

	var heapGroups []string
	var heapValues [][]float64
	if len(heap) > 0 {
		heapGroups = []string{fmt.Sprintf("%d UNRELATED", 2*heap[0].unrelated), fmt.Sprintf("%d UNRELATED", 20*heap[0].unrelated)}
		heapValues = make([][]float64, 2)
		for _, hr := range heap {
			heapValues[0] = append(heapValues[0], float64(hr.base)/(1<<20))
			heapValues[1] = append(heapValues[1], float64(hr.grown)/(1<<20))
		}
	}
	drawPanel(img, image.Rect(710, 530, 710+panelW, 530+panelH), "OPERATOR HEAP MIB",
		heapGroups, heapValues, func(v float64) string { return fmt.Sprintf("%.1f", v) })

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// drawPanel draws a grouped bar chart into r: one group per label, one bar per way.
// NaN values are drawn as "N/A".
func drawPanel(img *image.RGBA, r image.Rectangle, title string, groups []string, values [][]float64, format func(float64) string) {
	drawText(img, r.Min.X, r.Min.Y, title, 2, black)
	top, bottom := r.Min.Y+60, r.Max.Y-40
	left, right := r.Min.X+10, r.Max.X-10
	fill(img, image.Rect(left, bottom, right, bottom+2), grey)
	maxV := 0.0
	for _, g := range values {
		for _, v := range g {
			if !math.IsNaN(v) {
				maxV = math.Max(maxV, v)
			}
		}
	}
	if maxV == 0 {
		maxV = 1
	}
	if len(groups) == 0 {
		return
	}
	groupW := (right - left) / len(groups)
	const barW, gap = 56, 14
	for gi, label := range groups {
		barsW := len(ways)*barW + (len(ways)-1)*gap
		x0 := left + gi*groupW + (groupW-barsW)/2
		for wi, wy := range ways {
			v := values[gi][wi]
			x := x0 + wi*(barW+gap)
			text := "N/A"
			height := 0
			if !math.IsNaN(v) {
				text = format(v)
				height = int(math.Round(v / maxV * float64(bottom-top)))
			}
			fill(img, image.Rect(x, bottom-height, x+barW, bottom), wayColors[wy])
			scale := 2
			if textWidth(text, scale) > barW+gap {
				scale = 1
			}
			drawText(img, x+(barW-textWidth(text, scale))/2, bottom-height-8*scale-4, text, scale, black)
		}
		drawText(img, left+gi*groupW+(groupW-textWidth(label, 2))/2, bottom+12, label, 2, black)
	}
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src)
}

// textWidth is the width in pixels of s drawn at scale.
func textWidth(s string, scale int) int {
	if s == "" {
		return 0
	}
	return (len(s)*6 - 1) * scale
}

// drawText draws s in upper case with its top-left corner at (x, y), each font pixel a
// scale x scale square.
func drawText(img *image.RGBA, x, y int, s string, scale int, c color.RGBA) {
	for i, ch := range strings.ToUpper(s) {
		g, ok := glyphs[ch]
		if !ok {
			continue
		}
		for row, line := range g {
			for col, px := range line {
				if px == '#' {
					fill(img, image.Rect(x+(i*6+col)*scale, y+row*scale, x+(i*6+col+1)*scale, y+(row+1)*scale), c)
				}
			}
		}
	}
}

// glyphs is a 5x7 bitmap font.
var glyphs = map[rune][7]string{
	'A': {".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"},
	'B': {"####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."},
	'C': {".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."},
	'D': {"####.", "#...#", "#...#", "#...#", "#...#", "#...#", "####."},
	'E': {"#####", "#....", "#....", "####.", "#....", "#....", "#####"},
	'F': {"#####", "#....", "#....", "####.", "#....", "#....", "#...."},
	'G': {".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"},
	'H': {"#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"},
	'I': {".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."},
	'J': {"..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."},
	'K': {"#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"},
	'L': {"#....", "#....", "#....", "#....", "#....", "#....", "#####"},
	'M': {"#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"},
	'N': {"#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"},
	'O': {".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."},
	'P': {"####.", "#...#", "#...#", "####.", "#....", "#....", "#...."},
	'Q': {".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"},
	'R': {"####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"},
	'S': {".####", "#....", "#....", ".###.", "....#", "....#", "####."},
	'T': {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."},
	'U': {"#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."},
	'V': {"#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."},
	'W': {"#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."},
	'X': {"#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"},
	'Y': {"#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."},
	'Z': {"#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"},
	'0': {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."},
	'1': {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."},
	'2': {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"},
	'3': {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."},
	'4': {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."},
	'5': {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."},
	'6': {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."},
	'7': {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."},
	'8': {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."},
	'9': {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."},
	'.': {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."},
	',': {".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."},
	'-': {".....", ".....", ".....", "#####", ".....", ".....", "....."},
	'=': {".....", ".....", "#####", ".....", "#####", ".....", "....."},
	'/': {".....", "....#", "...#.", "..#..", ".#...", "#....", "....."},
	'(': {"...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."},
	')': {".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."},
	':': {".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."},
}
