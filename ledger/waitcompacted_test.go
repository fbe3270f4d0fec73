package ledger

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/zarlog/zarlog/internal/workload"
)

// TestWaitCompacted: after appends that leave L0 with more tables than
// Pebble lets it hold, WaitCompacted waits until the compactions are done
// (and waits for ever, until its context ends, if they cannot run).
func TestWaitCompacted(t *testing.T) {
	for _, auto := range []bool{false, true} {
		t.Run(map[bool]string{false: "no-compactions", true: "compactions"}[auto], func(t *testing.T) {
			g := newBenchGen(t, 11)
			k := newTestKeys(t)
			o := pebbleOptions(&Config{}, slog.New(slog.DiscardHandler))
			o.FS = nil
			o.L0CompactionThreshold = 2
			o.DisableAutomaticCompactions = !auto
			l, err := Open(context.Background(), Config{Dir: "db", FS: vfs.NewMem(), Signer: k.signer, Verifier: k.verifier, Pebble: o,
				Emitters: g.Keyring(), Beacons: workload.Beacons, Metrics: prometheus.NewRegistry(), CheckpointInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			for range 6 {
				for _, out := range mustAppend(t, l, workloadInputs(t, g, 500)) {
					if out.Result != Appended {
						t.Fatalf("%+v: %v", out, out.Reject)
					}
				}
				if err := l.db.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if !auto {
				if compacted(l.db.Metrics()) {
					t.Fatalf("L0 holds %d tables, and compacted reports nothing due:\n%s", l.db.Metrics().Levels[0].TablesCount, l.db.Metrics())
				}
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				defer cancel()
				if err := l.WaitCompacted(ctx); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("WaitCompacted with compactions off: %v, want the context's deadline (it waits waitStill for Pebble to start one)", err)
				}
				// A level left due that Pebble does not compact (here none
				// can run) ends the wait once nothing has moved for
				// waitStill: it does not wait for ever.
				ctx, cancel = context.WithTimeout(context.Background(), 30*waitStill)
				defer cancel()
				if err := l.WaitCompacted(ctx); err != nil {
					t.Fatalf("WaitCompacted with a level due that Pebble leaves alone: %v, want it to end", err)
				}
				if compacted(l.db.Metrics()) {
					t.Fatalf("compactions ran with automatic compactions off:\n%s", l.db.Metrics())
				}
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := l.WaitCompacted(ctx); err != nil {
				t.Fatal(err)
			}
			m := l.db.Metrics()
			if !compacted(m) || m.Levels[0].TablesCount >= 2 {
				t.Fatalf("WaitCompacted returned with compactions due:\n%s", m)
			}
			if m.Compact.Count == 0 {
				t.Fatalf("no compaction ran:\n%s", m)
			}
		})
	}
}
