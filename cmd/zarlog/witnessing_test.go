package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zarlog/zarlog/internal/litewitness"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/verifier"
	"github.com/zarlog/zarlog/wire"
)

// A witnessProxy stands in front of a witness: it counts the add-checkpoint
// requests the log sends it, and can play a witness that hangs (every
// request waits until the log gives up) while the witness behind it may be
// down (the proxy then answers 502).
type witnessProxy struct {
	target   atomic.Pointer[url.URL]
	hang     atomic.Bool
	requests atomic.Int64
}

func (p *witnessProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/add-checkpoint") {
		p.requests.Add(1)
	}
	if p.hang.Load() {
		<-r.Context().Done()
		return
	}
	rp := httputil.NewSingleHostReverseProxy(p.target.Load())
	rp.ErrorLog = log.New(io.Discard, "", 0) // a witness down is the point
	rp.ServeHTTP(w, r)
}

func (p *witnessProxy) point(t *testing.T, u string) {
	t.Helper()
	target, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p.target.Store(target)
}

// latencies are publish→receipt times, by phase.
type latencies struct {
	mu sync.Mutex
	by map[string][]time.Duration
}

func (l *latencies) add(phase string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.by[phase] = append(l.by[phase], d)
}

// quantile returns the q-quantile of ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// TestServeWitnessing runs the built zarlog serve with two witnesses, a
// zarlog witness (the built binary) and torchwood's litewitness, each
// behind a proxy that counts the add-checkpoint requests, and plays games
// through the SDK for a while (about a minute; ten with ZARLOG_SLOW=1), in
// three phases: both witnesses up; the zarlog witness killed; the zarlog
// witness back and litewitness hanging every request until the log gives
// up. It checks:
//
//   - each witness got at most one request per --witness-interval since the
//     service started, plus one (the log's counter agrees);
//   - every finished game's bundle ends up built at a checkpoint whose
//     cosignatures meet the policy the log serves, which the built
//     zarlog-verify --witness-policy and the JavaScript package (node
//     bin/zarlog-verify.js) accept;
//   - /healthz stayed 200 (a dead or slow witness is not an inconsistency).
//
// It reports (without asserting times: the machine is shared) the
// publish→receipt latency of every event by phase, so that a stopped or
// hanging witness can be compared with none, and the time from each game's
// end to its witnessed bundle.
func TestServeWitnessing(t *testing.T) {
	bin, verify := tools(t)
	ctx := testContext(t)
	dir := t.TempDir()
	phase, interval := 20*time.Second, 5*time.Second
	if os.Getenv("ZARLOG_SLOW") == "1" {
		phase, interval = 3*time.Minute, 15*time.Second
	}

	// The log's key, so that the witnesses know it before the log starts.
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runBin(t, dir, bin, "keygen", "--origin", "witnessing.zarlog.example/log", "--out", filepath.Join(data, "log.key"))
	if code != 0 {
		t.Fatalf("keygen: %s", stderr)
	}
	logVkey := strings.TrimSpace(stdout)
	logs := filepath.Join(dir, "logs")
	if err := os.WriteFile(logs, []byte("log "+logVkey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The witnesses, behind their proxies.
	zdata := filepath.Join(dir, "zarlog-witness")
	zargs := []string{"--data", zdata, "--http", "127.0.0.1:0", "--config", logs, "--init", "--name", "witness.example/zarlog"}
	zlines, zcmd := startWitness(t, bin, zargs...)
	lw, err := litewitness.Start(ctx, litewitness.Config{Dir: filepath.Join(dir, "lw"), Name: "witness.example/lite", Logs: []string{logVkey}})
	if err != nil {
		t.Fatalf("litewitness: %v", err)
	}
	t.Cleanup(func() { lw.Stop() })
	zp, lp := &witnessProxy{}, &witnessProxy{}
	zp.point(t, strings.TrimSuffix(zlines["add-checkpoint"][0], "/add-checkpoint"))
	lp.point(t, lw.URL)
	var proxies []string
	for _, p := range []*witnessProxy{zp, lp} {
		srv := newServer(t, p)
		proxies = append(proxies, srv)
	}
	policyFile := filepath.Join(dir, "witness.policy")
	policy := fmt.Sprintf("witness Z %s %s\nwitness L %s %s\ngroup both all Z L\nquorum both\n", zlines["vkey"][0], proxies[0], lw.VerifierKey, proxies[1])
	if err := os.WriteFile(policyFile, []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}

	signer, nkey, emitters := oneEmitter(t, bin, dir)
	start := time.Now()
	p := startServe(t, bin, "--data", data, "--emitters", emitters, "--witness-policy", policyFile,
		"--witness-interval", interval.String(), "--witness-timeout", "3s",
		"--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--admin", "127.0.0.1:0")
	if p.lines["vkey"] != logVkey || !strings.Contains(p.lines["witnessed"], "/checkpoint.witnessed") {
		t.Fatalf("zarlog serve printed %v", p.lines)
	}
	code, served := p.get("/witness-policy")
	if code != 200 || !strings.HasPrefix(string(served), "log "+logVkey+"\n") {
		t.Fatalf("/witness-policy: %d %s", code, served)
	}
	servedFile := filepath.Join(dir, "served.policy")
	if err := os.WriteFile(servedFile, served, 0o644); err != nil {
		t.Fatal(err)
	}
	pol, err := merkle.ParsePolicy(served)
	if err != nil {
		t.Fatal(err)
	}
	logKey, err := verifier.ParseLogKey(logVkey)
	if err != nil {
		t.Fatal(err)
	}

	// The load: games played back to back, every event's receipt timed.
	b, client, nc := sdkBackend(t, p.lines["nats"], signer, nil, nkey)
	// The witnessed bundles, as they are announced (docs/NATS.md §5a).
	var wmu sync.Mutex
	announced := map[string]time.Time{}
	if _, err := nc.Subscribe(wire.Subjects{}.Proofs("tavla-east"), func(m *nats.Msg) {
		if len(m.Data) > 0 && verifier.Verify(m.Data, verifier.Options{LogKey: logKey, WitnessPolicy: pol}).Exit() == 0 {
			wmu.Lock()
			announced[m.Header.Get(wire.HeaderGame)] = time.Now()
			wmu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	var cur atomic.Value
	cur.Store("both up")
	lat := &latencies{by: map[string][]time.Duration{}}
	type acked struct {
		ev    sdk.Event
		at    time.Time
		phase string
	}
	events := make(chan acked, 1<<16)
	var rw sync.WaitGroup
	for range 8 {
		rw.Go(func() {
			for a := range events {
				rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				_, err := client.Receipt(rctx, a.ev)
				cancel()
				if err != nil {
					t.Errorf("the receipt of %s: %v", a.ev.ID, err)
					continue
				}
				lat.add(a.phase, time.Since(a.at))
			}
		})
	}
	after := func(game string, seq uint64, leaf []byte) {
		select {
		case events <- acked{sdk.Event{ID: fmt.Sprintf("%s:%d", game, seq), Data: leaf}, time.Now(), cur.Load().(string)}:
		default:
		}
	}
	type end struct {
		at    time.Time
		phase string
	}
	var mu sync.Mutex
	ended := map[string]end{}
	loadCtx, stopLoad := context.WithCancel(ctx)
	var gw sync.WaitGroup
	for w := range 3 {
		gw.Go(func() {
			for n := 0; loadCtx.Err() == nil; n++ {
				id, err := testlog.Tavlarena(ctx, b, fmt.Sprintf("witnessing-%d-%d", w, n), `{}`, 12, after)
				if err != nil {
					t.Errorf("game %s: %v", id, err)
					return
				}
				mu.Lock()
				ended[id] = end{time.Now(), cur.Load().(string)}
				mu.Unlock()
			}
		})
	}

	// The three phases.
	time.Sleep(phase)
	cur.Store("zarlog witness killed")
	zcmd.Process.Kill()
	zcmd.Wait()
	time.Sleep(phase)
	cur.Store("litewitness hanging")
	lp.hang.Store(true)
	zlines, _ = startWitness(t, bin, zargs...)
	zp.point(t, strings.TrimSuffix(zlines["add-checkpoint"][0], "/add-checkpoint"))
	time.Sleep(phase)
	lp.hang.Store(false)
	cur.Store("both up again")
	stopLoad()
	gw.Wait()
	close(events)
	rw.Wait()

	// Every finished game's bundle is witnessed, within a few intervals.
	mu.Lock()
	games := len(ended)
	mu.Unlock()
	if games == 0 {
		t.Fatal("no game finished")
	}
	witnessed := map[string]time.Time{}
	bundles := map[string][]byte{}
	deadline := time.Now().Add(4*interval + 30*time.Second)
	for len(witnessed) < games {
		for id := range ended {
			if _, ok := witnessed[id]; ok {
				continue
			}
			code, bundle := p.get("/games/" + id + "/proof.json")
			if code == 200 && verifier.Verify(bundle, verifier.Options{LogKey: logKey, WitnessPolicy: pol}).Exit() == 0 {
				witnessed[id], bundles[id] = time.Now(), bundle
				wmu.Lock()
				if at, ok := announced[id]; ok {
					witnessed[id] = at
				}
				wmu.Unlock()
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d finished games witnessed %s after the load stopped", len(witnessed), games, 4*interval+30*time.Second)
		}
		time.Sleep(200 * time.Millisecond)
	}
	elapsed := time.Since(start)

	// At most one request per interval, plus one, to each witness; the
	// log's own count agrees.
	_, metrics := p.get("/metrics")
	bound := int64(elapsed/interval) + 2
	for i, px := range []*witnessProxy{zp, lp} {
		got := px.requests.Load()
		name := []string{"witness.example/zarlog", "witness.example/lite"}[i]
		if got > bound || got == 0 {
			t.Errorf("%s got %d add-checkpoint requests in %s, want at most %d (one per %s, plus one)", name, got, elapsed.Round(time.Second), bound, interval)
		}
		m := regexp.MustCompile(`zarlog_witnessing_requests_total\{witness="` + regexp.QuoteMeta(name) + `"\} (\d+)`).FindSubmatch(metrics)
		if n, _ := strconv.ParseInt(string(m[1]), 10, 64); m == nil || n != got {
			t.Errorf("%s: the log counted %s requests, the proxy %d", name, m, got)
		}
		t.Logf("%s: %d add-checkpoint requests in %s (at most %d); per day at this interval, at most %d; at the default 1m, at most 1,440",
			name, got, elapsed.Round(time.Second), bound, int64(24*time.Hour/interval))
	}
	if code, body := p.get("/healthz"); code != 200 {
		t.Errorf("/healthz %d: %s", code, body)
	}

	// Every witnessed bundle verifies with the built zarlog-verify and the
	// JavaScript package, against the policy the log serves.
	node, nodeErr := exec.LookPath("node")
	jsBin := filepath.Join(root, "verifier", "js", "bin", "zarlog-verify.js")
	delays := map[string][]time.Duration{}
	checked := 0
	for id, bundle := range bundles {
		delays[ended[id].phase] = append(delays[ended[id].phase], witnessed[id].Sub(ended[id].at))
		f := filepath.Join(dir, id+".json")
		if err := os.WriteFile(f, bundle, 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"--log-key", logVkey, "--witness-policy", servedFile, f}
		if out, err := exec.Command(verify, args...).CombinedOutput(); err != nil {
			t.Errorf("zarlog-verify %s: %v\n%s", id, err, out)
		}
		if nodeErr == nil && checked < 20 {
			if out, err := exec.Command(node, append([]string{jsBin}, args...)...).CombinedOutput(); err != nil {
				t.Errorf("node zarlog-verify.js %s: %v\n%s", id, err, out)
			}
			checked++
		}
	}
	if nodeErr != nil {
		t.Logf("no node: the JavaScript package was not run (%v)", nodeErr)
	}

	for _, ph := range []string{"both up", "zarlog witness killed", "litewitness hanging"} {
		ds := lat.by[ph]
		t.Logf("publish→receipt, %s: %d events, p50 %s, p99 %s", ph, len(ds), quantile(ds, 0.5).Round(time.Millisecond), quantile(ds, 0.99).Round(time.Millisecond))
	}
	// Games that ended while both witnesses were up; those of the other
	// phases wait for the witnesses to be back.
	for _, ph := range []string{"both up", "zarlog witness killed", "litewitness hanging"} {
		ds := delays[ph]
		t.Logf("game end → witnessed bundle, games that ended with %s: %d games, median %s, max %s (interval %s)", ph, len(ds),
			quantile(ds, 0.5).Round(time.Millisecond), quantile(ds, 1).Round(time.Millisecond), interval)
	}
}

// newServer serves h on a loopback port until the test ends and returns
// its base URL.
func newServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := &http.Server{Handler: h}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
