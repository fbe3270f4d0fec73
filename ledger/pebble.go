package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/internal/pebblefs"
	"github.com/zarlog/zarlog/merkle"
)

// The default Pebble options' memory (docs/OPERATIONS.md §9, "Memory").
const (
	// DefaultPebbleCacheBytes is the capacity of Pebble's block cache.
	DefaultPebbleCacheBytes = 256 << 20
	// DefaultMemTableBytes is the size of one Pebble memtable. Pebble
	// holds at most PebbleMemtables of them (and large batches in their
	// place) at once.
	DefaultMemTableBytes = 16 << 20
	// PebbleMemtables bounds the memtables Pebble holds at once with the
	// default options: the one written, two queued for their flush before
	// writes stop (MemTableStopWritesThreshold), and a group's batch larger
	// than half a memtable, which Pebble queues as a memtable of its own.
	PebbleMemtables = 4
)

// pebbleOptions returns the Pebble options of cfg: a copy of cfg.Pebble (or
// zarlog's defaults) with the file system and the logger set.
func pebbleOptions(cfg *Config, log *slog.Logger) *pebble.Options {
	var o *pebble.Options
	if cfg.Pebble != nil {
		o = cfg.Pebble.Clone()
	} else {
		o = &pebble.Options{
			// Most writes are small; the memtable absorbs the rewrites
			// of partial tiles and game states before they reach an
			// sstable. Its write-ahead log grows to about its size
			// before a flush recycles it, so it is also the fixed disk
			// cost of a small log: 16 MiB appends as fast as 64 MiB did
			// (BenchmarkAppend/full/batch=1000, 300k events: 112–117k
			// against 114k events/s in the same run) and keeps a log of
			// 1,000 events under 32 MB (TestDiskUse).
			MemTableSize: DefaultMemTableBytes,
			CacheSize:    DefaultPebbleCacheBytes,
			// L0 is compacted into Lbase at 8 tables (sublevels), not
			// Pebble's 4. At a human pace every group rewrites the
			// live parts of hundreds of games spread over the key
			// space of the games in play (since store format 9 the
			// games begun recently, by number; formats 7 and 8 keyed
			// them by id, over every game ever played; format 6
			// rewrote their whole heads, under 'g') and adds as many
			// 'h' keys, so every flushed table overlaps Lbase's games
			// in play and each L0 compaction rewrites them: half as
			// many compactions halve those bytes. BenchmarkHumanWrites
			// (50,000 games, rules on, 200k events after the preload
			// settled, store format 6):
			// compaction bytes written per event 631 -> 340, read
			// 802 -> 468; WAL and flushes unchanged. The threshold was
			// not measured again with format 9. Writes stop at
			// twice that, so that a burst keeps Pebble's headroom.
			L0CompactionThreshold: 8,
			L0StopWritesThreshold: 16,
		}
		o.Experimental.SpanPolicyFunc = prefixSpans
		for i := range o.Levels {
			// The dedup and game lookups are point reads of keys
			// that are usually absent (a new event id) or recent.
			o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		}
	}
	if cfg.FS != nil {
		o.FS = cfg.FS
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	o.FS = pebblefs.NoPrealloc(o.FS)
	o.Logger = pebbleLogger{log}
	return o
}

// prefixSpans is the default SpanPolicyFunc: one span per key prefix (the
// first byte, ledger/README.md "Keys"), so that no sstable a flush or a
// compaction writes holds keys of two prefixes. The ledger's writes mix
// keys in random order (the dedup index, the games) with keys that only
// grow (entry bundles, tiles, times): in a table spanning both, every
// compaction into the next level rewrote the grown keys' tables with the
// random ones. Split by prefix, new bundles and tiles overlap only the last
// table of their span (or none: the table moves down unrewritten).
// Over 1.5M events (BenchmarkWriteAmp, two runs of each) it cut the bytes
// compactions wrote and read per event by 31 % (976–1033 -> 667–712).
func prefixSpans(start []byte) (pebble.SpanPolicy, []byte, error) {
	if len(start) == 0 {
		return pebble.SpanPolicy{}, []byte{0}, nil
	}
	if start[0] == 0xff {
		return pebble.SpanPolicy{}, nil, nil
	}
	return pebble.SpanPolicy{}, []byte{start[0] + 1}, nil
}

// A pebbleLogger sends Pebble's logs to slog. Pebble calls Fatalf when it
// cannot go on: for a commit whose WAL write or sync failed, in the
// committing goroutine, and for MANIFEST failures in its background
// goroutines. Fatalf must not return. In the committing goroutine it panics
// with a *fatalError, which commitSync recovers, so the ledger stops and the
// service shuts down in order. Anywhere else (a background flush that found
// the disk full) nothing can recover the panic, so Fatalf logs the failure,
// writes one line to standard error and exits the process with status 1
// (fatalExit) instead of dumping every goroutine's stack; a restart recovers
// once the cause is gone.
type pebbleLogger struct{ log *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.log.Debug("pebble: " + fmt.Sprintf(format, args...))
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.log.Error("pebble: " + fmt.Sprintf(format, args...))
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	f := &fatalError{msg: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if err, ok := a.(error); ok && f.cause == nil {
			f.cause = err
		}
	}
	p.log.Error("pebble: fatal: " + f.msg)
	if inCommit() {
		panic(f)
	}
	fatalExit("the ledger's store failed: " + f.msg)
}

// inCommit reports whether the calling goroutine is inside commitSync,
// which recovers a Fatalf's panic.
func inCommit() bool {
	buf := make([]byte, 64<<10)
	return bytes.Contains(buf[:runtime.Stack(buf, false)], []byte("/ledger.commitSync("))
}

// fatalExit ends the process after a failure nothing can recover from:
// one line on standard error, exit status 1. Tests replace it.
var fatalExit = func(msg string) {
	fmt.Fprintln(os.Stderr, "zarlog: fatal:", msg)
	os.Exit(1)
}

// backgroundError is Pebble's report of a failed flush or compaction (a
// full disk, no descriptor left). Pebble retries such work at once and for
// ever. A short streak (descriptors freed, space made) heals by itself:
// Degraded reports it meanwhile, and the errors are logged at most once
// every bgLogEvery with their count, never thousands of lines a second. A
// streak longer than bgStopAfter stops the ledger (Err, Done), so that the
// service exits non-zero for its supervisor instead of spinning. While
// Pebble is still opening (replaying its write-ahead log into a flush that
// cannot be written), pebble.Open would wait for ever and cannot be
// interrupted, so the process exits with one line instead (fatalExit).
func (l *Ledger) backgroundError(err error) {
	if !l.pebbleOpen.Load() {
		fatalExit("the ledger's store cannot write while opening " + l.cfg.Dir + ": " + rootCause(err).Error())
	}
	l.bgMu.Lock()
	defer l.bgMu.Unlock()
	now := l.now()
	if now.Sub(l.bgLast) > bgStreakGap {
		l.bgStreak = now
	}
	l.bgLast, l.bgErr = now, rootCause(err)
	l.bgErrors++
	if now.Sub(l.bgLogged) >= bgLogEvery {
		l.log.Error("pebble: background error (a flush or compaction failed; retrying)", "err", l.bgErr, "errors", l.bgErrors)
		l.bgLogged = now
	}
	if now.Sub(l.bgStreak) >= bgStopAfter {
		l.stop(fmt.Errorf("pebble background writes have failed for %v: %w", now.Sub(l.bgStreak).Round(time.Second), l.bgErr))
	}
}

// Timings of backgroundError.
const (
	bgStreakGap = 5 * time.Second  // errors closer than this are one streak
	bgLogEvery  = 10 * time.Second // at most one log line per this
	bgStopAfter = 30 * time.Second // a streak this long stops the ledger
)

// Degraded returns an error while Pebble's background writes are failing
// (within the last few seconds), and nil otherwise; Err reports a stopped
// ledger.
func (l *Ledger) Degraded() error {
	l.bgMu.Lock()
	defer l.bgMu.Unlock()
	if !l.bgLast.IsZero() && l.now().Sub(l.bgLast) <= bgStreakGap {
		return fmt.Errorf("ledger: the store's background writes are failing (%d errors since %s): %w",
			l.bgErrors, l.bgStreak.UTC().Format(time.RFC3339), l.bgErr)
	}
	return nil
}

// rootCause is the file operation that failed in err's chain, or else its
// innermost error (Pebble's errors carry stack traces in their text).
func rootCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// A fatalError is a Pebble failure reported through Fatalf. It wraps the
// first error among Fatalf's arguments (the failed commit's).
type fatalError struct {
	msg   string
	cause error
}

func (e *fatalError) Error() string { return e.msg }
func (e *fatalError) Unwrap() error { return e.cause }

// commit commits b with an fsync. Commits are serialized, and none is
// attempted once one has failed: Pebble's commit pipeline is broken after a
// failed WAL write or sync, and touching the WAL again (a rotation) makes
// Pebble panic. A failed commit stops the ledger and returns an error
// wrapping ErrStopped. The failed batch may or may not have reached the WAL,
// and it is visible to new reads of the database (not to the ledger's views).
func (l *Ledger) commit(b *pebble.Batch, what string) error {
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	if err := l.Err(); err != nil {
		return err
	}
	if err := commitSync(b); err != nil {
		l.stop(fmt.Errorf("%s: %w", what, err))
		return l.Err()
	}
	return nil
}

// commitSync commits b with an fsync and returns Pebble's fatal commit
// error (see pebbleLogger) as an error.
func commitSync(b *pebble.Batch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(*fatalError)
			if !ok {
				panic(r)
			}
			err = f
		}
	}()
	return b.Commit(pebble.Sync)
}

// get reads a key into a new slice.
func get(r pebble.Reader, key []byte) ([]byte, error) {
	v, c, err := r.Get(key)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), v...)
	return out, c.Close()
}

// A tileReader reads tiles from a Pebble snapshot or database: one key per
// (level, index), returned as stored (at least as wide as asked for, by the
// writer's protocol; package merkle trims it).
type tileReader struct{ r pebble.Reader }

func (t tileReader) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, tile := range tiles {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, err := getTile(t.r, tile)
		if errors.Is(err, pebble.ErrNotFound) {
			return nil, fmt.Errorf("%s: %w", tile.Path(), ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tile.Path(), err)
		}
		out[i] = d
	}
	return out, nil
}

// WaitCompacted flushes the store's memtable and waits until Pebble's
// compactions have caught up: none running, and no level that Pebble would
// compact (every level's compaction score below 1), twice in a row 50 ms
// apart; or none running and none started or finished for waitStill, while
// a level's score stays at 1 or above. Pebble can leave such a level
// alone: its picker skips a level whose score is due when it finds no
// table to start from or no compaction it can build there
// (compactionPickerByScore.pickAutoScore), and it picks again only after a
// flush or a compaction ends, so without new writes nothing would change and
// the wait would never end (a 50,000-game preload of zarlog bench --pace
// human waited 11 minutes, and one of 21, before this rule). A benchmark that
// loads a store in bulk calls it before its measured window, so that the
// window pays for its own writes' compactions and not for the load's.
func (l *Ledger) WaitCompacted(ctx context.Context) error {
	if err := l.db.Flush(); err != nil {
		return fmt.Errorf("ledger: flushing the store: %w", err)
	}
	var (
		last  pebbleProgress
		since time.Time
	)
	for quiet := 0; quiet < 2; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-l.stopped:
			return l.Err()
		case <-time.After(50 * time.Millisecond):
		}
		m := l.db.Metrics()
		if compacted(m) {
			quiet++
			continue
		}
		quiet = 0
		p := progressOf(m)
		if p != last || p.running > 0 || since.IsZero() {
			last, since = p, time.Now()
			continue
		}
		if time.Since(since) >= waitStill {
			return nil
		}
	}
	return nil
}

// waitStill is how long WaitCompacted waits for Pebble to start a
// compaction that a level's score says is due, with none running.
const waitStill = 2 * time.Second

// pebbleProgress is what WaitCompacted watches for Pebble's background
// work: how many flushes and compactions have ended, and how many run.
type pebbleProgress struct {
	flushes, compactions, running int64
}

func progressOf(m *pebble.Metrics) pebbleProgress {
	return pebbleProgress{m.Flush.Count, m.Compact.Count, m.Compact.NumInProgress}
}

// compacted reports whether m shows no compaction running and none due.
func compacted(m *pebble.Metrics) bool {
	if m.Compact.NumInProgress > 0 {
		return false
	}
	for _, lm := range m.Levels {
		if lm.Score >= 1 {
			return false
		}
	}
	return true
}
