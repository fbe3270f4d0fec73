package ledger

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"runtime"
	"slices"
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

// TestLookupAgrees: lookup (and LocateEach, in one batch), which reads a game's head, the leaves of its
// history chunks and one leaf's id, answers as the decode of the game's
// state does, for every logged event, for its id asked by another emitter,
// and for the next seqs of its game (not logged). The recent index has
// every event.
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
		index, err := lookup(v.snap, emitter, id, l.canonicalIndexed(), &hash)
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
		// The recent index holds every event (fewer than RecentLookups),
		// as the sequencer gave it (recentEntry).
		if index, ok := l.recent.get(x.Emitter, ev.ID); !ok || index != uint64(i) {
			t.Fatalf("the recent index has %s's %q at %d, %v; want %d", x.Emitter, ev.ID, index, ok, i)
		}
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

	// LocateEach, per emitter, in one batch over every id of the log and
	// the next seq of each game: what lookup answers.
	var ids []string
	for _, x := range in {
		ids = append(ids, peekID(x.Data))
	}
	for game, seq := range last {
		ids = append(ids, events.CanonicalID(game, seq+1))
	}
	recent := l.recent
	defer func() { l.recent = recent }()
	for round, emitter := range append(slices.Sorted(maps.Keys(emitters)), slices.Sorted(maps.Keys(emitters))...) {
		if round >= len(emitters) {
			l.recent = nil // the second time from Pebble only
		}
		out, errs := l.LocateEach(context.Background(), emitter, ids)
		for i, id := range ids {
			index, err := lookup(v.snap, emitter, id, l.canonicalIndexed(), nil)
			switch {
			case err == nil && (errs[i] != nil || out[i].Result != Appended || out[i].Index != index):
				t.Fatalf("LocateEach(%s, %q) = %+v %v; lookup %d", emitter, id, out[i], errs[i], index)
			case err != nil && !errors.Is(errs[i], ErrNotFound):
				t.Fatalf("LocateEach(%s, %q) = %+v %v; lookup: %v", emitter, id, out[i], errs[i], err)
			}
		}
	}
}

// BenchmarkLookup measures the lookups of the ingest's status requests
// (docs/NATS.md §5, "Resending"): an SDK asks about its emitter's events
// oldest first, 256 per request. Over the same 20,000 workload events, in
// those batches, in the same run: "decoded", each event looked up by
// decoding its game's state and parsing its leaf (lookupDecoded, the path
// before); "index", each looked up alone (Lookup: the game's head, its
// chunks' leaves and the event's leaf id); "each-pebble", a batch at a time
// from Pebble (LocateEach without its recent events: a game's leaves and
// an entry bundle read once per batch); "each", LocateEach as the ingest
// calls it, every event among the latest RecentLookups appended (found in
// memory). ns/event and cpu-ns/event are per event looked up.
func BenchmarkLookup(b *testing.B) {
	l, in := lookupLedger(b, 20_000, 1000)
	type q struct {
		emitter string
		ids     []string
		index   []uint64
	}
	var batches []q
	open := map[string]int{} // emitter → its batch being filled
	for i, x := range in {
		ev, err := events.Parse(x.Data)
		if err != nil {
			b.Fatal(err)
		}
		k, ok := open[x.Emitter]
		if !ok || len(batches[k].ids) == 256 {
			batches = append(batches, q{emitter: x.Emitter})
			k = len(batches) - 1
			open[x.Emitter] = k
		}
		batches[k].ids = append(batches[k].ids, ev.ID)
		batches[k].index = append(batches[k].index, uint64(i))
	}
	v, err := l.acquire()
	if err != nil {
		b.Fatal(err)
	}
	defer v.release()
	ctx := context.Background()
	one := func(find func(emitter, id string) (uint64, error)) func(x q) error {
		return func(x q) error {
			for i, id := range x.ids {
				if index, err := find(x.emitter, id); err != nil || index != x.index[i] {
					return fmt.Errorf("%s's %q: %d %v, want %d", x.emitter, id, index, err, x.index[i])
				}
			}
			return nil
		}
	}
	for _, m := range []struct {
		name string
		do   func(x q) error
	}{
		{"decoded", one(func(emitter, id string) (uint64, error) {
			index, _, err := lookupDecoded(v.snap, emitter, id)
			return index, err
		})},
		{"index", one(func(emitter, id string) (uint64, error) {
			return lookup(v.snap, emitter, id, l.canonicalIndexed(), nil)
		})},
		{"each-pebble", func(x q) error {
			recent := l.recent
			l.recent = nil // as for events older than the latest RecentLookups
			defer func() { l.recent = recent }()
			out, errs := l.LocateEach(ctx, x.emitter, x.ids)
			for i := range x.ids {
				if errs[i] != nil || out[i].Result != Appended || out[i].Index != x.index[i] {
					return fmt.Errorf("%s's %q: %+v %v, want %d", x.emitter, x.ids[i], out[i], errs[i], x.index[i])
				}
			}
			return nil
		}},
		{"each", func(x q) error {
			out, errs := l.LocateEach(ctx, x.emitter, x.ids)
			for i := range x.ids {
				if errs[i] != nil || out[i].Result != Appended || out[i].Index != x.index[i] {
					return fmt.Errorf("%s's %q: %+v %v, want %d", x.emitter, x.ids[i], out[i], errs[i], x.index[i])
				}
			}
			return nil
		}},
	} {
		b.Run(m.name, func(b *testing.B) {
			n, events := 0, 0
			cpu0 := processCPU(b)
			for b.Loop() {
				x := batches[n%len(batches)]
				if err := m.do(x); err != nil {
					b.Fatal(err)
				}
				n++
				events += len(x.ids)
			}
			// The process's CPU time per event: on a loaded machine the
			// wall time counts the waits for a core too.
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
			b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(events), "cpu-ns/event")
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

// TestLeafIDIs: leafIDIs finds a logged event's own id, and no other, in
// every event of the workload (each scheme's every type).
func TestLeafIDIs(t *testing.T) {
	for _, x := range workloadInputs(t, newBenchGen(t, 5), 3000) {
		ev, err := events.Parse(x.Data)
		if err != nil {
			t.Fatal(err)
		}
		if !leafIDIs(x.Data, ev.ID) {
			t.Fatalf("leafIDIs(%s, %q) = false", x.Data, ev.ID)
		}
		for _, other := range []string{ev.ID + "0", ev.ID[:len(ev.ID)-1], ev.Game, events.CanonicalID(ev.Game, ev.Seq+1)} {
			if other != ev.ID && leafIDIs(x.Data, other) {
				t.Fatalf("leafIDIs(%s, %q) = true", x.Data, other)
			}
		}
	}
}

// FuzzLeafIDIs: for any bytes events.Parse accepts (a leaf the ledger
// could log), leafIDIs is true of its id and false of another.
func FuzzLeafIDIs(f *testing.F) {
	for _, x := range workloadInputs(f, newBenchGen(f, 6), 50) {
		f.Add(x.Data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := events.Parse(data)
		if err != nil {
			return
		}
		if !leafIDIs(data, ev.ID) || leafIDIs(data, ev.ID+"0") {
			t.Fatalf("leafIDIs of %s: wrong about its id %q", data, ev.ID)
		}
	})
}

// TestRecentIndex: the recent index keeps the latest max events, forgets
// the oldest first, and knows each by its emitter as well as its id.
func TestRecentIndex(t *testing.T) {
	r := newRecentIndex(3)
	for i := range uint64(5) {
		r.add([]recentEntry{{scopedID("a", fmt.Sprint("g:", i)), 10 + i}})
	}
	for i := range uint64(5) {
		index, ok := r.get("a", fmt.Sprint("g:", i))
		if want := i >= 2; ok != want || ok && index != 10+i {
			t.Errorf("get(a, g:%d) = %d, %v; want %v", i, index, ok, want)
		}
		if _, ok := r.get("b", fmt.Sprint("g:", i)); ok {
			t.Errorf("get(b, g:%d) found another emitter's event", i)
		}
	}
	if len(r.m) != 3 {
		t.Errorf("%d events kept, want 3", len(r.m))
	}
	var none *recentIndex
	none.add([]recentEntry{{"x", 1}})
	if _, ok := none.get("a", "g:0"); ok {
		t.Error("a nil index found an event")
	}
}

// TestRecentIndexCollision: two events whose keys have one hash are never
// confused. The map names a slot by the hash, and the later of two such
// events takes it: a lookup of the earlier is then not found (the caller
// reads Pebble), and forgetting the earlier leaves the later's slot in the
// map. (The test's hash makes g:0 and g:2 collide; the production hash is
// the seeded 64-bit maphash.) The production hash tells apart keys that
// share a prefix, a suffix or a length.
func TestRecentIndexCollision(t *testing.T) {
	r := newRecentIndex(3)
	r.testHash = func(emitter, id string) uint64 {
		if id == "g:2" {
			id = "g:0"
		}
		return maphash.String(r.seed, scopedID(emitter, id))
	}
	r.add([]recentEntry{{scopedID("a", "g:0"), 10}, {scopedID("a", "g:1"), 11}, {scopedID("a", "g:2"), 12}})
	want := func(what, id string, index uint64, found bool) {
		t.Helper()
		if i, ok := r.get("a", id); ok != found || i != index {
			t.Errorf("%s: get(a, %s) = %d, %v; want %d, %v", what, id, i, ok, index, found)
		}
	}
	want("g:2 took the hash", "g:0", 0, false)
	want("g:2 took the hash", "g:1", 11, true)
	want("g:2 took the hash", "g:2", 12, true)
	r.add([]recentEntry{{scopedID("a", "g:3"), 13}}) // forgets g:0
	want("g:0 forgotten", "g:2", 12, true)
	want("g:0 forgotten", "g:3", 13, true)
	if len(r.m) != 3 {
		t.Errorf("%d hashes in the map, want 3", len(r.m))
	}

	r = newRecentIndex(4)
	r.add([]recentEntry{{scopedID("ab", "c"), 1}, {scopedID("a", "bc"), 2}})
	for _, c := range []struct {
		emitter, id string
		index       uint64
		ok          bool
	}{{"ab", "c", 1, true}, {"a", "bc", 2, true}, {"a", "b", 0, false}, {"abc", "", 0, false}, {"", "abc", 0, false}} {
		if i, ok := r.get(c.emitter, c.id); ok != c.ok || i != c.index {
			t.Errorf("get(%q, %q) = %d, %v; want %d, %v", c.emitter, c.id, i, ok, c.index, c.ok)
		}
	}
}

// BenchmarkRecentIndexMemory measures the heap a full recent index holds
// (RecentLookups entries of the SDK's ids, a UUID and a seq, of emitters
// of 12 bytes): B/entry and MiB for the whole, what docs/OPERATIONS.md §9
// counts for it.
func BenchmarkRecentIndexMemory(b *testing.B) {
	for b.Loop() {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		r := newRecentIndex(RecentLookups)
		es := make([]recentEntry, 0, 256)
		for i := range RecentLookups + RecentLookups/2 { // past full: the ring turns
			id := events.CanonicalID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i/40, i/40), uint64(i%40))
			es = append(es, recentEntry{scopedID(fmt.Sprintf("emitter-%04d", i%7), id), uint64(i)})
			if len(es) == cap(es) {
				r.add(es)
				es = es[:0]
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		held := float64(m1.HeapAlloc - m0.HeapAlloc)
		b.ReportMetric(held/RecentLookups, "B/entry")
		b.ReportMetric(held/(1<<20), "MiB")
		runtime.KeepAlive(r)
	}
}

// BenchmarkRecentIndexAdd measures what the committer pays per appended
// event to keep the recent index (ns/event): a full index of the SDK's ids
// (RecentLookups), groups of 233 events of as many games (the human pace's
// groups, docs/BENCHMARKS.md issue 31), each event forgetting the oldest.
func BenchmarkRecentIndexAdd(b *testing.B) {
	const group = 233
	r := newRecentIndex(RecentLookups)
	id := func(i int) recentEntry {
		game := fmt.Sprintf("%08x-0000-4000-8000-%012x", i%50_000, i%50_000)
		return recentEntry{scopedID(fmt.Sprintf("emitter-%04d", i%4), events.CanonicalID(game, uint64(i/50_000))), uint64(i)}
	}
	next := 0
	fill := func() []recentEntry {
		es := make([]recentEntry, group)
		for k := range es {
			es[k] = id(next)
			next++
		}
		return es
	}
	for range RecentLookups/group + 1 {
		r.add(fill())
	}
	groups := make([][]recentEntry, 64)
	for b.Loop() {
		b.StopTimer()
		for k := range groups {
			groups[k] = fill()
		}
		b.StartTimer()
		for _, es := range groups {
			r.add(es)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(groups)*group), "ns/event")
}
