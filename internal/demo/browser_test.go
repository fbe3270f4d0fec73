package demo

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A watcher is the demo's report writer: it keeps the text and signals
// once a line containing mark is written.
type watcher struct {
	syncBuffer
	mark string
	once sync.Once
	seen chan struct{}
}

func (w *watcher) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	if strings.Contains(w.String(), w.mark) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

// TestBrowser is the README's promise: while `zarlog demo` serves, a game's
// audit page verifies the game in a real (headless) Chromium, every check
// the browser can make passing. It skips when Chromium is not installed
// (ZARLOG_CHROMIUM names another binary), as the publisher's browser tests
// do.
func TestBrowser(t *testing.T) {
	path := os.Getenv("ZARLOG_CHROMIUM")
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path == "" {
			path, _ = exec.LookPath(name)
		}
	}
	if path == "" {
		t.Skip("Chromium is not installed (apt-get install chromium, or set ZARLOG_CHROMIUM)")
	}
	ctx, stop := context.WithCancel(testCtx(t))
	defer stop()
	out := &watcher{mark: "3 of 3 games verified\n", seen: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		res, err := Run(ctx, Config{Dir: t.TempDir(), HTTPAddr: "127.0.0.1:0", Games: 3, Out: out})
		if err == nil && !res.OK() {
			t.Errorf("the demo's result: %+v", res)
		}
		done <- err
	}()
	select {
	case <-out.seen:
	case err := <-done:
		t.Fatalf("the demo stopped: %v:\n%s", err, out.String())
	}
	urls := regexp.MustCompile(`  audit (http\S+)`).FindAllStringSubmatch(out.String(), -1)
	if len(urls) != 3 {
		t.Fatalf("audit URLs: %v", urls)
	}

	actx, cancelA := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox,
		chromedp.NoFirstRun, chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()))
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	if err := chromedp.Do(bctx); err != nil { // start the browser
		t.Fatalf("starting Chromium: %v", err)
	}
	for _, u := range urls {
		tabCtx, cancelTab := chromedp.NewContext(bctx)
		defer cancelTab()
		tctx, cancel := context.WithTimeout(tabCtx, 60*time.Second)
		err := chromedp.Do(tctx,
			chromedp.Navigate(u[1]),
			chromedp.WaitVisible(chromedp.CSS("#verify-button")),
			chromedp.Click(chromedp.CSS("#verify-button")),
			chromedp.WaitVisible(chromedp.CSS("#summary")),
		)
		if err != nil {
			cancel()
			t.Fatalf("%s: %v", u[1], err)
		}
		raw, err := chromedp.Run(tctx, chromedp.Evaluate[[]byte](`window.zarlogReport`))
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", u[1], err)
		}
		var rep struct {
			Exit    int    `json:"exit"`
			Summary string `json:"summary"`
			Checks  []struct{ Name, Status string }
		}
		if err := json.Unmarshal(raw, &rep); err != nil {
			t.Fatalf("%s: %v: %s", u[1], err, raw)
		}
		passed := map[string]bool{}
		for _, c := range rep.Checks {
			passed[c.Name] = c.Status == "pass"
		}
		if rep.Exit != 0 || !strings.HasPrefix(rep.Summary, "Every roll checked") ||
			!passed["rolls"] || !passed["log-inclusion"] || !passed["log-signature"] {
			t.Errorf("%s in the browser: %s", u[1], raw)
		}
	}
	stop()
	if err := <-done; err != nil && err != context.Canceled {
		t.Errorf("the demo: %v", err)
	}
}
