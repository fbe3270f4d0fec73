package demo

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/verifier"
	"github.com/zarlog/zarlog/wire"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// A syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var gameLine = regexp.MustCompile(`(?m)^game (\d+) +(\S+) (.*?), (western|turkish-reroll): (\d+) rolls \((\d+) doubles\), (.*)\n +seal (\S+) +audit (\S+)\n +(.*)$`)

// checkReport checks the report of a demo that verified every game: one
// entry per game, each verified, and the closing count.
func checkReport(t *testing.T, out string, games int) {
	t.Helper()
	ms := gameLine.FindAllStringSubmatch(out, -1)
	if len(ms) != games {
		t.Fatalf("%d game entries, want %d:\n%s", len(ms), games, out)
	}
	for _, m := range ms {
		if !strings.HasPrefix(m[10], "verified: ") || !strings.Contains(m[10], "; witnessed by 2 of 2 witnesses (") {
			t.Errorf("game %s: %s", m[1], m[10])
		}
		if !strings.Contains(m[9], "/games/") {
			t.Errorf("game %s: audit URL %s", m[1], m[9])
		}
	}
	if want := fmt.Sprintf("%d of %d games verified\n", games, games); !strings.Contains(out, want) {
		t.Errorf("no %q in:\n%s", want, out)
	}
}

// TestRun runs the offline demo for one game of each plan: every game is
// played, published and verified, and the report says so.
func TestRun(t *testing.T) {
	ctx := testCtx(t)
	var out syncBuffer
	dir := t.TempDir()
	res, err := Run(ctx, Config{Dir: dir, HTTPAddr: "127.0.0.1:0", Games: len(plans), Concurrency: 4, Exit: true, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Games != len(plans) {
		t.Fatalf("result %+v:\n%s", res, out.String())
	}
	checkReport(t, out.String(), len(plans))
	// The witnesses: a zarlog witness and litewitness, their keys, and the
	// policy that needs both.
	for _, want := range []string{"\nwitness witness0.zarlog.localhost+", "(a zarlog witness, in this process)\n",
		"\nwitness litewitness.zarlog.localhost+", "litewitness, beside it: another implementation of C2SP tlog-witness)\n",
		"\npolicy log zarlog.localhost/log+", "\npolicy witness W0 witness0.zarlog.localhost+", "\npolicy witness W1 litewitness.zarlog.localhost+",
		"\npolicy quorum both\n", "/checkpoint.witnessed: the log has its newest checkpoint cosigned by both witnesses every 2s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the report:\n%s", want, out.String())
		}
	}
	for _, want := range []string{"\nvkey zarlog.localhost/log+", "\nauditor http://127.0.0.1:", "\nemitter demo-bot+",
		"\nreplay anchored-v1 games are anchored to drand quicknet round 657413"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the report", want)
		}
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "run-*", "log.key"))
	if len(runs) != 1 {
		t.Errorf("data directories with a key: %v", runs)
	}
	// The run's data directory stays small: every store, blocks allocated.
	var used int64
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				used += st.Blocks * 512
			}
		}
		return nil
	})
	t.Logf("the demo's %d games take %.1f MB on disk", len(plans), float64(used)/1e6)
	if used >= 64e6 {
		t.Errorf("the demo run takes %d bytes on disk, want under 64 MB", used)
	}
	// Every plan's game ended as planned.
	for _, m := range gameLine.FindAllStringSubmatch(out.String(), -1) {
		var no int
		fmt.Sscan(m[1], &no)
		p := planOf(no)
		if m[2] != string(p.scheme) || m[4] != p.opening {
			t.Errorf("game %d: %s %s, planned %s", no, m[2], m[4], p.describe())
		}
		// A game planned to resign may end on the board first: plakoto's
		// pinned mother checker ends it in a few dozen rolls.
		var rolls int
		fmt.Sscan(m[5], &rolls)
		resigned := strings.Contains(m[7], "resigned")
		if resigned && p.resignAfter == 0 || !resigned && p.resignAfter > 0 && rolls >= p.resignAfter {
			t.Errorf("game %d: %q after %d rolls, planned to resign after %d rolls", no, m[7], rolls, p.resignAfter)
		}
	}
}

// A watchBuffer is a syncBuffer that says when it first holds a text.
type watchBuffer struct {
	syncBuffer
	want string
	once sync.Once
	seen chan struct{}
}

func (w *watchBuffer) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	if strings.Contains(w.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

// TestServesQuietly: without Exit or Continuous the demo plays its games,
// prints the count and, last, the pages to open, and then serves without
// another word or game until it is stopped (the bot has disconnected before
// the last line is printed): the log holds exactly the games reported, and
// the report ends with the pages and "stopped".
func TestServesQuietly(t *testing.T) {
	start := time.Now().Add(-time.Second) // the events' times are in milliseconds
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	out := &watchBuffer{want: "serving until Ctrl-C\n", seen: make(chan struct{})}
	dir := t.TempDir()
	type ret struct {
		res Result
		err error
	}
	done := make(chan ret, 1)
	go func() {
		res, err := Run(ctx, Config{Dir: dir, HTTPAddr: "127.0.0.1:0", Games: 3, Concurrency: 3, Out: out})
		done <- ret{res, err}
	}()
	select {
	case <-out.seen:
	case r := <-done:
		t.Fatalf("the demo returned before serving: %+v, %v:\n%s", r.res, r.err, out.String())
	}
	// What a person does next: open the pages printed last.
	m := regexp.MustCompile(`(?m)^open (http://\S+/) `).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no pages to open in the report:\n%s", out.String())
	}
	resp, err := http.Get(m[1])
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %v", m[1], err)
	}
	resp.Body.Close()
	m = regexp.MustCompile(`(?m)^player (http://\S+) `).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no player page in the report:\n%s", out.String())
	}
	if resp, err := http.Get(m[1]); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %v", m[1], err)
	} else {
		resp.Body.Close()
	}
	// Every game is dated when it was played: after the replay, the clock
	// went on at the real time; only the anchored games' commits and
	// tokens, logged during the replay, are of 2023.
	for _, g := range gameLine.FindAllStringSubmatch(out.String(), -1) {
		resp, err := http.Get(g[9] + "/proof.json")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ev, err := verifier.Parse(b)
		if err != nil {
			t.Fatalf("game %s: %v", g[1], err)
		}
		for _, e := range ev.Log.Entries {
			x, err := events.Parse(e.Leaf)
			if err != nil {
				t.Fatal(err)
			}
			replayed := x.Scheme == events.Anchored && (x.Type == events.TypeCommit || x.Type == events.TypeContribution)
			if replayed != x.Time.Before(start) || (replayed && x.Time.Year() != 2023) {
				t.Errorf("game %s (%s): its %s event is dated %s (the test began %s)", g[1], x.Scheme, x.Type, x.Time, start)
			}
		}
	}
	cancel()
	r := <-done
	if r.err != nil || !r.res.OK() || r.res.Games != 3 {
		t.Fatalf("%+v, %v:\n%s", r.res, r.err, out.String())
	}
	checkReport(t, out.String(), 3)
	_, tail, _ := strings.Cut(out.String(), "3 of 3 games verified\n")
	var heads []string
	for _, line := range strings.Split(strings.TrimSuffix(tail, "\n"), "\n") {
		head, _, _ := strings.Cut(line, " ")
		heads = append(heads, head)
	}
	if want := []string{"open", "player", "stats", "auditor", "vkey", "serving", "stopped"}; !slices.Equal(heads, want) {
		t.Errorf("after the count the report says %q, want lines %q", tail, want)
	}
	checkReadme(t, out.String())
	// The log holds the three games and nothing more.
	runs, _ := filepath.Glob(filepath.Join(dir, "run-*"))
	if len(runs) != 1 {
		t.Fatalf("run directories: %v", runs)
	}
	skey, err := os.ReadFile(filepath.Join(runs[0], "log.key"))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := merkle.NewSigner(strings.TrimSpace(string(skey)))
	if err != nil {
		t.Fatal(err)
	}
	vkey, _ := merkle.VerifierKey(strings.TrimSpace(string(skey)))
	verifierKey, _ := merkle.NewVerifier(vkey)
	l, err := ledger.Open(context.Background(), ledger.Config{Dir: filepath.Join(runs[0], "ledger"), Signer: signer, Verifier: verifierKey, CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	st, err := l.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Games != 3 || st.Finished != 3 {
		t.Errorf("the log holds %d games (%d finished), want the 3 reported", st.Games, st.Finished)
	}
}

// checkReadme holds the demo's output in README.md to the demo's real
// output: its lines, each named by its first word, in the same order (the
// README leaves some out, with "…"), and after the count exactly the same
// lines.
func checkReadme(t *testing.T, out string) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "```text\nzarlog demo: ")
	block, _, _ = strings.Cut(block, "\n```")
	if !ok {
		t.Fatal("README.md shows no output of the demo")
	}
	heads := func(text string) (all, tail []string) {
		counted := false
		for _, line := range strings.Split("zarlog "+strings.TrimSuffix(text, "\n"), "\n") {
			head, _, _ := strings.Cut(line, " ")
			if head == "" || head == "…" {
				continue // an indented line, or one left out
			}
			count := regexp.MustCompile(`^\d+ of \d+ games verified$`).MatchString(line)
			if count {
				head = "(count)"
			}
			if counted {
				tail = append(tail, head)
			}
			all = append(all, head)
			counted = counted || count
		}
		return all, tail
	}
	readme, readmeTail := heads(block)
	_, real, _ := strings.Cut(out, "zarlog demo: ")
	real, _, _ = strings.Cut(real, "\nstopped\n")
	got, gotTail := heads(real)
	for i, j := 0, 0; i < len(readme); i++ {
		for j < len(got) && got[j] != readme[i] {
			j++
		}
		if j == len(got) {
			t.Errorf("README.md's demo shows a line %q where the demo prints none (the README's lines: %q; the demo's: %q)", readme[i], readme, got)
			break
		}
		j++
	}
	if !slices.Equal(readmeTail, gotTail) {
		t.Errorf("after the count README.md's demo shows the lines %q, the demo prints %q", readmeTail, gotTail)
	}
}

// TestReplayCap: offline, only the first ReplayAnchored anchored-v1 games
// are sealed before play starts (all must be, before the replay clock
// reaches the recorded round), so that a long run plays at once; the
// anchored-v1 games after them are played as the next scheme, and the
// report says so.
func TestReplayCap(t *testing.T) {
	ctx := testCtx(t)
	var out syncBuffer
	res, err := Run(ctx, Config{Dir: t.TempDir(), HTTPAddr: "127.0.0.1:0", Games: len(plans), Concurrency: 4, Exit: true, Out: &out, ReplayAnchored: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Games != len(plans) {
		t.Fatalf("result %+v:\n%s", res, out.String())
	}
	if !strings.Contains(out.String(), "replay the first 1 anchored-v1 games are sealed to the recorded round before play starts; the other 2") {
		t.Errorf("the report does not say which anchored games were played:\n%s", out.String())
	}
	if n := len(regexp.MustCompile(`(?m)^game +[0-9]+ +anchored-v1 `).FindAllString(out.String(), -1)); n != 1 {
		t.Errorf("%d anchored-v1 games played, want 1:\n%s", n, out.String())
	}
}

// TestPlans: the first six games cover the three schemes, both openings,
// the five variants, and games finished on the board and resigned.
func TestPlans(t *testing.T) {
	seen := map[string]bool{}
	for no := 1; no <= 6; no++ {
		p := planOf(no)
		seen[string(p.scheme)], seen[p.opening], seen[p.variant] = true, true, true
		seen[fmt.Sprint("resigned ", p.resignAfter > 0)] = true
		if p.variant == "" && p.resignAfter == 0 {
			t.Errorf("plan %d: a game whose moves are not logged must resign", no)
		}
		if p.scheme == events.PerRoll && p.variant == "" {
			t.Errorf("plan %d: per-roll-v1 games are played with their moves logged", no)
		}
	}
	for _, want := range append(events.Variants(), "tavlarena-v1", "anchored-v1", "per-roll-v1", "western", "turkish-reroll",
		"resigned true", "resigned false") {
		if !seen[want] {
			t.Errorf("the first six games have no %s", want)
		}
	}
}

// TestRelay plays an anchored-v1 game with its beacon from a drand relay
// (a local one serving the recorded beacon), the game sealed on its own,
// as with --drand-relay.
func TestRelay(t *testing.T) {
	ctx := testCtx(t)
	src := sdk.QuicknetBeacons()
	ch := quicknet.Hash()
	h := hex.EncodeToString(ch[:])
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var round uint64
		if _, err := fmt.Sscan(strings.TrimPrefix(r.URL.Path, "/"+h+"/public/"), &round); err != nil {
			http.NotFound(w, r)
			return
		}
		b, err := src.Beacon(r.Context(), ch, round)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `{"round":%d,"randomness":"%x","signature":"%x"}`, round, b.Randomness, b.Signature)
	}))
	defer srv.Close()
	relay, err := sdk.NewRelay(sdk.RelayConfig{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	d := &run{
		cfg: Config{Dir: t.TempDir(), HTTPAddr: "127.0.0.1:0", Games: 2, Concurrency: 2, Exit: true, Out: &out,
			Relays: []string{srv.URL}, Now: time.Now},
		// RelayRounds after the clock's round is the recorded round.
		clock:   newReplayClock(time.Now, quicknet.RoundTime(RecordedRound-RelayRounds).Add(time.Second)),
		beacons: relay,
	}
	res, err := d.run(ctx)
	if err != nil || !res.OK() || res.Games != 2 {
		t.Fatalf("%+v, %v:\n%s", res, err, out.String())
	}
	checkReport(t, out.String(), 2)
	if !strings.Contains(out.String(), "game 2   anchored-v1") || strings.Contains(out.String(), "\nreplay ") {
		t.Errorf("report:\n%s", out.String())
	}
}

// TestCheck: the checker fetches a bundle once it is announced and accepts
// it only if every required check passed; a check skipped for want of a
// key fails it.
func TestCheck(t *testing.T) {
	ctx := testCtx(t)
	const file = "../../testdata/dice/evidence/valid/bundle-tavlarena-10-rolls.json"
	const logKey = "log.zarlog.example+58a735df+AabtJ4sEH6aKjQjFidVXKTVU3pwEtYb2uS3y5DAd+GNI"
	bundle, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := verifier.Parse(bundle)
	if err != nil {
		t.Fatal(err)
	}
	id := ev.Tavlarena.GameID.String()
	ann := &announcements{}
	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/games/"+id+"/proof.json" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		requests++
		first := requests == 1
		mu.Unlock()
		if first { // not there yet; announced now
			m := nats.NewMsg(wire.Subjects{}.Proofs(Emitter))
			m.Header.Set(wire.HeaderGame, id)
			ann.handle(m)
			http.NotFound(w, r)
			return
		}
		w.Write(bundle)
	}))
	defer srv.Close()
	key, err := verifier.ParseLogKey(logKey)
	if err != nil {
		t.Fatal(err)
	}
	ck := &checker{base: srv.URL, hc: srv.Client(), ann: ann, options: verifier.Options{LogKey: key}}
	g := &played{id: id, plan: plan{scheme: events.Tavlarena, opening: "western", resignAfter: 1},
		seal: dice.SealCode(ev.Tavlarena.Commitment)}
	v := ck.check(ctx, g)
	if v.err != nil || v.size != len(bundle) || v.report.Exit() != 0 {
		t.Fatalf("check: %+v", v)
	}
	if v.ok || !strings.Contains(v.summary(), "NOT VERIFIED") || !strings.Contains(v.summary(), "log-emitter-signatures") {
		t.Errorf("a bundle whose emitter signatures were not checked: ok %t, %s", v.ok, v.summary())
	}
	if requests != 2 {
		t.Errorf("%d requests, want 2", requests)
	}
	g.seal = "0000-0000"
	if v := ck.check(ctx, g); v.ok || v.report.Exit() != 1 {
		t.Errorf("a wrong seal code: ok %t, exit %d", v.ok, v.report.Exit())
	}
}

// TestReplayClock: the replay clock shows where it is told to start, held
// there until Start (the demo's set-up took over a minute on a loaded
// machine, and a clock that ran meanwhile passed the round before the
// first seal), then runs at the real rate, skips ahead when waited on, and
// never goes back.
func TestReplayClock(t *testing.T) {
	real := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return real }
	start := replayStart()
	c := newReplayClock(now, start)
	if !c.Now().Equal(start) {
		t.Fatalf("start %s, want %s", c.Now(), start)
	}
	real = real.Add(90 * time.Second)
	if !c.Now().Equal(start) {
		t.Errorf("held, 90 s later: %s, want %s", c.Now(), start)
	}
	c.Start()
	real = real.Add(5 * time.Second)
	if want := start.Add(5 * time.Second); !c.Now().Equal(want) {
		t.Errorf("5 s after Start: %s, want %s", c.Now(), want)
	}
	c.Start()
	if want := start.Add(5 * time.Second); !c.Now().Equal(want) {
		t.Errorf("Start of a running clock moved it: %s, want %s", c.Now(), want)
	}
	held := newReplayClock(now, start)
	if err := held.WaitUntil(context.Background(), start.Add(time.Minute)); err != nil || !held.Now().Equal(start.Add(time.Minute)) {
		t.Errorf("WaitUntil on a held clock: %s, %v", held.Now(), err)
	}
	if held.Resume(); !held.Now().Equal(real) {
		t.Errorf("Resume of a held clock: %s, want the real time %s", held.Now(), real)
	}
	round := quicknet.RoundTime(RecordedRound)
	if err := c.WaitUntil(context.Background(), round); err != nil || !c.Now().Equal(round) {
		t.Errorf("WaitUntil the round: %s, %v", c.Now(), err)
	}
	if err := c.WaitUntil(context.Background(), start); err != nil || !c.Now().Equal(round) {
		t.Errorf("WaitUntil the past moved the clock: %s, %v", c.Now(), err)
	}
	c.Resume()
	if !c.Now().Equal(real) {
		t.Errorf("resumed: %s, want the real time %s", c.Now(), real)
	}
	if err := c.WaitUntil(context.Background(), round); err != nil || !c.Now().Equal(real) {
		t.Errorf("WaitUntil the round after Resume moved the clock: %s, %v", c.Now(), err)
	}
	ahead := newReplayClock(now, real.Add(time.Hour))
	if ahead.Resume(); !ahead.Now().Equal(real.Add(time.Hour)) {
		t.Errorf("Resume moved a clock that was ahead back to %s", ahead.Now())
	}
	if quicknet.RoundAt(start)+sdk.DefaultAnchorRounds != RecordedRound {
		t.Errorf("a game sealed at the start anchors to round %d", quicknet.RoundAt(start)+sdk.DefaultAnchorRounds)
	}
	if !strings.Contains(fmt.Sprint(sdk.QuicknetRounds()), fmt.Sprint(RecordedRound)) {
		t.Errorf("the SDK's recorded rounds %v lack %d", sdk.QuicknetRounds(), RecordedRound)
	}
}

// TestPruneRuns keeps the newest run directories and deletes the rest,
// and nothing else in the folder.
func TestPruneRuns(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"run-20261201T100000Z-aa", "run-20261201T110000Z-bb", "run-20261201T120000Z-cc", "run-20261201T130000Z-dd", "notes"} {
		if err := os.Mkdir(filepath.Join(dir, n), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := pruneRuns(dir, 2); err != nil || n != 2 {
		t.Fatalf("pruneRuns: %d, %v", n, err)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{"notes", "run-20261201T120000Z-cc", "run-20261201T130000Z-dd"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
	if n, _ := pruneRuns(dir, -1); n != 0 {
		t.Errorf("keep -1 deleted %d", n)
	}
}
