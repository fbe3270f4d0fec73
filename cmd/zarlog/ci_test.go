package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeBin writes executable shell scripts into a new directory, one per
// name, and returns the directory.
func fakeBin(t *testing.T, scripts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCINodeVersion: on a machine whose node is older than 20 (Debian 12's
// nodejs is 18), .ci/deps, and so a fresh clone's `make test`, stops at once
// with one message naming Node.js 20 and how to get it, before installing
// or testing anything; Node 20 and later pass the check.
func TestCINodeVersion(t *testing.T) {
	script := filepath.Join(root, ".ci", "node-version")
	for _, tc := range []struct {
		version string
		ok      bool
	}{
		{"v18.19.0", false}, {"v16.20.2", false}, {"v19.9.0", false}, {"garbage", false},
		{"v20.0.0", true}, {"v20.20.2", true}, {"v22.11.0", true}, {"v100.1.0", true},
	} {
		bin := fakeBin(t, map[string]string{"node": "echo " + tc.version})
		cmd := exec.Command(script)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if tc.ok != (err == nil) {
			t.Errorf("node %s: %v\n%s", tc.version, err, out)
		}
		if !tc.ok && (!strings.Contains(string(out), "Node.js 20 or later") || !strings.Contains(string(out), tc.version)) {
			t.Errorf("node %s: the message names neither Node.js 20 nor the version found:\n%s", tc.version, out)
		}
	}

	// make test itself, on a machine whose node is 18: it stops in .ci/deps
	// at once. A fake go on PATH makes sure nothing after it runs (vet,
	// staticcheck and the tests would call it), and so do fake apt-get and
	// sudo (nothing is installed).
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	bin := fakeBin(t, map[string]string{
		"node":    "echo v18.19.0",
		"go":      "echo 'go was called' >&2; exit 99",
		"apt-get": "echo 'apt-get was called' >&2; exit 98",
		"sudo":    "echo 'sudo was called' >&2; exit 97",
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-C", root, "test")
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("make test with node v18 succeeded:\n%s", out)
	}
	s := string(out)
	if !strings.Contains(s, "zarlog needs Node.js 20 or later") || !strings.Contains(s, "v18.19.0") {
		t.Errorf("make test with node v18 does not say it needs Node.js 20:\n%s", s)
	}
	for _, called := range []string{"go was called", "apt-get was called", "sudo was called", "installing"} {
		if strings.Contains(s, called) {
			t.Errorf("make test with node v18 went on past the check (%s):\n%s", called, s)
		}
	}
}
