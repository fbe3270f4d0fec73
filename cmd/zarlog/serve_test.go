package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/verifier"
	"github.com/zarlog/zarlog/wire"
)

// The binaries, built once per test process into toolsDir (removed by
// TestMain).
var (
	toolsOnce sync.Once
	toolsDir  string
	toolsErr  error
)

// tools returns the paths of the zarlog and zarlog-verify binaries; it
// skips the test in short mode.
func tools(t *testing.T) (zarlog, verify string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	return buildTools(t)
}

// buildTools builds the binaries once per test process, as the project
// ships them (shippedBuildEnv: static, CGO_ENABLED=0, as `make demo` and
// deploy/build-image.sh build them; TestShippedBuilds); with
// ZARLOG_TEST_CGO=1 it builds them with cgo instead, to measure such a
// build (TestServeRSS, docs/OPERATIONS.md §9 "Memory").
func buildTools(t *testing.T) (zarlog, verify string) {
	t.Helper()
	toolsOnce.Do(func() {
		if toolsDir, toolsErr = os.MkdirTemp("", "zarlog-tools-"); toolsErr != nil {
			return
		}
		env := shippedBuildEnv
		if os.Getenv("ZARLOG_TEST_CGO") == "1" {
			env = "CGO_ENABLED=1"
		}
		for _, b := range [][2]string{{"zarlog", "."}, {"zarlog-verify", "../zarlog-verify"}} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(toolsDir, b[0]), b[1])
			cmd.Env = append(os.Environ(), env)
			if out, err := cmd.CombinedOutput(); err != nil {
				toolsErr = fmt.Errorf("%s go build %s: %w\n%s", env, b[1], err, out)
				return
			}
		}
	})
	if toolsErr != nil {
		t.Fatal(toolsErr)
	}
	return filepath.Join(toolsDir, "zarlog"), filepath.Join(toolsDir, "zarlog-verify")
}

// A serveProc is a running `zarlog serve`.
type serveProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	lines  map[string]string // the startup lines by label
	order  []string          // their labels, in the order printed
	stderr *bytes.Buffer
	done   chan error
}

// startServe runs `zarlog serve args…` and returns once it has printed its
// startup lines (the last is "nats").
func startServe(t *testing.T, bin string, args ...string) *serveProc {
	t.Helper()
	return startServeWith(t, []string{bin, "serve"}, args...)
}

// startServeWith is startServe with the command line's head given (a
// wrapper such as prlimit, then the binary and "serve").
func startServeWith(t *testing.T, head []string, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(head[0], append(head[1:], args...)...)
	p := &serveProc{t: t, cmd: cmd, lines: map[string]string{}, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = &lockedWriter{w: p.stderr}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		label, value, _ := strings.Cut(sc.Text(), " ")
		p.lines[label] = value
		p.order = append(p.order, label)
		if label == "nats" {
			break
		}
	}
	go func() {
		io.Copy(io.Discard, stdout)
		p.done <- cmd.Wait()
	}()
	if _, ok := p.lines["nats"]; !ok {
		err := <-p.done
		p.done <- err // for the cleanup
		t.Fatalf("zarlog serve exited before printing its URLs:\n%s", p.stderr)
	}
	return p
}

// stop sends sig and returns the exit code.
func (p *serveProc) stop(sig syscall.Signal) int {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
	return p.wait()
}

// wait waits for the process to end and returns its exit code (-1 if a
// signal killed it).
func (p *serveProc) wait() int {
	err := <-p.done
	p.done <- err // for the cleanup
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.Exited() {
			return ee.ExitCode()
		}
		return -1 // killed
	}
	if err != nil {
		p.t.Fatal(err)
	}
	return 0
}

// base returns the HTTP base URL the service printed.
func (p *serveProc) base() string { return strings.TrimSuffix(p.lines["checkpoint"], "/checkpoint") }

func (p *serveProc) get(path string) (int, []byte) {
	p.t.Helper()
	resp, err := http.Get(p.base() + path)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return resp.StatusCode, b
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// hostPort returns the host:port of a URL such as nats://127.0.0.1:4222.
func hostPort(u string) string {
	_, hp, _ := strings.Cut(u, "://")
	return hp
}

// emitterKey makes an emitter's keys with `zarlog keygen --emitter` and
// returns its event signer, its verifier key, the line keygen printed for
// the --emitters file (the verifier key and the NATS user nkey) and the
// nkey seed's file.
func emitterKey(t *testing.T, bin, dir, name string) (signer note.Signer, vkey, line, nkeyFile string) {
	t.Helper()
	out := filepath.Join(dir, name+".key")
	stdout, stderr, code := runBin(t, dir, bin, "keygen", "--emitter", name, "--out", out)
	if code != 0 {
		t.Fatalf("keygen: %d %s", code, stderr)
	}
	skey, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(strings.TrimSpace(string(skey)))
	if err != nil {
		t.Fatal(err)
	}
	line = strings.TrimSpace(stdout)
	return s, strings.Fields(line)[0], line, filepath.Join(dir, name+".nkey")
}

// oneEmitter makes the keys of emitter tavla-east (emitterKey) and an
// --emitters file in dir holding its line; it returns its event signer,
// its NATS nkey seed's file and the emitters file.
func oneEmitter(t *testing.T, bin, dir string) (signer note.Signer, nkeyFile, emitters string) {
	t.Helper()
	signer, _, line, nkeyFile := emitterKey(t, bin, dir, "tavla-east")
	emitters = filepath.Join(dir, "emitters")
	if err := os.WriteFile(emitters, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return signer, nkeyFile, emitters
}

// sdkBackend connects a backend as keygen's credentials allow: the emitter
// authenticates with the nkey seed in nkeyFile.
func sdkBackend(t *testing.T, url string, signer note.Signer, now func() time.Time, nkeyFile string) (*sdk.Backend, *sdk.Client, *nats.Conn) {
	t.Helper()
	auth, err := nats.NkeyOptionFromSeed(nkeyFile)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := sdk.Dial(url, signer.Name(), auth)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c, err := sdk.New(nc, sdk.Config{Emitter: signer.Name(), AckTimeout: time.Second, RetryMin: 5 * time.Millisecond, RetryMax: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b, err := sdk.NewBackend(c, sdk.GameConfig{Signer: signer, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return b, c, nc
}

// openLedger opens the ledger of a stopped service's data directory, for
// reading, without signing anything.
func openLedger(t *testing.T, data string) *ledger.Ledger {
	t.Helper()
	skey, err := os.ReadFile(filepath.Join(data, "log.key"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := merkle.NewSigner(strings.TrimSpace(string(skey)))
	if err != nil {
		t.Fatal(err)
	}
	vkey, _ := merkle.VerifierKey(strings.TrimSpace(string(skey)))
	v, _ := merkle.NewVerifier(vkey)
	l, err := ledger.Open(context.Background(), ledger.Config{Dir: filepath.Join(data, "ledger"), Signer: s, Verifier: v, CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// projections reads every projection of a ledger, in a comparable form.
func projections(t *testing.T, l *ledger.Ledger, ids []string) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	st, err := l.Stats()
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := st.MarshalBinary()
	fmt.Fprintf(&b, "stats %x\n", sb)
	fin, err := l.Finished(ctx, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "finished %v\n", fin)
	for _, id := range ids {
		g, err := l.Game(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		gb, _ := g.MarshalBinary()
		fmt.Fprintf(&b, "game %s %x\n", id, gb)
		for seq := range g.Leaves {
			i, h, err := l.Lookup(ctx, g.Emitter, fmt.Sprintf("%s:%d", id, seq))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "id %s:%d %d %x\n", id, seq, i, h)
		}
	}
	return b.String()
}

// TestServeCommand runs the built binaries as an operator and a backend
// do: `zarlog keygen --emitter`, `zarlog serve` on random ports (printing
// its vkey and URLs), games of the three schemes played through the SDK,
// their bundles announced and downloaded, checked by `zarlog-verify` with
// the log's and the emitter's keys (exit 0), a tlog-proof checked too, the
// live log read by tessera's client, a malformed event published with
// `zarlog emit` rejected with its reason (announced, and in the rejected
// store), a clean stop, and `--rebuild` giving identical projections.
func TestServeCommand(t *testing.T) {
	bin, verify := tools(t)
	ctx := testContext(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	signer, evkey, line, nkey := emitterKey(t, bin, dir, "tavla-east")
	emitters := filepath.Join(dir, "emitters")
	if err := os.WriteFile(emitters, []byte("# our backends\n"+line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := testlog.AnchoredStart()
	args := []string{"--data", data, "--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--emitters", emitters,
		"--clock-start", start.Format(time.RFC3339Nano), "--checkpoint-interval", "20ms"}
	p := startServe(t, bin, args...)
	for _, label := range []string{"key", "vkey", "origin", "checkpoint", "tiles", "entries", "game", "proof", "tlog-proof", "auditor", "stats", "metrics", "healthz", "nats"} {
		if p.lines[label] == "" {
			t.Errorf("zarlog serve did not print %q: %v", label, p.lines)
		}
	}
	if p.lines["key"] != filepath.Join(data, "log.key")+" created" || p.lines["origin"] != "zarlog.localhost/log" {
		t.Errorf("key %q origin %q", p.lines["key"], p.lines["origin"])
	}
	vkey := p.lines["vkey"]
	if !strings.HasPrefix(p.lines["game"], p.base()+"/games/") {
		t.Errorf("game URL %q", p.lines["game"])
	}

	clock := testlog.NewClock(start)
	b, _, nc := sdkBackend(t, p.lines["nats"], signer, clock.Now, nkey)
	proofs := make(chan *nats.Msg, 16)
	rejected := make(chan *nats.Msg, 16)
	for subj, ch := range map[string]chan *nats.Msg{wire.Subjects{}.Proofs("tavla-east"): proofs, wire.Subjects{}.Rejected("tavla-east"): rejected} {
		if _, err := nc.ChanSubscribe(subj, ch); err != nil {
			t.Fatal(err)
		}
	}
	nc.Flush()

	var ids []string
	for _, play := range []func() (string, error){
		func() (string, error) {
			return testlog.Tavlarena(ctx, b, "cmd-t", `{"moves":"logged","variant":"backgammon","matchLength":3}`, 0, nil)
		},
		func() (string, error) {
			return testlog.Anchored(ctx, b, clock, "cmd-a", `{"moves":"logged","variant":"plakoto"}`, 0, nil)
		},
		func() (string, error) { return testlog.PerRoll(ctx, b, "cmd-p", `{"variant":"portes"}`, 6, nil) },
	} {
		id, err := play()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for n := 0; n < len(ids); n++ {
		select {
		case <-proofs:
		case <-ctx.Done():
			t.Fatalf("%d of %d bundles announced", n, len(ids))
		}
	}
	for _, id := range ids {
		code, bundle := p.get("/games/" + id + "/proof.json")
		if code != 200 {
			t.Fatalf("proof.json of %s: %d", id, code)
		}
		f := filepath.Join(dir, id+".json")
		if err := os.WriteFile(f, bundle, 0o644); err != nil {
			t.Fatal(err)
		}
		out, stderr, code := runBin(t, dir, verify, "--log-key", vkey, "--emitter-key", evkey, f)
		if code != 0 {
			t.Fatalf("zarlog-verify %s: exit %d\n%s%s", id, code, out, stderr)
		}
	}
	code, tp := p.get("/games/" + ids[0] + "/proofs/0.tlog-proof")
	if code != 200 {
		t.Fatalf("tlog-proof: %d", code)
	}
	tpf := filepath.Join(dir, "commit.tlog-proof")
	os.WriteFile(tpf, tp, 0o644)
	if out, stderr, code := runBin(t, dir, verify, "--log-key", vkey, "--emitter-key", evkey, tpf); code != 0 {
		t.Fatalf("zarlog-verify of a tlog-proof: exit %d\n%s%s", code, out, stderr)
	}
	lg, err := testonly.Fetch(ctx, p.base()+"/", nil, vkey)
	if err != nil {
		t.Fatalf("tessera client against the live service: %v", err)
	}

	// A malformed event, published with zarlog emit.
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"emitter":"tavla-east","game":"bad-game","id":"bad-game:0","seq":0,"type":"commit","v":1}`+"\n"), 0o644)
	out, _, code := runBin(t, dir, bin, "emit", "--emitter", "tavla-east", "--nkey", nkey, "--nats", p.lines["nats"], "--no-check", "--wait", bad)
	if code != 1 || !strings.Contains(out, "bad-game:0: rejected: malformed") {
		t.Errorf("zarlog emit of a malformed event: exit %d\n%s", code, out)
	}
	select {
	case m := <-rejected:
		r, err := wire.ParseRejection(m.Data)
		if err != nil || r.Code != "malformed" || r.ID != "bad-game:0" || r.MsgID != "" || r.Reason == "" {
			t.Errorf("announced rejection %+v, %v", r, err)
		}
	case <-ctx.Done():
		t.Fatal("the rejection was not announced")
	}

	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("zarlog serve exit %d after SIGTERM\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "msg=stopped") {
		t.Errorf("no clean stop in the log:\n%s", p.stderr)
	}
	l := openLedger(t, data)
	rj, err := l.RejectedByID(ctx, "tavla-east", "bad-game:0")
	if err != nil || rj.Code != events.CodeMalformed || rj.Reason == "" || rj.Emitter != "tavla-east" {
		t.Errorf("the rejected store: %+v, %v", rj, err)
	}
	before := projections(t, l, ids)
	if size, _ := l.Size(); size != uint64(len(lg.Entries)) {
		t.Errorf("the ledger has %d leaves, the served log had %d", size, len(lg.Entries))
	}
	l.Close()

	// --rebuild: the same projections, byte for byte.
	p = startServe(t, bin, append(args, "--rebuild")...)
	if p.lines["vkey"] != vkey || p.lines["key"] != filepath.Join(data, "log.key") {
		t.Errorf("after a restart: key %q vkey %q", p.lines["key"], p.lines["vkey"])
	}
	if code := p.stop(syscall.SIGINT); code != 0 {
		t.Fatalf("zarlog serve --rebuild exit %d\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "rebuilding the projections") {
		t.Errorf("no rebuild in the log:\n%s", p.stderr)
	}
	l = openLedger(t, data)
	after := projections(t, l, ids)
	l.Close()
	if before != after {
		t.Errorf("projections differ after --rebuild:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// A receipt the test obtained.
type gotReceipt struct {
	id         string
	index      uint64
	checkpoint []byte
	early      bool // obtained before the first service was stopped
}

// TestServeRestart stops `zarlog serve` in the middle of a stream of games
// played through the SDK, with SIGTERM (a clean stop) and with SIGKILL (the
// whole process: embedded NATS and ledger), restarts it on the same
// directory and ports, and lets the games finish: the SDK publishes again
// what was not acknowledged, every event is in the log exactly once, every
// receipt obtained (before or after the stop) names the event at its index
// under a checkpoint consistent with the final one, and every game's bundle
// is built. This is the acknowledgement promise of docs/NATS.md §3 under
// kill -9.
func TestServeRestart(t *testing.T) {
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
	}{{"sigterm", syscall.SIGTERM}, {"sigkill", syscall.SIGKILL}} {
		t.Run(tc.name, func(t *testing.T) { testServeRestart(t, tc.sig) })
	}
}

func testServeRestart(t *testing.T, sig syscall.Signal) {
	bin, _ := tools(t)
	ctx := testContext(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	signer, nkey, emitters := oneEmitter(t, bin, dir)
	args := []string{"--data", data, "--emitters", emitters, "--checkpoint-interval", "20ms", "--admin", "127.0.0.1:0"}
	p := startServe(t, bin, append(args, "--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0")...)
	vkey, natsURL := p.lines["vkey"], p.lines["nats"]
	restartArgs := append(args, "--http", strings.TrimPrefix(p.base(), "http://"), "--nats-listen", hostPort(natsURL))
	b, client, nc := sdkBackend(t, natsURL, signer, nil, nkey)
	proofs := make(chan *nats.Msg, 256)
	if _, err := nc.ChanSubscribe(wire.Subjects{}.Proofs("tavla-east"), proofs); err != nil {
		t.Fatal(err)
	}
	nc.Flush()

	const games, rolls = 16, 24
	var (
		mu       sync.Mutex
		stopped  bool
		acked    int
		lastSeq  = map[string]uint64{}
		lastLeaf = map[string][]byte{}
		receipts []gotReceipt
	)
	// Halfway through, the even games wait until the service is back, so
	// that the stop is mid-stream however fast the rest go; the odd ones
	// keep publishing through the stop.
	half, resume := make(chan struct{}), make(chan struct{})
	var resumeOnce sync.Once
	resumeAll := func() { resumeOnce.Do(func() { close(resume) }) }
	t.Cleanup(resumeAll)
	ids := make(chan sdk.Event, 1<<14)
	var rw sync.WaitGroup
	for range 4 {
		rw.Go(func() {
			for ev := range ids {
				rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				r, err := client.Receipt(rctx, ev)
				cancel()
				if err != nil {
					continue // none obtained (the service is down, say)
				}
				mu.Lock()
				receipts = append(receipts, gotReceipt{id: ev.ID, index: r.Index, checkpoint: r.Checkpoint, early: !stopped})
				mu.Unlock()
			}
		})
	}
	after := func(i int) testlog.After {
		return func(game string, seq uint64, leaf []byte) {
			mu.Lock()
			acked++
			if seq >= lastSeq[game] {
				lastSeq[game], lastLeaf[game] = seq, leaf
			}
			if acked == games*rolls {
				close(half)
			}
			wait := acked >= games*rolls && i%2 == 0
			select {
			case ids <- sdk.Event{ID: fmt.Sprintf("%s:%d", game, seq), Data: leaf}:
			default:
			}
			mu.Unlock()
			if wait {
				<-resume
			}
		}
	}
	var gw sync.WaitGroup
	errs := make(chan error, games)
	gameIDs := make(chan string, games)
	for i := range games {
		gw.Go(func() {
			id, err := testlog.Tavlarena(ctx, b, fmt.Sprintf("restart-%d", i), `{"variant":"portes"}`, rolls, after(i))
			if err != nil {
				errs <- err
				return
			}
			gameIDs <- id
		})
	}
	select {
	case <-half:
	case err := <-errs:
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatal("the games did not get halfway")
	}
	code := p.stop(sig)
	mu.Lock()
	stopped = true
	ackedAtStop := acked
	mu.Unlock()
	if sig == syscall.SIGTERM && code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, p.stderr)
	}
	if sig == syscall.SIGKILL && code != -1 {
		t.Fatalf("exit %d after SIGKILL", code)
	}
	p = startServe(t, bin, restartArgs...)
	if p.lines["vkey"] != vkey || p.lines["nats"] != natsURL {
		t.Fatalf("restarted with vkey %s at %s, want %s at %s", p.lines["vkey"], p.lines["nats"], vkey, natsURL)
	}
	resumeAll()
	gw.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	close(gameIDs)
	var all []string
	for id := range gameIDs {
		all = append(all, id)
	}
	// The reveal of every game is logged: its receipt.
	for _, id := range all {
		r, err := client.Receipt(ctx, sdk.Event{ID: fmt.Sprintf("%s:%d", id, lastSeq[id]), Data: lastLeaf[id]})
		if err != nil {
			t.Fatalf("the receipt of %s's reveal: %v", id, err)
		}
		mu.Lock()
		receipts = append(receipts, gotReceipt{id: fmt.Sprintf("%s:%d", id, lastSeq[id]), index: r.Index, checkpoint: r.Checkpoint})
		mu.Unlock()
	}
	close(ids)
	rw.Wait()
	total := 0
	for _, s := range lastSeq {
		total += int(s) + 1
	}
	if ackedAtStop >= total {
		t.Fatalf("the service stopped after all %d events", total)
	}

	// Every event exactly once; every receipt right; the checkpoints of
	// the receipts consistent with the final one.
	var earlier [][]byte
	seen := map[string]bool{}
	early := 0
	for i, r := range receipts {
		if r.early {
			early++
		}
		if cs := string(r.checkpoint); !seen[cs] && (i%7 == 0 || r.early) && len(earlier) < 40 {
			seen[cs] = true
			earlier = append(earlier, r.checkpoint)
		}
	}
	if early == 0 {
		t.Fatal("no receipt was obtained before the stop")
	}
	lg, err := testonly.Fetch(ctx, p.base()+"/", nil, vkey, earlier...)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	index := map[string]uint64{}
	for i, e := range lg.Entries {
		ev, err := events.Parse(e)
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		count[ev.ID]++
		index[ev.ID] = uint64(i)
	}
	for _, id := range all {
		for seq := uint64(0); seq <= lastSeq[id]; seq++ {
			eid := fmt.Sprintf("%s:%d", id, seq)
			if count[eid] != 1 {
				t.Errorf("event %s is in the log %d times", eid, count[eid])
			}
		}
	}
	if len(lg.Entries) != total {
		t.Errorf("the log has %d entries, the games %d events", len(lg.Entries), total)
	}
	for _, r := range receipts {
		if i, ok := index[r.id]; !ok || i != r.index {
			t.Errorf("receipt of %s (obtained before the stop: %t) says index %d; the log has it at %d (%t)", r.id, r.early, r.index, i, ok)
		}
	}
	t.Logf("%d events, %d acknowledged before the stop, %d receipts (%d before the stop)", total, ackedAtStop, len(receipts), early)

	// Every game's bundle: built by one service or the other. Check each
	// game's proof.json, waking up on each announcement.
	pending := map[string]bool{}
	for _, id := range all {
		pending[id] = true
	}
	logKey, _ := verifier.ParseLogKey(vkey)
	for len(pending) > 0 {
		for id := range pending {
			code, bundle := p.get("/games/" + id + "/proof.json")
			if code != 200 {
				continue
			}
			if r := verifier.Verify(bundle, verifier.Options{LogKey: logKey}); r.Exit() != 0 {
				t.Fatalf("bundle of %s: %s", id, r.Text(verifier.English))
			}
			delete(pending, id)
		}
		if len(pending) == 0 {
			break
		}
		select {
		case <-proofs:
		case <-ctx.Done():
			t.Fatalf("%d games have no bundle", len(pending))
		}
	}
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr)
	}
}

func TestServeUsage(t *testing.T) {
	bin, _ := tools(t)
	dir := t.TempDir()
	badNames := filepath.Join(t.TempDir(), "hidden")
	if err := os.WriteFile(badNames, []byte("tavla-east\nTavla East\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "-h"}, 0, "usage: zarlog serve"},
		{[]string{"serve"}, 2, "usage: zarlog serve"},
		{[]string{"serve", "--data", dir, "extra"}, 2, "usage: zarlog serve"},
		{[]string{"serve", "--data", dir, "--export-once"}, 2, "--export-once needs --export"},
		{[]string{"serve", "--data", dir, "--nats-creds", "x"}, 2, "need --nats URL"},
		{[]string{"serve", "--data", dir, "--nats", "nats://x", "--nats-users", "f"}, 2, "--nats-users configures the embedded server"},
		{[]string{"serve", "--data", dir, "--nats-system-nkey", "x"}, 2, "--nats-system-creds and --nats-system-nkey need --nats URL"},
		{[]string{"serve", "--data", dir, "--nats", "nats://x", "--nats-system-nkey", "x", "--nats-system-creds", "y"}, 2, "give one"},
		{[]string{"serve", "--data", dir, "--clock-start", "yesterday"}, 2, "--clock-start"},
		{[]string{"serve", "--data", dir, "--emitters", filepath.Join(dir, "missing")}, 2, "--emitters"},
		{[]string{"serve", "--data", dir, "--hide-names", filepath.Join(dir, "missing")}, 2, "--hide-names"},
		{[]string{"serve", "--data", dir, "--hide-names", badNames}, 2, "line 2"},
		{[]string{"serve", "--data", dir, "--emitter", "not-a-key", "--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"}, 1, "emitter keys"},
		{[]string{"serve", "--data", filepath.Join(dir, "none"), "--export", filepath.Join(dir, "out"), "--export-once"}, 1, "no log in"},
	} {
		_, stderr, code := runBin(t, dir, bin, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("zarlog %s: exit %d, want %d; stderr:\n%s", strings.Join(tc.args, " "), code, tc.code, stderr)
		}
	}
	// A refused configuration creates nothing.
	if _, err := os.Stat(filepath.Join(dir, "log.key")); !os.IsNotExist(err) {
		t.Errorf("a key was created for a refused configuration: %v", err)
	}
}

// TestServeStartupOutput: what `zarlog serve` prints when it starts is its
// own lines only: on standard output the key, the verifier key and every
// URL, label first, in the order of testdata/serve-startup.golden (ports,
// paths and keys replaced by placeholders; ZARLOG_UPDATE_GOLDEN=1 rewrites
// it), and on standard error a few log lines, none from nats-server's
// banner or notices.
func TestServeStartupOutput(t *testing.T) {
	bin, _ := tools(t)
	dir := t.TempDir()
	p := startServe(t, bin, "--data", filepath.Join(dir, "data"), "--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--admin", "127.0.0.1:0")
	resp, err := http.Get(p.base() + "/readyz")
	if err == nil {
		resp.Body.Close()
	}
	var lines []string
	for _, l := range p.order {
		v := p.lines[l]
		v = strings.ReplaceAll(v, dir, "DIR")
		v = regexp.MustCompile(`127\.0\.0\.1:\d+`).ReplaceAllString(v, "127.0.0.1:PORT")
		v = regexp.MustCompile(`\+[0-9a-f]{8}\+[A-Za-z0-9+/=]{44}$`).ReplaceAllString(v, "+HASH+KEY")
		lines = append(lines, l+" "+v)
	}
	got := strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "serve-startup.golden")
	if os.Getenv("ZARLOG_UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (ZARLOG_UPDATE_GOLDEN=1 go test ./cmd/zarlog -run TestServeStartupOutput writes it)", err)
	}
	if got != string(want) {
		t.Errorf("zarlog serve printed\n%s\nwant (%s)\n%s", got, golden, want)
	}
	time.Sleep(200 * time.Millisecond)
	stderr := p.stderr.String()
	if strings.Contains(stderr, "component=nats-server") || strings.Contains(stderr, "JETSTREAM") {
		t.Errorf("nats-server's output at start:\n%s", stderr)
	}
	if n := strings.Count(stderr, "\n"); n > 6 {
		t.Errorf("%d log lines at start:\n%s", n, stderr)
	}
}
