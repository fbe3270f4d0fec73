package publisher

import (
	"context"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/verifier"
)

// Stats are the fairness counters over the whole log that /stats draws:
// the rolls of every game, opening rolls apart from the rest, as a
// projection of the log counts them (events.Tally: a roll event, or a
// per-roll-v1 roll-reveal, adds one roll). Source maps a store's here.
type Stats struct {
	// Opening counts the opening rolls of the per-game schemes (kind
	// "opening", ties included): die 1 is seat 0's, die 2 seat 1's.
	Opening events.RollCounts
	// Play counts every other roll: re-rolls, turns, and the rolls of
	// per-roll-v1 matches.
	Play events.RollCounts
	// Games is the number of games (per-roll-v1: matches) the rolls come
	// from; LogSize the log's size when they were counted (0: unknown).
	Games   uint64
	LogSize uint64
}

// A StatsSource gives the current fairness counters. Implementations must
// be safe for concurrent use; an error is served as 500.
type StatsSource interface {
	Stats(ctx context.Context) (Stats, error)
}

// A ChiSquare is Pearson's chi-square test of observed counts against
// expected ones.
type ChiSquare struct {
	Stat float64 // Σ (observed − expected)² / expected
	DF   int     // degrees of freedom: categories − 1
	P    float64 // the probability of a statistic at least this large for fair dice
}

// chiSquare tests observed counts against the probabilities probs (which
// sum to 1). With no observations the statistic is 0 and P is 1.
func chiSquare(observed []uint64, probs []float64) ChiSquare {
	var n uint64
	for _, o := range observed {
		n += o
	}
	c := ChiSquare{DF: len(observed) - 1, P: 1}
	if n == 0 {
		return c
	}
	for i, o := range observed {
		e := float64(n) * probs[i]
		d := float64(o) - e
		c.Stat += d * d / e
	}
	c.P = ChiSquareSF(c.Stat, c.DF)
	return c
}

// ChiSquareSF returns the survival function of the chi-square
// distribution with df degrees of freedom at x: P(X ≥ x), the regularized
// upper incomplete gamma function Q(df/2, x/2). It is accurate to about
// 1e-12 (relative) and returns 1 for x ≤ 0, NaN for df < 1.
func ChiSquareSF(x float64, df int) float64 {
	if df < 1 || math.IsNaN(x) {
		return math.NaN()
	}
	if x <= 0 {
		return 1
	}
	if math.IsInf(x, 1) {
		return 0
	}
	return gammaQ(float64(df)/2, x/2)
}

// gammaQ is the regularized upper incomplete gamma function Q(a, x), by
// the series of P(a, x) for x < a+1 and Lentz's continued fraction
// otherwise (Numerical Recipes §6.2).
func gammaQ(a, x float64) float64 {
	lg, _ := math.Lgamma(a)
	pre := a*math.Log(x) - x - lg
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1; n < 10000; n++ {
			term *= x / (a + float64(n))
			sum += term
			if math.Abs(term) < math.Abs(sum)*1e-16 {
				break
			}
		}
		return math.Max(0, 1-sum*math.Exp(pre))
	}
	const tiny = 1e-300
	b := x + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1; i < 10000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return math.Exp(pre) * h
}

// The fairness tests of one set of rolls.
type fairness struct {
	Faces   ChiSquare // six faces, each 1/6
	Pairs   ChiSquare // 36 ordered pairs, each 1/36
	Doubles ChiSquare // doubles 1/6 against the rest
}

func testsOf(c events.RollCounts) fairness {
	six := make([]float64, 6)
	for i := range six {
		six[i] = 1.0 / 6
	}
	pairs := make([]uint64, 0, 36)
	p36 := make([]float64, 36)
	for a := range 6 {
		for b := range 6 {
			pairs = append(pairs, c.Pairs[a][b])
			p36[6*a+b] = 1.0 / 36
		}
	}
	f := c.Faces()
	n, d := c.Total(), c.Doubles()
	return fairness{
		Faces:   chiSquare(f[:], six),
		Pairs:   chiSquare(pairs, p36),
		Doubles: chiSquare([]uint64{d, n - d}, []float64{1.0 / 6, 5.0 / 6}),
	}
}

// A testRow is one chi-square test as the page shows it: its statistic
// and p-value, or, below MinExpected per cell, why there is none.
type testRow struct {
	Name    string
	Stat, P string
	DF      int
	TooFew  string
}

// statsView is what stats.tmpl draws.
type statsView struct {
	base
	Available bool
	Stats     Stats
	Sets      []statsSet
	Distance  int
	Distances []distanceRow
	Grid      template.HTML // the 36 rolls, those reaching Distance marked
	Reach     distanceRow
	Six       []int
	Openings  []string // what each opening rule makes of the first move, from the rules engine
}

type statsSet struct {
	Name        string
	Total       uint64
	Doubles     uint64
	DoublesRate string
	Tests       []testRow
	FacesSVG    template.HTML
	MatrixSVG   template.HTML
}

func (p *Pages) statsPage(w http.ResponseWriter, r *http.Request) {
	l := Negotiate(r.URL.Query().Get("lang"), r.Header.Get("Accept-Language"))
	v := &statsView{base: p.base(r, l, "StatsTitle"), Six: []int{1, 2, 3, 4, 5, 6}}
	for _, f := range p.openings {
		v.Openings = append(v.Openings, openingText(l, f))
	}
	v.Distance = ParseDistance(r.URL.Query().Get("distance"))
	if v.Distance != 0 {
		v.Query = "&distance=" + strconv.Itoa(v.Distance)
		for i := range v.Langs {
			v.Langs[i].Href += v.Query
		}
	}
	v.Distances = distanceTable()
	if v.Distance > 0 {
		v.Reach = v.Distances[v.Distance-1]
	}
	v.Grid = template.HTML(rollGridSVG(v.Distance, l))
	if p.cfg.Stats != nil {
		s, err := p.cfg.Stats.Stats(r.Context())
		if err != nil {
			p.log.Error("pages: reading the statistics", "err", err)
			http.Error(w, "cannot read the statistics", http.StatusInternalServerError)
			return
		}
		v.Available, v.Stats = true, s
		for _, x := range []struct {
			key string
			c   events.RollCounts
		}{{"SetAll", s.Opening.Plus(s.Play)}, {"SetOpening", s.Opening}, {"SetPlay", s.Play}} {
			set := statsSet{Name: text(l, x.key), Total: x.c.Total(), Doubles: x.c.Doubles()}
			if set.Total > 0 {
				set.DoublesRate = percent(l, float64(set.Doubles)/float64(set.Total), 2)
			}
			ft := testsOf(x.c)
			n := x.c.Total()
			for _, row := range []struct {
				key   string
				c     ChiSquare
				count uint64 // observations
				cells int    // equally likely cells (doubles: the rarer one, 1/6)
				per   int    // observations per roll
			}{{"TestFaces", ft.Faces, 2 * n, 6, 2}, {"TestPairs", ft.Pairs, n, 36, 1}, {"TestDoubles", ft.Doubles, n, 6, 1}} {
				tr := testRow{Name: text(l, row.key), DF: row.c.DF}
				if ChiSquareOK(row.count, row.cells) {
					tr.Stat, tr.P = number(l, row.c.Stat, 2), number(l, row.c.P, 4)
				} else {
					tr.TooFew = text(l, "ChiTooFewShort", (MinExpected*row.cells+row.per-1)/row.per)
				}
				set.Tests = append(set.Tests, tr)
			}
			set.FacesSVG = template.HTML(facesSVG(x.c, l))
			set.MatrixSVG = template.HTML(matrixSVG(x.c, l))
			v.Sets = append(v.Sets, set)
		}
	}
	p.render(w, http.StatusOK, "stats.tmpl", v)
}

// ParseDistance reads the ?distance= parameter of /stats: a distance in
// pips from 1 to 24, or 0 when absent or anything else.
func ParseDistance(s string) int {
	if len(s) == 0 || len(s) > 2 {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 24 || strconv.Itoa(n) != s {
		return 0
	}
	return n
}

// A distanceRow says which rolls move one checker exactly d pips on an
// open board (no blocked point on the way): a non-double a-b reaches a, b
// and a+b; a double a-a reaches a, 2a, 3a and 4a.
type distanceRow struct {
	D     int
	Rolls []string // the distinct rolls, smaller die first ("1-3", "2-2")
	Of36  int      // how many of the 36 equally likely rolls: a double once, others twice
}

// reaches reports whether the roll a-b moves one checker exactly d pips.
func reaches(a, b, d int) bool {
	if a == b {
		return d%a == 0 && d/a <= 4
	}
	return d == a || d == b || d == a+b
}

func distanceTable() []distanceRow {
	rows := make([]distanceRow, 24)
	for d := 1; d <= 24; d++ {
		row := distanceRow{D: d}
		for a := 1; a <= 6; a++ {
			for b := a; b <= 6; b++ {
				if reaches(a, b, d) {
					row.Rolls = append(row.Rolls, fmt.Sprintf("%d-%d", a, b))
					if a == b {
						row.Of36++
					} else {
						row.Of36 += 2
					}
				}
			}
		}
		rows[d-1] = row
	}
	return rows
}

// rollGridSVG draws the 36 rolls as a 6 × 6 grid; with d > 0 the rolls that
// reach d pips are filled.
func rollGridSVG(d int, l verifier.Lang) string {
	var b strings.Builder
	label := text(l, "GridLabel")
	if d > 0 {
		label = text(l, "GridLabelD", d)
	}
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="grid36" viewBox="0 0 250 250" width="250" height="250" role="img" aria-label="%s">`, template.HTMLEscapeString(label))
	for a := 1; a <= 6; a++ {
		for c := 1; c <= 6; c++ {
			x, y := 10+40*(c-1), 10+40*(a-1)
			cls := "cell"
			if d > 0 && reaches(a, c, d) {
				cls = "cell on"
			} else if a == c {
				cls = "cell double"
			}
			fmt.Fprintf(&b, `<rect class="%s" x="%d" y="%d" width="36" height="36" rx="4"/><text x="%d" y="%d" text-anchor="middle">%d-%d</text>`,
				cls, x, y, x+18, y+23, a, c)
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// facesSVG draws the face counts as bars, each with its count above it,
// over a y axis with its scale, and the count fair dice give on average as
// a dashed line. In Arabic the plot is placed for a right-to-left reader:
// the y axis and its numbers on the right, the faces from 1 on the right
// to 6 on the left. The numbers of the axis sit outside the plot, each
// whole (the axis moves in to make room for the widest), anchored as drawn
// (the plots are laid out left to right: style.css), which
// TestArabicRendering checks on screen.
func facesSVG(c events.RollCounts, l verifier.Lang) string {
	f := c.Faces()
	n := c.Total()
	expected := float64(2*n) / 6
	top := expected * 1.25
	for _, x := range f {
		top = math.Max(top, float64(x))
	}
	top = niceCeil(top)
	const width = 330
	rtl := l == Arabic
	// at places x of a left-to-right plot: mirrored in right to left.
	at := func(x float64) float64 {
		if rtl {
			return width - x
		}
		return x
	}
	outward := "end" // the anchor of a number that runs away from the plot
	if rtl {
		outward = "start"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="bars" viewBox="0 0 %d 200" width="%d" height="200" role="img">`, width, width)
	fmt.Fprintf(&b, `<title>%s</title>`, template.HTMLEscapeString(text(l, "FacesPlotTitle")))
	// The axis' origin: room for the widest number of the scale (11 px
	// digits are under 7 px wide) and a gap.
	x0 := math.Max(44, float64(10+7*len(number(l, top, 0))))
	const y0, h, x1 = 170.0, 140.0, 324.0 // the axis' origin height, the plot's height, its far end
	for _, t := range []float64{0, top / 2, top} {
		y := y0 - h*t/top
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/><text class="tick" x="%.1f" y="%.1f" text-anchor="%s">%s</text>`,
			at(x0), at(x1), y, y, at(x0-4), y+4, outward, number(l, t, 0))
	}
	fmt.Fprintf(&b, `<line class="axis y-axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/><line class="axis x-axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`,
		at(x0), at(x0), y0-h, y0, at(x0), at(x1), y0, y0)
	step := (x1 - x0 - 8) / 6
	for i, x := range f {
		bh := h * float64(x) / top
		mid := at(x0 + 8 + step*float64(i) + 17)
		fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="34" height="%.1f"><title>%d: %d</title></rect>`, mid-17, y0-bh, bh, i+1, x)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" class="count">%d</text>`, mid, y0-bh-3, x)
		fmt.Fprintf(&b, `<text class="face" x="%.1f" y="%.1f" text-anchor="middle">%d</text>`, mid, y0+15, i+1)
	}
	if n > 0 {
		y := y0 - h*expected/top
		fmt.Fprintf(&b, `<line class="expected" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, at(x0), at(x1), y, y)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="199" text-anchor="middle">%s</text>`, at((x0+x1)/2), template.HTMLEscapeString(text(l, "FaceAxis")))
	b.WriteString(`</svg>`)
	return b.String()
}

// niceCeil rounds x up to a round number for an axis: 1, 2 or 5 times a
// power of ten (at least 1).
func niceCeil(x float64) float64 {
	if x <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// matrixSVG draws the 36 ordered pairs as a heat map: each cell's shade is
// its count against the expected count N/36 (darker: more). Rows are the
// first die, columns the second; in Arabic the first column is on the
// right and the rows' numbers too, as a right-to-left table has them.
func matrixSVG(c events.RollCounts, l verifier.Lang) string {
	n := c.Total()
	expected := float64(n) / 36
	const width = 270
	at := func(x int) int {
		if l == Arabic {
			return width - x
		}
		return x
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="matrix" viewBox="0 0 %d 270" width="%d" height="270" role="img">`, width, width)
	fmt.Fprintf(&b, `<title>%s</title>`, template.HTMLEscapeString(text(l, "MatrixPlotTitle")))
	for a := range 6 {
		fmt.Fprintf(&b, `<text x="%d" y="14" text-anchor="middle">%d</text><text x="%d" y="%d" text-anchor="middle">%d</text>`, at(40+40*a), a+1, at(10), 45+40*a, a+1)
		for d := range 6 {
			x := c.Pairs[a][d]
			shade := 0.0
			if expected > 0 {
				shade = math.Min(1, float64(x)/(2*expected))
			}
			cls := "count"
			if 0.08+0.8*shade > 0.45 {
				cls = "count on-dark"
			}
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="38" height="38" fill="#1d4e89" fill-opacity="%.2f" stroke="#999"><title>%d-%d: %d</title></rect><text x="%d" y="%d" text-anchor="middle" class="%s">%d</text>`,
				at(40+40*d)-19, 21+40*a, 0.08+0.8*shade, a+1, d+1, x, at(40+40*d), 45+40*a, cls, x)
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// openingText says what an opening rule makes of the first move, from its
// facts.
func openingText(l verifier.Lang, f OpeningFacts) string {
	var b strings.Builder
	b.WriteString(text(l, "Opening-"+string(f.Opening)))
	if f.TieAgain {
		b.WriteString(" " + text(l, "TieAgain"))
	}
	if f.FirstDouble {
		b.WriteString(" " + text(l, "FirstCanDouble", f.FirstMoves))
	} else {
		b.WriteString(" " + text(l, "FirstNeverDouble", f.FirstMoves))
	}
	return b.String()
}
