package publisher

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/zarlog/zarlog/verifier"
)

// A sizeCase is the proof bundle of one 60-roll game in a log of logSize
// leaves in which one leaf in every is the game's (fewer when the log is
// too small: then the game's events are spread over the whole log).
type sizeCase struct {
	scheme string
	bundle []byte
	leaves []IndexedLeaf
	log    *memLog
	cp     []byte
	opt    verifier.Options
}

// gameOf returns the leaves of a finished 60-roll game of the scheme and
// the emitter's verifier key.
func gameOf(t testing.TB, scheme string) ([][]byte, string) {
	signer, vkey := testKey(t, testEmitter)
	switch scheme {
	case "tavlarena-v1":
		return tavlarenaGame(t, signer, "size", 60), vkey
	case "anchored-v1":
		return anchoredGame(t, signer, "size", 60), vkey
	}
	return perRollMatch(t, signer, "size", 60), vkey
}

// buildSizeCases builds one log of logSize leaves per scheme, with the
// game's events one in every leaves at the end of the log (the bundle is
// built when a checkpoint first covers the game's final event), and their
// bundles. The other leaves are short placeholder leaves: the bundle holds
// only their hashes, so their contents do not change its size.
func buildSizeCases(t testing.TB, logSize, every int) []*sizeCase {
	var out []*sizeCase
	for _, scheme := range []string{"tavlarena-v1", "anchored-v1", "per-roll-v1"} {
		game, emitterVkey := gameOf(t, scheme)
		step := every
		if len(game)*step > logSize {
			step = logSize / len(game)
		}
		log := newMemLog(t)
		log.keepData = false
		start := logSize - len(game)*step
		batch := make([][]byte, 0, 4096)
		flush := func() {
			if len(batch) > 0 {
				log.append(t, batch...)
				batch = batch[:0]
			}
		}
		n := 0
		other := func() {
			batch = append(batch, fmt.Appendf(nil, `{"other":%d}`, n))
			n++
			if len(batch) == cap(batch) {
				flush()
			}
		}
		for range start {
			other()
		}
		var leaves []IndexedLeaf
		for _, ev := range game {
			for range step - 1 {
				other()
			}
			flush()
			leaves = append(leaves, IndexedLeaf{Index: log.append(t, ev), Leaf: ev})
		}
		flush()
		if int(log.builder.Size()) != logSize {
			t.Fatalf("log of %d leaves, want %d", log.builder.Size(), logSize)
		}
		cp := log.checkpoint(t)
		b, err := BuildBundle(context.Background(), log, leaves, cp)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &sizeCase{scheme: scheme, bundle: b, leaves: leaves, log: log, cp: cp,
			opt: mustOptions(t, log.vkey, emitterVkey)})
	}
	return out
}

func gzipSize(b []byte) int {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Len()
}

// TestBundleSize measures the proof bundle of a 60-roll game of each scheme
// in a log of 1,000 leaves (and of 1,000,000 with ZARLOG_SLOW=1), one leaf
// in 100 the game's, and checks that it verifies. Run with -v to see the
// numbers (docs/FORMATS.md §3 quotes them).
func TestBundleSize(t *testing.T) {
	sizes := []int{1000}
	if os.Getenv("ZARLOG_SLOW") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		for _, c := range buildSizeCases(t, n, 100) {
			r := verifier.Verify(c.bundle, c.opt)
			if r.Exit() != 0 {
				t.Fatalf("%s in %d leaves: exit %d\n%s", c.scheme, n, r.Exit(), r.Text(verifier.English))
			}
			ev, _ := verifier.Parse(c.bundle)
			leafBytes, refs := 0, 0
			for _, e := range ev.Log.Entries {
				leafBytes += len(e.Leaf)
				refs += len(e.Proof)
			}
			t.Logf("%s, 60 rolls, log of %d leaves: %d events, %d distinct proof hashes (%d unshared); bundle %d bytes (%d gzipped), leaves %d bytes",
				c.scheme, n, len(ev.Log.Entries), len(ev.Log.Hashes), refs, len(c.bundle), gzipSize(c.bundle), leafBytes)
			// A bound, not a measurement: a 60-roll bundle stays well under 1 MiB.
			if len(c.bundle) > 1<<20 {
				t.Errorf("%s in %d leaves: bundle of %d bytes", c.scheme, n, len(c.bundle))
			}
		}
	}
}

// BenchmarkBundle builds and verifies the bundle of a 60-roll game of each
// scheme in logs of 1,000 and 1,000,000 leaves (one leaf in 100 the
// game's), reporting the bundle's size. Building the 1M-leaf logs takes a
// few seconds before the timings start.
//
//	go test ./publisher -run '^$' -bench Bundle -benchtime 20x
func BenchmarkBundle(b *testing.B) {
	for _, n := range []int{1000, 1_000_000} {
		for _, c := range buildSizeCases(b, n, 100) {
			name := fmt.Sprintf("%s/log=%d", c.scheme, n)
			b.Run("build/"+name, func(b *testing.B) {
				ctx := context.Background()
				var out []byte
				for b.Loop() {
					var err error
					if out, err = BuildBundle(ctx, c.log, c.leaves, c.cp); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(out)), "bundle-bytes")
				b.ReportMetric(float64(gzipSize(out)), "gzip-bytes")
			})
			b.Run("verify/"+name, func(b *testing.B) {
				for b.Loop() {
					if r := verifier.Verify(c.bundle, c.opt); r.Exit() != 0 {
						b.Fatalf("exit %d", r.Exit())
					}
				}
			})
		}
	}
}
