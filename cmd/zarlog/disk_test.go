package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/internal/testonly"
)

// smallFS mounts a tmpfs of size bytes for the test (a real filesystem
// that fills up), or skips the test where mounting is not allowed (not
// root, no mount(2) in the sandbox). CI runs as root.
func smallFS(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("mounting a tmpfs of %d bytes at %s: %v (CI runs as root and must run this test)", size, dir, err)
		}
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes a file that takes every free byte of the filesystem of dir,
// and returns a function that deletes it.
func fill(t *testing.T, dir string) (free func()) {
	t.Helper()
	p := filepath.Join(dir, "fill")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	// The last bytes, smaller than a buffer.
	for n := len(buf) / 2; n > 0; n /= 2 {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
	f.Close()
	return func() { os.Remove(p) }
}

// TestDiskFull runs `zarlog serve` with its data directory on a 256 MB
// filesystem (the embedded default must fit one) and fills it:
//
//   - while it runs, a full disk either makes the stream fail to store
//     (/healthz is 503 within seconds, with the reason, and once space is
//     back the service heals without a restart), or the ledger's commit
//     fail (zarlog serve exits 1 with the cause, and its supervisor's
//     restart serves again); either way the game that was waiting for its
//     acks finishes once space is back, every event receipted;
//   - a restart on a full disk exits 1 at once with one clear line: it
//     never spins;
//   - once space is back, a restart serves again, and every event whose
//     receipt a backend held is in the log.
func TestDiskFull(t *testing.T) {
	var rec testlog.Leaves // the events played, for their receipts
	bin, _ := tools(t)
	ctx := testContext(t)
	root := smallFS(t, 256<<20)
	dir := t.TempDir()
	signer, nkey, emitters := oneEmitter(t, bin, dir)
	data := filepath.Join(root, "data")
	args := []string{"--data", data, "--emitters", emitters, "--checkpoint-interval", "20ms", "--admin", "127.0.0.1:0"}
	p := startServe(t, bin, append(args, "--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0")...)
	// Restarts listen where backends and players already connect.
	args = append(args, "--http", strings.TrimPrefix(p.base(), "http://"), "--nats-listen", hostPort(p.lines["nats"]))
	b, client, _ := sdkBackend(t, p.lines["nats"], signer, nil, nkey)
	id, err := testlog.Tavlarena(ctx, b, "before-full", `{}`, 8, rec.After)
	if err != nil {
		t.Fatalf("a game on the 256 MB filesystem: %v", err)
	}
	// Every event of the game has a receipt: those are the promises.
	var receipted []string
	receipts := func(game string, n int) {
		for seq := range n {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := client.Receipt(rctx, rec.Event(game, uint64(seq)))
			cancel()
			if err != nil {
				t.Errorf("receipt of %s:%d: %v", game, seq, err)
				continue
			}
			receipted = append(receipted, fmt.Sprintf("%s:%d", game, seq))
		}
	}
	receipts(id, 11)

	// Fill the disk while the service runs, and play on: the game's
	// events wait. Either the stream fails to store (nats-server keeps a
	// write error: /healthz says so, and the service heals in process once
	// space is back), or the ledger's commit fails (it stops, and zarlog
	// serve exits 1 with the cause for its supervisor, which restarts it).
	free := fill(t, root)
	played := make(chan error, 1)
	var whileFull string
	go func() {
		var err error
		whileFull, err = testlog.Tavlarena(ctx, b, "while-full", `{}`, 4, rec.After)
		played <- err
	}()
	exited, healthRed := false, ""
	for deadline := time.Now().Add(20 * time.Second); !exited && healthRed == "" && time.Now().Before(deadline); {
		select {
		case err := <-p.done:
			p.done <- err
			exited = true
		default:
			if code, body := waitStatus(t, ctx, p.base()+"/healthz", 503, 200*time.Millisecond); code == 503 {
				healthRed = body
			}
		}
	}
	switch {
	case exited:
		code := p.wait()
		t.Logf("on the full disk zarlog serve exited %d: %s", code, tail(p.stderr.String(), 1))
		if code != 1 || !strings.Contains(p.stderr.String(), "no space left on device") {
			t.Errorf("zarlog serve on a full disk: exit %d\n%s", code, tail(p.stderr.String(), 10))
		}
		free()
		p = startServe(t, bin, args...) // as its supervisor would
	case healthRed != "":
		t.Logf("/healthz on a full disk: %q", healthRed)
		free()
	default:
		t.Fatalf("20 s on a full disk: zarlog serve neither exited nor said so on /healthz\n%s", tail(p.stderr.String(), 10))
	}
	if code, body := waitStatus(t, ctx, p.base()+"/healthz", 200, 60*time.Second); code != 200 {
		t.Fatalf("/healthz after space came back: %d %q\n%s", code, body, tail(p.stderr.String(), 20))
	}
	if err := <-played; err != nil {
		t.Fatalf("the game that waited for space: %v", err)
	}
	receipts(whileFull, 7)
	if n := strings.Count(p.stderr.String(), "\n"); n > 200 {
		t.Errorf("%d log lines for the full disk:\n%s", n, tail(p.stderr.String(), 20))
	}
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("zarlog serve: exit %d after SIGTERM\n%s", code, tail(p.stderr.String(), 20))
	}

	// Full again, and stopped.
	free = fill(t, root)
	// A restart on the full disk exits with a clear error, quickly, and
	// says little.
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("restart on a full disk: %v, want exit 1", err)
		}
	case <-time.After(20 * time.Second):
		// Still running: it must at least honour SIGTERM, promptly.
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("zarlog serve on a full disk ignored SIGTERM")
		}
		t.Errorf("zarlog serve on a full disk kept running for %v", time.Since(start).Round(time.Second))
	}
	if n := lines(stderr.String()); n > 30 || !strings.Contains(stderr.String(), "no space left on device") {
		t.Errorf("restart on a full disk printed %d lines:\n%s", n, tail(stderr.String(), 30))
	} else {
		t.Logf("restart on a full disk: exit after %v, %d lines; the last: %s", time.Since(start).Round(time.Millisecond), n, tail(stderr.String(), 1))
	}

	// Space back: it serves again, with every receipted event.
	free()
	p = startServe(t, bin, args...)
	if code, body := waitStatus(t, ctx, p.base()+"/readyz", 200, 20*time.Second); code != 200 {
		t.Fatalf("/readyz after space came back: %d %q", code, body)
	}
	lg, err := testonly.Fetch(ctx, p.base()+"/", nil, p.lines["vkey"])
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for i, e := range lg.Entries {
		ev, err := events.Parse(e)
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		have[ev.ID] = true
	}
	for _, id := range receipted {
		if !have[id] {
			t.Errorf("receipted event %s is not in the log", id)
		}
	}
	// And it takes new games.
	b2, _, _ := sdkBackend(t, p.lines["nats"], signer, nil, nkey)
	if _, err := testlog.Tavlarena(ctx, b2, "after-full", `{}`, 4, rec.After); err != nil {
		t.Errorf("a game after space came back: %v", err)
	}
}

// waitStatus polls url until it answers want or d passes, and returns the
// last answer.
func waitStatus(t *testing.T, ctx context.Context, url string, want int, d time.Duration) (int, string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		code, body := 0, ""
		if resp, err := http.Get(url); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			code, body = resp.StatusCode, string(b)
		}
		if code == want || time.Now().After(deadline) || ctx.Err() != nil {
			return code, body
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func lines(s string) int {
	n := 0
	for sc := bufio.NewScanner(strings.NewReader(s)); sc.Scan(); {
		n++
	}
	return n
}

func tail(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// TestDescriptorExhaustion runs `zarlog serve` with 256 file descriptors
// (prlimit) and takes them all with idle connections to its HTTP listener,
// while a backend already connected plays a game. The service logs the
// refused accepts at most about once a second (no flood) and stays up;
// once the connections close, everything resumes without a restart: the
// game finishes, every event is receipted, a new backend connects and
// plays.
func TestDescriptorExhaustion(t *testing.T) {
	var rec testlog.Leaves // the events played, for their receipts
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("no prlimit (util-linux) here")
	}
	bin, _ := tools(t)
	ctx := testContext(t)
	dir := t.TempDir()
	signer, nkey, emitters := oneEmitter(t, bin, dir)
	p := startServeWith(t, []string{prlimit, "--nofile=256", bin, "serve"}, "--data", filepath.Join(dir, "data"), "--emitters", emitters,
		"--checkpoint-interval", "20ms", "--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--admin", "127.0.0.1:0")
	b, client, _ := sdkBackend(t, p.lines["nats"], signer, nil, nkey)

	// Take every descriptor.
	addr := strings.TrimPrefix(p.base(), "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 400 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		conns = append(conns, c)
	}
	time.Sleep(500 * time.Millisecond)
	before := lines(p.stderr.String())

	// The connected backend plays on. Its events may wait while the stream
	// cannot open a file (JetStream then keeps a write error: /healthz
	// says so), but none is lost.
	played := make(chan error, 1)
	var id string
	var playedAt time.Time
	go func() {
		var err error
		id, err = testlog.Tavlarena(ctx, b, "exhausted", `{}`, 6, rec.After)
		playedAt = time.Now()
		played <- err
	}()
	// Within seconds either the game has finished (nothing was stuck) or
	// /healthz says why nothing moves: never green while stuck.
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case err := <-played:
			played <- err
			t.Log("the game finished while the descriptors were taken")
		default:
			code, body := waitStatus(t, ctx, p.base()+"/healthz", 503, 200*time.Millisecond)
			if code != 503 {
				if time.Now().Before(deadline) {
					continue
				}
				t.Errorf("the game waited 15 s with every descriptor taken and /healthz said %d %q", code, body)
			} else {
				t.Logf("/healthz with every descriptor taken: %d %q", code, body)
			}
		}
		break
	}
	if grew := lines(p.stderr.String()) - before; grew > 40 {
		t.Errorf("%d log lines while descriptors were exhausted:\n%s", grew, tail(p.stderr.String(), 10))
	}

	// Free them: everything resumes without a restart.
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	freedAt := time.Now()
	if err := <-played; err != nil {
		t.Fatalf("the game played while descriptors were exhausted: %v", err)
	}
	if playedAt.After(freedAt) {
		t.Logf("the game finished %v after the descriptors were freed", playedAt.Sub(freedAt).Round(time.Millisecond))
	}
	for seq := 0; seq < 9; seq++ {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if _, err := client.Receipt(rctx, rec.Event(id, uint64(seq))); err != nil {
			t.Errorf("receipt of %s:%d: %v", id, seq, err)
		}
		cancel()
	}
	if code, body := waitStatus(t, ctx, p.base()+"/readyz", 200, 60*time.Second); code != 200 {
		t.Errorf("/readyz after the descriptors were freed: %d %q", code, body)
	}
	b2, _, _ := sdkBackend(t, p.lines["nats"], signer, nil, nkey)
	if _, err := testlog.Tavlarena(ctx, b2, "after-exhaustion", `{}`, 4, rec.After); err != nil {
		t.Errorf("a new backend after the descriptors were freed: %v", err)
	}
}

// TestDiskUse: a `zarlog serve` holding 1,000 events takes under 32 MB of
// disk, measured as blocks allocated on a tmpfs (where preallocation
// counts, as on ext4), every store of its data directory included.
func TestDiskUse(t *testing.T) {
	bin, _ := tools(t)
	ctx := testContext(t)
	root := smallFS(t, 256<<20)
	dir := t.TempDir()
	signer, nkey, emitters := oneEmitter(t, bin, dir)
	data := filepath.Join(root, "data")
	p := startServe(t, bin, "--data", data, "--emitters", emitters, "--checkpoint-interval", "20ms",
		"--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--admin", "127.0.0.1:0")
	b, _, _ := sdkBackend(t, p.lines["nats"], signer, nil, nkey)
	events := 0
	for g := 0; events < 1000; g++ {
		id, err := testlog.Tavlarena(ctx, b, fmt.Sprint("disk-", g), `{}`, 40, nil)
		if err != nil {
			t.Fatal(err)
		}
		lg, err := testonly.Fetch(ctx, p.base()+"/", nil, p.lines["vkey"])
		if err != nil {
			t.Fatal(err)
		}
		events = len(lg.Entries)
		_ = id
	}
	waitStatus(t, ctx, p.base()+"/readyz", 200, 10*time.Second)
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var total int64
	per := map[string]int64{}
	filepath.Walk(data, func(path string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				total += st.Blocks * 512
				rel, _ := filepath.Rel(data, path)
				per[strings.SplitN(rel, string(filepath.Separator), 2)[0]] += st.Blocks * 512
			}
		}
		return nil
	})
	t.Logf("%d events: %.1f MB on disk (%v)", events, float64(total)/1e6, per)
	if total >= 32e6 {
		t.Errorf("%d events take %d bytes on disk, want under 32 MB (%v)", events, total, per)
	}
}

// TestStreamDiskFull puts only the embedded server's store (DIR/nats) on a
// 256 MB filesystem and fills it while a game is played: the stream fails
// to store, /healthz says so within seconds, and once space is back the
// service heals without a restart (it restarts the embedded server in
// process): the game finishes and every event is receipted.
func TestStreamDiskFull(t *testing.T) {
	var rec testlog.Leaves // the events played, for their receipts
	bin, _ := tools(t)
	ctx := testContext(t)
	root := smallFS(t, 256<<20)
	dir := t.TempDir()
	signer, nkey, emitters := oneEmitter(t, bin, dir)
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(data, "nats")); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, bin, "--data", data, "--emitters", emitters, "--checkpoint-interval", "20ms",
		"--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--admin", "127.0.0.1:0")
	b, client, _ := sdkBackend(t, p.lines["nats"], signer, nil, nkey)
	if _, err := testlog.Tavlarena(ctx, b, "before", `{}`, 4, rec.After); err != nil {
		t.Fatal(err)
	}
	free := fill(t, root)
	played := make(chan error, 1)
	var id string
	go func() {
		var err error
		id, err = testlog.Tavlarena(ctx, b, "while-full", `{}`, 4, rec.After)
		played <- err
	}()
	code, body := waitStatus(t, ctx, p.base()+"/healthz", 503, 20*time.Second)
	if code != 503 || !strings.Contains(body, "write error") {
		t.Errorf("/healthz with the stream's disk full: %d %q", code, body)
	}
	free()
	if code, body := waitStatus(t, ctx, p.base()+"/healthz", 200, 60*time.Second); code != 200 {
		t.Fatalf("/healthz after space came back: %d %q\n%s", code, body, tail(p.stderr.String(), 10))
	}
	if err := <-played; err != nil {
		t.Fatalf("the game that waited: %v", err)
	}
	for seq := range 7 {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if _, err := client.Receipt(rctx, rec.Event(id, uint64(seq))); err != nil {
			t.Errorf("receipt of %s:%d: %v", id, seq, err)
		}
		cancel()
	}
	if !strings.Contains(p.stderr.String(), "restarting the embedded nats-server") {
		t.Errorf("no in-process restart in the log:\n%s", tail(p.stderr.String(), 10))
	}
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit %d after SIGTERM", code)
	}
}
