package publisher

// The guard of the pages' words: every page the publisher can produce, in
// every language, for every scheme, way of ending and state of a game, is
// rendered and read as a player reads it. A page fails on a formatting
// error (%!), a missing text (⟦key⟧, or a message id where its words
// should be), a command-line flag outside a command example, and, in
// Turkish and Arabic, an English word outside code, identifiers, names and
// addresses.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/verifier"
	"github.com/zarlog/zarlog/verifier/cli"
)

// allTexts are every table of words that a page, its scripts or the
// verifier can show.
func allTexts() []verifier.Text {
	return slices.Concat(verifier.Texts(), cli.Texts(), pageTexts, browserMessages)
}

var (
	// wordRE is a word of Latin letters, as the English texts write them.
	wordRE = regexp.MustCompile(`[A-Za-z]{3,}`)
	// notWords are the parts of a sentence that are not words of its
	// language: quoted names and values, addresses, keys, hex, ids, seal
	// codes, scheme and file names, paths in a file.
	notWords = regexp.MustCompile(`"[^"]*"|«[^»]*»|https?://\S+|\S+\+[0-9a-f]{8}\+\S+|[0-9a-f]{8,}|[0-9a-f]{8}-[0-9a-f]{4}-\S+|` +
		`[A-Za-z0-9]+(?:[.-][A-Za-z0-9]+)*\.(?:example|localhost|json|py|html|org|com|md)\b|\b[a-z]+(?:-[a-z]+)*-v1\b|` +
		`\b[0-9A-Z]{4}-[0-9A-Z]{4}\b|\b[a-z]+(?:-[a-z]+)+\b|\b[a-z]+(?:\.[a-z]+)*\[\d+\](?:\.[a-z]+)*|/[a-z][a-z-]*(?:/\S*)?|\b[a-z]+[A-Z]\w*`)
	// flagInText is a command-line flag.
	flagInText = regexp.MustCompile(`(^|[^\w-])--[a-z][a-z-]+`)
)

// englishOnly returns the words that English texts use and no Turkish or
// Arabic text does: in a Turkish or Arabic page, such a word is English
// left untranslated. Words the translations keep as they are (drand,
// quicknet, JavaScript, commit, reveal, backgammon, …) are not among them.
func englishOnly() map[string]bool {
	en, other := map[string]bool{}, map[string]bool{}
	for _, x := range allTexts() {
		w := x.Words()
		for _, m := range wordRE.FindAllString(notWords.ReplaceAllString(w[0], " "), -1) {
			en[strings.ToLower(m)] = true
		}
		for _, s := range w[1:] {
			for _, m := range wordRE.FindAllString(notWords.ReplaceAllString(s, " "), -1) {
				other[strings.ToLower(m)] = true
			}
		}
	}
	for _, m := range months[0] {
		en[strings.ToLower(m)] = true
	}
	for w := range other {
		delete(en, w)
	}
	return en
}

// messageIDs are the names of every text: a name on a page, followed by
// "(", is a message a script could not find (render.js prints it so).
func messageIDs() map[string]bool {
	ids := map[string]bool{}
	for _, x := range allTexts() {
		ids[x.Name()] = true
	}
	return ids
}

var idCallRE = regexp.MustCompile(`\b([A-Z][A-Za-z0-9]*(?:-[a-z-]+)?)\(`)

// A pageGuard checks the text of pages.
type pageGuard struct {
	english map[string]bool
	ids     map[string]bool
	pages   int // pages checked
}

func newPageGuard() *pageGuard { return &pageGuard{english: englishOnly(), ids: messageIDs()} }

// check checks the text runs of the page name in language l.
func (g *pageGuard) check(t testing.TB, name string, l verifier.Lang, runs []textRun) {
	t.Helper()
	g.pages++
	if len(runs) < 5 {
		t.Errorf("%s (%s): only %d runs of text: the page is not read", name, l, len(runs))
	}
	var english []string
	for _, r := range runs {
		s := r.Text
		if strings.Contains(s, "%!") {
			t.Errorf("%s (%s): a formatting error in %q", name, l, s)
		}
		if strings.Contains(s, "⟦") {
			t.Errorf("%s (%s): a missing text in %q", name, l, s)
		}
		for _, m := range idCallRE.FindAllStringSubmatch(s, -1) {
			if g.ids[m[1]] {
				t.Errorf("%s (%s): the message %s is shown as its id: %q", name, l, m[1], s)
			}
		}
		if !strings.Contains(">"+r.Path+">", ">pre>") && flagInText.MatchString(s) {
			t.Errorf("%s (%s): a command-line flag in the text %q (%s)", name, l, s, r.Path)
		}
		if l == English || r.InCode {
			continue
		}
		for _, w := range wordRE.FindAllString(notWords.ReplaceAllString(s, " "), -1) {
			if g.english[strings.ToLower(w)] {
				english = append(english, fmt.Sprintf("%q in %q", w, s))
			}
		}
	}
	if len(english) > 0 {
		t.Errorf("%s (%s): English words outside code: %s", name, l, strings.Join(english, "; "))
	}
}

// errorsOf records the errors of a check, for TestPageGuard.
type errorsOf struct {
	testing.TB
	errs []string
}

func (e *errorsOf) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

// TestPageGuard: the guard finds each fault it looks for, and passes a
// Turkish and an Arabic sentence with identifiers, names and addresses in
// them.
func TestPageGuard(t *testing.T) {
	g := newPageGuard()
	ok := []textRun{{Text: "Her atış kontrol edildi"}, {Text: "log.zarlog.example kayıt defteri"}, {Text: "drand quicknet turu 657413"},
		{Text: `"tavla-east" sunucusu`}, {Text: "5CJ3-5ZCZ mühür kodu"}, {Text: "zarlog-verify --log-key VKEY f.json", Path: "pre>code", InCode: true},
		{Text: "Ayşe, Mehmet"}, {Text: "tavlarena-v1 yöntemi"}, {Text: "log.entries[3] girdisi"}}
	for _, l := range []verifier.Lang{Turkish, Arabic} {
		e := &errorsOf{TB: t}
		g.check(e, "good", l, ok)
		if len(e.errs) != 0 {
			t.Errorf("%s: a good page fails: %v", l, e.errs)
		}
	}
	for _, c := range []struct {
		run  textRun
		want string
	}{
		{textRun{Text: "Mehmet won (%!d(string=Points1) points)"}, "formatting error"},
		{textRun{Text: "Mehmet kazandı (⟦Points1⟧)"}, "missing text"},
		{textRun{Text: "VdDiceTav(24)"}, "shown as its id"},
		{textRun{Text: "kontrol edilmedi: --emitter-key verilmedi", Path: "li"}, "command-line flag"},
		{textRun{Text: "Every roll checked"}, "English words"},
		{textRun{Text: "1 Aralık 2026 · 1 December 2026"}, "English words"},
	} {
		e := &errorsOf{TB: t}
		g.check(e, "bad", Turkish, append(slices.Clone(ok), c.run))
		if !slices.ContainsFunc(e.errs, func(s string) bool { return strings.Contains(s, c.want) }) {
			t.Errorf("%q: the guard says %v, want: %s", c.run.Text, e.errs, c.want)
		}
	}
}

// A guardGame is a game of the guard's fixture and what it stands for.
type guardGame struct {
	name string // "tavlarena-v1 gammon, 2 points"
	id   string
}

// guardFixture is a log of games of every scheme, every way a game ends
// and every state a page shows, with the pages over them.
type guardFixture struct {
	games   memGames
	list    []guardGame
	index   *Store
	vkey    string
	player  string // a seat id with games
	seal    string // a seal code shared by two games
	bundles map[string][]byte
}

// guardGames builds the guard's fixture: played games (the rules engine
// replays them) ending single, gammon and backgammon, with the cube's
// points, resigned, abandoned with and without a winner, against the
// computer; a game of each scheme from the pages' fixture, one of each
// scheme in play, and games that fail verification.
func guardGames(t *testing.T) guardFixture {
	t.Helper()
	base := testFixture(t)
	signer, _ := testKey(t, testEmitter)
	log := newMemLog(t)
	g := guardFixture{games: memGames{}, vkey: log.vkey, bundles: map[string][]byte{}}
	add := func(name, id string, game Game) {
		g.games[id] = game
		g.list = append(g.list, guardGame{name, id})
		if game.Status == GameFinished {
			g.bundles[id] = game.Bundle
		}
	}
	var stored []StoredBundle
	bundle := func(name string, c testonly.Config, edit func(*events.End)) {
		t.Helper()
		p, err := testonly.Play(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if edit != nil {
			for i, b := range p.Bodies {
				if e, ok := b.(events.End); ok {
					edit(&e)
					p.Bodies[i] = e
				}
			}
		}
		evs, err := testonly.Events(c, p.Bodies, signer.(events.Signer))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var leaves []IndexedLeaf
		for _, ev := range evs {
			leaf, err := events.Format(ev)
			if err != nil {
				t.Fatal(err)
			}
			leaves = append(leaves, IndexedLeaf{Index: log.append(t, leaf), Leaf: leaf})
		}
		b, err := BuildBundle(context.Background(), log, leaves, log.checkpoint(t))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		add(name, evs[0].Game, Game{Status: GameFinished, Bundle: b})
		stored = append(stored, StoredBundle{Index: uint64(len(stored)), Game: evs[0].Game, Bundle: b})
	}
	// A played game whose last game on the board ends with multiplier m.
	seats := [2]dice.UUID{labelUUID("guard/ayşe"), labelUUID("guard/mehmet")}
	g.player = seats[0].String()
	ending := func(m int) testonly.Config {
		t.Helper()
		for i := range 400 {
			c := testonly.Config{Scheme: events.Tavlarena, Variant: rules.Backgammon, Label: fmt.Sprintf("guard-%d-%d", m, i),
				Seats: seats, Settings: `"seatNames":["Ayşe","Mehmet"]`, Start: time.Date(2026, 12, 1, 9, i%60, 0, 0, time.UTC)}
			p, err := testonly.Play(c)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(p.Results); n > 0 && p.Results[n-1].Multiplier == m && !p.Results[n-1].Draw() {
				return c
			}
		}
		t.Fatalf("no game of 400 ends with multiplier %d", m)
		return testonly.Config{}
	}
	bundle("tavlarena-v1, a single game, 1 point", ending(1), nil)
	bundle("tavlarena-v1, a gammon, 2 points", ending(2), nil)
	bundle("tavlarena-v1, a backgammon, 3 points", ending(3), nil)
	bundle("tavlarena-v1, a gammon with the cube at 4, 8 points", ending(2), func(e *events.End) { e.Points *= 4 })
	bundle("tavlarena-v1 tavla, resigned", testonly.Config{Scheme: events.Tavlarena, Variant: rules.Tavla, Opening: rules.OpeningTurkishReroll,
		Label: "guard-resigned", MaxRolls: 14, Seats: seats, Settings: `"seatNames":["Ayşe","Mehmet"]`}, nil)
	bundle("tavlarena-v1, abandoned, a winner given", testonly.Config{Scheme: events.Tavlarena, Variant: rules.Portes, Label: "guard-abandoned",
		MaxRolls: 9, Unlogged: true}, func(e *events.End) { e.Result, e.Winner, e.Points = events.Abandoned, 1, 1 })
	bundle("tavlarena-v1, abandoned, no winner", testonly.Config{Scheme: events.Tavlarena, Variant: rules.Plakoto, Label: "guard-abandoned-none",
		MaxRolls: 7, Unlogged: true}, func(e *events.End) { e.Result, e.Winner, e.Points = events.Abandoned, events.NoWinner, 0 })
	bundle("tavlarena-v1 against the computer", testonly.Config{Scheme: events.Tavlarena, Variant: rules.Backgammon, Label: "guard-computer",
		MaxRolls: 20, Settings: `"opponent":"computer"`}, nil)
	bundle("anchored-v1 plakoto, played", testonly.Config{Scheme: events.Anchored, Variant: rules.Plakoto, Label: "guard-anchored"}, nil)
	bundle("anchored-v1 against the computer", testonly.Config{Scheme: events.Anchored, Variant: rules.Portes, Label: "guard-anchored-computer",
		MaxRolls: 16, Settings: `"opponent":"computer"`}, nil)
	bundle("per-roll-v1, a match of 2 games", testonly.Config{Scheme: events.PerRoll, Variant: rules.Backgammon, Label: "guard-perroll", Games: 2}, nil)
	bundle("tavlarena-v1 fevga, moves not logged", testonly.Config{Scheme: events.Tavlarena, Variant: rules.Fevga, Label: "guard-unlogged", Unlogged: true}, nil)
	// The pages' fixture: a game of each scheme, one in play.
	for _, s := range []string{"tavlarena-v1", "anchored-v1", "per-roll-v1"} {
		add(s+" (the pages' fixture)", base.ids[s], base.games[base.ids[s]])
	}
	add("tavlarena-v1 in play", base.inPlay, base.games[base.inPlay])
	for _, s := range []string{"anchored-v1", "per-roll-v1"} {
		evs := base.games[base.ids[s]].Bundle
		ev, err := verifier.Parse(evs)
		if err != nil {
			t.Fatal(err)
		}
		var leaves [][]byte
		for _, e := range ev.Log.Entries[:len(ev.Log.Entries)/2] {
			leaves = append(leaves, e.Leaf)
		}
		add(s+" in play", "inplay-"+s, Game{Status: GameInPlay, Events: leaves})
	}
	// Games that fail verification: a changed roll, a checkpoint of another
	// log, a seed that does not match the seal.
	tav := base.games[base.ids["tavlarena-v1"]].Bundle
	add("tavlarena-v1, a roll changed", "failed-roll", Game{Status: GameFinished, Bundle: tamperBundleRoll(t, tav, 5)})
	for _, v := range [][2]string{
		{"anchored-v1, under another log's key", "evidence/valid/bundle-anchored-8-rolls.json"},
		{"per-roll-v1, under another log's key", "evidence/valid/bundle-per-roll-4-rolls.json"},
		{"tavlarena-v1, a logged leaf changed", "evidence/invalid/bundle-leaf-tampered.json"},
	} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "dice", v[1]))
		if err != nil {
			t.Fatal(err)
		}
		add(v[0], "failed-"+strings.TrimSuffix(filepath.Base(v[1]), ".json"), Game{Status: GameFinished, Bundle: b})
	}
	st, err := OpenStore(StoreConfig{Dir: "/guard", Origin: testOrigin, FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	twin := stored[0]
	twin.Index, twin.Game = uint64(len(stored)), "twin-"+twin.Game
	stored = append(stored, twin)
	g.games[twin.Game] = Game{Status: GameFinished, Bundle: twin.Bundle}
	if err := st.Add(context.Background(), 1000, stored); err != nil {
		t.Fatal(err)
	}
	g.index = st
	sum, _, err := Summarize(stored[0].Game, stored[0].Bundle)
	if err != nil {
		t.Fatal(err)
	}
	g.seal = sum.Seals[0].String()
	return g
}

// guardPaths are the pages the guard reads: every page of every game, and
// the landing page, the search (every answer), a player, /stats (with and
// without counts, with a distance), a page not found.
func (g guardFixture) paths() []struct{ name, path string } {
	var out []struct{ name, path string }
	for _, x := range g.list {
		out = append(out, struct{ name, path string }{"game: " + x.name, "/games/" + x.id})
	}
	for _, p := range [][2]string{
		{"landing", "/"},
		{"search: empty", "/search?q="},
		{"search: a seal code of no game", "/search?q=zzzz-zzzz"},
		{"search: a seal code of two games", "/search?q=" + strings.ToLower(g.seal)},
		{"search: not a code or an id", "/search?q=%3F%3F"},
		{"search: an id of nothing", "/search?q=" + labelUUID("nobody").String()},
		{"player", "/players/" + g.player},
		{"stats", "/stats"},
		{"stats, distance 7", "/stats?distance=7"},
		{"not found", "/games/no-such-game"},
	} {
		out = append(out, struct{ name, path string }{p[0], p[1]})
	}
	return out
}

// guardServer serves the guard's pages; stats nil serves /stats without
// counts. The platform's key is given, so that its signatures are checked.
func guardServer(t *testing.T, g guardFixture, stats StatsSource, logKey string) *httptest.Server {
	t.Helper()
	_, emitterKey := testKey(t, testEmitter)
	p, err := NewPages(Config{Games: g.games, Index: g.index, Stats: stats, LogKey: logKey, EmitterKeys: []string{emitterKey}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	p.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func guardStats() Stats {
	var s Stats
	for i := range 1200 {
		d := [2]int{i%6 + 1, (i/6)%6 + 1}
		if i%9 == 0 {
			s.Opening.Add(d)
		} else {
			s.Play.Add(d)
		}
	}
	s.Games, s.LogSize = 40, 9000
	return s
}

// TestEveryPage renders every page the publisher produces for the guard's
// games (every scheme; single, gammon, backgammon, the cube's points,
// resigned, abandoned, no winner, against the computer; finished, in
// play, failing verification), in English, Turkish and Arabic, with the
// log's key and without it, and with statistics and without, and reads
// each as a player does (pageGuard). The offline auditor and the words the
// scripts write are read in Chromium by TestEveryPageInBrowser.
func TestEveryPage(t *testing.T) {
	g := guardGames(t)
	guard := newPageGuard()
	if len(guard.english) < 200 {
		t.Fatalf("only %d English words to look for", len(guard.english))
	}
	for _, w := range []string{"roll", "checked", "points", "won", "player", "seal", "game", "december"} {
		if !guard.english[w] {
			t.Errorf("the English words to look for miss %q", w)
		}
	}
	for _, srv := range []*httptest.Server{
		guardServer(t, g, fixedStats(guardStats()), g.vkey),
		guardServer(t, g, nil, ""),
	} {
		for _, p := range g.paths() {
			for _, l := range verifier.Langs() {
				sep := "?"
				if strings.Contains(p.path, "?") {
					sep = "&"
				}
				resp, body := get(t, srv.URL+p.path+sep+"lang="+string(l))
				if resp.StatusCode >= 500 {
					t.Errorf("%s (%s): %d", p.name, l, resp.StatusCode)
					continue
				}
				guard.check(t, p.name, l, pageText(t, p.name, body))
			}
		}
	}
	t.Logf("%d pages read (%d paths × 3 languages × 2 configurations)", guard.pages, len(g.paths()))
}

// TestEveryPageInBrowser reads in Chromium what the pages' scripts write:
// every finished game's verdict box, checks and rolls in the three
// languages, and the offline auditor with each game's proof file in one of
// them, on a phone (390 px; the words do not depend on the width). Its text, outside code,
// is held to the same rules as TestEveryPage's.
func TestEveryPageInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("Chromium: not in -short")
	}
	browser := newBrowser(t)
	g := guardGames(t)
	srv := guardServer(t, g, fixedStats(guardStats()), g.vkey)
	guard := newPageGuard()
	dir := t.TempDir()
	auditor := filepath.Join(dir, "auditor.html")
	if err := WriteAuditor(auditor, g.vkey); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	games := 0
	for _, x := range g.list {
		if g.games[x.id].Status != GameFinished {
			continue
		}
		games++
		proof := filepath.Join(dir, x.id+".json")
		if err := os.WriteFile(proof, g.bundles[x.id], 0o644); err != nil {
			t.Fatal(err)
		}
		for i, l := range verifier.Langs() {
			ctx := tab(t, browser)
			err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
				chromedp.Navigate(srv.URL+"/games/"+x.id+"?lang="+string(l)),
				chromedp.WaitVisible(chromedp.CSS("#verdict[data-exit]")), chromedp.WaitVisible(chromedp.CSS("#summary")))
			if err != nil {
				t.Fatalf("%s (%s): %v", x.name, l, err)
			}
			kind, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("verdict").dataset.kind`))
			kinds[kind] = true
			guard.check(t, "game page: "+x.name, l, renderedText(t, ctx))

			// The auditor with this game's file, in one of the languages
			// (in turn from game to game): its words are the game page's.
			if (games+i)%3 != 0 {
				continue
			}
			err = chromedp.Do(ctx, chromedp.Navigate("file://"+auditor), chromedp.WaitReady(chromedp.CSS("#file")))
			if err == nil {
				_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => { const s = document.getElementById("lang"); s.value = %q; s.dispatchEvent(new Event("change")); return true; })()`, l)))
			}
			if err == nil {
				err = chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{proof}), chromedp.WaitVisible(chromedp.CSS("#summary")))
			}
			if err != nil {
				t.Fatalf("auditor, %s (%s): %v", x.name, l, err)
			}
			guard.check(t, "auditor: "+x.name, l, renderedText(t, ctx))
		}
	}
	var got []string
	for k := range kinds {
		got = append(got, k)
	}
	sort.Strings(got)
	if want := []string{"checked", "failed"}; !slices.Equal(got, want) {
		t.Errorf("the verdicts shown are %v, want %v", got, want)
	}
	t.Logf("%d pages read in Chromium (game pages and the auditor, 390 px × 3 languages)", guard.pages)
}

// renderedText returns the visible text of the page in ctx as text runs:
// each text node (inside code, pre, kbd or samp, or not) and each
// aria-label, title, alt and placeholder, as a player's screen or screen
// reader has it.
func renderedText(t *testing.T, ctx context.Context) []textRun {
	t.Helper()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](`(() => {
		const out = [];
		const path = (e) => { const p = []; for (; e && e.tagName; e = e.parentElement) p.unshift(e.tagName.toLowerCase()); return p.join(">"); };
		const inCode = (e) => !!(e && e.closest && e.closest("code, pre, kbd, samp"));
		const hidden = (e) => !!(e && e.closest && e.closest("script, style, [hidden], template"));
		const w = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_TEXT);
		for (let n = w.nextNode(); n; n = w.nextNode()) {
			const e = n.parentElement;
			if (!n.textContent.trim() || hidden(e)) continue;
			out.push({Text: n.textContent, InCode: inCode(e), Path: path(e)});
		}
		for (const e of document.querySelectorAll("[aria-label], [title], [alt], [placeholder]")) {
			if (hidden(e)) continue;
			for (const a of ["aria-label", "title", "alt", "placeholder"]) {
				const v = e.getAttribute(a);
				if (v && v.trim()) out.push({Text: v, InCode: inCode(e), Path: path(e) + "@" + a});
			}
		}
		return out;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	var runs []textRun
	if err := json.Unmarshal(raw, &runs); err != nil {
		t.Fatal(err)
	}
	return runs
}

// TestScriptMessages holds the scripts' catalog (verifier/js/src/
// messages.js, generated from the Go tables) to the rules the pages rely
// on: every message in three languages, the same arguments in each, only
// the verbs render() knows, no formatting error; and every message id the
// package's modules and the pages' scripts ask for is in it, those built
// from a prefix and a check's name included.
func TestScriptMessages(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(jsPackage, "src", "messages.js"))
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^  ("[^"]+"): (\[.*\]),$`)
	verb := regexp.MustCompile(`%%|%\[(\d)\]([sdq])|%`)
	cat := map[string][3]string{}
	for _, m := range line.FindAllStringSubmatch(string(src), -1) {
		var id string
		var words []string
		if err := json.Unmarshal([]byte(m[1]), &id); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(m[2]), &words); err != nil || len(words) != 3 {
			t.Errorf("%s: %d texts (%v)", id, len(words), err)
			continue
		}
		var args [3][]string
		for i, w := range words {
			if strings.TrimSpace(w) == "" {
				t.Errorf("%s: the %s text is empty", id, verifier.Langs()[i])
			}
			if strings.Contains(w, "%!") {
				t.Errorf("%s: %q", id, w)
			}
			for _, v := range verb.FindAllStringSubmatch(w, -1) {
				switch {
				case v[0] == "%%":
				case v[1] == "":
					t.Errorf("%s (%s): a verb render() does not know in %q", id, verifier.Langs()[i], w)
				default:
					args[i] = append(args[i], v[1])
				}
			}
			slices.Sort(args[i])
			args[i] = slices.Compact(args[i])
		}
		if !slices.Equal(args[0], args[1]) || !slices.Equal(args[0], args[2]) {
			t.Errorf("%s: the languages take different arguments %v", id, args)
		}
		cat[id] = [3]string(words)
	}
	if len(cat) != len(allTexts())-len(pageTexts) {
		t.Errorf("messages.js has %d messages, the tables the scripts read %d", len(cat), len(allTexts())-len(pageTexts))
	}
	// The ids the scripts ask for.
	asked := map[string]string{}
	literal := regexp.MustCompile(`\b(?:M|T)\(\s*"([A-Za-z][A-Za-z0-9-]*)"`)
	object := regexp.MustCompile(`\{ id: "([A-Za-z][A-Za-z0-9-]*)"`)
	var files []string
	for _, dir := range []string{filepath.Join(jsPackage, "src"), "web"} {
		fs, err := filepath.Glob(filepath.Join(dir, "*.js"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "messages.js") || strings.HasSuffix(f, filepath.Join("web", "verify.js")) {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range []*regexp.Regexp{literal, object} {
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				if !strings.HasSuffix(m[1], "-") { // a prefix: see below
					asked[m[1]] = f
				}
			}
		}
		// Ids built from a prefix and a check's name.
		if strings.HasSuffix(f, "report.js") {
			for _, list := range []struct{ prefix, name string }{{"VdFail-", "VD_FAIL"}, {"VdNC-", "VD_NOT_CHECKED"}} {
				m := regexp.MustCompile(`const ` + list.name + ` = \[([^\]]*)\]`).FindStringSubmatch(string(b))
				if m == nil {
					t.Fatalf("report.js: no %s", list.name)
				}
				for _, n := range regexp.MustCompile(`"([a-z-]+)"`).FindAllStringSubmatch(m[1], -1) {
					asked[list.prefix+n[1]] = f + " (" + list.name + ")"
				}
			}
		}
	}
	if len(asked) < 60 {
		t.Fatalf("found only %d message ids asked for", len(asked))
	}
	for id, f := range asked {
		if _, ok := cat[id]; !ok {
			t.Errorf("%s asks for the message %q, which messages.js does not have", f, id)
		}
	}
}

// TestPageTextKeys holds the Go code of the pages to its texts: every key
// text() is called with exists, those made of a prefix and a value
// (Result-, Variant-, Kind-, SecondFrom-, Say-, Need-, Opening-) for every
// value the code can give.
func TestPageTextKeys(t *testing.T) {
	call := regexp.MustCompile(`\btext\((?:l|v\.Lang|English|Turkish|Arabic), "([A-Za-z0-9-]+)"[,)]`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(b), -1) {
			n++
			if _, ok := pageWords[m[1]]; !ok {
				t.Errorf("%s: text %q is used but not defined", f, m[1])
			}
		}
	}
	if n < 40 {
		t.Fatalf("found only %d calls of text()", n)
	}
	var keys []string
	for _, r := range []events.Result{events.Finished, events.Resigned, events.Abandoned} {
		keys = append(keys, "Result-"+string(r), "Result-"+string(r)+"-none")
	}
	for _, v := range rules.AllVariants() {
		keys = append(keys, "Variant-"+string(v))
	}
	for _, k := range []dice.Kind{dice.KindOpening, dice.KindReroll, dice.KindTurn} {
		keys = append(keys, "Kind-"+string(k))
	}
	for _, s := range []events.SecondFrom{events.FromClient, events.FromServer} {
		keys = append(keys, "SecondFrom-"+string(s))
	}
	for v := TooFew; v <= Low; v++ {
		keys = append(keys, "Say-"+verdictClass[v])
	}
	for _, need := range Needs() {
		keys = append(keys, "Need-"+need.String(), "Need-"+need.String()+"-why")
	}
	for _, o := range []dice.Opening{dice.OpeningWestern, dice.OpeningTurkishReroll} {
		keys = append(keys, "Opening-"+string(o))
	}
	keys = append(keys, "StatementNote", "StatementNoteKeys", "StatementNoteNoKey", "Commitment", "Fingerprint")
	for _, k := range keys {
		if _, ok := pageWords[k]; !ok {
			t.Errorf("text %q can be asked for but is not defined", k)
		}
	}
}
