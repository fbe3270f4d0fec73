package publisher

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/verifier"
	"github.com/zarlog/zarlog/verifier/cli"
)

// chromiumPath returns the Chromium to test with: $ZARLOG_CHROMIUM, or
// chromium (Debian's) or chromium-browser on the PATH.
func chromiumPath() string {
	if p := os.Getenv("ZARLOG_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// newBrowser starts a headless Chromium for one test and returns its
// context; every tab of the test derives from it.
func newBrowser(t testing.TB) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		t.Skip("Chromium is not installed (apt-get install chromium, or set ZARLOG_CHROMIUM): the browser verifier is not tested")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	if err := chromedp.Do(bctx); err != nil { // start the browser
		t.Fatalf("starting Chromium: %v", err)
	}
	return bctx
}

// tab opens a new tab with a deadline for one step of a test.
func tab(t testing.TB, browser context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancelT)
	return ctx
}

// browserReport is the summary the pages leave in window.zarlogReport.
type browserReport struct {
	Exit       int      `json:"exit"`
	Failed     []string `json:"failed"`
	NotChecked []string `json:"notChecked"`
	Summary    string   `json:"summary"`
	Checks     []struct {
		Name   string            `json:"name"`
		Status string            `json:"status"`
		Detail string            `json:"detail"`
		Roll   *verifier.RollRef `json:"roll"`
	} `json:"checks"`
	Verdict struct {
		Kind     string   `json:"kind"`
		Headline string   `json:"headline"`
		Details  []string `json:"details"`
	} `json:"verdict"`
	Error string `json:"error"`
}

// sameVerdict reports whether the browser's verdict is zarlog-verify's,
// word for word, in language l.
func sameVerdict(br browserReport, rep *verifier.Report, l verifier.Lang) bool {
	var j verifier.JSONReport
	if err := json.Unmarshal(rep.JSON(l), &j); err != nil {
		panic(err)
	}
	return br.Verdict.Kind == string(j.Verdict.Kind) && br.Verdict.Headline == j.Verdict.Headline && slices.Equal(br.Verdict.Details, j.Verdict.Details)
}

func (r browserReport) status(name string) string {
	for _, c := range r.Checks {
		if c.Name == name {
			return c.Status
		}
	}
	return ""
}

// verifyOnPage opens a game page, which checks the game as it loads, and
// waits for the verdict at its top.
func verifyOnPage(t *testing.T, ctx context.Context, url string) (browserReport, string) {
	t.Helper()
	var rep browserReport
	err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS("#verdict[data-exit]")),
		chromedp.WaitVisible(chromedp.CSS("#summary")),
	)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](`window.zarlogReport`))
	if err != nil {
		t.Fatalf("%s: reading the report: %v", url, err)
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("%s: %v: %s", url, err, raw)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#summary")))
	if err != nil {
		t.Fatal(err)
	}
	return rep, text
}

// TestBrowser runs the pages in a real headless Chromium: games of every
// scheme verify on their pages (in English, Turkish and Arabic), a tampered
// bundle names its first wrong roll, the offline auditor verifies a file it
// is given, and the browser verifier and npx zarlog-verify give
// zarlog-verify's verdict on every vector of testdata/ (testdata/dice and
// testdata/moves, the moves replayed) and on mutated bundles.
func TestBrowser(t *testing.T) {
	browser := newBrowser(t)
	f := testFixture(t)
	srv := newTestPages(t, f, nil)
	cat := verifier.MessageCatalog()

	t.Run("game pages verify", func(t *testing.T) {
		for _, c := range []struct {
			scheme string
			lang   verifier.Lang
		}{
			{"tavlarena-v1", English}, {"anchored-v1", English}, {"per-roll-v1", English},
			{"tavlarena-v1", Turkish}, {"anchored-v1", Arabic},
		} {
			ctx := tab(t, browser)
			rep, summary := verifyOnPage(t, ctx, srv.URL+"/games/"+f.ids[c.scheme]+"?lang="+string(c.lang))
			if want := cat["SuPass"].In(c.lang); rep.Exit != 0 || summary != want {
				t.Errorf("%s %s: exit %d, summary %q, want %q; report %+v", c.scheme, c.lang, rep.Exit, summary, want, rep)
			}
			for _, name := range []string{"format", "commitment", "rolls", "sequence", "log-inclusion", "log-signature", "log-order", "log-agreement"} {
				if got := rep.status(name); got != "pass" {
					t.Errorf("%s %s: %s is %q, want pass", c.scheme, c.lang, name, got)
				}
			}
			goRep := verifier.Verify(f.games[f.ids[c.scheme]].Bundle, verifier.Options{LogKey: mustLogKey(t, f.vkey)})
			if !sameVerdict(rep, goRep, c.lang) {
				t.Errorf("%s %s: the page's verdict %+v is not zarlog-verify's %+v", c.scheme, c.lang, rep.Verdict, goRep.Verdict())
			}
			main, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("verdict-main").textContent + "|" + [...document.querySelectorAll("#verdict-detail p")].map(p => p.textContent).join("|")`))
			if want := strings.Join(append([]string{rep.Verdict.Headline}, rep.Verdict.Details...), "|"); err != nil || main != want {
				t.Errorf("%s %s: the verdict box says %q (%v), want %q", c.scheme, c.lang, main, err, want)
			}
			if c.scheme == "anchored-v1" && (rep.status("anchor") != "pass" || slices.Contains(rep.NotChecked, "anchor")) {
				t.Errorf("anchored-v1: the browser's anchor check (the beacon's BLS signature too) is %s; not checked: %v", rep.status("anchor"), rep.NotChecked)
			}
			if c.lang == Arabic {
				dir, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("main")).direction`))
				if err != nil || dir != "rtl" {
					t.Errorf("Arabic page: main's direction is %q (%v), want rtl", dir, err)
				}
			}
		}
	})

	t.Run("tampered bundle names the wrong roll", func(t *testing.T) {
		id := f.ids["tavlarena-v1"]
		tampered := tamperBundleRoll(t, f.games[id].Bundle, 7)
		games := memGames{id: {Status: GameFinished, Bundle: tampered}}
		p, err := NewPages(Config{Games: games, LogKey: f.vkey})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		p.Register(mux)
		srv2 := httptest.NewServer(mux)
		defer srv2.Close()
		ctx := tab(t, browser)
		rep, summary := verifyOnPage(t, ctx, srv2.URL+"/games/"+id)

		goRep := verifier.Verify(tampered, verifier.Options{LogKey: mustLogKey(t, f.vkey)})
		want, _ := goRep.Check(verifier.CheckRolls)
		if want.Roll == nil {
			t.Fatalf("zarlog-verify finds no wrong roll in the tampered bundle: %v", goRep.Failed())
		}
		if rep.Exit != 1 || !strings.Contains(summary, "INVALID") || !slices.Equal(rep.Failed, goRep.Failed()) {
			t.Errorf("tampered: exit %d, summary %q, failed %v; zarlog-verify failed %v", rep.Exit, summary, rep.Failed, goRep.Failed())
		}
		var n, claimed, recomputed string
		err = chromedp.Do(ctx,
			chromedp.WaitVisible(chromedp.CSS("#first-wrong")),
			chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
				var err error
				n, err = chromedp.Evaluate[string](`document.getElementById("first-wrong").dataset.n`)(ctx, tt)
				if err == nil {
					claimed, err = chromedp.Evaluate[string](`document.getElementById("first-wrong").dataset.claimed`)(ctx, tt)
				}
				if err == nil {
					recomputed, err = chromedp.Evaluate[string](`document.getElementById("first-wrong").dataset.recomputed`)(ctx, tt)
				}
				return err
			}),
		)
		if err != nil {
			t.Fatal(err)
		}
		if n != fmt.Sprint(*want.Roll.N) || claimed != want.Roll.Claimed.String() || recomputed != want.Roll.Recomputed.String() {
			t.Errorf("the page names roll n=%s, %s claimed, %s recomputed; zarlog-verify: n=%d, %s, %s",
				n, claimed, recomputed, *want.Roll.N, want.Roll.Claimed, want.Roll.Recomputed)
		}
		marked, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#rolls tr.wrong").dataset.index`))
		if err != nil || marked != fmt.Sprint(want.Roll.Index) {
			t.Errorf("the marked row is %q (%v), want %d", marked, err, want.Roll.Index)
		}
		// The verdict counts the roll as the roll table does, from 1.
		if !sameVerdict(rep, goRep, English) || rep.Verdict.Kind != "failed" ||
			!strings.HasPrefix(rep.Verdict.Details[0], fmt.Sprintf("Roll %d is not what the seed gives", *want.Roll.N+1)) {
			t.Errorf("tampered: the page's verdict %+v, zarlog-verify's %+v", rep.Verdict, goRep.Verdict())
		}
		row, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#rolls tr.wrong td").textContent`))
		if err != nil || row != fmt.Sprint(*want.Roll.N+1) {
			t.Errorf("the marked row's number is %q (%v), want %d", row, err, *want.Roll.N+1)
		}
	})

	t.Run("a seal code that is not the game's", func(t *testing.T) {
		ctx := tab(t, browser)
		verifyOnPage(t, ctx, srv.URL+"/games/"+f.ids["tavlarena-v1"])
		err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.CSS("#expected"), "ZZZZ-ZZZZ"),
			chromedp.Click(chromedp.CSS("#verify-button")),
			chromedp.WaitVisible(chromedp.CSS(`#verdict[data-kind="wrong-seal"]`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](`window.zarlogReport`))
		var rep browserReport
		if err == nil {
			err = json.Unmarshal(raw, &rep)
		}
		if err != nil {
			t.Fatal(err)
		}
		exp, err := verifier.ParseExpected("ZZZZ-ZZZZ")
		if err != nil {
			t.Fatal(err)
		}
		goRep := verifier.Verify(f.games[f.ids["tavlarena-v1"]].Bundle, verifier.Options{LogKey: mustLogKey(t, f.vkey), Expected: exp})
		if !sameVerdict(rep, goRep, English) || rep.Verdict.Headline != "This is not the seal code of this game" || strings.Contains(strings.Join(rep.Verdict.Details, " "), "does not check out") {
			t.Errorf("a mistyped seal code: the page says %+v; zarlog-verify %+v", rep.Verdict, goRep.Verdict())
		}
		class, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("verdict").className`))
		if err != nil || !strings.Contains(class, "partial") || strings.Contains(class, "bad") {
			t.Errorf("a mistyped seal code: the verdict box is %q (%v), want partial, not bad", class, err)
		}
	})

	t.Run("no key, no claim", func(t *testing.T) {
		p, err := NewPages(Config{Games: f.games})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		p.Register(mux)
		srv3 := httptest.NewServer(mux)
		defer srv3.Close()
		ctx := tab(t, browser)
		rep, _ := verifyOnPage(t, ctx, srv3.URL+"/games/"+f.ids["tavlarena-v1"]+"?lang=tr")
		goRep := verifier.Verify(f.games[f.ids["tavlarena-v1"]].Bundle, verifier.Options{})
		if rep.Exit != 0 || rep.Verdict.Kind != "untied" || !sameVerdict(rep, goRep, Turkish) {
			t.Errorf("no log key: the page says exit %d, %+v; zarlog-verify %+v", rep.Exit, rep.Verdict, goRep.Verdict())
		}
	})

	t.Run("a browser without Ed25519 still checks the signature", func(t *testing.T) {
		ctx := tab(t, browser)
		// Make WebCrypto refuse Ed25519, as older browsers do, before the
		// page's scripts run.
		noEd := `(() => { const imp = crypto.subtle.importKey.bind(crypto.subtle);
			crypto.subtle.importKey = (f, k, alg, ...rest) =>
				(alg && (alg === "Ed25519" || alg.name === "Ed25519")) ? Promise.reject(new DOMException("no", "NotSupportedError")) : imp(f, k, alg, ...rest); })()`
		err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
			_, err := cdp.Call(ctx, tt, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: noEd})
			return err
		}))
		if err != nil {
			t.Fatal(err)
		}
		rep, summary := verifyOnPage(t, ctx, srv.URL+"/games/"+f.ids["tavlarena-v1"])
		if rep.Exit != 0 || rep.status("log-signature") != "pass" || slices.Contains(rep.NotChecked, "log-signature") ||
			summary != cat["SuPass"].In(verifier.English) {
			t.Errorf("without WebCrypto's Ed25519 (so with @noble/curves): exit %d, log-signature %s, summary %q", rep.Exit, rep.status("log-signature"), summary)
		}
		// And a key of the same name that did not sign fails there: the
		// fallback is a check, not a pass.
		seed := label32("another key")
		other, err := note.NewEd25519VerifierKey(testOrigin, ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey))
		if err != nil {
			t.Fatal(err)
		}
		js := fmt.Sprintf(`fetch(%q).then(r => r.arrayBuffer()).then(b => ZarlogVerifier.verify(new Uint8Array(b), {logKey: %q}))
			.then(r => r.checks.find(c => c.name === "log-signature").status)`, "/games/"+f.ids["tavlarena-v1"]+"/proof.json", other)
		st, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
		if err != nil || st != "fail" {
			t.Errorf("without WebCrypto's Ed25519, a key that did not sign: log-signature %q (%v), want fail", st, err)
		}
	})

	t.Run("the platform's signatures, with its key", func(t *testing.T) {
		_, emitterKey := testKey(t, testEmitter)
		_, otherKey := testKey(t, "another-platform")
		for _, c := range []struct {
			keys []string
			exit int
			emi  string
		}{{[]string{emitterKey}, 0, "pass"}, {[]string{otherKey}, 1, "fail"}} {
			p, err := NewPages(Config{Games: f.games, LogKey: f.vkey, EmitterKeys: c.keys})
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			p.Register(mux)
			srv := httptest.NewServer(mux)
			ctx := tab(t, browser)
			rep, _ := verifyOnPage(t, ctx, srv.URL+"/games/"+f.ids["anchored-v1"])
			srv.Close()
			if rep.Exit != c.exit || rep.status("log-emitter-signatures") != c.emi || slices.Contains(rep.NotChecked, "log-emitter-signatures") {
				t.Errorf("emitter keys %v: exit %d, log-emitter-signatures %s, not checked %v", c.keys, rep.Exit, rep.status("log-emitter-signatures"), rep.NotChecked)
			}
		}
	})

	t.Run("the witnesses, against the log's policy", func(t *testing.T) {
		id, other := f.ids["tavlarena-v1"], f.ids["anchored-v1"]
		policy, witnessed := witnessBundle(t, f.games[id].Bundle, 2)
		games := memGames{id: {Status: GameFinished, Bundle: witnessed}, other: f.games[other]}
		serve := func(policy string, code int) string {
			p, err := NewPages(Config{Games: games, LogKey: f.vkey})
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			p.Register(mux)
			mux.HandleFunc("GET /witness-policy", func(w http.ResponseWriter, r *http.Request) {
				if code != 200 {
					http.Error(w, "no", code)
					return
				}
				w.Write([]byte(policy))
			})
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			return srv.URL
		}
		withPolicy := serve(policy, 200)
		// A countersignature changed by one character: no longer the
		// witness's, which is a failure, not a game still to be witnessed.
		i := bytes.Index(witnessed, []byte("— w0.witness.example ")) + len("— w0.witness.example ") + 20
		bad := bytes.Clone(witnessed)
		bad[i] ^= 'A' ^ 'B'
		if bad[i] != 'A' && bad[i] != 'B' {
			bad[i] = 'A'
		}
		games2 := memGames{id: {Status: GameFinished, Bundle: bad}}
		saved := games
		games = games2
		badCosig := serve(policy, 200)
		games = saved
		words := func(id string, args ...any) string { return pageWords[id].Format(verifier.English, args...) }
		said := func(id string, args ...any) string { return cat[id].Format(verifier.English, args...) }
		for _, c := range []struct {
			name, url, game string
			exit            int
			state, line     string // line: the page's own witness line
			verdict         string // a sentence of the verdict
			witnesses       string
		}{
			{"witnessed", withPolicy, id, 0, "witnessed", "", said("VdWitnessed", 2, 2), "pass"},
			{"not yet witnessed", withPolicy, other, 0, "pending", "", said("VdNotWitnessed"), "skipped"},
			{"no witnesses", serve("", 404), id, 0, "none", words("VdNoWitnesses"), "", "skipped"},
			{"policy unavailable", serve("", 500), id, 0, "unavailable", words("VdPolicyUnavailable", "HTTP 500"), "", "skipped"},
			{"another set of witnesses", serve(policyOf(t, 2, "other"), 200), id, 0, "pending", "", said("VdNotWitnessed"), "skipped"},
			{"a bad countersignature", badCosig, id, 1, "", "", "", "fail"},
		} {
			ctx := tab(t, browser)
			rep, _ := verifyOnPage(t, ctx, c.url+"/games/"+c.game)
			var exit, state, line, verdict string
			err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
				var err error
				exit, err = chromedp.Evaluate[string](`document.getElementById("verdict").dataset.exit`)(ctx, tt)
				if err == nil {
					state, err = chromedp.Evaluate[string](`document.getElementById("verdict").dataset.witness`)(ctx, tt)
				}
				if err == nil {
					line, err = chromedp.Evaluate[string](`(e => e.hidden ? "" : e.textContent)(document.getElementById("verdict-witness"))`)(ctx, tt)
				}
				if err == nil {
					verdict, err = chromedp.Evaluate[string](`document.getElementById("verdict-detail").textContent`)(ctx, tt)
				}
				return err
			}))
			if err != nil {
				t.Fatal(err)
			}
			if exit != fmt.Sprint(c.exit) || state != c.state || line != c.line || rep.status("log-witnesses") != c.witnesses {
				t.Errorf("%s: verdict exit %s, witness state %q, line %q, log-witnesses %s; want %d, %q, %q, %s",
					c.name, exit, state, line, rep.status("log-witnesses"), c.exit, c.state, c.line, c.witnesses)
			}
			if !strings.Contains(verdict, c.verdict) || strings.Contains(verdict, said("VdNC-log-witnesses")) && c.state != "none" && c.state != "unavailable" {
				t.Errorf("%s: the verdict %q does not say %q, or says the witnesses were not checked", c.name, verdict, c.verdict)
			}
		}
	})

	t.Run("roll it yourself", func(t *testing.T) {
		ctx := tab(t, browser)
		err := chromedp.Do(ctx,
			chromedp.Navigate(srv.URL+"/stats?lang=tr"),
			chromedp.WaitVisible(chromedp.CSS(`button[data-rolls="3600"]`)),
			chromedp.Click(chromedp.CSS(`button[data-rolls="3600"]`)),
			chromedp.Click(chromedp.CSS(`button[data-rolls="36"]`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[Number(document.getElementById("sim-total").textContent),
			[...document.querySelectorAll("#sim-grid td output")].reduce((s, o) => s + Number(o.textContent), 0),
			Number(document.getElementById("sim-empty").textContent)]`))
		if err != nil || len(got) != 3 || got[0] != 3636 || got[1] != 3636 || got[2] != 0 {
			t.Errorf("after 3636 rolls: total, sum of the cells, empty cells = %v (%v)", got, err)
		}
	})

	// The offline auditor, opened from a file, verifies a proof file given
	// to its file input.
	dir := t.TempDir()
	auditor := filepath.Join(dir, "auditor.html")
	if err := WriteAuditor(auditor, f.vkey); err != nil {
		t.Fatal(err)
	}
	t.Run("offline auditor verifies a file", func(t *testing.T) {
		proof := filepath.Join(dir, "proof.json")
		if err := os.WriteFile(proof, f.games[f.ids["per-roll-v1"]].Bundle, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx := tab(t, browser)
		err := chromedp.Do(ctx,
			chromedp.Navigate("file://"+auditor),
			chromedp.WaitReady(chromedp.CSS("#file")),
			chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{proof}),
			chromedp.WaitVisible(chromedp.CSS("#summary")),
		)
		if err != nil {
			t.Fatal(err)
		}
		summary, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#summary")))
		if err != nil || summary != cat["SuPass"].In(verifier.English) {
			t.Errorf("auditor: summary %q (%v), want %q", summary, err, cat["SuPass"].In(verifier.English))
		}
		// It opens with the game page's verdict box, above the checks, in
		// the page's language.
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](`window.zarlogReport`))
		var rep browserReport
		if err == nil {
			err = json.Unmarshal(raw, &rep)
		}
		goRep := verifier.Verify(f.games[f.ids["per-roll-v1"]].Bundle, verifier.Options{LogKey: mustLogKey(t, f.vkey)})
		if err != nil || !sameVerdict(rep, goRep, English) {
			t.Errorf("auditor: verdict %+v (%v), zarlog-verify's %+v", rep.Verdict, err, goRep.Verdict())
		}
		above, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
			const v = document.getElementById("verdict"), r = document.getElementById("result");
			return !v.hidden && v.getBoundingClientRect().bottom <= r.getBoundingClientRect().top &&
				document.getElementById("verdict-main").textContent === window.zarlogReport.verdict.headline; })()`))
		if err != nil || !above {
			t.Errorf("auditor: the verdict box is not shown above the checks (%v)", err)
		}
		_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.getElementById("lang"); s.value = "ar"; s.dispatchEvent(new Event("change")); return true; })()`))
		main, err2 := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("verdict-main").textContent`))
		if err != nil || err2 != nil || main != cat["SuPass"].In(Arabic) {
			t.Errorf("auditor in Arabic: the verdict says %q (%v %v)", main, err, err2)
		}
		// Its CSP forbids every connection: a fetch from the page fails.
		blocked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`fetch("data:text/plain,x").then(() => false, () => true)`, chromedp.EvalAwaitPromise))
		if err != nil || !blocked {
			t.Errorf("the auditor could fetch (blocked %v, %v)", blocked, err)
		}
	})

	t.Run("drand quicknet beacons in the browser", func(t *testing.T) {
		ctx := tab(t, browser)
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+auditor), chromedp.WaitReady(chromedp.CSS("#file"))); err != nil {
			t.Fatal(err)
		}
		for _, b := range [][2]string{
			{"8", "a0c06b9964123d2e6036aa004c140fc301f4edd3ea6b8396a15dfd7dfd70cc0dce0b4a97245995767ab72cf59de58c47"},
			{"10", "ac415e508c484053efed1c6c330e3ae0bf20185b66ed088864dac1ff7d6f927610824986390d3239dac4dd73e6f865f5"},
			{"123", "b75c69d0b72a5d906e854e808ba7e2accb1542ac355ae486d591aa9d43765482e26cd02df835d3546d23c4b13e0dfc92"},
			{"657413", beaconSig},
		} {
			flipped := []byte(b[1])
			flipped[40] ^= 1 // one hex digit, one bit
			js := fmt.Sprintf(`Promise.all([ZarlogVerifier.verifyBeacon(%s, %q), ZarlogVerifier.verifyBeacon(%s, %q), ZarlogVerifier.verifyBeacon(%s + 1, %q)])`,
				b[0], b[1], b[0], flipped, b[0], b[1])
			got, err := chromedp.Run(ctx, chromedp.Evaluate[[]bool](js, chromedp.EvalAwaitPromise))
			if err != nil || len(got) != 3 || !got[0] || got[1] || got[2] {
				t.Errorf("round %s: real, flipped bit, next round: %v (%v), want true false false", b[0], got, err)
			}
		}
	})

	t.Run("agrees with zarlog-verify and npx on every vector of testdata", func(t *testing.T) {
		ctx := tab(t, browser)
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+auditor), chromedp.WaitReady(chromedp.CSS("#file"))); err != nil {
			t.Fatal(err)
		}
		agreeOnVectors(t, ctx)
	})

	t.Run("agrees with zarlog-verify on mutated bundles", func(t *testing.T) {
		ctx := tab(t, browser)
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+auditor), chromedp.WaitReady(chromedp.CSS("#file"))); err != nil {
			t.Fatal(err)
		}
		agreeOnMutations(t, ctx, f)
	})
}

// A verdict is what a verifier said of a file: its exit code, the checks
// that failed, the status of every check, and the first failed check's
// message in English.
type verdict struct {
	Exit      int               `json:"exit"`
	Failed    []string          `json:"failed"`
	Statuses  map[string]string `json:"statuses"`
	FirstFail string            `json:"firstFail"`
	// Verdict is the verdict in a player's words, rendered in English
	// (the browser's; Go's is in its --json).
	Verdict struct {
		Kind     string   `json:"kind"`
		Headline string   `json:"headline"`
		Details  []string `json:"details"`
	} `json:"verdict"`
	// WrongRoll is the first wrong roll of a failed rolls check.
	WrongRoll *verifier.RollRef `json:"wrongRoll"`
}

func (v verdict) String() string {
	return fmt.Sprintf("exit %d, failed %v: %s", v.Exit, v.Failed, v.FirstFail)
}

// goVerdict is the verdict of a zarlog-verify --json report.
func goVerdict(rep verifier.JSONReport) verdict {
	v := verdict{Exit: rep.Exit, Failed: []string{}, Statuses: map[string]string{}}
	for _, c := range rep.Checks {
		v.Statuses[c.Name] = string(c.Status)
		if c.Name == verifier.CheckRolls && c.Status == verifier.Fail {
			v.WrongRoll = c.Roll
		}
		if c.Status == verifier.Fail {
			if len(v.Failed) == 0 {
				v.FirstFail = c.Detail
			}
			v.Failed = append(v.Failed, c.Name)
		}
	}
	return v
}

// vectorArgs are zarlog-verify's arguments for a vector: --json in
// English, its flags, and the file.
func vectorArgs(v vector) []string {
	args := []string{"--json", "--lang", "en"}
	if v.ExpectedCommitment != "" {
		args = append(args, "--expected-commitment", v.ExpectedCommitment)
	}
	if v.LogKey != "" {
		args = append(args, "--log-key", v.LogKey)
	}
	if v.WitnessPolicy != "" {
		args = append(args, "--witness-policy", v.policyPath())
	}
	for _, k := range v.EmitterKeys {
		args = append(args, "--emitter-key", k)
	}
	return append(args, filepath.Join(v.dir, v.File))
}

// agreeOnVectors runs every vector of testdata/ (testdata/dice: evidence
// files, proof bundles, tlog-proofs; testdata/moves: games whose moves are
// logged) through the three verifiers with the same flags: Go's
// zarlog-verify (cli.Run), npx zarlog-verify (the package's command line,
// src/cli.js, all in one Node process by tools/cli.mjs) and the pages'
// bundle in Chromium (ZarlogVerifier.verify, on the page of ctx). Go's and
// Node's --json output must be the same bytes; the three verdicts (exit
// code, failed checks, every check's status, the first failed check's
// message) the same; and each the manifest's exit code and failing checks.
func agreeOnVectors(t *testing.T, ctx context.Context) {
	node := nodeAvailable(t)
	vs := vectors(t)
	var lists [][]string
	for _, v := range vs {
		lists = append(lists, vectorArgs(v))
	}
	b, err := json.Marshal(lists)
	if err != nil {
		t.Fatal(err)
	}
	argsFile := filepath.Join(t.TempDir(), "args.json")
	if err := os.WriteFile(argsFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join(jsPackage, "tools", "cli.mjs"), argsFile).Output()
	if err != nil {
		t.Fatalf("node tools/cli.mjs: %v", err)
	}
	var npx []struct {
		Exit           int
		Stdout, Stderr string
	}
	if err := json.Unmarshal(out, &npx); err != nil || len(npx) != len(vs) {
		t.Fatalf("node ran %d of %d vectors (%v)", len(npx), len(vs), err)
	}
	agree, tlog, moves := 0, 0, 0
	for i, v := range vs {
		var goOut, goErr bytes.Buffer
		goExit := cli.Run(context.Background(), lists[i], strings.NewReader(""), &goOut, &goErr)
		var rep verifier.JSONReport
		if err := json.Unmarshal(goOut.Bytes(), &rep); err != nil {
			t.Fatalf("%s: zarlog-verify --json: %v: %s", v.Name, err, goErr.Bytes())
		}
		gv := goVerdict(rep)
		if gv.Exit != goExit {
			t.Fatalf("%s: zarlog-verify exits %d, its report says %d", v.Name, goExit, gv.Exit)
		}
		disagree := false
		say := func(format string, args ...any) {
			t.Errorf(v.Name+": "+format, args...)
			disagree = true
		}
		if n := npx[i]; n.Exit != goExit || n.Stdout != goOut.String() || n.Stderr != goErr.String() {
			say("npx zarlog-verify exits %d, zarlog-verify %d; their --json output differs:\nnpx: %s%s\nGo:  %s%s", n.Exit, goExit, n.Stdout, n.Stderr, goOut.Bytes(), goErr.Bytes())
		}
		data, err := os.ReadFile(filepath.Join(v.dir, v.File))
		if err != nil {
			t.Fatal(err)
		}
		policy := ""
		if v.WitnessPolicy != "" {
			p, err := os.ReadFile(v.policyPath())
			if err != nil {
				t.Fatal(err)
			}
			policy = string(p)
		}
		bv, err := runBrowserVerdict(ctx, data, v, policy)
		if err != nil {
			say("the browser verifier threw: %v", err)
			continue
		}
		if bv.Exit != gv.Exit || !slices.Equal(bv.Failed, gv.Failed) || bv.FirstFail != gv.FirstFail || !maps.Equal(bv.Statuses, gv.Statuses) ||
			!sameRoll(bv.WrongRoll, gv.WrongRoll) {
			say("the browser says %v %v, zarlog-verify %v %v", bv, bv.Statuses, gv, gv.Statuses)
		}
		if bv.Verdict.Kind != string(rep.Verdict.Kind) || bv.Verdict.Headline != rep.Verdict.Headline || !slices.Equal(bv.Verdict.Details, rep.Verdict.Details) {
			say("the browser's verdict %+v is not zarlog-verify's %+v", bv.Verdict, rep.Verdict)
		}
		failing := slices.Sorted(slices.Values(gv.Failed))
		if gv.Exit != v.Exit || !slices.Equal(failing, append([]string{}, v.Failing...)) {
			say("the manifest says exit %d, failing %v; the verifiers %v", v.Exit, v.Failing, gv)
		}
		if verifier.IsTlogProof(data) {
			tlog++
		}
		if s := gv.Statuses[verifier.CheckMoves]; s == string(verifier.Pass) || s == string(verifier.Fail) {
			moves++
		}
		if !disagree {
			agree++
		}
	}
	if len(vs) < 230 || tlog == 0 || moves < 14 {
		t.Errorf("%d vectors, %d tlog-proofs, %d with moves replayed: the manifests lost vectors", len(vs), tlog, moves)
	}
	t.Logf("Go, Node (npx) and Chromium agree on %d of %d vectors of testdata/ (%d tlog-proofs, %d games with their moves replayed)", agree, len(vs), tlog, moves)
}

// agreeOnMutations changes the fixture's bundles one byte at a time
// (deterministically: a byte replaced, deleted or doubled at spread-out
// positions, some inside leaves) and checks that the browser verifier never
// throws and gives the same exit code and failed checks as package
// verifier, with the log key.
func agreeOnMutations(t *testing.T, ctx context.Context, f pageFixture) {
	n := 0
	for _, scheme := range []string{"tavlarena-v1", "anchored-v1", "per-roll-v1"} {
		b := f.games[f.ids[scheme]].Bundle
		for i := range 60 {
			pos := (i*7919 + 13) % len(b)
			m := bytes.Clone(b)
			switch i % 3 {
			case 0:
				m[pos] = "0a}\"\\,1:9f"[i%12]
			case 1:
				m = append(m[:pos:pos], m[pos+1:]...)
			case 2:
				m = append(m[:pos+1:pos+1], m[pos:]...)
			}
			goRep := verifier.Verify(m, verifier.Options{LogKey: mustLogKey(t, f.vkey)})
			br, err := runBrowserVerifier(ctx, m, "", f.vkey)
			if err != nil {
				t.Errorf("%s mutation %d (byte %d): the browser verifier threw: %v", scheme, i, pos, err)
				continue
			}
			n++
			gf, bf := goRep.Failed(), br.Failed
			if gf == nil {
				gf = []string{}
			}
			if br.Exit != goRep.Exit() || !slices.Equal(gf, bf) {
				t.Errorf("%s mutation %d (byte %d %q): the browser says exit %d %v, zarlog-verify %d %v",
					scheme, i, pos, b[max(0, pos-20):min(len(b), pos+20)], br.Exit, br.Failed, goRep.Exit(), goRep.Failed())
			}
		}
	}
	t.Logf("%d mutated bundles compared", n)
}

// runBrowserVerifier runs ZarlogVerifier.verify on data in the page of ctx.
func runBrowserVerifier(ctx context.Context, data []byte, expected, logKey string) (browserReport, error) {
	args, _ := json.Marshal(map[string]string{"b64": base64.StdEncoding.EncodeToString(data), "expected": expected, "logKey": logKey})
	js := `(async (a) => {
		const bin = atob(a.b64), bytes = new Uint8Array(bin.length);
		for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
		const r = await ZarlogVerifier.verify(bytes, {expected: a.expected, logKey: a.logKey});
		const cat = JSON.parse(document.body.dataset.messages), R = (m) => ZarlogVerifier.render(m, cat, 0);
		const v = ZarlogVerifier.verdict(r);
		return {exit: r.exit, failed: r.failed, notChecked: r.notChecked,
			checks: r.checks.map(c => ({name: c.name, status: c.status, roll: c.roll || null})),
			verdict: {kind: v.kind, headline: R(v.headline), details: v.details.map(R)}};
	})(` + string(args) + `)`
	var br browserReport
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise))
	if err != nil {
		return br, err
	}
	err = json.Unmarshal(out, &br)
	return br, err
}

// runBrowserVerdict runs ZarlogVerifier.verify on data in the page of ctx,
// with vector v's options (and its witness policy's text), and renders
// the first failed check's message in English with the page's catalog.
func runBrowserVerdict(ctx context.Context, data []byte, v vector, policy string) (verdict, error) {
	args, _ := json.Marshal(map[string]any{"b64": base64.StdEncoding.EncodeToString(data), "expected": v.ExpectedCommitment,
		"logKey": v.LogKey, "emitterKeys": v.EmitterKeys, "policy": policy})
	js := `(async (a) => {
		const bin = atob(a.b64), bytes = new Uint8Array(bin.length);
		for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
		const opt = {expected: a.expected, logKey: a.logKey};
		if (a.emitterKeys) opt.emitterKeys = a.emitterKeys;
		if (a.policy) opt.witnessPolicy = a.policy;
		const r = await ZarlogVerifier.verify(bytes, opt);
		const cat = JSON.parse(document.body.dataset.messages);
		const first = r.checks.find(c => c.status === "fail");
		const statuses = {};
		for (const c of r.checks) statuses[c.name] = c.status;
		const R = (m) => ZarlogVerifier.render(m, cat, 0), v = ZarlogVerifier.verdict(r);
		const rolls = r.checks.find(c => c.name === "rolls" && c.status === "fail");
		return {exit: r.exit, failed: r.failed, statuses: statuses, firstFail: first ? R(first.detail) : "",
			wrongRoll: rolls ? rolls.roll : null, verdict: {kind: v.kind, headline: R(v.headline), details: v.details.map(R)}};
	})(` + string(args) + `)`
	var v2 verdict
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise))
	if err != nil {
		return v2, err
	}
	err = json.Unmarshal(out, &v2)
	return v2, err
}

func sameRoll(a, b *verifier.RollRef) bool {
	if a == nil || b == nil {
		return a == b
	}
	eqN := (a.N == nil) == (b.N == nil) && (a.N == nil || *a.N == *b.N)
	return a.Index == b.Index && eqN && a.RollID == b.RollID && *a.Claimed == *b.Claimed && *a.Recomputed == *b.Recomputed
}

// tamperBundleRoll changes die 2 of roll n in a per-game bundle, in the
// logged roll event and in the top-level rolls alike, as an operator who
// republished a changed game would: the leaf no longer matches the log, and
// the roll no longer matches the seed.
func tamperBundleRoll(t *testing.T, bundle []byte, n uint32) []byte {
	t.Helper()
	v, err := cjson.Decode(bundle)
	if err != nil {
		t.Fatal(err)
	}
	root := v.(cjson.Object)
	get := func(o cjson.Object, k string) any { x, _ := o.Get(k); return x }
	set := func(o cjson.Object, k string, x any) {
		for i := range o {
			if o[i].Key == k {
				o[i].Value = x
			}
		}
	}
	var newDice [2]int
	entries := get(get(root, "log").(cjson.Object), "entries").([]any)
	done := false
	for _, e := range entries {
		eo := e.(cjson.Object)
		ev, err := events.Parse([]byte(get(eo, "leaf").(string)))
		if err != nil {
			t.Fatal(err)
		}
		r, ok := ev.Body.(events.Roll)
		if !ok || r.N != n {
			continue
		}
		r.Dice[1] = r.Dice[1]%6 + 1
		newDice = r.Dice
		ev.Body = r
		leaf, err := events.Format(ev)
		if err != nil {
			t.Fatal(err)
		}
		set(eo, "leaf", string(leaf))
		done = true
	}
	if !done {
		t.Fatalf("no roll %d in the bundle", n)
	}
	roll := get(root, "rolls").([]any)[n].(cjson.Object)
	set(roll, "dice", []any{int64(newDice[0]), int64(newDice[1])})
	out := cjson.Append(nil, root)
	if bytes.Equal(out, bundle) {
		t.Fatal("the tampering changed nothing")
	}
	return out
}

// witnessBundle returns a tlog-policy of n witnesses (quorum: all) and
// bundle with its checkpoint cosigned by all of them: the same tree, so
// the inclusion proofs stand.
func witnessBundle(t *testing.T, bundle []byte, n int) (policy string, witnessed []byte) {
	t.Helper()
	var b struct {
		Log struct{ Checkpoint string }
	}
	if err := json.Unmarshal(bundle, &b); err != nil {
		t.Fatal(err)
	}
	cp, err := merkle.ParseSignedCheckpoint([]byte(b.Log.Checkpoint))
	if err != nil {
		t.Fatal(err)
	}
	note := b.Log.Checkpoint
	for i := range n {
		skey := witnessKey(t, i, "w")
		c, err := merkle.NewCosigner(skey, func() time.Time { return time.Unix(1_800_000_000, 0) })
		if err != nil {
			t.Fatal(err)
		}
		line, err := c.Cosign(cp)
		if err != nil {
			t.Fatal(err)
		}
		note += string(line)
	}
	old, _ := json.Marshal(b.Log.Checkpoint)
	cosigned, _ := json.Marshal(note)
	if bytes.Count(bundle, old) != 1 {
		t.Fatalf("the checkpoint is %d times in the bundle", bytes.Count(bundle, old))
	}
	return policyOf(t, n, "w"), bytes.Replace(bundle, old, cosigned, 1)
}

// witnessKey is the signer key of test witness i of a set.
func witnessKey(t *testing.T, i int, set string) string {
	t.Helper()
	seed := label32(fmt.Sprintf("witness %s %d", set, i))
	skey, _, err := merkle.GenerateCosignerKey(bytes.NewReader(append(seed[:], seed[:]...)), fmt.Sprintf("%s%d.witness.example", set, i))
	if err != nil {
		t.Fatal(err)
	}
	return skey
}

// policyOf is a tlog-policy of the n witnesses of a set, all needed.
func policyOf(t *testing.T, n int, set string) string {
	t.Helper()
	var names []string
	text := ""
	for i := range n {
		c, err := merkle.NewCosigner(witnessKey(t, i, set), time.Now)
		if err != nil {
			t.Fatal(err)
		}
		text += fmt.Sprintf("witness W%d %s\n", i, c.VerifierKey())
		names = append(names, fmt.Sprintf("W%d", i))
	}
	return text + "group all all " + strings.Join(names, " ") + "\nquorum all\n"
}
