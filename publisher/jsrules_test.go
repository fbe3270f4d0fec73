package publisher

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
	"github.com/zarlog/zarlog/verifier"
)

// A rulesCase is one position and roll of the rules differential test, with
// Go's answers: the legal plays, and for each candidate play its canonical
// text and the position it leads to, or the rule it breaks.
type rulesCase struct {
	Variant  string       `json:"variant"`
	Position string       `json:"position"`
	Seat     int          `json:"seat"`
	Dice     [2]int       `json:"dice"`
	Legal    []string     `json:"legal"`
	Plays    []rulesPlay  `json:"plays"`
	Texts    []rulesParse `json:"texts,omitempty"`
}

// A rulesPlay is a candidate play and Go's answer: "ok CANONICAL POSITION"
// or "rule RULE" (ParsePlay and ApplyPlay, as CheckMove calls them).
type rulesPlay struct {
	Play   string `json:"play"`
	Answer string `json:"answer"`
}

// A rulesParse is a text and what Go's ParsePlay makes of it:
// "ok FORMATTED" or "error".
type rulesParse struct {
	Text   string `json:"text"`
	Answer string `json:"answer"`
}

func applyAnswer(v rules.Variant, p rules.Position, seat int, d rules.Dice, text string) string {
	pl, err := rules.ParsePlay(text)
	if err != nil {
		return "rule " + string(rules.RuleNotation)
	}
	np, c, err := rules.ApplyPlay(v, p, seat, d, pl)
	if err != nil {
		ime, ok := err.(*rules.IllegalMoveError)
		if !ok {
			return "error " + err.Error()
		}
		return "rule " + string(ime.Rule)
	}
	return "ok " + rules.FormatPlay(c) + " " + np.String()
}

func parseAnswer(text string) string {
	pl, err := rules.ParsePlay(text)
	if err != nil {
		return "error"
	}
	return "ok " + rules.FormatPlay(pl)
}

// candidates returns plays to try in p: some legal ones, legal ones of
// other rolls, a legal one with its moves in reverse order, the empty
// play, and random moves of the mover's checkers (with chains, "*" marks
// and repetitions).
func candidates(r *rand.Rand, v rules.Variant, p rules.Position, seat int, d rules.Dice, legal []rules.Play) []string {
	var out []string
	for _, i := range r.Perm(len(legal))[:min(3, len(legal))] {
		t := rules.FormatPlay(legal[i])
		out = append(out, t)
		if f := strings.Fields(t); len(f) > 1 {
			slices.Reverse(f)
			out = append(out, strings.Join(f, " "))
		}
		out = append(out, strings.ReplaceAll(t, "*", ""))
	}
	other := rules.Dice{1 + r.IntN(6), 1 + r.IntN(6)}
	if ls := rules.LegalPlays(v, p, seat, other); len(ls) > 0 {
		out = append(out, rules.FormatPlay(ls[r.IntN(len(ls))]))
	}
	out = append(out, rules.EmptyPlay)
	var from []int
	for q := 1; q <= rules.Bar; q++ {
		if p.Checkers(seat, q) > 0 {
			from = append(from, q)
		}
	}
	for range 4 {
		var ms []string
		for range 1 + r.IntN(3) {
			f := from[r.IntN(len(from))]
			if r.IntN(8) == 0 {
				f = 1 + r.IntN(rules.Bar)
			}
			die := d[r.IntN(2)]
			if r.IntN(4) == 0 {
				die = 1 + r.IntN(6)
			}
			to := f - die
			pt := func(q int) string {
				switch {
				case q == rules.Bar:
					return "bar"
				case q <= 0:
					return "off"
				}
				return fmt.Sprint(q)
			}
			m := pt(f) + "/"
			if r.IntN(5) == 0 && to > 1 {
				m += pt(to) + "/"
				to -= 1 + r.IntN(6)
			}
			m += pt(to)
			if r.IntN(4) == 0 && to > 0 {
				m += "*"
			}
			if r.IntN(6) == 0 {
				m += fmt.Sprintf("(%d)", 2+r.IntN(2))
			}
			ms = append(ms, m)
		}
		out = append(out, strings.Join(ms, " "))
	}
	return out
}

// noise returns texts for the notation parser: pieces of notation put
// together at random, with the odd character that is no part of it.
func noise(r *rand.Rand) []string {
	pieces := []string{"24", "13", "8", "6", "1", "0", "25", "+5", "-3", "07", "bar", "off", "/", "/", "/", "*", " ", "(2)", "(4)", "(5)", "(", ")", "ğ", "-", "  "}
	var out []string
	for range 6 {
		var b strings.Builder
		for range 1 + r.IntN(7) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		out = append(out, b.String())
	}
	return out
}

// rulesCases plays games of every variant, half choosing plays with
// rules.Choose and half at random among the legal ones, and records each
// position before a turn with Go's answers.
func rulesCases(t testing.TB, gamesPerVariant int) []rulesCase {
	var cases []rulesCase
	for vi, v := range rules.AllVariants() {
		for k := range gamesPerVariant {
			r := rand.New(rand.NewPCG(uint64(vi), uint64(k)))
			p, seat := rules.Start(v), k%2
			for turn := 0; turn < 300; turn++ {
				if _, over := rules.Outcome(v, p); over {
					break
				}
				d := rules.Dice{1 + r.IntN(6), 1 + r.IntN(6)}
				legal := rules.LegalPlays(v, p, seat, d)
				c := rulesCase{Variant: string(v), Position: p.String(), Seat: seat, Dice: d}
				for _, l := range legal {
					c.Legal = append(c.Legal, rules.FormatPlay(l))
				}
				for _, text := range candidates(r, v, p, seat, d, legal) {
					c.Plays = append(c.Plays, rulesPlay{text, applyAnswer(v, p, seat, d, text)})
				}
				if turn%10 == 0 {
					for _, text := range noise(r) {
						c.Texts = append(c.Texts, rulesParse{text, parseAnswer(text)})
					}
				}
				cases = append(cases, c)
				var pick rules.Play
				if k%2 == 0 {
					pick = rules.Choose(v, p, seat, d, r)
				} else {
					pick = legal[r.IntN(len(legal))]
				}
				np, _, err := rules.ApplyPlay(v, p, seat, d, pick)
				if err != nil {
					t.Fatalf("%s: the chosen play %s: %v", v, rules.FormatPlay(pick), err)
				}
				p, seat = np, 1-seat
			}
		}
	}
	return cases
}

// TestJSRulesAgree is the differential test of the JavaScript port of the
// rules engine (verifier/js/src/rules) against package rules: on positions
// of games of every variant, played with rules.Choose and at random, the
// same legal plays in the same canonical texts, and for each candidate play
// (legal ones, in another order, without their "*", legal ones of another
// roll, the empty play, random moves) the same canonical text and position,
// or the same rule broken; and the same answers of the notation parser on
// random texts.
func TestJSRulesAgree(t *testing.T) {
	node := nodeAvailable(t)
	// Games per variant: two in make test (803 positions), twenty with
	// ZARLOG_SLOW=1 (8,238).
	games := 2
	switch {
	case os.Getenv("ZARLOG_SLOW") != "":
		games = 20
	case testing.Short():
		games = 1
	}
	cases := rulesCases(t, games)
	b, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(jsPackage, "tools", "rules.mjs"), file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node tools/rules.mjs: %v\n%s", err, stderr.Bytes())
	}
	var got []rulesCase
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(cases) {
		t.Fatalf("node answered %d cases of %d (%v)", len(got), len(cases), err)
	}
	positions, plays, texts, diffs := 0, 0, 0, 0
	rulesSeen := map[string]bool{}
	for i, c := range cases {
		g := got[i]
		positions++
		if !slices.Equal(c.Legal, g.Legal) {
			diffs++
			t.Errorf("%s %s seat %d dice %v: legal plays\nGo: %q\nJS: %q", c.Variant, c.Position, c.Seat, c.Dice, c.Legal, g.Legal)
		}
		for j, p := range c.Plays {
			plays++
			if strings.HasPrefix(p.Answer, "rule ") {
				rulesSeen[p.Answer] = true
			}
			if j >= len(g.Plays) || g.Plays[j].Answer != p.Answer {
				diffs++
				t.Errorf("%s %s seat %d dice %v play %q: Go %q, JS %+v", c.Variant, c.Position, c.Seat, c.Dice, p.Play, p.Answer, g.Plays[min(j, len(g.Plays)-1)])
			}
		}
		for j, x := range c.Texts {
			texts++
			if j >= len(g.Texts) || g.Texts[j].Answer != x.Answer {
				diffs++
				t.Errorf("ParsePlay(%q): Go %q, JS %+v", x.Text, x.Answer, g.Texts[min(j, len(g.Texts)-1)])
			}
		}
		if diffs > 20 {
			t.Fatal("too many differences")
		}
	}
	if len(rulesSeen) < 8 {
		t.Errorf("the candidates broke only %d rules: %v", len(rulesSeen), rulesSeen)
	}
	t.Logf("%d positions, %d plays, %d notation texts compared (%d rules broken among them); %d differences", positions, plays, texts, len(rulesSeen), diffs)
}

// sixtyMoves is a game of 60 moves (and 60 rolls) of backgammon, its moves
// logged: the game the rules engines are timed on.
const sixtyMoves = "../testdata/moves/valid/moves-backgammon-resigned-60-rolls.json"

// BenchmarkRulesEngines times the moves check of a 60-move game three
// ways, for the choice of docs/RULES.md §7: the Go rules engine
// (rules/movecheck, as zarlog-verify runs it), its JavaScript port (what the
// pages ship) and the Go engine compiled to WebAssembly (GOOS=js
// GOARCH=wasm, built here from verifier/js/tools/_wasm/movecheck), the last
// two in Node and in Chromium, each in the same process after a warm-up:
// ms per game, and the time to load the WebAssembly. It also reports the
// WebAssembly's bytes (raw and gzip).
func BenchmarkRulesEngines(b *testing.B) {
	data, err := os.ReadFile(sixtyMoves)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("go", func(b *testing.B) {
		ev, err := verifier.Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		evs := make([]*events.Event, len(ev.Log.Entries))
		for i, e := range ev.Log.Entries {
			if evs[i], err = events.Parse(e.Leaf); err != nil {
				b.Fatal(err)
			}
		}
		beacons := events.BeaconsOf(drand.ChainByHash)
		for b.Loop() {
			var g *events.Game
			for i, e := range evs {
				env := events.Env{Emitter: e.Emitter, Index: ev.Log.Entries[i].Index, SkipClockChecks: true, Beacons: beacons, Moves: movecheck.Checker{}}
				if g, err = events.Apply(g, e, env); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/game")
	})
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("no node")
	}
	dir := b.TempDir()
	wasm := filepath.Join(dir, "movecheck.wasm")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", wasm, "./verifier/js/tools/_wasm/movecheck")
	build.Dir = ".."
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the WebAssembly: %v\n%s", err, out)
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatal(err)
	}
	wasmExec := filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec.js")
	report := func(b *testing.B, m map[string]float64) {
		b.ReportMetric(m["portMsPerGame"], "port-ms/game")
		b.ReportMetric(m["wasmMsPerGame"], "wasm-ms/game")
		b.ReportMetric(m["wasmLoadMs"], "wasm-load-ms")
	}
	n := "20"
	b.Run("node", func(b *testing.B) {
		out, err := exec.Command(node, filepath.Join(jsPackage, "tools", "_wasm", "measure.mjs"), wasm, wasmExec, sixtyMoves, n).Output()
		if err != nil {
			b.Fatalf("node: %v", err)
		}
		var m map[string]float64
		if err := json.Unmarshal(out, &m); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		report(b, m)
		b.ReportMetric(m["wasmBytes"], "wasm-bytes")
		b.ReportMetric(m["wasmGzip"], "wasm-gzip-bytes")
	})
	if chromiumPath() == "" {
		b.Skip("no Chromium")
	}
	b.Run("chromium", func(b *testing.B) {
		js := `import("esbuild").then(e => e.build({entryPoints: ["tools/_wasm/measure-browser.js"], bundle: true, format: "iife",
			target: "es2020", outfile: process.argv[1], logLevel: "warning"}))`
		bundle := exec.Command(node, "--input-type=module", "-e", js, filepath.Join(dir, "measure.js"))
		bundle.Dir = jsPackage
		if out, err := bundle.CombinedOutput(); err != nil {
			b.Fatalf("esbuild: %v\n%s", err, out)
		}
		files := map[string]string{"/movecheck.wasm": wasm, "/wasm_exec.js": wasmExec, "/bundle.json": sixtyMoves, "/measure.js": filepath.Join(dir, "measure.js")}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/" {
				fmt.Fprint(w, `<!doctype html><meta charset="utf-8"><script src="/measure.js"></script>`)
				return
			}
			if f, ok := files[r.URL.Path]; ok {
				http.ServeFile(w, r, f)
				return
			}
			http.NotFound(w, r)
		}))
		defer srv.Close()
		ctx := tab(b, newBrowser(b))
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/?n="+n)); err != nil {
			b.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.zarlogMeasure !== undefined`)); err != nil {
			b.Fatal(err)
		}
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](`window.zarlogMeasure`))
		if err != nil {
			b.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil || m["error"] != nil {
			b.Fatalf("%v: %s", err, raw)
		}
		f := map[string]float64{}
		for k, v := range m {
			if x, ok := v.(float64); ok {
				f[k] = x
			}
		}
		report(b, f)
	})
}
