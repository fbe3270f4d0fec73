package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestMain removes the binaries the tests built (tools).
func TestMain(m *testing.M) {
	code := m.Run()
	if toolsDir != "" {
		os.RemoveAll(toolsDir)
	}
	os.Exit(code)
}

// TestBadFlag: every subcommand answers an unknown flag with exit 2 and a
// short message (the flag package's error and a pointer to -h, under 15
// lines), and -h with its whole usage and exit 0.
func TestBadFlag(t *testing.T) {
	for name := range commands() {
		var stderr bytes.Buffer
		if code := run(context.Background(), []string{name, "--no-such-flag"}, io.Discard, &stderr); code != 2 {
			t.Errorf("zarlog %s --no-such-flag: exit %d, want 2", name, code)
		}
		if n := strings.Count(stderr.String(), "\n"); n >= 15 || !strings.Contains(stderr.String(), "no-such-flag") {
			t.Errorf("zarlog %s --no-such-flag printed %d lines:\n%s", name, n, stderr.String())
		}
		stderr.Reset()
		if code := run(context.Background(), []string{name, "-h"}, io.Discard, &stderr); code != 0 || !strings.Contains(stderr.String(), "usage: zarlog "+name) {
			t.Errorf("zarlog %s -h: exit %d\n%s", name, code, stderr.String())
		}
	}
}

// TestSystemdUnit: every flag that deploy/zarlog.service passes to zarlog
// serve is one of its flags.
func TestSystemdUnit(t *testing.T) {
	unit, err := os.ReadFile("../../deploy/zarlog.service")
	if err != nil {
		t.Fatal(err)
	}
	exec := regexp.MustCompile(`(?s)ExecStart=(.*?[^\\])\n`).FindSubmatch(unit)
	if exec == nil || !bytes.Contains(exec[1], []byte("zarlog serve")) {
		t.Fatal("no ExecStart running zarlog serve in the unit")
	}
	var usage bytes.Buffer
	run(context.Background(), []string{"serve", "-h"}, io.Discard, &usage)
	for _, f := range regexp.MustCompile(`--([a-z-]+)`).FindAllSubmatch(exec[1], -1) {
		if !strings.Contains(usage.String(), "  -"+string(f[1])+" ") {
			t.Errorf("the unit passes --%s, which zarlog serve does not take", f[1])
		}
	}
}
