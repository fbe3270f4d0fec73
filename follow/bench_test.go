package follow

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/internal/testlog"
)

// BenchmarkCatchUp measures how fast a follower catches up with a local
// origin (publisher.NewAPI over an in-memory log on loopback HTTP): 65,536
// entries of 300 bytes (the size of a typical event), fetched, rebuilt,
// stored in Pebble on disk (fsync per batch of 16 bundles) and projected.
// It reports entries/s.
func BenchmarkCatchUp(b *testing.B) {
	const n = 1 << 16
	m := newMemLog(b)
	leaves := make([][]byte, n)
	for i := range leaves {
		leaves[i] = fmt.Appendf(nil, "%0300d", i)
	}
	m.add(leaves...)
	m.sign()
	srv := serve(b, m)
	for _, conc := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			var total time.Duration
			runs := 0
			for b.Loop() {
				f := newFollower(b, srv.URL, m.vkey, vfs.Default, func(c *Config) { c.Concurrency, c.Chunk = conc, 16 })
				start := time.Now()
				res, err := f.Update(context.Background())
				total += time.Since(start)
				runs++
				if err != nil || !res.Accepted {
					b.Fatalf("%+v %v", res, err)
				}
				f.store.Close()
			}
			b.ReportMetric(float64(n*runs)/total.Seconds(), "entries/s")
		})
	}
}

// BenchmarkCatchUpEvents is BenchmarkCatchUp from a real ledger holding
// real games (about 20,000 events of the three schemes, moves logged):
// the projection parses and replays every event (events.Apply), which
// costs more than fetching and hashing.
func BenchmarkCatchUpEvents(b *testing.B) {
	o := testlog.StartOrigin(b, testlog.OriginConfig{Dir: b.TempDir()})
	o.WaitBundles(b, o.Play(b, "bench", 200, 40)...) // the origin's bundler is idle while timed
	size, err := o.L.Size()
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	runs := 0
	for b.Loop() {
		f := newFollower(b, o.URL, o.VKey, vfs.Default)
		start := time.Now()
		res, err := f.Update(context.Background())
		total += time.Since(start)
		runs++
		if err != nil || !res.Accepted {
			b.Fatalf("%+v %v", res, err)
		}
		if st := f.store.Stats(); st.Events != size {
			b.Fatalf("%d events projected of %d", st.Events, size)
		}
		f.store.Close()
	}
	b.ReportMetric(float64(size), "events")
	b.ReportMetric(float64(size*uint64(runs))/total.Seconds(), "entries/s")
}
