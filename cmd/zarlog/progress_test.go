package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/zarlog/zarlog/follow"
)

func TestProgressBar(t *testing.T) {
	for _, tc := range []struct {
		p    follow.Progress
		want string
	}{
		{follow.Progress{Start: 0, Stored: 0, Target: 1000}, "[..........]   0.0%  0/1000 leaves  0/s  ETA - "},
		{follow.Progress{Start: 0, Stored: 500, Target: 1000, Elapsed: time.Second}, "[#####.....]  50.0%  500/1000 leaves  500/s  ETA 1s "},
		{follow.Progress{Start: 200, Stored: 300, Target: 1200, Elapsed: 2 * time.Second}, "[#.........]  10.0%  300/1200 leaves  50/s  ETA 18s "},
		{follow.Progress{Start: 0, Stored: 1000, Target: 1000, Elapsed: time.Second, Done: true}, "[##########] 100.0%  1000/1000 leaves  1000/s  ETA - "},
		{follow.Progress{Start: 5, Stored: 5, Target: 5}, "[##########] 100.0%  5/5 leaves  0/s  ETA - "},
	} {
		if got := progressBar(tc.p, 10); got != tc.want {
			t.Errorf("progressBar(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

// TestProgressPrinter: on a terminal the bar is redrawn in place at most every
// interval and ends with a newline; otherwise log lines, as rarely.
func TestProgressPrinter(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	var tty strings.Builder
	p := newProgressPrinter(&tty, nil, time.Second, clock)
	var logs strings.Builder
	l := newProgressPrinter(nil, slog.New(slog.NewTextHandler(&logs, nil)), time.Second, clock)
	steps := []follow.Progress{
		{Stored: 100, Target: 400},
		{Stored: 200, Target: 400}, // within the interval: not shown
		{Stored: 300, Target: 400},
		{Stored: 400, Target: 400, Done: true}, // the end is always shown
	}
	for i, s := range steps {
		if i == 2 {
			now = now.Add(2 * time.Second)
		}
		p.Report(s)
		l.Report(s)
	}
	out := tty.String()
	if n := strings.Count(out, "\r"); n != 3 || !strings.HasSuffix(out, "\n") || strings.Contains(out, "200/400") {
		t.Fatalf("terminal output %q", out)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[2], "done=true") || !strings.Contains(lines[1], "stored=300") {
		t.Fatalf("log lines:\n%s", logs.String())
	}
}
