package publisher

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/verifier"
)

// MaxPhonePage is the most a game page of 61 rolls may measure on a phone
// (390 px wide). A per-roll-v1 match of 61 rolls measured 24,083 px here
// (23,958 in issue 27), 15,272 of them its table of each roll's
// commitment, seed and second number, every hex cell broken over lines;
// that table is now folded (a disclosure) and one line a row, and the
// page measures about 8,500 px, a tavlarena-v1 game of 61 rolls about
// 8,900 (9,336 before), of which the roll table is about 2,500.
const MaxPhonePage = 10000

// TestPhoneLayout opens the pages on a phone (390 px, in Chromium) in every
// language and checks what a thumb and a scrolling finger meet:
//
//   - every link of the title bar and of the footer is a tap target of at
//     least 44 × 44 px (docs/PAGES.md §9), as every button is;
//   - a game page of 61 rolls, per-roll-v1 (each roll with its commitment,
//     seed and second number) or tavlarena-v1, is at most MaxPhonePage px
//     tall.
func TestPhoneLayout(t *testing.T) {
	browser := newBrowser(t)
	f := testFixture(t)
	signer, _ := testKey(t, testEmitter)
	log := newMemLog(t)
	games := memGames{}
	for id, g := range f.games {
		games[id] = g
	}
	long := map[string]string{}
	for name, leaves := range map[string][][]byte{
		"per-roll-v1":  perRollMatch(t, signer, "long-per", 61),
		"tavlarena-v1": tavlarenaGame(t, signer, "long-tav", 61),
	} {
		ls := log.interleave(t, fillerGames(t), 1, leaves)
		b, err := BuildBundle(t.Context(), log, ls[0], log.checkpoint(t))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := events.Parse(leaves[0])
		if err != nil {
			t.Fatal(err)
		}
		games[ev.Game] = Game{Status: GameFinished, Bundle: b}
		long[name] = ev.Game
	}
	p, err := NewPages(Config{Games: games, Index: f.index, LogKey: f.vkey})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	p.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, l := range verifier.Langs() {
		q := "?lang=" + string(l)
		for _, path := range []string{"/", "/stats", "/games/" + f.played[0], "/players/" + testEmitter + "/" + f.players["Ayşe"].String()} {
			ctx := open(t, browser, srv.URL+path+q, 390)
			raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(Array.from(document.querySelectorAll("header.top a, footer.bottom a")).map(a => {
				const b = a.getBoundingClientRect();
				return { text: a.textContent, width: b.width, height: b.height };
			}))`))
			if err != nil {
				t.Fatal(err)
			}
			var links []struct {
				Text          string
				Width, Height float64
			}
			if err := json.Unmarshal([]byte(raw), &links); err != nil {
				t.Fatal(err)
			}
			if len(links) < 6 {
				t.Errorf("%s (%s): %d links in the title bar and footer", path, l, len(links))
			}
			for _, a := range links {
				if a.Width < 44 || a.Height < 44 {
					t.Errorf("%s (%s): the link %q is %.0f × %.0f px, under 44 × 44", path, l, a.Text, a.Width, a.Height)
				}
			}
			if path == "/" && l == English {
				t.Logf("the title bar's and footer's links on a phone: %v", links)
			}
		}
		for name, id := range long {
			ctx := open(t, browser, srv.URL+"/games/"+id+q, 390)
			h, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.documentElement.scrollHeight`))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("a %s game page of 61 rolls on a phone (%s): %.0f px", name, l, h)
			if h > MaxPhonePage {
				t.Errorf("a %s game page of 61 rolls is %.0f px tall on a phone (%s), over %d", name, h, l, MaxPhonePage)
			}
		}
	}
}
