package follow

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
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
