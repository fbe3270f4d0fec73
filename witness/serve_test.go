package witness

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/merkle"
)

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "witness.key")
	if _, _, err := LoadKey(path, false, "", testRand(1)); err == nil || !strings.Contains(err.Error(), "--init") {
		t.Fatalf("missing key without create: %v", err)
	}
	if _, _, err := LoadKey(path, true, "", testRand(1)); err == nil {
		t.Fatal("created a key without a name")
	}
	if _, _, err := LoadKey(path, true, "bad name", testRand(1)); err == nil {
		t.Fatal("created a key with an invalid name")
	}
	skey, created, err := LoadKey(path, true, "witness.example/w", testRand(1))
	if err != nil || !created {
		t.Fatalf("creating: %v, %v", created, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v", st.Mode(), err)
	}
	again, created, err := LoadKey(path, true, "other.example/w", testRand(2))
	if err != nil || created || again != skey {
		t.Fatalf("loading the created key: %v, %v, same %v", created, err, again == skey)
	}
	if _, err := merkle.NewCosigner(skey, testClock); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o644)
	if _, _, err := LoadKey(path, false, "", nil); err == nil {
		t.Fatal("loaded a key readable by others")
	}
	os.WriteFile(path, []byte("PRIVATE+KEY+nonsense\n"), 0o600)
	os.Chmod(path, 0o600)
	if _, _, err := LoadKey(path, false, "", nil); err == nil {
		t.Fatal("loaded a malformed key")
	}
}

// TestServe runs Serve in-process on a free port with a real directory:
// it reports its key and URLs, cosigns over HTTP with fsync, serves metrics,
// and shuts down cleanly.
func TestServe(t *testing.T) {
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.policy")
	if err := os.WriteFile(logs, []byte("log "+a.vkey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan Info, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeConfig{
			Dir: filepath.Join(dir, "data"), Addr: "127.0.0.1:0", LogsFile: logs,
			Init: true, Name: "witness.example/serve", Rand: testRand(7), Clock: testClock,
			Ready: func(i Info) { ready <- i },
		})
	}()
	var info Info
	select {
	case info = <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	if !info.KeyCreated || !strings.HasPrefix(info.VerifierKey, "witness.example/serve+") || !strings.HasSuffix(info.AddCheckpointURL, "/add-checkpoint") {
		t.Errorf("info %+v", info)
	}
	v, err := merkle.NewCosignatureVerifier(info.VerifierKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(strings.TrimSuffix(info.AddCheckpointURL, "/add-checkpoint"), v, nil)
	if err != nil {
		t.Fatal(err)
	}
	cp := a.grow(4)
	if _, err := c.AddCheckpoint(ctx, 0, nil, cp); err != nil {
		t.Fatal(err)
	}
	for url, want := range map[string]string{
		info.MetricsURL:               `zarlog_witness_add_checkpoint_requests_total{code="200"} 1`,
		info.HealthURL:                "ok",
		info.CheckpointURLs[a.origin]: "zarlog.example/a\n4\n",
	} {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d, want %q in\n%s", url, resp.StatusCode, want, body)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve after cancel: %v", err)
	}
	// The state is on disk, in the file named like the monitoring URL.
	sum := sha256.Sum256([]byte(a.origin))
	hash := hex.EncodeToString(sum[:])
	if !strings.HasSuffix(info.CheckpointURLs[a.origin], "/"+hash+"/checkpoint") {
		t.Errorf("checkpoint URL %s", info.CheckpointURLs[a.origin])
	}
	data, err := os.ReadFile(filepath.Join(dir, "data", "checkpoints", hash))
	if err != nil || !strings.HasPrefix(string(data), "zarlog.example/a\n4\n") {
		t.Fatalf("state file: %q, %v", data, err)
	}
}

// TestKillAfterReply runs the witness as a separate process (this test
// binary, re-executed) and kills it with SIGKILL as soon as it has answered
// 200: the restarted witness always remembers the size it cosigned.
func TestKillAfterReply(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.policy")
	if err := os.WriteFile(logs, []byte("log "+a.vkey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var old uint64
	var vkey string
	for round := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWitnessProcess$")
		cmd.Env = append(os.Environ(), "ZARLOG_WITNESS_HELPER="+dir)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		if !sc.Scan() {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: the witness process printed nothing", round)
		}
		var url string
		if _, err := fmt.Sscanf(sc.Text(), "ready %s %s", &url, &vkey); err != nil {
			t.Fatalf("round %d: first line %q: %v", round, sc.Text(), err)
		}
		v, err := merkle.NewCosignatureVerifier(vkey)
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewClient(url, v, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The restarted witness remembers: from 0 it answers 409 with the
		// size cosigned before the kill.
		cp := a.grow(round + 1)
		var conflict *ConflictError
		_, err = c.AddCheckpoint(ctx, 0, nil, cp)
		switch {
		case round == 0 && err != nil:
			t.Fatalf("round 0: %v", err)
		case round > 0 && (!errors.As(err, &conflict) || conflict.Size != old):
			t.Fatalf("round %d: after SIGKILL, old size 0 gives %v, want a conflict at %d", round, err, old)
		case round > 0:
			if _, err := c.AddCheckpoint(ctx, old, a.proof(old), cp); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		// 200 received: kill at once.
		cmd.Process.Kill()
		cmd.Wait()
		old = a.size()
	}
}

// TestHelperWitnessProcess is the witness process of TestKillAfterReply. It
// does nothing unless ZARLOG_WITNESS_HELPER names a directory.
func TestHelperWitnessProcess(t *testing.T) {
	dir := os.Getenv("ZARLOG_WITNESS_HELPER")
	if dir == "" {
		return
	}
	err := Serve(context.Background(), ServeConfig{
		Dir: filepath.Join(dir, "data"), Addr: "127.0.0.1:0", LogsFile: filepath.Join(dir, "logs.policy"),
		Init: true, Name: "witness.example/killed",
		Ready: func(i Info) {
			fmt.Printf("ready %s %s\n", strings.TrimSuffix(i.AddCheckpointURL, "/add-checkpoint"), i.VerifierKey)
		},
	})
	fmt.Fprintln(os.Stderr, "helper witness:", err)
	os.Exit(3)
}
