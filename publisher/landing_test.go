package publisher

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/verifier"
)

// noRedirect is an HTTP client that returns redirects instead of following
// them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func getNoRedirect(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := noRedirect.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

// TestSearch: a seal code is found however a person types it (any case, O
// for 0, I or L for 1, with or without the hyphen, spaces around); one
// match goes to the game's page, two are both listed; a game id goes to
// its page (in play too), a player's seat id to the player's page; and
// anything else is a 404 page that says what was wrong.
func TestSearch(t *testing.T) {
	f := testFixture(t)
	srv := newTestPages(t, f, nil)
	one := mustSummary(t, f, f.ids["tavlarena-v1"]).Seals[0].String() // only one game has it
	two := mustSummary(t, f, f.played[0]).Seals[0].String()           // played[0] and its twin
	typed := func(code string) []string {
		plain := strings.ReplaceAll(code, "-", "")
		sloppy := strings.NewReplacer("0", "O", "1", "l").Replace(strings.ToLower(plain))
		return []string{code, strings.ToLower(code), plain, "  " + sloppy + " ", plain[:4] + " " + plain[4:]}
	}
	for _, q := range typed(one) {
		code, loc := getNoRedirect(t, srv.URL+"/search?lang=tr&q="+strings.ReplaceAll(q, " ", "+"))
		if want := "/games/" + f.ids["tavlarena-v1"] + "?lang=tr"; code != http.StatusSeeOther || loc != want {
			t.Errorf("search %q: %d to %q, want 303 to %q", q, code, loc, want)
		}
	}
	for _, q := range typed(two) {
		resp, body := get(t, srv.URL+"/search?q="+strings.ReplaceAll(q, " ", "+"))
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `href="/games/`+f.played[0]+`?lang=en"`) || !strings.Contains(body, `href="/games/`+f.twin+`?lang=en"`) {
			t.Errorf("search %q (two games): %d, both games listed: %v, %v", q, resp.StatusCode,
				strings.Contains(body, f.played[0]), strings.Contains(body, f.twin))
		}
		if !strings.Contains(body, "2 games have this seal code") {
			t.Errorf("search %q: the page does not say that two games share the code", q)
		}
	}
	for _, id := range []string{f.ids["anchored-v1"], f.inPlay} {
		if code, loc := getNoRedirect(t, srv.URL+"/search?q="+id); code != http.StatusSeeOther || loc != "/games/"+id+"?lang=en" {
			t.Errorf("search game %s: %d to %q", id, code, loc)
		}
	}
	ayse := f.players["Ayşe"].String()
	if code, loc := getNoRedirect(t, srv.URL+"/search?q="+strings.ToUpper(ayse)); code != http.StatusSeeOther || loc != "/players/"+testEmitter+"/"+ayse+"?lang=en" {
		t.Errorf("search a player id: %d to %q", code, loc)
	}
	for _, c := range []struct{ q, says string }{
		{"", "Type a seal code"},
		{"ZZZZ-ZZZZ", "No finished game in this log has the seal code \u2066ZZZZ-ZZZZ\u2069"},
		{"00000000-0000-4000-8000-000000000000", "no game and no player with the id"},
		{"not a code!", "is not a seal code"},
		{"<script>", "&lt;script&gt;"},
	} {
		resp, body := get(t, srv.URL+"/search?q="+strings.ReplaceAll(c.q, " ", "+"))
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, c.says) {
			t.Errorf("search %q: %d, want 404 saying %q", c.q, resp.StatusCode, c.says)
		}
		if strings.Contains(body, "<script>") {
			t.Errorf("search %q: the query is not escaped", c.q)
		}
	}
	// The landing page: the key, the size, the last games, the search box.
	resp, body := get(t, srv.URL+"/?lang=ar", "Accept-Language", "tr")
	for _, want := range []string{`id="log-key-text" dir="ltr">` + htmlText(f.vkey) + `<`, `action="/search"`, `name="lang" value="ar"`, `href="/games/` + f.twin + `?lang=ar"`} {
		if !strings.Contains(body, want) {
			t.Errorf("landing page: no %q", want)
		}
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "form-action 'self'") {
		t.Errorf("landing page: %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	if resp, _ := get(t, srv.URL+"/nothing-here"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("/nothing-here: %d", resp.StatusCode)
	}
}

// TestPlayerPage: a player's page lists their games and counts their dice
// and their opponents'; an unknown or malformed id is 404.
func TestPlayerPage(t *testing.T) {
	f := testFixture(t)
	srv := newTestPages(t, f, nil)
	resp, body := get(t, srv.URL+"/players/"+testEmitter+"/"+f.players["Mehmet"].String())
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "<h1>\u2068Mehmet\u2069: the dice of every game</h1>") {
		t.Fatalf("Mehmet's page: %d\n%.600s", resp.StatusCode, body)
	}
	var mehmet []string
	for i, id := range f.played {
		if i%2 == 0 { // Ayşe played Mehmet in the even games
			mehmet = append(mehmet, id)
		}
	}
	for _, id := range f.played {
		listed := strings.Contains(body, `href="/games/`+id+`?lang=en"`)
		want := strings.Contains(strings.Join(mehmet, " "), id)
		if listed != want {
			t.Errorf("Mehmet's page lists %s: %v, want %v", id, listed, want)
		}
	}
	for _, path := range []string{"/players/" + labelUUID("nobody").String(), "/players/not-a-uuid", "/players/" + f.ids["tavlarena-v1"],
		"/players/" + testEmitter + "/" + labelUUID("nobody").String(), "/players/" + testEmitter + "/not-a-uuid",
		"/players/Not_An_Emitter/" + f.players["Mehmet"].String(), "/players/another-platform/" + f.players["Mehmet"].String()} {
		if resp, _ := get(t, srv.URL+path); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, resp.StatusCode)
		}
	}
	// The address of a player page before pages were per platform goes to
	// the one platform's page.
	if code, loc := getNoRedirect(t, srv.URL+"/players/"+f.players["Mehmet"].String()+"?lang=tr"); code != http.StatusFound || loc != "/players/"+testEmitter+"/"+f.players["Mehmet"].String()+"?lang=tr" {
		t.Errorf("/players/<id>: %d to %q", code, loc)
	}
	// Without an index, there are no player pages, and the landing page
	// lists no games but still says what the log is.
	p, err := NewPages(Config{Games: f.games, LogKey: f.vkey})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	p.Register(mux)
	serveOnce := func(h http.Handler, path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec
	}
	for _, path := range []string{"/players/" + f.players["Mehmet"].String(), "/players/" + testEmitter + "/" + f.players["Mehmet"].String()} {
		if rec := serveOnce(mux, path); rec.Code != http.StatusNotFound {
			t.Errorf("%s without an index: %d", path, rec.Code)
		}
	}
	if rec := serveOnce(mux, "/"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), htmlText(f.vkey)) {
		t.Errorf("landing page without an index: %d", rec.Code)
	}
}

// TestPlayerPagePerPlatform is the attack of issue 27 on the pages and the
// bundle store: a platform ("mallory") logs short games with Ayşe's player
// id in seat 0 and the name "Ayşe cheats - ask support" (seat ids are
// public in every bundle). Ayşe's page on her own platform stays byte for
// byte what it was, in every language, its heading and counts included;
// mallory's games are on mallory's page of the id; the id without a
// platform, in the old address and in the search, lists both platforms.
// 300 games here (-short: 60); TestPlayerPagesPerPlatform (internal/serve)
// makes it with 1,004 through NATS, the ingest and the ledger.
func TestPlayerPagePerPlatform(t *testing.T) {
	f := testFixture(t)
	ctx := context.Background()
	store, err := OpenStore(StoreConfig{Dir: "/attack", Origin: testOrigin, FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var own []StoredBundle
	for i, id := range append([]string{f.ids["tavlarena-v1"], f.ids["anchored-v1"], f.ids["per-roll-v1"]}, f.played...) {
		own = append(own, StoredBundle{Index: uint64(i), Game: id, Bundle: f.games[id].Bundle})
	}
	if err := store.Add(ctx, 100, own); err != nil {
		t.Fatal(err)
	}
	p, err := NewPages(Config{Games: f.games, Index: store, LogKey: f.vkey})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	p.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ayse := f.players["Ayşe"]
	page := "/players/" + testEmitter + "/" + ayse.String()
	before := map[verifier.Lang]string{}
	for _, l := range verifier.Langs() {
		resp, body := get(t, srv.URL+page+"?lang="+string(l))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", page, resp.StatusCode)
		}
		before[l] = body
	}
	if !strings.Contains(before[English], "<h1>\u2068Ayşe\u2069: the dice of every game</h1>") || !strings.Contains(before[English], "6 games logged by the platform \u2066tavla-\u2060east\u2069") {
		t.Fatalf("Ayşe's page before the attack:\n%.1500s", before[English])
	}

	// The attack.
	n := 300
	if testing.Short() {
		n = 60
	}
	signer, _ := testKey(t, "mallory")
	log := newMemLog(t)
	log.keepData = true
	var attack []StoredBundle
	for i := range n {
		id, b := genBundle(t, log, signer, testonly.Config{Scheme: events.Tavlarena, Variant: rules.Portes, Emitter: "mallory",
			Label: fmt.Sprintf("mallory-%d", i), Seats: [2]dice.UUID{ayse, labelUUID("mallory's puppet")}, MaxRolls: 2,
			Settings: `"seatNames":["Ayşe cheats - ask support","Mehmet"]`})
		attack = append(attack, StoredBundle{Index: uint64(100 + i), Game: id, Bundle: b})
	}
	if err := store.Add(ctx, uint64(100+n), attack); err != nil {
		t.Fatal(err)
	}
	for _, l := range verifier.Langs() {
		if _, body := get(t, srv.URL+page+"?lang="+string(l)); body != before[l] {
			t.Errorf("%s: after %d games of another platform with the same player id, Ayşe's page (%s) changed", page, n, l)
		}
	}
	// mallory's games are on mallory's page of the id, which says whose it is.
	resp, body := get(t, srv.URL+"/players/mallory/"+ayse.String())
	want := fmt.Sprintf("%d games logged by the platform \u2066mallory\u2069", min(n, MaxPlayerGames))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, want) || !strings.Contains(body, "<h1>\u2068Ayşe cheats - ask support\u2069: the dice of every game</h1>") {
		t.Errorf("mallory's page of the id: %d, %q: %v", resp.StatusCode, want, strings.Contains(body, want))
	}
	// Without a platform, the id lists both.
	for _, path := range []string{"/players/" + ayse.String(), "/search?q=" + ayse.String()} {
		resp, body := get(t, srv.URL+path)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `href="/players/mallory/`+ayse.String()+`?lang=en"`) ||
			!strings.Contains(body, `href="`+page+`?lang=en"`) || !strings.Contains(body, "2 platforms in this log") || strings.Contains(body, "cheats") {
			t.Errorf("%s: %d, both platforms listed, and no name of either:\n%.2000s", path, resp.StatusCode, body)
		}
	}
}

// TestCountPlayer sums hand-made rows: the player's seat wherever it sits,
// the other seat to the opponents, rows of other players and of schemes
// without seat ids left out.
func TestCountPlayer(t *testing.T) {
	me, you, them := labelUUID("me"), labelUUID("you"), labelUUID("them")
	seat := func(doubles, others uint64, turns int, came int) SeatDice {
		var s SeatDice
		s.Played.Pairs[0][0] = doubles
		s.Played.Pairs[0][1] = others
		s.Opening[5] = 1
		s.Needs[NeedHit] = NeedCount{Turns: turns, Came: came, Expected: float64(turns) / 3, Variance: float64(turns) * 2 / 9}
		return s
	}
	row := func(a, b dice.UUID, da, db SeatDice, name string) GameRow {
		r := GameRow{GameSummary: GameSummary{Emitter: testEmitter, Seats: [2]dice.UUID{a, b}, HasSeats: true, Names: [2]string{name, ""}}}
		r.Dice.Seats = [2]SeatDice{da, db}
		r.Dice.NeedsCounted = true
		return r
	}
	rows := []GameRow{
		row(me, you, seat(2, 10, 6, 1), seat(1, 11, 3, 2), "newest name"),
		row(you, me, seat(3, 3, 1, 1), seat(4, 4, 9, 3), "old name"),
		row(you, them, seat(100, 100, 100, 100), seat(100, 100, 100, 100), ""),
		{GameSummary: GameSummary{HasSeats: false}},
	}
	// Another platform's game with my id: never counted on my platform's page.
	foreign := row(me, them, seat(100, 100, 100, 100), seat(100, 100, 100, 100), "a name another platform gave")
	foreign.Emitter = "mallory"
	rows = append(rows, foreign)
	got := CountPlayer(testEmitter, me, rows)
	if got.Games != 2 || got.NeedGames != 2 || got.Name != "newest name" {
		t.Errorf("games %d, counted %d, name %q", got.Games, got.NeedGames, got.Name)
	}
	if d, n := got.Me.Played.Doubles(), got.Me.Played.Total(); d != 6 || n != 20 {
		t.Errorf("my doubles: %d of %d, want 6 of 20", d, n)
	}
	if d, n := got.Others.Played.Doubles(), got.Others.Played.Total(); d != 4 || n != 18 {
		t.Errorf("their doubles: %d of %d, want 4 of 18", d, n)
	}
	if h := got.Me.Needs[NeedHit]; h.Turns != 15 || h.Came != 4 || h.Expected != 5 {
		t.Errorf("my chances to hit: %+v, want 15 turns, 4 came, 5 expected", h)
	}
	if got.Me.Opening[5] != 2 || got.Others.Opening[5] != 2 {
		t.Errorf("opening sixes: %d, %d", got.Me.Opening[5], got.Others.Opening[5])
	}
}

// TestPageFacts: what /stats says of each opening rule is what the rules
// engine does, for every variant: under the western opening the first
// move is never a double (30 of 36 rolls), under the Turkish rule it can
// be any of the 36; and the games the rules engine plays bear it out.
func TestPageFacts(t *testing.T) {
	want := map[rules.Opening]OpeningFacts{
		rules.OpeningWestern:       {Opening: rules.OpeningWestern, FirstMoves: 30, FirstDouble: false, TieAgain: true, RollAgain: false},
		rules.OpeningTurkishReroll: {Opening: rules.OpeningTurkishReroll, FirstMoves: 36, FirstDouble: true, TieAgain: true, RollAgain: true},
	}
	firstDoubles := map[rules.Opening]int{}
	for _, v := range rules.AllVariants() {
		for o, w := range want {
			got, err := OpeningFactsOf(v, o)
			if err != nil || got != w {
				t.Errorf("%s, %s: %+v (%v), want %+v", v, o, got, err, w)
			}
			// Games played by the rules engine: the first roll played is a
			// double only where the facts allow it, and every tie is
			// followed by another opening roll.
			for i := range 24 {
				c := testonly.Config{Scheme: events.Tavlarena, Variant: v, Opening: o, Label: fmt.Sprintf("facts/%s/%s/%d", v, o, i), MaxRolls: 8}
				p, err := testonly.Play(c)
				if err != nil {
					t.Fatal(err)
				}
				var rolls []events.Roll
				for _, b := range p.Bodies {
					if r, ok := b.(events.Roll); ok {
						rolls = append(rolls, r)
					}
				}
				for i, r := range rolls {
					if r.Kind == "opening" && r.Dice.IsDouble() && (i+1 >= len(rolls) || rolls[i+1].Kind != "opening") {
						t.Errorf("%s, %s: a tie not rolled again: %v", v, o, rolls)
					}
					if r.Kind == "opening" {
						continue
					}
					// The first roll after the openings: the re-roll
					// (Turkish), which is the first move; or a turn
					// (western), the deciding opening roll before it having
					// been the first move.
					first := r
					switch {
					case w.RollAgain && r.Kind != "reroll", !w.RollAgain && r.Kind != "turn":
						t.Errorf("%s, %s: roll %d is a %s", v, o, i, r.Kind)
					case !w.RollAgain:
						first = rolls[i-1]
					}
					if first.Dice.IsDouble() {
						firstDoubles[o]++
					}
					break
				}
			}
		}
	}
	// Deterministic games (their labels fix the dice): the Turkish rule's
	// first moves include doubles, as a player sees in the log, and the
	// western opening's never do.
	if firstDoubles[rules.OpeningWestern] != 0 || firstDoubles[rules.OpeningTurkishReroll] == 0 {
		t.Errorf("first moves that were doubles: western %d, Turkish %d", firstDoubles[rules.OpeningWestern], firstDoubles[rules.OpeningTurkishReroll])
	}
	// The page says it, in every language, with the engine's numbers.
	f := testFixture(t)
	srv := newTestPages(t, f, nil)
	for _, l := range []string{"en", "tr", "ar"} {
		_, body := get(t, srv.URL+"/stats?lang="+l)
		lang, _ := verifier.ParseLang(l)
		for _, w := range []OpeningFacts{want[rules.OpeningWestern], want[rules.OpeningTurkishReroll]} {
			if s := htmlEscape(openingText(lang, w)); !strings.Contains(body, s) {
				t.Errorf("/stats?lang=%s does not say %q", l, s)
			}
		}
		if l == "tr" && strings.Contains(body, "asla çift olmaz") && !strings.Contains(body, htmlEscape(text(lang, "FirstCanDouble", 36))) {
			t.Errorf("/stats?lang=tr says the first move is never a double without the Turkish rule's exception")
		}
	}
}

// htmlText is s as html/template writes it in text: it escapes "+" too.
func htmlText(s string) string { return strings.ReplaceAll(htmlEscape(s), "+", "&#43;") }
