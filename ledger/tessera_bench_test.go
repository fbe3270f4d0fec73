package ledger_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/zarlog/zarlog/internal/bench"
	"github.com/zarlog/zarlog/internal/workload"
)

// benchEvents is the number of events of BenchmarkVersusTessera:
// ZARLOG_BENCH_EVENTS, or 200,000.
func benchEvents(b *testing.B) int {
	if s := os.Getenv("ZARLOG_BENCH_EVENTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1000 {
			b.Fatalf("ZARLOG_BENCH_EVENTS=%q: want a number ≥ 1000", s)
		}
		return n
	}
	return 200_000
}

var (
	versusOnce sync.Once
	versusW    *bench.Workload
	versusErr  error
)

func versusWorkload(b *testing.B) *bench.Workload {
	versusOnce.Do(func() {
		mix := workload.Mix{}
		if name := os.Getenv("ZARLOG_BENCH_MIX"); name != "" {
			mix, versusErr = workload.ParseMix(name)
			if versusErr != nil {
				return
			}
		}
		// The checks of `zarlog serve` unless ZARLOG_BENCH_CHECKS says
		// "structural" (bench.WorkloadConfig).
		cfg, err := bench.WorkloadConfig(os.Getenv("ZARLOG_BENCH_CHECKS"))
		if err != nil {
			versusErr = err
			return
		}
		cfg.Seed, cfg.Mix = 1, mix
		versusW, versusErr = bench.NewWorkload(cfg, benchEvents(b))
	})
	if versusErr != nil {
		b.Fatal(versusErr)
	}
	return versusW
}

// BenchmarkVersusTessera appends the same realistic events (200,000 by
// default, ZARLOG_BENCH_EVENTS; the mix of package internal/workload,
// ZARLOG_BENCH_MIX) to Tessera v1.0.4 on its POSIX driver and to zarlog's
// ledger (with the checks of `zarlog serve`, or ZARLOG_BENCH_CHECKS), each
// in a new directory, in the same run, until a published
// signed checkpoint covers every event. Run it with -benchtime=Nx: each
// iteration measures all four, in rotating order. Metrics (means over the
// iterations):
//
//   - tessera-events/s: Tessera's appender with its default batching (256
//     entries or 250 ms), in-memory antispam, a checkpoint every 100 ms (the
//     POSIX driver's minimum; the default is 10 s), entries added by 2
//     goroutines;
//   - tessera4096-events/s: the same with batches of 4096 entries or 100 ms;
//   - zarlog-events/s: the ledger's full append path (Append: parse, verify,
//     dedup, game state machine, projections, tree, fsync per group), one
//     caller appending 1000 events per call as the ingest does, checkpoints
//     every 100 ms (the default);
//   - raw-events/s: the same leaves through the ledger's tree builder and
//     Pebble only (no checks, no projections), 1000 per commit;
//   - zarlog/tessera and zarlog/tessera4096: ratios from the same iterations.
func BenchmarkVersusTessera(b *testing.B) {
	w := versusWorkload(b)
	leaves := w.Leaves()
	ctx := context.Background()
	var sums [4]float64
	runs := []func() (bench.Result, error){
		func() (bench.Result, error) {
			return bench.Tessera(ctx, bench.TesseraConfig{Dir: b.TempDir()}, leaves)
		},
		func() (bench.Result, error) {
			return bench.Tessera(ctx, bench.TesseraConfig{Dir: b.TempDir(), BatchSize: 4096, BatchMaxAge: 100 * time.Millisecond}, leaves)
		},
		func() (bench.Result, error) {
			return bench.Ledger(ctx, bench.LedgerConfig{Dir: b.TempDir()}, w)
		},
		func() (bench.Result, error) { return rawLedger(ctx, b.TempDir(), w, 1000) },
	}
	n := 0
	for b.Loop() {
		for k := range runs {
			i := (k + n) % len(runs)
			r, err := runs[i]()
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("%v", r)
			sums[i] += r.EventsPerSec()
		}
		n++
	}
	b.ReportMetric(sums[0]/float64(n), "tessera-events/s")
	b.ReportMetric(sums[1]/float64(n), "tessera4096-events/s")
	b.ReportMetric(sums[2]/float64(n), "zarlog-events/s")
	b.ReportMetric(sums[3]/float64(n), "raw-events/s")
	b.ReportMetric(sums[2]/sums[0], "zarlog/tessera")
	b.ReportMetric(sums[2]/sums[1], "zarlog/tessera4096")
	b.ReportMetric(w.SignedShare*100, "%signed")
	b.ReportMetric(w.MeanBytes, "B/event")
}

// rawLedger appends w's leaves to a new ledger through the tree builder and
// Pebble only, batch leaves per commit, and waits for a signed checkpoint
// covering them.
func rawLedger(ctx context.Context, dir string, w *bench.Workload, batch int) (bench.Result, error) {
	l, err := bench.OpenLedger(ctx, dir, w, 0, nil)
	if err != nil {
		return bench.Result{}, err
	}
	defer l.Close()
	leaves := w.Leaves()
	start := time.Now()
	for i := 0; i < len(leaves); i += batch {
		if err := l.AppendRaw(leaves[i:min(i+batch, len(leaves))]); err != nil {
			return bench.Result{}, err
		}
	}
	if _, err := l.WaitCovering(ctx, uint64(len(leaves)-1)); err != nil {
		return bench.Result{}, fmt.Errorf("waiting for a checkpoint: %w", err)
	}
	return bench.Result{Name: "zarlog-raw", Events: len(leaves), Elapsed: time.Since(start)}, nil
}
