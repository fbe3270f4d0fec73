package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// zarlogBinary builds the command once per test binary.
func zarlogBinary(t *testing.T) string {
	t.Helper()
	bin, _ := buildTools(t)
	return bin
}

func runBin(t *testing.T, dir, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}

func TestKeygen(t *testing.T) {
	bin := zarlogBinary(t)
	dir := t.TempDir()

	// The log key: written 0600, its vkey printed; the pair signs and
	// verifies a checkpoint.
	stdout, stderr, code := runBin(t, dir, bin, "keygen", "--origin", "zarlog.example/log", "--out", "log.skey")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	vkey := strings.TrimSpace(stdout)
	fi, err := os.Stat(filepath.Join(dir, "log.skey"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	skey, err := os.ReadFile(filepath.Join(dir, "log.skey"))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := merkle.NewSigner(strings.TrimSpace(string(skey)))
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := merkle.NewVerifier(vkey)
	if err != nil {
		t.Fatalf("printed vkey %q: %v", vkey, err)
	}
	n, err := merkle.Sign(merkle.Checkpoint{Origin: "zarlog.example/log", Size: 1, Hash: merkle.LeafHash(nil)}, signer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := merkle.Open(n, verifier); err != nil {
		t.Fatalf("a checkpoint signed with the written key does not open with the printed vkey: %v", err)
	}

	// Never overwrite.
	if _, stderr, code := runBin(t, dir, bin, "keygen", "--origin", "other", "--out", "log.skey"); code != 1 || !strings.Contains(stderr, "refusing to overwrite") {
		t.Errorf("overwrite: exit %d, stderr %q", code, stderr)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "log.skey")); !bytes.Equal(again, skey) {
		t.Error("the key file changed")
	}

	// An emitter key, default file name; its vkey goes into a keyring.
	stdout, stderr, code = runBin(t, dir, bin, "keygen", "--emitter", "tavla-east")
	if code != 0 {
		t.Fatalf("emitter: exit %d: %s", code, stderr)
	}
	if _, err := events.NewKeyring(strings.Fields(stdout)[0]); err != nil || len(strings.Fields(stdout)) != 2 || !strings.HasPrefix(strings.Fields(stdout)[1], "U") {
		t.Errorf("emitter vkey %q: %v", stdout, err)
	}
	for _, f := range []string{"tavla-east.key", "tavla-east.nkey"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("emitter key file %s: %v %v", f, fi, err)
		}
		if !strings.Contains(stderr, "wrote "+f) {
			t.Errorf("keygen did not say it wrote %s:\n%s", f, stderr)
		}
	}
	if seed, err := os.ReadFile(filepath.Join(dir, "tavla-east.nkey")); err != nil || !bytes.HasPrefix(seed, []byte("SU")) {
		t.Errorf("the nkey seed file: %.2q %v", seed, err)
	}

	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"keygen"}, 2},
		{[]string{"keygen", "--origin", "a", "--emitter", "b"}, 2},
		{[]string{"keygen", "--origin", "bad name", "--out", "x.key"}, 1},
		{[]string{"keygen", "--emitter", "Not-Valid", "--out", "y.key"}, 1},
		{[]string{"keygen", "--origin", "a", "extra"}, 2},
		{[]string{"keygen", "-h"}, 0},
	} {
		if _, stderr, code := runBin(t, dir, bin, tc.args...); code != tc.code {
			t.Errorf("%v: exit %d, want %d; stderr %q", tc.args, code, tc.code, stderr)
		}
	}
	for _, f := range []string{"x.key", "y.key"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s written after an error", f)
		}
	}
}
