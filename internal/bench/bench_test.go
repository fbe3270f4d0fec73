package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/zarlog/zarlog/internal/workload"
)

// Benchmarks of this package measure the machine they run on, on the
// events of package internal/workload: ZARLOG_BENCH_EVENTS of them (default
// 200,000), mix ZARLOG_BENCH_MIX (default "mixed"), with the checks
// ZARLOG_BENCH_CHECKS (default "production", as `zarlog serve`; or
// "structural"). Run them with
// -benchtime=1x (or Nx to repeat); each iteration is a whole measurement on
// a new directory. The comparison of zarlog with Tessera in one run is
// BenchmarkVersusTessera in package ledger.

var (
	workloadOnce sync.Once
	workloadVal  *Workload
	workloadErr  error
)

func testWorkload(b testing.TB) *Workload {
	workloadOnce.Do(func() {
		n := 200_000
		if s := os.Getenv("ZARLOG_BENCH_EVENTS"); s != "" {
			if n, workloadErr = strconv.Atoi(s); workloadErr != nil {
				return
			}
		}
		var mix workload.Mix
		if name := os.Getenv("ZARLOG_BENCH_MIX"); name != "" {
			if mix, workloadErr = workload.ParseMix(name); workloadErr != nil {
				return
			}
		}
		cfg, err := WorkloadConfig(os.Getenv("ZARLOG_BENCH_CHECKS"))
		if err != nil {
			workloadErr = err
			return
		}
		cfg.Seed, cfg.Mix = 1, mix
		workloadVal, workloadErr = NewWorkload(cfg, n)
	})
	if workloadErr != nil {
		b.Fatal(workloadErr)
	}
	return workloadVal
}

func report(b *testing.B, results []Result) {
	var sum float64
	var p50, p99, mx float64
	metrics := map[string]float64{}
	for _, r := range results {
		b.Logf("%v", r)
		sum += r.EventsPerSec()
		p50 += r.P50.Seconds() * 1000
		p99 += r.P99.Seconds() * 1000
		mx = max(mx, r.Max.Seconds()*1000)
		for k, v := range r.Metrics {
			metrics[k] += v
		}
	}
	n := float64(len(results))
	b.ReportMetric(sum/n, "events/s")
	if p99 > 0 {
		b.ReportMetric(p50/n, "p50-ms")
		b.ReportMetric(p99/n, "p99-ms")
		b.ReportMetric(mx, "max-ms")
	}
	for k, v := range metrics {
		b.ReportMetric(v/n, k)
	}
}

// BenchmarkTessera measures Tessera on its POSIX driver with several
// batching settings.
func BenchmarkTessera(b *testing.B) {
	w := testWorkload(b)
	leaves := w.Leaves()
	for _, tc := range []TesseraConfig{
		{},
		{BatchSize: 1024, BatchMaxAge: 100 * time.Millisecond},
		{BatchSize: 4096, BatchMaxAge: 100 * time.Millisecond},
		{BatchSize: 4096, BatchMaxAge: 100 * time.Millisecond, Adders: 1},
		{BatchSize: 4096, BatchMaxAge: 100 * time.Millisecond, Adders: 8},
		{BatchSize: 4096, BatchMaxAge: 100 * time.Millisecond, NoAntispam: true},
	} {
		name := fmt.Sprintf("batch=%d/adders=%d/antispam=%v", max(tc.BatchSize, 256), max(tc.Adders, 2), !tc.NoAntispam)
		b.Run(name, func(b *testing.B) {
			var rs []Result
			for b.Loop() {
				tc.Dir = b.TempDir()
				r, err := Tessera(context.Background(), tc, leaves)
				if err != nil {
					b.Fatal(err)
				}
				rs = append(rs, r)
			}
			report(b, rs)
		})
	}
}

// BenchmarkLedger measures the ledger's full append path with one caller
// (the ingest's pattern) and with several, at several batch sizes.
func BenchmarkLedger(b *testing.B) {
	w := testWorkload(b)
	for _, tc := range []LedgerConfig{
		{Batch: 100}, {Batch: 1000}, {Batch: 8192}, {Batch: 1000, Callers: 4}, {Batch: 100, Callers: 16},
	} {
		b.Run(fmt.Sprintf("callers=%d/batch=%d", max(tc.Callers, 1), tc.Batch), func(b *testing.B) {
			var rs []Result
			for b.Loop() {
				tc.Dir = b.TempDir()
				r, err := Ledger(context.Background(), tc, w)
				if err != nil {
					b.Fatal(err)
				}
				rs = append(rs, r)
			}
			report(b, rs)
		})
	}
}

// BenchmarkEndToEnd measures SDK clients → embedded nats-server → ingest →
// ledger → signed checkpoint. Sub-benchmark "versus-tessera" runs, in each
// iteration and in rotating order, the end-to-end path as fast as the
// clients can publish and Tessera on its POSIX driver (default batching,
// and batches of 4096) on the same events, and reports the ratios from the
// same run; "rate=N" offers N events/s and reports the publish→checkpoint
// latencies.
func BenchmarkEndToEnd(b *testing.B) {
	w := testWorkload(b)
	ctx := context.Background()
	b.Run("versus-tessera", func(b *testing.B) {
		leaves := w.Leaves()
		var sums [3]float64
		var e2e []Result
		runs := []func() (Result, error){
			func() (Result, error) { return EndToEnd(ctx, EndToEndConfig{Dir: b.TempDir()}, w) },
			func() (Result, error) { return Tessera(ctx, TesseraConfig{Dir: b.TempDir()}, leaves) },
			func() (Result, error) {
				return Tessera(ctx, TesseraConfig{Dir: b.TempDir(), BatchSize: 4096, BatchMaxAge: 100 * time.Millisecond}, leaves)
			},
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
				if i == 0 {
					e2e = append(e2e, r)
				}
			}
			n++
		}
		report(b, e2e)
		b.ReportMetric(sums[1]/float64(n), "tessera-events/s")
		b.ReportMetric(sums[2]/float64(n), "tessera4096-events/s")
		b.ReportMetric(sums[0]/sums[1], "e2e/tessera")
		b.ReportMetric(sums[0]/sums[2], "e2e/tessera4096")
	})
	for _, rate := range []int{50_000, 100_000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			var rs []Result
			for b.Loop() {
				r, err := EndToEnd(ctx, EndToEndConfig{Dir: b.TempDir(), Rate: rate}, w)
				if err != nil {
					b.Fatal(err)
				}
				rs = append(rs, r)
			}
			report(b, rs)
		})
	}
}

// TestMeasurements runs each measurement on a small workload and checks
// that it accounts for every event (no timing is asserted).
func TestMeasurements(t *testing.T) {
	w, err := NewWorkload(workload.Config{Seed: 3, Concurrent: 16, Rolls: 8}, 3000)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Events) != 3000 || w.SignedShare <= 0 || w.MeanBytes <= 0 {
		t.Fatalf("workload: %d events, %.2f signed, %.0f bytes", len(w.Events), w.SignedShare, w.MeanBytes)
	}
	ctx := context.Background()
	check := func(r Result, err error) Result {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if r.Events != len(w.Events) || r.Elapsed <= 0 || r.EventsPerSec() <= 0 || r.Metrics["cpu-µs/event"] <= 0 {
			t.Fatalf("%v", r)
		}
		t.Logf("%v", r)
		return r
	}
	check(Ledger(ctx, LedgerConfig{Dir: t.TempDir(), Batch: 700}, w))
	check(Ledger(ctx, LedgerConfig{Dir: t.TempDir(), Batch: 100, Callers: 3}, w))
	check(Tessera(ctx, TesseraConfig{Dir: t.TempDir(), BatchMaxAge: 10 * time.Millisecond}, w.Leaves()))
	r := check(EndToEnd(ctx, EndToEndConfig{Dir: t.TempDir(), Rate: 20_000, Receipts: true}, w))
	if r.P50 <= 0 || r.P99 < r.P50 || r.Max < r.P99 {
		t.Fatalf("latencies p50 %v p99 %v max %v", r.P50, r.P99, r.Max)
	}
	if r.Receipts < len(w.Events)/ReceiptSample || r.ReceiptP50 <= 0 || r.ReceiptP99 < r.ReceiptP50 || r.ReceiptBytesP50 <= 0 {
		t.Fatalf("receipts: %d, p50 %v p99 %v, %d bytes", r.Receipts, r.ReceiptP50, r.ReceiptP99, r.ReceiptBytesP50)
	}
	if _, err := Ledger(ctx, LedgerConfig{}, w); err == nil {
		t.Error("Ledger without a directory did not fail")
	}
	if _, err := Tessera(ctx, TesseraConfig{}, w.Leaves()); err == nil {
		t.Error("Tessera without a directory did not fail")
	}
	if _, err := EndToEnd(ctx, EndToEndConfig{}, w); err == nil {
		t.Error("EndToEnd without a directory did not fail")
	}
}
