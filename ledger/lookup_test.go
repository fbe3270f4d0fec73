package ledger

import (
	"context"
	"errors"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/workload"
	"github.com/zarlog/zarlog/merkle"
)

// lookupDecoded is Lookup as it was before the status lookups got cheap:
// a canonical id's game state decoded whole (loadGame), then its event's
// leaf read and parsed (byGame). The tests hold lookup to it, and
// BenchmarkLookup measures both in one run.
func lookupDecoded(r pebble.Reader, emitter, eventID string) (uint64, merkle.Hash, error) {
	d, err := get(r, appendDedupKey(nil, emitter, eventID))
	if err == nil {
		rec, err := parseDedup(d)
		return rec.Index, rec.LeafHash, err
	}
	game, seq, canon := events.ParseCanonicalID(eventID)
	if !errors.Is(err, pebble.ErrNotFound) || !canon {
		return 0, merkle.Hash{}, errNotFound(err, eventID)
	}
	g, err := loadGame(r, game)
	if err != nil {
		return 0, merkle.Hash{}, err
	}
	rec, ok, err := byGame(r, emitter, eventID, g, seq, nil)
	if err != nil {
		return 0, merkle.Hash{}, err
	}
	if !ok {
		return 0, merkle.Hash{}, errNotFound(pebble.ErrNotFound, eventID)
	}
	return rec.Index, rec.LeafHash, nil
}

// lookupLedger opens a ledger in a temporary directory and appends n events
// of the benchmarks' workload (games of several emitters interleaved, so
// each game's history is in many chunks) in Appends of batch events.
func lookupLedger(t testing.TB, n, batch int) (*Ledger, []Input) {
	k := benchKeys(t)
	g := newBenchGen(t, 11)
	l, err := Open(context.Background(), Config{Dir: t.TempDir(), Signer: k.signer, Verifier: k.verifier, Emitters: g.Keyring(), Beacons: workload.Beacons, Metrics: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	in := workloadInputs(t, g, n)
	for i := 0; i < len(in); i += batch {
		out, err := l.Append(context.Background(), in[i:min(i+batch, len(in))])
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out {
			if o.Result != Appended {
				t.Fatalf("workload event %s: %v %v", o.ID, o.Result, o.Reject)
			}
		}
	}
	return l, in
}

// TestLookupAgrees: lookup, which reads a game's head, the leaves of its
// history chunks and one leaf's id, answers as the decode of the game's
// state does, for every logged event, for its id asked by another emitter,
// and for the next seqs of its game (not logged).
func TestLookupAgrees(t *testing.T) {
	l, in := lookupLedger(t, 3000, 37)
	v, err := l.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer v.release()
	emitters := map[string]bool{}
	for _, i := range in {
		emitters[i.Emitter] = true
	}
	if len(emitters) < 2 {
		t.Fatalf("the workload has %d emitters", len(emitters))
	}
	check := func(emitter, id string, want uint64, logged bool) {
		t.Helper()
		var hash merkle.Hash
		index, err := lookup(v.snap, emitter, id, &hash)
		windex, whash, werr := lookupDecoded(v.snap, emitter, id)
		switch {
		case logged && (err != nil || index != want || werr != nil || windex != want || hash != whash):
			t.Fatalf("%s's %q: lookup %d %x %v, the decoded state %d %x %v; want leaf %d", emitter, id, index, hash[:4], err, windex, whash[:4], werr, want)
		case !logged && (!errors.Is(err, ErrNotFound) || !errors.Is(werr, ErrNotFound)):
			t.Fatalf("%s's %q: lookup %d %v, the decoded state %d %v; want ErrNotFound", emitter, id, index, err, windex, werr)
		}
	}
	last := map[string]uint64{} // game → its last seq
	for i, x := range in {
		ev, err := events.Parse(x.Data)
		if err != nil {
			t.Fatal(err)
		}
		check(x.Emitter, ev.ID, uint64(i), true)
		for e := range emitters {
			if e != x.Emitter {
				check(e, ev.ID, 0, false)
			}
		}
		last[ev.Game] = max(last[ev.Game], ev.Seq)
	}
	for game, seq := range last {
		for _, s := range []uint64{seq + 1, seq + 2, seq + 1000} {
			for e := range emitters {
				check(e, events.CanonicalID(game, s), 0, false)
			}
		}
	}
	check(in[0].Emitter, events.CanonicalID(testUUID("none").String(), 0), 0, false)
}

// BenchmarkLookup measures a status request's lookup of one event by
// (emitter, id), as the ingest's status and receipt requests make it
// (Locate): "index" is Lookup's path (the game's head, its chunks' leaves
// and the event's leaf id, no decode of the game), "decoded" the path
// before it (lookupDecoded: the game's state decoded, the leaf parsed), in
// the same run, over the same 20,000 workload events in random order.
func BenchmarkLookup(b *testing.B) {
	l, in := lookupLedger(b, 20_000, 1000)
	type q struct {
		emitter, id string
		index       uint64
	}
	qs := make([]q, len(in))
	for i, x := range in {
		ev, err := events.Parse(x.Data)
		if err != nil {
			b.Fatal(err)
		}
		qs[i] = q{x.Emitter, ev.ID, uint64(i)}
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	v, err := l.acquire()
	if err != nil {
		b.Fatal(err)
	}
	defer v.release()
	for _, m := range []struct {
		name string
		find func(emitter, id string) (uint64, error)
	}{
		{"index", func(emitter, id string) (uint64, error) { return lookup(v.snap, emitter, id, nil) }},
		{"decoded", func(emitter, id string) (uint64, error) {
			index, _, err := lookupDecoded(v.snap, emitter, id)
			return index, err
		}},
	} {
		b.Run(m.name, func(b *testing.B) {
			n := 0
			cpu0 := processCPU(b)
			for b.Loop() {
				x := qs[n%len(qs)]
				if index, err := m.find(x.emitter, x.id); err != nil || index != x.index {
					b.Fatalf("%s's %q: %d %v, want %d", x.emitter, x.id, index, err, x.index)
				}
				n++
			}
			// The process's CPU time per lookup: on a loaded machine
			// the wall time per op counts the waits for a core too.
			b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(n), "cpu-ns/op")
		})
	}
}

// processCPU returns the CPU time (user and system) the process has used.
func processCPU(b testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
