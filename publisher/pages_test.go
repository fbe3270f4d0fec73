package publisher

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/verifier"
	"github.com/zarlog/zarlog/verifier/cli"
)

// memGames is a GameSource over a map.
type memGames map[string]Game

func (m memGames) Game(_ context.Context, id string) (Game, error) {
	g, ok := m[id]
	if !ok {
		return Game{}, fmt.Errorf("game %q: %w", id, ErrNoGame)
	}
	return g, nil
}

// A pageFixture is a log with a finished game of each scheme, one game in
// play, and the pages over them.
type pageFixture struct {
	vkey   string
	ids    map[string]string // scheme → game id
	games  memGames
	inPlay string
	// index holds every finished game's bundle: the three above and the
	// played games of fixturePlayers.
	index   *Store
	played  []string // the played games' ids, in the order they finished
	twin    string   // a game in the index with played[0]'s bundle
	players map[string]dice.UUID
}

// fixturePlayers are the named players of the fixture's played games.
var fixturePlayers = []string{"Ayşe", "Mehmet", "Zeynep"}

var (
	fixtureOnce sync.Once
	fixture     pageFixture
	fixtureErr  error
)

// testFixture builds the fixture once per test binary: real games signed by
// an emitter key, interleaved in an in-memory log, their bundles made by
// BuildBundle at a signed checkpoint.
func testFixture(t testing.TB) pageFixture {
	t.Helper()
	fixtureOnce.Do(func() {
		ft := &fixtureT{TB: t}
		defer func() {
			if r := recover(); r != nil && r != errFixture {
				panic(r)
			}
		}()
		signer, _ := testKey(ft, testEmitter)
		log := newMemLog(ft)
		games := [][][]byte{
			tavlarenaGame(ft, signer, "page-tav", 24),
			anchoredGame(ft, signer, "page-anc", 20),
			perRollMatch(ft, signer, "page-per", 6),
		}
		open := tavlarenaGame(ft, signer, "page-open", 6)
		open = open[:len(open)-2] // no end, no reveal
		log.append(ft, fillerGames(ft)(7))
		leaves := log.interleave(ft, fillerGames(ft), 2, games...)
		cp := log.checkpoint(ft)
		f := pageFixture{vkey: log.vkey, ids: map[string]string{}, games: memGames{}}
		for i, ls := range leaves {
			b, err := BuildBundle(context.Background(), log, ls, cp)
			if err != nil {
				fixtureErr = err
				return
			}
			ev, err := events.Parse(ls[0].Leaf)
			if err != nil {
				fixtureErr = err
				return
			}
			f.ids[[]string{"tavlarena-v1", "anchored-v1", "per-roll-v1"}[i]] = ev.Game
			f.games[ev.Game] = Game{Status: GameFinished, Bundle: b}
		}
		ev, err := events.Parse(open[0])
		if err != nil {
			fixtureErr = err
			return
		}
		f.inPlay = ev.Game
		f.games[ev.Game] = Game{Status: GameInPlay, Events: open}

		// Played games between named players, moves logged: Ayşe plays
		// every game, against Mehmet and Zeynep in turn.
		f.players = map[string]dice.UUID{}
		for _, name := range fixturePlayers {
			f.players[name] = labelUUID("player/" + name)
		}
		var stored []StoredBundle
		for i, id := range []string{f.ids["tavlarena-v1"], f.ids["anchored-v1"], f.ids["per-roll-v1"]} {
			stored = append(stored, StoredBundle{Index: uint64(i), Game: id, Bundle: f.games[id].Bundle})
		}
		for i := range 6 {
			other := fixturePlayers[1+i%2]
			seats := [2]dice.UUID{f.players["Ayşe"], f.players[other]}
			names := `"Ayşe","` + other + `"`
			if i%3 == 2 {
				seats[0], seats[1] = seats[1], seats[0]
				names = `"` + other + `","Ayşe"`
			}
			v := []rules.Variant{rules.Backgammon, rules.Tavla, rules.Portes}[i%3]
			o := []rules.Opening{rules.OpeningWestern, rules.OpeningTurkishReroll}[i%2]
			id, b := genBundle(ft, log, signer, testonly.Config{Scheme: events.Tavlarena, Variant: v, Opening: o,
				Label: fmt.Sprintf("fixture-played-%d", i), Seats: seats, Settings: `"seatNames":[` + names + `]`,
				Start: time.Date(2026, 11, 30, 12+i, 0, 0, 0, time.UTC)})
			f.games[id] = Game{Status: GameFinished, Bundle: b}
			f.played = append(f.played, id)
			stored = append(stored, StoredBundle{Index: uint64(10 + i), Game: id, Bundle: b})
		}
		// A second game under the first played game's seal, as two games
		// whose commitments share 40 bits would be: the search lists both.
		f.twin = "twin-of-" + f.played[0]
		stored = append(stored, StoredBundle{Index: 20, Game: f.twin, Bundle: f.games[f.played[0]].Bundle})
		st, err := OpenStore(StoreConfig{Dir: "/fixture", Origin: testOrigin, FS: vfs.NewMem()})
		if err != nil {
			fixtureErr = err
			return
		}
		if err := st.Add(context.Background(), 100, stored); err != nil {
			fixtureErr = err
			return
		}
		f.index = st
		fixture = f
	})
	if fixtureErr != nil {
		t.Fatalf("building the fixture: %v", fixtureErr)
	}
	return fixture
}

var errFixture = errors.New("fixture failed")

// fixtureT turns the helpers' t.Fatal into an error for sync.Once.
type fixtureT struct{ testing.TB }

func (f *fixtureT) Fatal(args ...any) {
	fixtureErr = fmt.Errorf("%s", fmt.Sprint(args...))
	panic(errFixture)
}
func (f *fixtureT) Fatalf(format string, args ...any) {
	fixtureErr = fmt.Errorf(format, args...)
	panic(errFixture)
}

func newTestPages(t testing.TB, f pageFixture, stats StatsSource) *httptest.Server {
	t.Helper()
	p, err := NewPages(Config{Games: f.games, Index: f.index, Stats: stats, LogKey: f.vkey})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	p.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func get(t testing.TB, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestGamePages serves each game's page, proof and program in every
// language and checks what a reader relies on: status, content type, the
// CSP, the language and direction, the seal and the statement.
func TestGamePages(t *testing.T) {
	f := testFixture(t)
	srv := newTestPages(t, f, nil)
	for scheme, id := range f.ids {
		bundle := f.games[id].Bundle
		ev, err := verifier.Parse(bundle)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range verifier.Langs() {
			resp, body := get(t, srv.URL+"/games/"+id+"?lang="+string(l))
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("%s %s: %d %s", scheme, l, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
				t.Errorf("%s %s: CSP %q", scheme, l, csp)
			}
			dir := "ltr"
			if l == Arabic {
				dir = "rtl"
			}
			if !strings.Contains(body, fmt.Sprintf(`<html lang="%s" dir="%s">`, l, dir)) {
				t.Errorf("%s %s: the page does not declare lang %s dir %s", scheme, l, l, dir)
			}
			if regexp.MustCompile(`\son[a-z]+=`).MatchString(body) {
				t.Errorf("%s %s: the page has an inline event handler", scheme, l)
			}
			rep := verifier.VerifyEvidence(ev, verifier.Options{LogKey: mustLogKey(t, f.vkey)})
			for _, m := range rep.Proves() {
				if !strings.Contains(body, htmlEscape(m.In(l))) {
					t.Errorf("%s %s: the statement %q is not on the page", scheme, l, m.In(l))
				}
			}
			if ev.Tavlarena != nil && !strings.Contains(body, dice.SealCode(ev.Tavlarena.Commitment)) {
				t.Errorf("%s %s: no seal code on the page", scheme, l)
			}
		}
		resp, body := get(t, srv.URL+"/games/"+id+"/proof.json")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || body != string(bundle) {
			t.Errorf("%s: proof.json: %d %q, same bytes %v", scheme, resp.StatusCode, resp.Header.Get("Content-Type"), body == string(bundle))
		}
		resp, body = get(t, srv.URL+"/games/"+id+"/check.py")
		if resp.StatusCode != 200 || !strings.Contains(body, "import hashlib") {
			t.Errorf("%s: check.py: %d", scheme, resp.StatusCode)
		}
	}

	// Accept-Language picks the language when ?lang does not.
	_, body := get(t, srv.URL+"/games/"+f.ids["tavlarena-v1"], "Accept-Language", "de;q=0.9, ar;q=0.8, en;q=0.1")
	if !strings.Contains(body, `dir="rtl"`) {
		t.Error("Accept-Language ar: the page is not right to left")
	}

	// A game in play shows its seal and no proof.
	resp, body := get(t, srv.URL+"/games/"+f.inPlay)
	if resp.StatusCode != 200 || !strings.Contains(body, text(English, "InPlayHeading")) || strings.Contains(body, "verify-button") {
		t.Errorf("game in play: %d, in-play text %v", resp.StatusCode, strings.Contains(body, text(English, "InPlayHeading")))
	}
	if resp, _ := get(t, srv.URL+"/games/"+f.inPlay+"/proof.json"); resp.StatusCode != 404 {
		t.Errorf("proof of a game in play: %d, want 404", resp.StatusCode)
	}
	for _, path := range []string{"/games/no-such-game", "/games/%3Cscript%3E", "/games/" + strings.Repeat("a", 200), "/static/secret.go"} {
		if resp, body := get(t, srv.URL+path); resp.StatusCode != 404 || strings.Contains(body, "<script>") {
			t.Errorf("%s: %d, want 404 with nothing echoed", path, resp.StatusCode)
		}
	}
}

func mustLogKey(t testing.TB, vkey string) note.Verifier {
	t.Helper()
	k, err := verifier.ParseLogKey(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func htmlEscape(s string) string { return template.HTMLEscapeString(s) }

// TestPageTexts checks the pages' and the browser's tables of texts with
// verifier.CheckTexts, beside the verifier's and its command line's (one
// catalog: no name twice), and that every text the templates and scripts
// ask for is defined.
func TestPageTexts(t *testing.T) {
	if err := verifier.CheckTexts(verifier.Texts(), cli.Texts(), browserMessages, pageTexts); err != nil {
		t.Error(err)
	}
	page, browser := byName(pageTexts), byName(browserMessages)
	used := map[string]bool{}
	call := regexp.MustCompile(`call \$?\.T "([A-Za-z0-9-]+)"`)
	entries, err := webFS.ReadDir("web")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, _ := webFS.ReadFile("web/" + e.Name())
		for _, m := range call.FindAllSubmatch(b, -1) {
			used[string(m[1])] = true
		}
		for _, m := range regexp.MustCompile(`data-t="([A-Za-z0-9]+)"`).FindAllSubmatch(b, -1) {
			if _, ok := browser[string(m[1])]; !ok {
				used[string(m[1])] = true
			}
		}
	}
	if len(used) < 30 {
		t.Fatalf("found only %d text keys in the templates", len(used))
	}
	for k := range used {
		_, isPage := page[k]
		_, isBrowser := browser[k]
		if !isPage && !isBrowser {
			t.Errorf("text %q is used but not defined", k)
		}
	}
	// The scripts' own message ids.
	cat := verifier.MessageCatalog()
	jsCall := regexp.MustCompile(`\bT\("([A-Za-z0-9-]+)"[,)]`)
	for _, e := range entries {
		b, _ := webFS.ReadFile("web/" + e.Name())
		for _, m := range jsCall.FindAllSubmatch(b, -1) {
			_, isBrowser := browser[string(m[1])]
			_, verifierMsg := cat[string(m[1])]
			if !isBrowser && !verifierMsg {
				t.Errorf("%s: message %q is used but not defined", e.Name(), m[1])
			}
		}
	}
}

// TestNegotiate checks the language choice.
func TestNegotiate(t *testing.T) {
	for _, c := range []struct {
		query, header string
		want          verifier.Lang
	}{
		{"", "", English},
		{"tr", "ar", Turkish},
		{"AR", "", Arabic},
		{"xx", "tr-TR,tr;q=0.9,en;q=0.8", Turkish},
		{"", "en-US;q=0.2, ar-EG;q=0.7", Arabic},
		{"", "fr, de", English},
		{"", "ar;q=0", English},
		{"", "tr;q=1.5, en;q=0.5", English},
		{"", "ar;q=0.500, tr;q=0.499", Arabic},
	} {
		if got := Negotiate(c.query, c.header); got != c.want {
			t.Errorf("Negotiate(%q, %q) = %s, want %s", c.query, c.header, got, c.want)
		}
	}
}

func FuzzNegotiate(f *testing.F) {
	f.Add("tr", "ar;q=0.5")
	f.Add("", "en-US,en;q=0.9,tr;q=0.8")
	f.Fuzz(func(t *testing.T, q, h string) {
		l := Negotiate(q, h)
		if _, ok := verifier.ParseLang(string(l)); !ok {
			t.Fatalf("Negotiate(%q, %q) = %q, not a language", q, h, l)
		}
	})
}

func FuzzParseDistance(f *testing.F) {
	for _, s := range []string{"", "1", "24", "25", "07", "-1", "6-6"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := ParseDistance(s)
		if d < 0 || d > 24 || (d > 0 && fmt.Sprint(d) != s) {
			t.Fatalf("ParseDistance(%q) = %d", s, d)
		}
	})
}

// FuzzGamePath requests game pages under arbitrary ids: never a panic,
// never a 500, and the id never appears unescaped.
func FuzzGamePath(f *testing.F) {
	fx := testFixture(f)
	p, err := NewPages(Config{Games: fx.games, LogKey: fx.vkey})
	if err != nil {
		f.Fatal(err)
	}
	mux := http.NewServeMux()
	p.Register(mux)
	for _, id := range fx.ids {
		f.Add(id, "ar")
	}
	f.Add("<b>x</b>", "tr")
	f.Fuzz(func(t *testing.T, id, lang string) {
		req := httptest.NewRequest("GET", "/games/x?lang=y", nil)
		req.URL.Path = "/games/" + id
		req.URL.RawQuery = "lang=" + lang
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("id %q: %d", id, w.Code)
		}
		if strings.Contains(id, "<") && strings.Contains(w.Body.String(), id) {
			t.Fatalf("id %q is echoed unescaped", id)
		}
	})
}

// TestPythonChecker runs the generated program of a game of each scheme
// with python3: it must print "Every roll checked"; a copy with one die
// changed, and one with the seed changed, must fail.
func TestPythonChecker(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the generated checkers are not run")
	}
	// pyenv's shim is a shell script that takes a second to start: run
	// the interpreter itself.
	if out, err := exec.Command(py, "-c", "import sys; print(sys.executable)").Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
		py = string(bytes.TrimSpace(out))
	}
	f := testFixture(t)
	dir := t.TempDir()
	run := func(name string, prog []byte) (string, error) {
		path := filepath.Join(dir, name+".py")
		if err := os.WriteFile(path, prog, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(py, path).CombinedOutput()
		return string(out), err
	}
	for scheme, id := range f.ids {
		ev, err := verifier.Parse(f.games[id].Bundle)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := PythonChecker(ev)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(prog, []byte("\n")); n > 40 {
			t.Errorf("%s: the program has %d lines; it should be short enough to read", scheme, n)
		}
		out, err := run(scheme, prog)
		if err != nil || !strings.HasPrefix(out, "Every roll checked") {
			t.Errorf("%s: %v\n%s\n%s", scheme, err, out, prog)
		}
		// One die of the first played roll changed.
		tampered := tamperDie(t, prog)
		if out, err := run(scheme+"-die", tampered); err == nil || !strings.HasPrefix(out, "FAIL") {
			t.Errorf("%s: a tampered die passed: %v\n%s", scheme, err, out)
		}
		wrongSeed := tamperSeed(t, prog)
		if out, err := run(scheme+"-seed", wrongSeed); err == nil || !strings.HasPrefix(out, "FAIL") {
			t.Errorf("%s: a changed seed passed: %v\n%s", scheme, err, out)
		}
	}
}

// tamperSeed changes one hex digit of the (first) seed in the program.
func tamperSeed(t *testing.T, prog []byte) []byte {
	t.Helper()
	i := bytes.Index(prog, []byte(`seed = bytes.fromhex("`))
	j := len(`seed = bytes.fromhex("`)
	if k := bytes.Index(prog, []byte(`seed, fingerprint = bytes.fromhex("`)); k >= 0 {
		i, j = k, len(`seed, fingerprint = bytes.fromhex("`)
	}
	if k := bytes.Index(prog, []byte("\n  (\"")); k >= 0 { // per-roll-v1: rollId, commitment, seed, ...
		q := k
		for range 5 {
			q += bytes.IndexByte(prog[q+1:], '"') + 1
		}
		i, j = q, 1
	}
	if i < 0 {
		t.Fatal("no seed in the program")
	}
	out := bytes.Clone(prog)
	if out[i+j] == '0' {
		out[i+j] = '1'
	} else {
		out[i+j] = '0'
	}
	return out
}

// tamperDie changes the first die in the program's rolls from d to d%6+1.
func tamperDie(t *testing.T, prog []byte) []byte {
	t.Helper()
	re := regexp.MustCompile(`\((\d), (\d)\)`)
	loc := re.FindSubmatchIndex(prog)
	if loc == nil {
		t.Fatal("no roll in the program")
	}
	out := bytes.Clone(prog)
	out[loc[2]] = '1' + (out[loc[2]]-'0')%6
	return out
}

// TestChiSquareSF checks the chi-square survival function against closed
// forms (df 2: e^(−x/2); df 1: erfc(√(x/2)); df 4: e^(−x/2)(1 + x/2)) over
// a range of x, and against tabulated critical values.
func TestChiSquareSF(t *testing.T) {
	for x := 0.0; x <= 80; x += 0.37 {
		for _, c := range []struct {
			df   int
			want float64
		}{
			{1, math.Erfc(math.Sqrt(x / 2))},
			{2, math.Exp(-x / 2)},
			{4, math.Exp(-x/2) * (1 + x/2)},
			{6, math.Exp(-x/2) * (1 + x/2 + x*x/8)},
		} {
			got := ChiSquareSF(x, c.df)
			if math.Abs(got-c.want) > 1e-12+1e-9*c.want {
				t.Errorf("ChiSquareSF(%g, %d) = %.15g, want %.15g", x, c.df, got, c.want)
			}
		}
	}
	// Critical values (x at which the survival function is p), from the
	// standard tables (NIST/SEMATECH e-Handbook, 1.3.6.7.4).
	for _, c := range []struct {
		x  float64
		df int
		p  float64
	}{
		{3.841, 1, 0.05}, {6.635, 1, 0.01}, {11.070, 5, 0.05}, {15.086, 5, 0.01},
		{49.802, 35, 0.05}, {57.342, 35, 0.01}, {1.145, 5, 0.95}, {22.465, 35, 0.95},
	} {
		if got := ChiSquareSF(c.x, c.df); math.Abs(got-c.p) > 5e-4 {
			t.Errorf("ChiSquareSF(%g, %d) = %.5f, want %g", c.x, c.df, got, c.p)
		}
	}
	if !math.IsNaN(ChiSquareSF(1, 0)) || ChiSquareSF(-1, 3) != 1 || ChiSquareSF(math.Inf(1), 3) != 0 {
		t.Error("edge cases of ChiSquareSF")
	}
}

// TestFairnessTests checks the statistics of exactly uniform counts (χ² 0,
// p 1) and of a loaded die.
func TestFairnessTests(t *testing.T) {
	var c events.RollCounts
	for a := 1; a <= 6; a++ {
		for b := 1; b <= 6; b++ {
			for range 10 {
				c.Add([2]int{a, b})
			}
		}
	}
	f := testsOf(c)
	if c.Total() != 360 || c.Doubles() != 60 || c.Faces()[3] != 120 || f.Faces.Stat != 0 || f.Pairs.P != 1 || f.Doubles.DF != 1 || f.Pairs.DF != 35 {
		t.Errorf("uniform counts: %+v, total %d", f, c.Total())
	}
	for range 200 {
		c.Add([2]int{6, 6})
	}
	if f := testsOf(c); f.Faces.P > 1e-6 || f.Doubles.P > 1e-6 {
		t.Errorf("loaded dice are not flagged: %+v", f)
	}
}

// TestDistanceTable checks the "thirty-six rolls" table against the
// well-known counts of rolls that hit a blot at each distance on an open
// board, and its two totals: 21 distinct rolls, 6 doubles.
func TestDistanceTable(t *testing.T) {
	want := map[int]int{1: 11, 2: 12, 3: 14, 4: 15, 5: 15, 6: 17, 7: 6, 8: 6, 9: 5, 10: 3, 11: 2, 12: 3,
		13: 0, 14: 0, 15: 1, 16: 1, 17: 0, 18: 1, 19: 0, 20: 1, 21: 0, 22: 0, 23: 0, 24: 1}
	rows := distanceTable()
	for _, r := range rows {
		if r.Of36 != want[r.D] {
			t.Errorf("distance %d: %d of 36 (%v), want %d", r.D, r.Of36, r.Rolls, want[r.D])
		}
	}
	if got := rows[23].Rolls; len(got) != 1 || got[0] != "6-6" {
		t.Errorf("24 pips: %v, want only 6-6", got)
	}
	distinct, doubles := 0, 0
	for a := 1; a <= 6; a++ {
		for b := a; b <= 6; b++ {
			distinct++
			if a == b {
				doubles++
			}
		}
	}
	if distinct != 21 || doubles != 6 {
		t.Errorf("%d distinct rolls, %d doubles", distinct, doubles)
	}
}

type fixedStats Stats

func (s fixedStats) Stats(context.Context) (Stats, error) { return Stats(s), nil }

// TestStatsPage serves /stats with counts and checks that the plots are
// inline SVG, the tests are shown and the distance parameter works.
func TestStatsPage(t *testing.T) {
	var s Stats
	for i := range 3600 {
		h := sha256.Sum256([]byte(fmt.Sprint(i)))
		d := [2]int{int(h[0]%6) + 1, int(h[1]%6) + 1}
		if i%10 == 0 {
			s.Opening.Add(d)
		} else {
			s.Play.Add(d)
		}
	}
	s.Games = 60
	f := testFixture(t)
	srv := newTestPages(t, f, fixedStats(s))
	for _, l := range verifier.Langs() {
		resp, body := get(t, srv.URL+"/stats?lang="+string(l)+"&distance=6")
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", l, resp.StatusCode)
		}
		for _, want := range []string{`<svg xmlns="http://www.w3.org/2000/svg" class="bars"`, `class="matrix"`, `class="grid36"`, "17/36", `data-rolls="3600"`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: /stats lacks %q", l, want)
			}
		}
		if strings.Count(body, "<svg") < 7 {
			t.Errorf("%s: %d plots", l, strings.Count(body, "<svg"))
		}
	}
	// Without a source the page still explains the 36 rolls.
	srv2 := newTestPages(t, f, nil)
	if resp, body := get(t, srv2.URL+"/stats"); resp.StatusCode != 200 || !strings.Contains(body, text(English, "NoStats")) {
		t.Errorf("/stats without a source: %d", resp.StatusCode)
	}
}

// TestAuditorFile checks that the offline auditor is one self-contained
// file: no external script, style or link, a CSP that forbids connections
// and names its inline script and style by hash, and deterministic bytes.
func TestAuditorFile(t *testing.T) {
	a, err := Auditor("log.example+01234567+AQ==")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Auditor("log.example+01234567+AQ==")
	if !bytes.Equal(a, b) {
		t.Error("Auditor is not deterministic")
	}
	s := string(a)
	// The bundled @noble/curves cites papers in its comments: a URL in a
	// comment line is text, not a connection.
	var code []string
	for _, line := range strings.Split(s, "\n") {
		if trimmed := strings.TrimSpace(line); strings.HasPrefix(trimmed, "//") || strings.HasPrefix(trimmed, "*") {
			continue
		}
		code = append(code, line)
	}
	for _, bad := range []string{"src=", "href=", "http://", "https://", "@import", "fetch(", "XMLHttpRequest", "WebSocket"} {
		if strings.Contains(strings.ReplaceAll(strings.Join(code, "\n"), `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
			t.Errorf("the auditor contains %q", bad)
		}
	}
	csp := auditorCSP(a)
	script, style, err := auditorAssets()
	if err != nil {
		t.Fatal(err)
	}
	if csp != auditorPolicy(script, style) || !strings.Contains(csp, "connect-src 'none'") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("auditor CSP %q", csp)
	}
	if !strings.Contains(s, "<script>"+script+"</script>") || !strings.Contains(s, "<style>"+style+"</style>") {
		t.Error("the inline script or style is not the hashed text")
	}
	path := filepath.Join(t.TempDir(), "auditor.html")
	if err := WriteAuditor(path, "log.example+01234567+AQ=="); err != nil {
		t.Fatal(err)
	}
	if w, _ := os.ReadFile(path); !bytes.Equal(w, a) {
		t.Error("WriteAuditor wrote other bytes")
	}
}

// TestMessagesJSON checks the message table the scripts receive.
func TestMessagesJSON(t *testing.T) {
	var m map[string][1]string
	if err := json.Unmarshal([]byte(messagesJSON(Turkish)), &m); err != nil {
		t.Fatal(err)
	}
	if m["SuPass"][0] != "Her atış kontrol edildi" || m["BrChecking"][0] == "" {
		t.Errorf("Turkish messages: SuPass %q", m["SuPass"][0])
	}
}
