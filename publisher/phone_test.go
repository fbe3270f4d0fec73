package publisher

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/zarlog/zarlog/verifier"
)

// axeSource returns axe-core's script, installed by .ci/deps (npm ci in
// testdata/axe); the test skips without it, except under CI.
func axeSource(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "axe", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("axe-core is not installed (.ci/deps installs it): %v", err)
		}
		t.Skipf("axe-core is not installed (run .ci/deps, or npm ci in publisher/testdata/axe): %v", err)
	}
	return string(b)
}

// An axeResult is what the test keeps of axe.run.
type axeResult struct {
	Violations []struct {
		ID     string `json:"id"`
		Impact string `json:"impact"`
		Help   string `json:"help"`
		Nodes  []struct {
			Target []any `json:"target"`
		} `json:"nodes"`
	} `json:"violations"`
}

// TestPagesForPlayers opens every page a player reads (the landing page, a
// search with no match and one with two, the game pages of every scheme,
// one in play and one between named players, a player page, /stats and
// the offline auditor) in real Chromium, in English, Turkish and Arabic,
// at phone width (390 px, a touch screen) and at 1280 px, and checks:
//
//   - no horizontal scrolling: the document is no wider than the window;
//   - a finished game's verdict ("Every roll checked") is on the first
//     screen of a phone, without scrolling;
//   - the log's key as rendered is the key: its text, its selection (what
//     a copy takes) and its left-to-right order on screen, in every
//     language;
//   - axe-core finds no serious or critical accessibility violation
//     (WCAG 2 A and AA, colour contrast included).
//
// With ZARLOG_UPDATE_GOLDEN=1 it also writes the screenshots of
// docs/PAGES.md into docs/pages/.
func TestPagesForPlayers(t *testing.T) {
	axe := axeSource(t)
	browser := newBrowser(t)
	f := testFixture(t)
	var st Stats
	for _, id := range f.played {
		_, ev, err := Summarize(id, f.games[id].Bundle)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range ev.Tavlarena.Rolls {
			if r.Kind == "opening" {
				st.Opening.Pairs[r.Dice[0]-1][r.Dice[1]-1]++
			} else {
				st.Play.Pairs[r.Dice[0]-1][r.Dice[1]-1]++
			}
		}
		st.Games++
	}
	st.LogSize = 1000
	srv := newTestPages(t, f, fixedStats(st))
	ayse := f.players["Ayşe"].String()
	seal := mustSummary(t, f, f.played[0]).Seals[0].String()
	pages := []struct {
		name, path string
		verdict    bool // a finished game's page: the verdict must pass and show on a phone's first screen
	}{
		{"landing", "/", false},
		{"search-none", "/search?q=zzzz-zzzz", false},
		{"search-two", "/search?q=" + strings.ToLower(strings.ReplaceAll(seal, "-", "")), false},
		{"game-tavlarena", "/games/" + f.ids["tavlarena-v1"], true},
		{"game-anchored", "/games/" + f.ids["anchored-v1"], true},
		{"game-perroll", "/games/" + f.ids["per-roll-v1"], true},
		{"game-named", "/games/" + f.played[0], true},
		{"game-inplay", "/games/" + f.inPlay, false},
		{"player", "/players/" + testEmitter + "/" + ayse, false},
		{"stats", "/stats", false},
		{"auditor", "/auditor.html", false},
	}
	shots := os.Getenv("ZARLOG_UPDATE_GOLDEN") != ""
	guard := newPageGuard()
	for _, pg := range pages {
		for _, l := range verifier.Langs() {
			for _, width := range []int64{390, 1280} {
				name := fmt.Sprintf("%s/%s/%d", pg.name, l, width)
				t.Run(name, func(t *testing.T) {
					ctx := tab(t, browser)
					var opts []chromedp.EmulateViewportOption
					height := int64(800)
					if width < 500 {
						height = 844
						opts = append(opts, chromedp.EmulateMobile)
					}
					sep := "?"
					if strings.Contains(pg.path, "?") {
						sep = "&"
					}
					url := srv.URL + pg.path + sep + "lang=" + string(l)
					if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height, opts...), chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("main, body"))); err != nil {
						t.Fatal(err)
					}
					if pg.verdict {
						if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#verdict[data-exit]"))); err != nil {
							t.Fatal(err)
						}
						exit, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("verdict").dataset.exit`))
						main, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("verdict-main").textContent`))
						if want := verifier.MessageCatalog()["SuPass"].In(l); exit != "0" || main != want {
							t.Errorf("verdict: exit %s, %q; want 0, %q", exit, main, want)
						}
						if width < 500 {
							bottom, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.getElementById("verdict").getBoundingClientRect().bottom`))
							if err != nil || bottom > float64(height) {
								t.Errorf("the verdict ends at %.0f px, below the first screen of %d px (%v)", bottom, height, err)
							}
						}
					}
					sw, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[document.documentElement.scrollWidth, window.innerWidth]`))
					if err != nil {
						t.Fatal(err)
					}
					if sw[0] > sw[1] {
						wide, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5).slice(0, 5).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right))`))
						t.Errorf("the page is %.0f px wide in a window of %.0f px: %v", sw[0], sw[1], wide)
					}
					checkKeyRendering(t, ctx, f.vkey)
					if l != English {
						checkNoTokens(t, ctx)
					}
					guard.check(t, name, l, renderedText(t, ctx)) // the words, as TestEveryPage reads them
					checkAxe(t, ctx, axe)
					if shots && screenshotWanted(pg.name, l, width) {
						b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
						if err != nil {
							t.Fatal(err)
						}
						out := filepath.Join("..", "docs", "pages", fmt.Sprintf("%s.%s.%d.png", pg.name, l, width))
						if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(out, b, 0o644); err != nil {
							t.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// screenshotWanted says which pages docs/PAGES.md shows: a game page on a
// phone in every language, the others on a phone in English (and the player
// page and /stats in Arabic), and the game and player pages on a desktop.
func screenshotWanted(page string, l verifier.Lang, width int64) bool {
	switch {
	case page == "game-named" && width < 500:
		return true
	case l == Arabic && width < 500:
		return page == "player" || page == "stats" // the plots placed for right to left
	case l != English:
		return false
	case width < 500:
		return page == "landing" || page == "player" || page == "stats"
	}
	return page == "game-named" || page == "player"
}

func mustSummary(t *testing.T, f pageFixture, id string) GameSummary {
	t.Helper()
	s, _, err := Summarize(id, f.games[id].Bundle)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkKeyRendering checks every rendering of the log's key on the page:
// the text of the landing page's key and the game page's key field are
// the key, the selection of the text (what a copy takes) is the key, and
// its first character is drawn left of its last on one line, so that no
// right-to-left layout has moved a character across it.
func checkKeyRendering(t *testing.T, ctx context.Context, key string) {
	t.Helper()
	js := `(() => {
		const out = {};
		const text = document.getElementById("log-key-text");
		if (text) {
			out.text = text.textContent;
			const r = document.createRange();
			r.selectNodeContents(text);
			const sel = getSelection();
			sel.removeAllRanges();
			sel.addRange(r);
			out.selected = sel.toString();
			sel.removeAllRanges();
			const node = text.firstChild, n = node.length;
			const at = i => { const q = document.createRange(); q.setStart(node, i); q.setEnd(node, i + 1); return q.getBoundingClientRect(); };
			const first = at(0), last = at(n - 1);
			out.oneLine = Math.abs(first.top - last.top) < 2;
			out.ordered = first.left < last.left;
			out.direction = getComputedStyle(text).direction;
		}
		const input = document.getElementById("log-key");
		if (input) out.input = input.value;
		return JSON.stringify(out);
	})()`
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Text, Selected, Input, Direction string
		OneLine, Ordered                 bool
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	if got.Text != "" || got.Selected != "" {
		if got.Text != key || got.Selected != key {
			t.Errorf("the key reads %q and selects as %q, want %q", got.Text, got.Selected, key)
		}
		if got.Direction != "ltr" || (got.OneLine && !got.Ordered) {
			t.Errorf("the key is laid out %s (on one line: %v, first character left of the last: %v)", got.Direction, got.OneLine, got.Ordered)
		}
	}
	if got.Input != "" && got.Input != key {
		t.Errorf("the key field holds %q, want %q", got.Input, key)
	}
}

// untranslated are tokens of the formats and the command line that must
// not appear in a Turkish or Arabic page's words (they may inside code:
// commands, keys, ids). The first ones are words, never right in either
// language; the rest are names of the formats, which the auditors' part
// of a page uses as names (an event type, a scheme) and a player's part
// never does.
var (
	untranslatedWords = []string{"turkish-reroll", "western", "seq", "log-inclusion", "log-signature", "log-order",
		"log-agreement", "log-witnesses", "log-emitter-signatures", "expected-commitment", "PASS", "FAIL", "SKIP",
		"rollId", "opening", "reroll"}
	untranslatedNames = []string{"commit", "tavlarena-v1", "anchored-v1", "per-roll-v1", "--", "seat", "secondFrom"}
)

// checkNoTokens looks through the text a reader sees, outside code, keys,
// ids and commands, for the untranslated words, and outside the auditors'
// part for the format's names too.
func checkNoTokens(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, part := range []struct {
		skip   string
		tokens []string
	}{{"", untranslatedWords}, {", #auditors, .checks", untranslatedNames}} {
		checkTokens(t, ctx, part.skip, part.tokens)
	}
}

func checkTokens(t *testing.T, ctx context.Context, skipMore string, tokens []string) {
	t.Helper()
	js := `(() => {
		const skip = "code, pre, kbd, script, style, .hex, .key, .seal-code, .seal-small, [dir=ltr], input, noscript, title` + skipMore + `";
		const out = [];
		const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
		for (let n = w.nextNode(); n; n = w.nextNode()) {
			if (n.parentElement.closest(skip)) continue;
			if (n.parentElement.closest("[hidden]")) continue;
			out.push(n.textContent);
		}
		return out.join(" ");
	})()`
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatal(err)
	}
	// A flag outside code turns around in a right-to-left sentence.
	if loc := regexp.MustCompile(`--[a-z]`).FindStringIndex(text); loc != nil {
		from, to := max(0, loc[0]-60), min(len(text), loc[1]+60)
		t.Errorf("a flag outside code in the page's text: …%s…", text[from:to])
	}
	for _, tok := range tokens {
		re := regexp.MustCompile(`(^|[^\pL\pN-])` + regexp.QuoteMeta(tok) + `($|[^\pL\pN-])`)
		if loc := re.FindStringIndex(text); loc != nil {
			from, to := max(0, loc[0]-60), min(len(text), loc[1]+60)
			t.Errorf("untranslated %q in the page's text: …%s…", tok, text[from:to])
		}
	}
}

// checkAxe runs axe-core on the page and fails on every serious or
// critical violation, naming the rule and the elements.
func checkAxe(t *testing.T, ctx context.Context, axe string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axe+";true")); err != nil {
		t.Fatalf("loading axe-core: %v", err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]}}).then(r => JSON.stringify({violations: r.violations}))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("running axe-core: %v", err)
	}
	var res axeResult
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		t.Fatal(err)
	}
	for _, v := range res.Violations {
		if v.Impact != "serious" && v.Impact != "critical" {
			continue
		}
		var where []string
		for i, n := range v.Nodes {
			if i == 4 {
				where = append(where, "…")
				break
			}
			where = append(where, fmt.Sprint(n.Target...))
		}
		t.Errorf("axe %s (%s): %s: %s", v.ID, v.Impact, v.Help, strings.Join(where, ", "))
	}
}
