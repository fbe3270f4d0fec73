package publisher

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/zarlog/zarlog/verifier"
)

// glyphsJS defines zarlogGlyphs(selector, needle): for every occurrence of
// needle in the text of the elements that match selector (their text
// nodes, joined), the rectangle on screen of each of its characters, in
// the order of the text. It is how the tests below see where the glyphs
// are drawn, which the DOM's text does not say: "6-2" in an Arabic
// sentence is the text "6-2" whether it is drawn 6-2 or 2-6.
const glyphsJS = `window.zarlogGlyphs = function (selector, needle) {
	const out = [];
	for (const root of document.querySelectorAll(selector)) {
		const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
		const nodes = [];
		let text = "";
		for (let n = walker.nextNode(); n; n = walker.nextNode()) { nodes.push({ node: n, at: text.length }); text += n.data; }
		const rect = function (i) {
			let k = nodes.length - 1;
			while (nodes[k].at > i) k--;
			const r = document.createRange();
			r.setStart(nodes[k].node, i - nodes[k].at);
			r.setEnd(nodes[k].node, i - nodes[k].at + 1);
			const b = r.getBoundingClientRect();
			return { c: text[i], left: b.left, right: b.right, top: b.top, bottom: b.bottom };
		};
		// The needle, with the invisible characters the pages put in
		// (isolates, word joiners) allowed between its characters.
		const pattern = new RegExp(Array.from(needle).map(c => c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[\u2060\u2066-\u2069]*"), "g");
		for (const m of text.matchAll(pattern)) {
			const chars = [];
			for (let k = 0; k < m[0].length; k++) {
				if (!/[\u2060\u2066-\u2069]/.test(m[0][k])) chars.push(rect(m.index + k));
			}
			out.push(chars);
		}
	}
	return JSON.stringify(out);
};`

// A glyph is one character as drawn.
type glyph struct {
	C                        string
	Left, Right, Top, Bottom float64
}

// glyphs returns where each occurrence of needle in the elements of
// selector is drawn, character by character.
func glyphs(t *testing.T, ctx context.Context, selector, needle string) [][]glyph {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](glyphsJS+";true")); err != nil {
		t.Fatal(err)
	}
	sel, _ := json.Marshal(selector)
	nd, _ := json.Marshal(needle)
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf("zarlogGlyphs(%s, %s)", sel, nd)))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]glyph
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// drawnLeftToRight reports whether the characters of g are drawn on one
// line, each to the right of the one before it: a dice pair, a score or a
// percentage as it is written.
func drawnLeftToRight(g []glyph) bool {
	for i := 1; i < len(g); i++ {
		if abs(g[i].Top-g[0].Top) > 2 || g[i].Left < g[i-1].Left {
			return false
		}
	}
	return true
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// open loads url in a tab of width px (a phone's under 500) and waits for
// the page, and for a game page's verdict.
func open(t *testing.T, browser context.Context, url string, width int64) context.Context {
	t.Helper()
	ctx := tab(t, browser)
	var opts []chromedp.EmulateViewportOption
	height := int64(800)
	if width < 500 {
		height = 844
		opts = append(opts, chromedp.EmulateMobile)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height, opts...), chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("main, body"))); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(url, "/games/") {
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#verdict[data-exit]"))); err != nil {
			t.Fatal(err)
		}
	}
	return ctx
}

// TestArabicRendering checks the Arabic pages where a reader sees them: on
// the screen of real Chromium, the position of each glyph, not only the
// text of the DOM (and the same checks in English and Turkish, which must
// hold there too):
//
//   - a dice pair ("the seed gives 6-2", the roll table's "3-1 and 1-3")
//     and a percentage are drawn as written, left to right, in the
//     verdict box (written by the script) and in the Go-rendered text;
//   - the opening roll's row draws each player's die on the side of the
//     row where the player's name is;
//   - the numbers of a plot's y axis are outside the plot and whole (inside
//     the picture), with six digits; in Arabic the axis is on the right;
//   - one number format: no Arabic-Indic digit and no Arabic decimal or
//     percent sign on any page, and every percentage written 16.7% (in
//     Turkish %16,7);
//   - "61 seal codes, one per roll" is laid out in the page's direction,
//     in Arabic its number first (on the right);
//   - "zarlog-verify" and a platform's id are never broken across two
//     lines.
func TestArabicRendering(t *testing.T) {
	browser := newBrowser(t)
	f := testFixture(t)
	// A game that fails: the tavlarena game with a roll changed, one whose
	// dice as logged and as the seed gives them are not doubles (a double
	// reads the same both ways).
	games := memGames{}
	for id, g := range f.games {
		games[id] = g
	}
	id := f.ids["tavlarena-v1"]
	var tampered []byte
	var claimed, recomputed string
	for n := uint32(1); n < 24 && tampered == nil; n++ {
		b := tamperBundleRoll(t, f.games[id].Bundle, n)
		c, _ := verifier.Verify(b, verifier.Options{LogKey: mustLogKey(t, f.vkey)}).Check(verifier.CheckRolls)
		if c.Roll != nil && !c.Roll.Claimed.IsDouble() && !c.Roll.Recomputed.IsDouble() {
			tampered, claimed, recomputed = b, c.Roll.Claimed.String(), c.Roll.Recomputed.String()
		}
	}
	if tampered == nil {
		t.Fatal("no roll to tamper with whose dice are not doubles")
	}
	const bad = "tampered-game"
	games[bad] = Game{Status: GameFinished, Bundle: tampered}
	// /stats with six-digit counts: the widest numbers of an axis.
	var st Stats
	for a := range 6 {
		for b := range 6 {
			st.Play.Pairs[a][b] = 30000
		}
	}
	st.Games, st.LogSize = 1000, 1000000
	p, err := NewPages(Config{Games: games, Index: f.index, Stats: fixedStats(st), LogKey: f.vkey})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	p.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, l := range verifier.Langs() {
		q := "?lang=" + string(l)
		t.Run(string(l), func(t *testing.T) {
			t.Run("dice pairs", func(t *testing.T) {
				ctx := open(t, browser, srv.URL+"/games/"+bad+q, 390)
				n := 0
				for _, pair := range []string{claimed, recomputed} {
					for _, where := range []string{"#verdict-detail", "#first-wrong", "#auditors .bad"} {
						for _, g := range glyphs(t, ctx, where, pair) {
							n++
							if !drawnLeftToRight(g) {
								t.Errorf("%s: the pair %s is drawn %v", where, pair, g)
							}
						}
					}
				}
				if n < 2 {
					t.Errorf("the failing game's page shows its dice %s and %s %d times; want them in the verdict", claimed, recomputed, n)
				}
				ctx = open(t, browser, srv.URL+"/stats"+q, 390)
				n = 0
				for _, pair := range []string{"3-1", "1-3"} {
					for _, g := range glyphs(t, ctx, "#thirty-six p", pair) {
						n++
						if !drawnLeftToRight(g) {
							t.Errorf("/stats: the pair %s is drawn %v", pair, g)
						}
					}
				}
				if n != 2 {
					t.Errorf("/stats says 3-1 and 1-3 %d times in its paragraphs, want 2", n)
				}
			})

			t.Run("opening roll", func(t *testing.T) {
				ctx := open(t, browser, srv.URL+"/games/"+f.played[0]+q, 390)
				sum := mustSummary(t, f, f.played[0])
				name := func(seat int) glyph {
					g := glyphs(t, ctx, `#rolls tr[data-index="0"] td:nth-child(2)`, sum.Names[seat])
					if len(g) != 1 {
						t.Fatalf("the opening row names %s %d times", sum.Names[seat], len(g))
					}
					return g[0][0]
				}
				die := func(seat int) float64 {
					x, err := chromedp.Run(ctx, chromedp.Evaluate[float64](fmt.Sprintf(`document.querySelector('#rolls tr[data-index="0"] rect[data-die="%d"]').getBoundingClientRect().left`, seat)))
					if err != nil {
						t.Fatal(err)
					}
					return x
				}
				// The row is read from the left (from the right in Arabic):
				// the first seat's name comes first, on the line before the
				// other's or on its reading side, and its die is on that side.
				n0, n1, d0, d1 := name(0), name(1), die(0), die(1)
				rtl := l == Arabic
				first := n0.Top < n1.Top-2 || abs(n0.Top-n1.Top) <= 2 && (n0.Left < n1.Left) != rtl
				if !first || (d0 < d1) == rtl {
					t.Errorf("the opening row: %s's name at (%.0f, %.0f), %s's at (%.0f, %.0f), their dice at %.0f and %.0f", sum.Names[0], n0.Left, n0.Top, sum.Names[1], n1.Left, n1.Top, d0, d1)
				}
			})

			t.Run("axes", func(t *testing.T) {
				for _, path := range []string{"/stats", "/players/" + testEmitter + "/" + f.players["Ayşe"].String()} {
					ctx := open(t, browser, srv.URL+path+q, 390)
					raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(Array.from(document.querySelectorAll("svg.bars")).map(svg => {
						const r = e => { const b = e.getBoundingClientRect(); return { left: b.left, right: b.right, top: b.top, bottom: b.bottom }; };
						return { svg: r(svg), yaxis: r(svg.querySelector(".y-axis")), xaxis: r(svg.querySelector(".x-axis")),
							ticks: Array.from(svg.querySelectorAll("text.tick")).map(t => Object.assign(r(t), { text: t.textContent })) };
					}))`))
					if err != nil {
						t.Fatal(err)
					}
					type box struct {
						Left, Right, Top, Bottom float64
						Text                     string
					}
					var plots []struct {
						SVG, YAxis, XAxis box
						Ticks             []box
					}
					if err := json.Unmarshal([]byte(raw), &plots); err != nil {
						t.Fatal(err)
					}
					if len(plots) == 0 {
						t.Fatalf("%s: no plot", path)
					}
					widest := 0
					for _, pl := range plots {
						if l == Arabic && abs(pl.YAxis.Left-pl.XAxis.Right) > 1 {
							t.Errorf("%s: the y axis at %.0f is not at the plot's right end (%.0f–%.0f)", path, pl.YAxis.Left, pl.XAxis.Left, pl.XAxis.Right)
						}
						for _, tk := range pl.Ticks {
							widest = max(widest, len(tk.Text))
							if tk.Right > pl.XAxis.Left+0.5 && tk.Left < pl.XAxis.Right-0.5 {
								t.Errorf("%s: the axis number %q (%.1f–%.1f) is drawn inside the plot (%.1f–%.1f)", path, tk.Text, tk.Left, tk.Right, pl.XAxis.Left, pl.XAxis.Right)
							}
							if tk.Left < pl.SVG.Left-0.5 || tk.Right > pl.SVG.Right+0.5 {
								t.Errorf("%s: the axis number %q (%.1f–%.1f) is cut by the picture's edge (%.1f–%.1f)", path, tk.Text, tk.Left, tk.Right, pl.SVG.Left, pl.SVG.Right)
							}
						}
					}
					if path == "/stats" && widest < 6 {
						t.Errorf("/stats: the widest axis number has %d digits; the test wants six", widest)
					}
				}
			})

			t.Run("one number format", func(t *testing.T) {
				percents := 0
				for _, path := range []string{"/", "/stats", "/players/" + testEmitter + "/" + f.players["Ayşe"].String(), "/games/" + f.played[0], "/games/" + bad} {
					ctx := open(t, browser, srv.URL+path+q, 1280)
					text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
					if err != nil {
						t.Fatal(err)
					}
					if m := regexp.MustCompile(`[٠-٩۰-۹٫٬٪]`).FindStringIndex(text); m != nil {
						t.Errorf("%s: an Arabic digit or sign: …%s…", path, text[max(0, m[0]-40):min(len(text), m[1]+40)])
					}
					other := regexp.MustCompile(`\d+,\d+%|%\d`) // English and Arabic write 16.7%
					if l == Turkish {
						other = regexp.MustCompile(`\d%|\d+\.\d+`) // Turkish writes %16,7
					}
					if m := other.FindStringIndex(text); m != nil {
						t.Errorf("%s: a number in another language's format: …%s…", path, text[max(0, m[0]-40):min(len(text), m[1]+40)])
					}
					// Every percentage is drawn as written: its sign after its digits.
					seen := map[string]bool{}
					for _, m := range regexp.MustCompile(`\d+(?:\.\d+)?%`).FindAllString(text, -1) {
						if l == Turkish || seen[m] {
							continue
						}
						seen[m] = true
						for _, g := range glyphs(t, ctx, "main", m) {
							percents++
							if !drawnLeftToRight(g) {
								t.Errorf("%s: %s is drawn %v", path, m, g)
							}
						}
					}
				}
				if l != Turkish && percents == 0 {
					t.Error("no percentage on the pages")
				}
			})

			t.Run("seal codes of per-roll games", func(t *testing.T) {
				ctx := open(t, browser, srv.URL+"/"+q, 390)
				words := text(l, "SealsOfRolls", 6)
				g := glyphs(t, ctx, ".seal-words", "6")
				if len(g) != 1 {
					t.Fatalf("the landing page's per-roll game: %d times the number of its seal codes, want once in %q", len(g), words)
				}
				all := glyphs(t, ctx, ".seal-words", strings.Trim(words, "\u2066\u2069"))
				if len(all) != 1 {
					t.Fatalf("the landing page does not say %q", words)
				}
				right := 0.0
				for _, c := range all[0] {
					if strings.TrimSpace(c.C) != "" {
						right = max(right, c.Right)
					}
				}
				num := g[0][0]
				if l == Arabic && num.Right < right-0.5 {
					t.Errorf("%q: its number is drawn at %.0f–%.0f, not at the right end, where its words begin (%.0f)", words, num.Left, num.Right, right)
				}
				dir, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector(".seal-words")).direction`))
				if want := map[bool]string{true: "rtl", false: "ltr"}[l == Arabic]; err != nil || dir != want {
					t.Errorf("%q is laid out %s, want %s", words, dir, want)
				}
			})

			t.Run("identifiers in one piece", func(t *testing.T) {
				for _, c := range []struct{ path, ident string }{
					{"/games/" + f.played[0], "zarlog-verify"},
					{"/players/" + testEmitter + "/" + f.players["Ayşe"].String(), testEmitter},
				} {
					ctx := open(t, browser, srv.URL+c.path+q, 390)
					gs := glyphs(t, ctx, "body", c.ident)
					if len(gs) == 0 {
						t.Fatalf("%s does not name %s", c.path, c.ident)
					}
					for _, g := range gs {
						if abs(g[0].Top-g[len(g)-1].Top) > 2 && g[0].Bottom > 0 {
							t.Errorf("%s: %s is broken across lines (its first letter at %.0f, its last at %.0f)", c.path, c.ident, g[0].Top, g[len(g)-1].Top)
						}
					}
				}
			})
		})
	}
}

// TestKeepNumbers: dice pairs and scores are kept on one line, and in a
// right-to-left language isolated with percentages (a date too, whole);
// what is part of a code or a time is left alone.
func TestKeepNumbers(t *testing.T) {
	const lri, pdi, wj = "\u2066", "\u2069", "\u2060"
	for _, c := range []struct {
		in   string
		rtl  bool
		want string
	}{
		{"the seed gives 6-2.", false, "the seed gives 6-" + wj + "2."},
		{"والبذرة تعطي 6-2.", true, "والبذرة تعطي " + lri + "6-" + wj + "2" + pdi + "."},
		{"(3-1 و1-3)", true, "(" + lri + "3-" + wj + "1" + pdi + " و" + lri + "1-" + wj + "3" + pdi + ")"},
		{"مجال الثقة 95%: من 12.5% إلى 21%", true, "مجال الثقة " + lri + "95%" + pdi + ": من " + lri + "12.5%" + pdi + " إلى " + lri + "21%" + pdi},
		{"95% interval", false, "95% interval"},
		{"seal 5CJ3-5ZCZ", true, "seal 5CJ3-5ZCZ"},
		{"on 2026-11-30 at 14:03–14:05", true, "on " + lri + "2026-" + wj + "11-" + wj + "30" + pdi + " at 14:03–14:05"},
		{lri + "14:03–14:05 UTC" + pdi, true, lri + "14:03–14:05 UTC" + pdi},
		{"no numbers", true, "no numbers"},
	} {
		if got := keepNumbers(c.in, c.rtl); got != c.want {
			t.Errorf("keepNumbers(%q, %v) = %q, want %q", c.in, c.rtl, got, c.want)
		}
	}
}
