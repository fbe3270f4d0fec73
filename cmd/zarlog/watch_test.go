package main

import (
	"bufio"
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zarlog/zarlog/follow"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/witness"
)

// A proc is a running zarlog watcher: the labelled lines it printed on
// start, and its log lines as they come.
type proc struct {
	cmd    *exec.Cmd
	lines  map[string]string
	stdout *bufio.Scanner
	logs   chan string
	once   sync.Once
	err    error
}

// start runs bin with args and reads its stdout up to the line labelled
// last (none if last is "").
func start(t *testing.T, bin, last string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), lines: map[string]string{}, logs: make(chan string, 1<<14)}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case p.logs <- sc.Text():
			default:
			}
		}
		close(p.logs)
	}()
	p.stdout = bufio.NewScanner(stdout)
	t.Cleanup(func() { p.cmd.Process.Kill(); p.wait() })
	for last != "" && p.stdout.Scan() {
		label, rest, _ := strings.Cut(p.stdout.Text(), " ")
		p.lines[label] = rest
		if label == last {
			return p
		}
	}
	if last != "" {
		t.Fatalf("%s exited before printing its %s line: %v", args[0], last, p.wait())
	}
	return p
}

// wait waits for the process to end (reading the rest of its stdout) and
// returns its error.
func (p *proc) wait() error {
	p.rest()
	return p.err
}

// rest returns the rest of the process's stdout, once it ended.
func (p *proc) rest() string {
	var b strings.Builder
	p.once.Do(func() {
		for p.stdout.Scan() {
			b.WriteString(p.stdout.Text() + "\n")
		}
		p.err = p.cmd.Wait()
	})
	return b.String()
}

// waitLog waits for a log line that contains every one of subs.
func (p *proc) waitLog(t *testing.T, subs ...string) string {
	t.Helper()
	timeout := time.NewTimer(2 * time.Minute)
	defer timeout.Stop()
	for {
		select {
		case l, ok := <-p.logs:
			if !ok {
				t.Fatalf("the process ended without logging %q", subs)
			}
			all := true
			for _, s := range subs {
				all = all && strings.Contains(l, s)
			}
			if all {
				return l
			}
		case <-timeout.C:
			t.Fatalf("no log line with %q", subs)
		}
	}
}

// bundleCounter counts, per run, the entry bundles an origin serves, and
// kills a process at a given request.
type bundleCounter struct {
	mu     sync.Mutex
	run    int
	counts []map[uint64]int
	proofs int
	killAt int // kill at this bundle request of run 0
	victim *proc
}

func (c *bundleCounter) hook(w http.ResponseWriter, r *http.Request) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.HasSuffix(r.URL.Path, "/proof.json") {
		c.proofs++
	}
	t, err := merkle.ParseTilePath(strings.TrimPrefix(r.URL.Path, "/"))
	if err != nil || !t.IsEntries() {
		return false
	}
	for len(c.counts) <= c.run {
		c.counts = append(c.counts, map[uint64]int{})
	}
	c.counts[c.run][t.Index]++
	n := 0
	for _, k := range c.counts[c.run] {
		n += k
	}
	if c.run == 0 && n == c.killAt && c.victim != nil {
		c.victim.cmd.Process.Signal(syscall.SIGKILL)
		http.Error(w, "gone", http.StatusServiceUnavailable)
		return true
	}
	return false
}

// refetched returns how many bundles the second run fetched that the first
// had fetched, and how many the second run fetched in all.
func (c *bundleCounter) refetched() (again, second int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.counts[1] {
		second++
		if c.counts[0][i] > 0 {
			again++
		}
	}
	return again, second
}

// bigOrigin is an origin of about 9,000 leaves (36 entry bundles) of real
// games, all bundled.
func bigOrigin(t *testing.T) (*testlog.Origin, []byte, merkle.Checkpoint) {
	t.Helper()
	o := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	ids := o.Play(t, "big", 90, 30)
	note := o.Sign(t)
	o.WaitBundles(t, ids...)
	cp, err := merkle.ParseSignedCheckpoint(note)
	if err != nil {
		t.Fatal(err)
	}
	return o, note, cp
}

func httpGet(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return b
}

// TestMirrorKilled kills `zarlog mirror` with SIGKILL in the middle of its
// catch-up and restarts it: it ends with the origin's checkpoint and tiles,
// having fetched again only the bundles of its unfinished batch.
func TestMirrorKilled(t *testing.T) {
	bin := buildZarlog(t)
	o, note, cp := bigOrigin(t)
	total := int((cp.Size + 255) / 256)
	c := &bundleCounter{killAt: total * 2 / 3}
	o.SetHook(c.hook)
	dir := t.TempDir()
	args := []string{"mirror", "--from", o.URL, "--log-key", o.VKey, "--data", dir, "--http", "127.0.0.1:0", "--concurrency", "2", "--batch", "4", "--poll", "1h"}
	p := start(t, bin, "healthz", args...)
	c.mu.Lock()
	c.victim = p
	c.mu.Unlock()
	if err := p.wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the first run ended with %v, want killed", err)
	}
	c.mu.Lock()
	c.run = 1
	c.mu.Unlock()
	p = start(t, bin, "healthz", args...)
	p.waitLog(t, "checkpoint verified", "size="+strconv.FormatUint(cp.Size, 10))
	again, second := c.refetched()
	t.Logf("%d bundles; killed at request %d; the restarted mirror fetched %d bundles, %d of them again", total, c.killAt, second, again)
	if second >= total || again > 2*2+4 {
		t.Fatalf("the restarted mirror fetched %d of %d bundles, %d again (window 4 + batch 4)", second, total, again)
	}
	if got := httpGet(t, p.lines["checkpoint"]); !bytes.Equal(got, note) {
		t.Fatal("the mirror's checkpoint is not the origin's")
	}
	base := strings.TrimSuffix(p.lines["checkpoint"], "/checkpoint")
	for _, tile := range merkle.NewTiles(0, cp.Size) {
		if !bytes.Equal(httpGet(t, base+"/"+tile.Path()), httpGet(t, o.URL+"/"+tile.Path())) {
			t.Fatalf("%s differs", tile)
		}
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	if err := p.wait(); err != nil {
		t.Fatalf("zarlog mirror after SIGINT: %v", err)
	}
}

// TestAuditKilled kills `zarlog audit --once` mid catch-up and runs it
// again: it resumes, verifies every game once, and exits 0.
func TestAuditKilled(t *testing.T) {
	bin := buildZarlog(t)
	o, _, cp := bigOrigin(t)
	total := int((cp.Size + 255) / 256)
	c := &bundleCounter{killAt: total / 2}
	o.SetHook(c.hook)
	dir := t.TempDir()
	args := []string{"audit", "--once", "--from", o.URL, "--log-key", o.VKey, "--data", dir, "--concurrency", "2", "--batch", "4"}
	p := start(t, bin, "evidence", args...)
	c.mu.Lock()
	c.victim = p
	c.mu.Unlock()
	if err := p.wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the first run ended with %v, want killed", err)
	}
	c.mu.Lock()
	c.run = 1
	c.mu.Unlock()
	p = start(t, bin, "evidence", args...)
	out := p.rest()
	if p.err != nil || !strings.Contains(out, "ok: no problem found") || !strings.Contains(out, "games 90 finished") {
		t.Fatalf("the resumed audit: %v\n%s", p.err, out)
	}
	again, second := c.refetched()
	t.Logf("%d bundles; killed at request %d; the restarted auditor fetched %d bundles, %d of them again; %d proof bundles fetched for 90 games", total, c.killAt, second, again, c.proofs)
	if second >= total || again > 2*2+4 || c.proofs != 90 {
		t.Fatalf("the restarted auditor fetched %d of %d bundles (%d again), %d proofs for 90 games", second, total, again, c.proofs)
	}
}

// TestAuditCommand: `zarlog audit --once` exits 0 on a good log and 1 on a
// log that serves a tampered bundle, naming the game and the failed check.
func TestAuditCommand(t *testing.T) {
	bin := buildZarlog(t)
	o := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	ids := o.Play(t, "cmd", 3, 10)
	o.WaitBundles(t, ids...)
	args := []string{"audit", "--once", "--from", o.URL, "--log-key", o.VKey, "--evidence-dir", t.TempDir(), "--bundle-grace", "1ms"}
	p := start(t, bin, "evidence", args...)
	if p.lines["vkey"] != o.VKey || p.lines["from"] != o.URL || p.lines["origin"] != testlog.LogName {
		t.Errorf("printed lines %q", p.lines)
	}
	if out := p.rest(); p.err != nil || !strings.Contains(out, "ok: no problem found") {
		t.Fatalf("a good log: %v\n%s", p.err, out)
	}
	o.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/games/"+ids[1]+"/proof.json" {
			return false
		}
		b, _ := o.Bundles.Bundle(r.Context(), ids[1])
		var m map[string]any
		json.Unmarshal(b, &m)
		d := m["rolls"].([]any)[0].(map[string]any)["dice"].([]any)
		d[0] = float64(int(d[0].(float64))%6 + 1)
		b, _ = json.Marshal(m)
		w.Write(b)
		return true
	})
	p = start(t, bin, "evidence", args...)
	out := p.rest()
	if code := p.cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("a tampered bundle: exit %d\n%s", code, out)
	}
	want := "PROBLEM game " + ids[1] + ": log-agreement: "
	if !strings.Contains(out, want) || !strings.Contains(out, "FAIL: 1 problems found") {
		t.Fatalf("output does not say %q:\n%s", want, out)
	}

	// Follow mode prints the problem when found and serves its health and
	// metrics; SIGINT stops it cleanly.
	p = start(t, bin, "healthz", "audit", "--from", o.URL, "--log-key", o.VKey, "--evidence-dir", t.TempDir(), "--http", "127.0.0.1:0", "--poll", "1h")
	if !p.stdout.Scan() || !strings.HasPrefix(p.stdout.Text(), want) {
		t.Fatalf("follow mode printed %q, want %q", p.stdout.Text(), want)
	}
	resp, err := http.Get(p.lines["healthz"])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), ids[1]) {
		t.Fatalf("/healthz: %s %s", resp.Status, body)
	}
	metrics := string(httpGet(t, p.lines["metrics"]))
	for _, m := range []string{"zarlog_audit_problems 1", "zarlog_audit_games_verified_total 2", `zarlog_audit_problems_found_total{kind="game"} 1`, "zarlog_follow_checkpoint_size "} {
		if !strings.Contains(metrics, m) {
			t.Errorf("/metrics has no %q", m)
		}
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	if err := p.wait(); err != nil {
		t.Fatalf("zarlog audit after SIGINT: %v", err)
	}
}

// TestForkCaught: a second ledger with the same key and another history is
// caught by the mirror (it refuses, keeps evidence, serves the verified
// checkpoint), by the auditor (evidence file, exit 1) and by a witness (it
// refuses to cosign).
func TestForkCaught(t *testing.T) {
	bin := buildZarlog(t)
	ctx := context.Background()
	a := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	b := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	common := a.Play(t, "common", 2, 8)
	b.Play(t, "common", 2, 8)
	honest := a.Play(t, "honest", 2, 8)
	a.WaitBundles(t, append(common, honest...)...)
	verified := a.Sign(t)
	b.Play(t, "forked", 3, 8)
	forked := b.Sign(t)
	av, _ := merkle.ParseSignedCheckpoint(verified)
	bv, _ := merkle.ParseSignedCheckpoint(forked)

	// The witness cosigned the honest checkpoint, and refuses the fork with
	// the fork's own consistency proof.
	skey, _, err := merkle.GenerateCosignerKey(rand.NewChaCha8([32]byte{7}), "witness.example/w")
	if err != nil {
		t.Fatal(err)
	}
	logs, err := witness.ParseLogs([]byte("log " + a.VKey + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	wdir := t.TempDir()
	w, err := witness.New(ctx, witness.Config{Dir: wdir, Logs: logs, Key: skey})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.AddCheckpoint(ctx, 0, nil, verified); err != nil {
		t.Fatal(err)
	}
	proof, err := merkle.ConsistencyProof(ctx, b.L.TileReader(), av.Size, bv.Size)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddCheckpoint(ctx, av.Size, proof, forked); !errors.Is(err, witness.ErrInconsistent) {
		t.Fatalf("the witness on the fork: %v", err)
	}
	if files, _ := filepath.Glob(filepath.Join(wdir, "evidence", "*.json")); len(files) != 1 {
		t.Fatalf("witness evidence %v", files)
	}

	// The mirror and the auditor see the honest log, then the fork at the
	// same URL.
	var mu sync.Mutex
	fork := false
	a.SetHook(func(rw http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		if fork {
			b.Handler().ServeHTTP(rw, r)
		}
		return fork
	})
	mdir, adir := t.TempDir(), t.TempDir()
	m := start(t, bin, "healthz", "mirror", "--from", a.URL, "--log-key", a.VKey, "--data", mdir, "--http", "127.0.0.1:0", "--poll", "10ms")
	m.waitLog(t, "checkpoint verified", "size="+strconv.FormatUint(av.Size, 10))
	auditArgs := []string{"audit", "--once", "--from", a.URL, "--log-key", a.VKey, "--data", adir}
	p := start(t, bin, "evidence", auditArgs...)
	if out := p.rest(); p.err != nil {
		t.Fatalf("the auditor on the honest log: %v\n%s", p.err, out)
	}
	mu.Lock()
	fork = true
	mu.Unlock()
	m.waitLog(t, "SPLIT VIEW")
	m.waitLog(t, "evidence kept")
	if got := httpGet(t, m.lines["checkpoint"]); !bytes.Equal(got, verified) {
		t.Fatal("the mirror serves another checkpoint than the verified one")
	}
	resp, err := http.Get(m.lines["healthz"])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("the mirror's /healthz after the fork: %s", resp.Status)
	}
	p = start(t, bin, "evidence", auditArgs...)
	out := p.rest()
	if p.cmd.ProcessState.ExitCode() != 1 || !strings.Contains(out, "PROBLEM split-view") {
		t.Fatalf("the auditor on the fork: exit %d\n%s", p.cmd.ProcessState.ExitCode(), out)
	}
	key, _ := merkle.NewVerifier(a.VKey)
	for _, dir := range []string{filepath.Join(mdir, "evidence"), filepath.Join(adir, "evidence")} {
		files, _ := filepath.Glob(filepath.Join(dir, "inconsistent-*.json"))
		if len(files) != 1 {
			t.Fatalf("%s: evidence files %v", dir, files)
		}
		data, _ := os.ReadFile(files[0])
		e, err := follow.ParseEvidence(data)
		if err != nil {
			t.Fatal(err)
		}
		if e.Verified.Checkpoint != string(verified) || e.Conflicting.Checkpoint != string(forked) {
			t.Fatalf("%s does not hold both checkpoints", files[0])
		}
		if _, err := follow.CheckEvidence(e, key); err != nil {
			t.Fatalf("%s: %v", files[0], err)
		}
		var out, errb strings.Builder
		if code := run(ctx, []string{"audit", "--check-evidence", files[0], "--log-key", a.VKey}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "PROVEN inconsistent") {
			t.Fatalf("zarlog audit --check-evidence: exit %d\n%s%s", code, out.String(), errb.String())
		}
	}
}

// TestAuditWrongKey: `zarlog audit --once` with another log's key says so
// once, on standard error, exits 1, and claims nothing verified; a --from
// without a scheme is a usage error (exit 2) for audit and mirror.
func TestAuditWrongKey(t *testing.T) {
	bin, _ := tools(t)
	o := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	_, wrong, err := merkle.GenerateKey(crand.Reader, testlog.LogName)
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runBin(t, t.TempDir(), bin, "audit", "--once", "--from", o.URL, "--log-key", wrong, "--evidence-dir", t.TempDir())
	if code != 1 || strings.Contains(stdout, "verified") || strings.Count(stderr, "could not be audited") != 1 {
		t.Errorf("audit with a wrong key: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, cmd := range [][]string{
		{"audit", "--once", "--from", strings.TrimPrefix(o.URL, "http://"), "--log-key", o.VKey},
		{"mirror", "--from", strings.TrimPrefix(o.URL, "http://"), "--log-key", o.VKey, "--data", t.TempDir()},
	} {
		if _, stderr, code := runBin(t, t.TempDir(), bin, cmd...); code != 2 || !strings.Contains(stderr, "with its scheme") {
			t.Errorf("%s --from without a scheme: exit %d %s", cmd[0], code, stderr)
		}
	}
}
