package publisher

import (
	"html"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/verifier"
)

// TestStatementKeys checks that a game page's statement is made with the
// keys its browser check gets: given the platforms' keys, the statement
// says their signatures were checked (as the check row below it will), and
// without them that they were not.
func TestStatementKeys(t *testing.T) {
	f := testFixture(t)
	_, emitterKey := testKey(t, testEmitter)
	for _, c := range []struct {
		name     string
		cfg      Config
		signed   bool
		noteKey  string
		unsigned bool
	}{
		{"log key", Config{LogKey: f.vkey}, false, "StatementNote", true},
		{"log and platform keys", Config{LogKey: f.vkey, EmitterKeys: []string{emitterKey}}, true, "StatementNoteKeys", false},
		{"no key", Config{}, false, "StatementNoteNoKey", true},
	} {
		c.cfg.Games = f.games
		p, err := NewPages(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		p.Register(mux)
		srv := httptest.NewServer(mux)
		defer srv.Close()
		for scheme, id := range f.ids {
			ev, err := verifier.Parse(f.games[id].Bundle)
			if err != nil {
				t.Fatal(err)
			}
			e, err := events.Parse(ev.Log.Entries[0].Leaf)
			if err != nil {
				t.Fatal(err)
			}
			emitter := e.Emitter
			for _, l := range verifier.Langs() {
				_, page := get(t, srv.URL+"/games/"+id+"?lang="+string(l))
				body := allText(pageText(t, scheme, page))
				signed := verifier.MessageCatalog()["StEmitterSigned"].Format(l, emitter)
				unchecked := verifier.MessageCatalog()["StEmitterUnchecked"].Format(l, emitter)
				if got := strings.Contains(body, signed); got != c.signed {
					t.Errorf("%s, %s %s: the statement says the platform's signatures were checked: %v, want %v", c.name, scheme, l, got, c.signed)
				}
				if got := strings.Contains(body, unchecked); got != c.unsigned {
					t.Errorf("%s, %s %s: the statement says the platform's signatures were not checked: %v, want %v", c.name, scheme, l, got, c.unsigned)
				}
				if !strings.Contains(body, text(l, c.noteKey)) {
					t.Errorf("%s, %s %s: the statement does not say which keys it was made with (%s)", c.name, scheme, l, c.noteKey)
				}
			}
		}
	}
}

// A textRun is a piece of a page's visible text: a text node or a
// player-visible attribute (aria-label, title, alt, placeholder, value of
// a button), with whether it sits inside code (code, pre, kbd, samp: keys,
// hashes, commands, identifiers) and the elements around it.
type textRun struct {
	Text   string
	InCode bool
	Path   string // the open elements, "html>body>main>p"
}

// voidElements have no end tag.
var voidElements = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

var (
	tagRE  = regexp.MustCompile(`^<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s=/>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s*(/?)>`)
	attrRE = regexp.MustCompile(`([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?`)
)

// pageText splits an HTML page made by html/template into its visible text
// runs. It is not a general HTML parser: the pages are well formed, and a
// page it cannot read fails the test.
func pageText(t *testing.T, name, page string) []textRun {
	t.Helper()
	var runs []textRun
	var stack []string
	code := func() bool {
		for _, e := range stack {
			switch e {
			case "code", "pre", "kbd", "samp":
				return true
			}
		}
		return false
	}
	skip := func() bool { // text the reader never sees as words
		for _, e := range stack {
			if e == "script" || e == "style" {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(page); {
		lt := strings.IndexByte(page[i:], '<')
		if lt < 0 {
			lt = len(page) - i
		}
		if s := page[i : i+lt]; strings.TrimSpace(s) != "" && !skip() {
			runs = append(runs, textRun{Text: html.UnescapeString(s), InCode: code(), Path: strings.Join(stack, ">")})
		}
		i += lt
		if i >= len(page) {
			break
		}
		rest := page[i:]
		switch {
		case strings.HasPrefix(rest, "<!--"):
			end := strings.Index(rest, "-->")
			if end < 0 {
				t.Fatalf("%s: an unterminated comment at byte %d", name, i)
			}
			i += end + 3
			continue
		case strings.HasPrefix(rest, "<!"):
			end := strings.IndexByte(rest, '>')
			i += end + 1
			continue
		}
		if skip() { // inside script or style: only its end tag counts
			top := stack[len(stack)-1]
			end := strings.Index(rest, "</"+top)
			if end < 0 {
				t.Fatalf("%s: no </%s>", name, top)
			}
			if end > 0 {
				i += end
				continue
			}
		}
		m := tagRE.FindStringSubmatch(rest)
		if m == nil {
			t.Fatalf("%s: cannot read the tag at byte %d: %.60q", name, i, rest)
		}
		i += len(m[0])
		tag := strings.ToLower(m[2])
		if m[1] == "/" {
			for k := len(stack) - 1; k >= 0; k-- {
				if stack[k] == tag {
					stack = stack[:k]
					break
				}
			}
			continue
		}
		for _, a := range attrRE.FindAllStringSubmatch(m[3], -1) {
			switch strings.ToLower(a[1]) {
			case "aria-label", "title", "alt", "placeholder":
				v := html.UnescapeString(a[2] + a[3] + a[4])
				if strings.TrimSpace(v) != "" {
					runs = append(runs, textRun{Text: v, InCode: code(), Path: strings.Join(append(stack, tag+"@"+a[1]), ">")})
				}
			}
		}
		if !voidElements[tag] && m[4] != "/" {
			stack = append(stack, tag)
		}
	}
	return runs
}

// allText joins a page's text runs.
func allText(runs []textRun) string {
	var b strings.Builder
	for _, r := range runs {
		b.WriteString(r.Text)
	}
	return b.String()
}

// TestVerdictBoundaries holds the plain words of the player page to their
// definition (docs/PAGES.md §8): well within up to z80 standard deviations
// from what fair dice give on average, at the edge up to z95, outside
// beyond, on each side; and the same verdict read off the Wilson
// intervals: outside exactly when the fair rate is not in the 95% interval
// the page prints, well within exactly when it is in the 80% one.
func TestVerdictBoundaries(t *testing.T) {
	up := func(x float64) float64 { return math.Nextafter(x, math.Inf(1)) }
	down := func(x float64) float64 { return math.Nextafter(x, math.Inf(-1)) }
	for _, c := range []struct {
		z    float64
		want Verdict
	}{
		{0, Within}, {z80, Within}, {-z80, Within}, {up(z80), EdgeHigh}, {down(-z80), EdgeLow},
		{z95, EdgeHigh}, {-z95, EdgeLow}, {up(z95), High}, {down(-z95), Low}, {40, High}, {-40, Low},
	} {
		if got := verdictOf(c.z); got != c.want {
			t.Errorf("verdictOf(%v) = %v, want %v", c.z, got, c.want)
		}
	}
	// The case: 21.0% doubles, 58 of 276, interval 16.6% to 26.2%:
	// the fair 16.7% is at the interval's very end, so at the edge.
	if lo, hi := Wilson(58, 276); math.Abs(lo-0.166) > 5e-4 || math.Abs(hi-0.262) > 5e-4 {
		t.Fatalf("Wilson(58, 276) = %.4f, %.4f", lo, hi)
	}
	if v := RateVerdict(58, 276, 1.0/6); v != EdgeHigh {
		t.Errorf("58 doubles in 276 rolls: %v, want at the edge, high", v)
	}
	p := 1.0 / 6
	checked := 0
	for _, n := range []uint64{MinRolls, 59, 100, 276, 1000} {
		for k := uint64(0); k <= n; k++ {
			if z := math.Abs(RateScore(k, n, p)); math.Abs(z-z80) < 1e-9 || math.Abs(z-z95) < 1e-9 {
				continue // on a boundary: floating point decides
			}
			v := RateVerdict(k, n, p)
			lo95, hi95 := Wilson(k, n)
			lo80, hi80 := wilsonAt(k, n, z80)
			in95, in80 := lo95 <= p && p <= hi95, lo80 <= p && p <= hi80
			if (v == High || v == Low) == in95 || (v == Within) != in80 {
				t.Errorf("%d of %d: verdict %v, but 1/6 in the 95%% interval %v, in the 80%% one %v", k, n, v, in95, in80)
			}
			if (v == High || v == EdgeHigh) != (float64(k)/float64(n) > p) && v != Within {
				t.Errorf("%d of %d: verdict %v on the wrong side", k, n, v)
			}
			checked++
		}
	}
	if checked < 1400 {
		t.Fatalf("checked %d counts", checked)
	}
	if RateVerdict(29, MinRolls-1, p) != TooFew || NeedVerdict(NeedCount{Turns: 100, Expected: 2, Variance: 4.9, Came: 20}) != TooFew {
		t.Error("a small sample is judged")
	}
}

// TestLandingSaysWhatIsProved: the landing page says what the log proves
// and what each scheme does not, in every language, and no longer that
// nobody has to be trusted (for tavlarena-v1 the server knew the seed).
func TestLandingSaysWhatIsProved(t *testing.T) {
	f := testFixture(t)
	srv := newTestPages(t, f, nil)
	for _, l := range verifier.Langs() {
		_, page := get(t, srv.URL+"/?lang="+string(l))
		body := allText(pageText(t, "landing", page))
		for _, k := range []string{"LandingProvesAll", "LandingTav", "LandingAnc", "LandingPer", "LandingTrust"} {
			if !strings.Contains(body, text(l, k)) {
				t.Errorf("%s: the landing page does not say %s: %q", l, k, text(l, k))
			}
		}
		for _, scheme := range []string{"tavlarena-v1", "anchored-v1", "per-roll-v1"} {
			if !strings.Contains(body, scheme) {
				t.Errorf("%s: the landing page does not name %s", l, scheme)
			}
		}
		for _, overclaim := range []string{"Nobody has to be trusted", "Kimseye güvenmek gerekmez", "لا حاجة إلى الثقة بأحد"} {
			if strings.Contains(body, overclaim) {
				t.Errorf("%s: the landing page says %q", l, overclaim)
			}
		}
	}
}
