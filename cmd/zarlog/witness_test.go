package main

import (
	"bufio"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/witness"
)

// buildZarlog builds the zarlog binary into a temporary directory.
func buildZarlog(t *testing.T) string {
	t.Helper()
	bin, _ := tools(t)
	return bin
}

// startWitness runs "zarlog witness" with args and returns its stdout lines
// up to the healthz line, by label, and the running command.
func startWitness(t *testing.T, bin string, args ...string) (map[string][]string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"witness"}, args...)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := map[string][]string{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			t.Fatalf("output line %q", sc.Text())
		}
		lines[f[0]] = f[1:]
		if f[0] == "healthz" {
			return lines, cmd
		}
	}
	t.Fatalf("zarlog witness exited before printing its URLs: %v", cmd.Wait())
	return nil, nil
}

// TestWitnessCommand runs the built binary as an operator does: it creates
// its key, prints its vkey and URLs, cosigns a checkpoint POSTed to the
// printed URL (verified with the printed vkey), stops on SIGINT, and after a
// restart has the same key and remembers what it cosigned.
func TestWitnessCommand(t *testing.T) {
	bin := buildZarlog(t)
	dir := t.TempDir()
	skey, vkey, err := merkle.GenerateKey(rand.NewChaCha8([32]byte{1}), "zarlog.example/log")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := merkle.NewSigner(skey)
	cfg := filepath.Join(dir, "witness.policy")
	if err := os.WriteFile(cfg, []byte("# logs witnessed\nlog "+vkey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	args := []string{"--data", data, "--http", "127.0.0.1:0", "--config", cfg}

	out, cmd := startWitness(t, bin, append(args, "--init", "--name", "witness.example/bin")...)
	if got := out["key"]; len(got) != 2 || got[0] != filepath.Join(data, "witness.key") || got[1] != "created" {
		t.Errorf("key line %q", got)
	}
	if st, err := os.Stat(filepath.Join(data, "witness.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v, %v", st, err)
	}
	wvkey := out["vkey"][0]
	v, err := merkle.NewCosignatureVerifier(wvkey)
	if err != nil || v.Name() != "witness.example/bin" {
		t.Fatalf("printed vkey %q: %v", wvkey, err)
	}
	url := out["add-checkpoint"][0]
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/add-checkpoint") {
		t.Fatalf("printed URL %q", url)
	}
	if got := out["checkpoint"]; len(got) != 2 || got[1] != "zarlog.example/log" {
		t.Errorf("checkpoint line %q", got)
	}

	b, err := merkle.NewBuilder(context.Background(), nil, merkle.State{})
	if err != nil {
		t.Fatal(err)
	}
	b.Append([][]byte{[]byte("a"), []byte("b"), []byte("c")})
	msg, err := merkle.Sign(merkle.Checkpoint{Origin: "zarlog.example/log", Size: b.Size(), Hash: b.Root()}, signer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := witness.NewClient(strings.TrimSuffix(url, "/add-checkpoint"), v, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := c.AddCheckpoint(context.Background(), 0, nil, msg)
	if err != nil {
		t.Fatalf("POST to the printed URL: %v", err)
	}
	if _, err := merkle.VerifyCosignatures(append(msg, lines...), []*merkle.CosignatureVerifier{v}); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("zarlog witness after SIGINT: %v", err)
	}

	out, _ = startWitness(t, bin, args...)
	if out["vkey"][0] != wvkey || len(out["key"]) != 1 {
		t.Errorf("restart: vkey %q key %q", out["vkey"], out["key"])
	}
	c, _ = witness.NewClient(strings.TrimSuffix(out["add-checkpoint"][0], "/add-checkpoint"), v, nil)
	var conflict *witness.ConflictError
	if _, err := c.AddCheckpoint(context.Background(), 0, nil, msg); !errors.As(err, &conflict) || conflict.Size != 3 {
		t.Fatalf("restarted witness, old size 0: %v", err)
	}
}

// TestWitnessCommandUsage checks the command's refusals.
func TestWitnessCommandUsage(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "witness.policy")
	os.WriteFile(cfg, []byte("# no logs\n"), 0o644)
	for name, c := range map[string]struct {
		args []string
		code int
		want string
	}{
		"no-flags":  {nil, 2, "usage"},
		"no-config": {[]string{"--data", dir}, 2, "usage"},
		"extra-arg": {[]string{"--data", dir, "--config", cfg, "x"}, 2, "usage"},
		"no-logs":   {[]string{"--data", dir, "--config", cfg, "--http", "127.0.0.1:0"}, 1, "lists no log"},
		"help":      {[]string{"-h"}, 0, "usage"},
	} {
		var stdout, stderr strings.Builder
		code := run(context.Background(), append([]string{"witness"}, c.args...), &stdout, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d with %q", name, code, stderr.String(), c.code, c.want)
		}
	}
}
