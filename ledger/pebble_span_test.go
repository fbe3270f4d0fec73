package ledger

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/zarlog/zarlog/internal/workload"
)

// TestTablesOnePrefix: with the default options, no sstable a flush or a
// compaction writes holds keys of two prefixes (prefixSpans), so that the
// entry bundles and tiles are not rewritten with the dedup index.
func TestTablesOnePrefix(t *testing.T) {
	g := newBenchGen(t, 7)
	k := newTestKeys(t)
	ctx := context.Background()
	l, err := Open(ctx, Config{Dir: "db", FS: vfs.NewMem(), Signer: k.signer, Verifier: k.verifier,
		Emitters: g.Keyring(), Beacons: workload.Beacons, Metrics: prometheus.NewRegistry(), CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for range 3 {
		in := workloadInputs(t, g, 3000)
		for i := 0; i < len(in); i += 500 {
			for _, o := range mustAppend(t, l, in[i:i+500]) {
				if o.Result != Appended {
					t.Fatalf("%+v: %v", o, o.Reject)
				}
			}
		}
		if err := l.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		levels, err := l.db.SSTables()
		if err != nil {
			t.Fatal(err)
		}
		n, prefixes := 0, map[byte]bool{}
		for level, tables := range levels {
			for _, tb := range tables {
				n++
				lo, hi := tb.Smallest.UserKey, tb.Largest.UserKey
				prefixes[lo[0]] = true
				if lo[0] != hi[0] {
					t.Errorf("%s: L%d table %s holds keys from %q to %q", when, level, tb.FileNum, lo[:1], hi[:1])
				}
			}
		}
		// Several prefixes were written, so one table per prefix at
		// least: the check above is not vacuous.
		if len(prefixes) < 5 || n < len(prefixes) {
			t.Fatalf("%s: %d tables over %d prefixes", when, n, len(prefixes))
		}
	}
	check("after the flushes")
	if err := l.db.Compact(ctx, []byte{0}, []byte{0xff}, false); err != nil {
		t.Fatal(err)
	}
	check("after a full compaction")
	if _, end, _ := prefixSpans([]byte{0xff}); end != nil {
		t.Errorf("the span of prefix 0xff ends at %q, want the end of the key space", end)
	}
	if _, end, _ := prefixSpans(nil); string(end) != "\x00" {
		t.Errorf("the span of the empty key ends at %q, want 0x00", end)
	}
}
