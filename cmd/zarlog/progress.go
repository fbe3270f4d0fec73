// The progress of a watcher's catch-up (follow.Progress), as mirror, audit
// and bench show it: a bar redrawn in place when the output is a terminal,
// a log line every few seconds otherwise.

package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/zarlog/zarlog/follow"
)

// isTerminal reports whether f is a terminal (a character device).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// A progressPrinter shows catch-up progress. Create it with New; Report is safe for
// concurrent use.
type progressPrinter struct {
	mu    sync.Mutex
	w     io.Writer    // the terminal, or nil: log lines
	log   *slog.Logger // used when w is nil
	every time.Duration
	now   func() time.Time
	last  time.Time
	drawn bool // a bar is on the current line
}

// New returns a progressPrinter that draws a bar on tty when it is not nil, and
// otherwise logs a line to log at most every interval (and at the end of
// each catch-up). now is the clock; nil means time.Now.
func newProgressPrinter(tty io.Writer, log *slog.Logger, interval time.Duration, now func() time.Time) *progressPrinter {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &progressPrinter{w: tty, log: log, every: interval, now: now}
}

// Report shows p.
func (pr *progressPrinter) Report(p follow.Progress) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	t := pr.now()
	if !p.Done && t.Sub(pr.last) < pr.every {
		return
	}
	pr.last = t
	if pr.w == nil {
		pr.log.Info("catching up", "stored", p.Stored, "target", p.Target, "percent", fmt.Sprintf("%.1f", progressPercent(p)),
			"entries_per_second", int64(progressRate(p)), "bundles", p.Bundles, "done", p.Done)
		return
	}
	fmt.Fprint(pr.w, "\r"+progressBar(p, 30))
	pr.drawn = true
	if p.Done {
		fmt.Fprintln(pr.w)
		pr.drawn = false
	}
}

func progressPercent(p follow.Progress) float64 {
	if p.Target <= p.Start {
		return 100
	}
	return 100 * float64(p.Stored-p.Start) / float64(p.Target-p.Start)
}

func progressRate(p follow.Progress) float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Stored-p.Start) / p.Elapsed.Seconds()
}

// Bar returns the one-line bar of p, width characters wide between the
// brackets: "[#####.....]  45.2%  120384/266000 leaves  12345/s  ETA 12s".
func progressBar(p follow.Progress, width int) string {
	pc := progressPercent(p)
	fill := min(width, int(pc/100*float64(width)))
	eta := "-"
	if r := progressRate(p); r > 0 && p.Target > p.Stored {
		eta = time.Duration(float64(p.Target-p.Stored) / r * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("[%s%s] %5.1f%%  %d/%d leaves  %d/s  ETA %s ", strings.Repeat("#", fill), strings.Repeat(".", width-fill), pc, p.Stored, p.Target, int64(progressRate(p)), eta)
}
