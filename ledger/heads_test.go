package ledger

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zarlog/zarlog/internal/workload"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// workloadRounds returns the events of n of the benchmark's games (every
// scheme, legal moves), a group per round: the next event of every game
// that has one, so that each group changes each game once, as at a human
// pace.
func workloadRounds(t testing.TB, gen *workload.Generator, n int) (rounds [][]Input, events int) {
	t.Helper()
	var games [][]workload.Event
	for range n {
		evs, err := gen.Game()
		if err != nil {
			t.Fatal(err)
		}
		games = append(games, evs)
	}
	for k := 0; ; k++ {
		var in []Input
		for _, evs := range games {
			if k < len(evs) {
				in = append(in, Input{Emitter: evs[k].Emitter, MsgID: evs[k].ID, Data: evs[k].Data})
			}
		}
		if len(in) == 0 {
			return rounds, events
		}
		rounds, events = append(rounds, in), events+len(in)
	}
}

// TestHeadsWorkload appends the benchmark's games with the rules engine on,
// one event per game per group, to two ledgers: one whose game cache holds
// them, one whose cache holds none, so that every event reads its game back
// from its head, its live part and its history (the cache's miss path).
// Both accept every event and store the same projections, byte for byte;
// every group writes the live part of each game it changes and the head of
// only the games it begins or sets up; a reopened store (recovery) and a
// Rebuild hold the same; and so does the store after its heads are written
// back as format 6 wrote them and Open splits them again.
func TestHeadsWorkload(t *testing.T) {
	ctx := context.Background()
	gen, err := workload.New(workload.Config{Seed: 5, Rolls: 6, Moves: true})
	if err != nil {
		t.Fatal(err)
	}
	rounds, total := workloadRounds(t, gen, 60)
	env := func(cache int64) *testEnv {
		e := newTestEnv(t)
		e.cfg.Emitters, e.cfg.Beacons, e.cfg.Moves, e.cfg.GameCacheBytes = gen.Keyring(), workload.Beacons, movecheck.Checker{}, cache
		e.clock.t = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) // after the workload's seals
		return e
	}
	ea, eb := env(0), env(1)
	a, b := ea.open(), eb.open()
	var heads, lives int
	a.seq.onBatch = func(batch *pebble.Batch) {
		r := batch.Reader()
		for {
			kind, k, _, ok, err := r.Next()
			if err != nil || !ok {
				return
			}
			switch {
			case kind != pebble.InternalKeyKindSet:
			case k[0] == prefixGame:
				heads++
			case k[0] == prefixLive:
				lives++
			}
		}
	}
	for i, in := range rounds {
		for _, l := range []*Ledger{a, b} {
			for j, o := range mustAppend(t, l, in) {
				if o.Result != Appended {
					t.Fatalf("round %d, input %d: %v %v", i, j, o.Result, o.Reject)
				}
			}
		}
		if i == len(rounds)/2 {
			// The cache counts each state's decoded position (the rules engine's)
			// against its bound beside the state's Size.
			var cached int64
			decoded := 0
			for id, e := range a.seq.games.items {
				g := e.Value.(*cacheEntry).g
				cached += int64(g.Size()+g.DecodedSize()) + cacheEntryOverhead + int64(len(id))
				if g.DecodedSize() > 0 {
					decoded++
				}
			}
			if a.seq.games.bytes != cached || decoded == 0 {
				t.Fatalf("the game cache counts %d bytes, its states and their decoded positions %d (%d decoded)", a.seq.games.bytes, cached, decoded)
			}
		}
	}
	if b.seq.loads < uint64(total/2) {
		t.Fatalf("the ledger without a cache read %d game states for %d events", b.seq.loads, total)
	}
	for _, l := range []*Ledger{a, b} {
		if n := testutil.ToFloat64(l.met.gameLoads); n != float64(l.seq.loads) {
			t.Fatalf("zarlog_ledger_game_loads_total is %v, the sequencer read %d game states back", n, l.seq.loads)
		}
	}
	if lives != total || heads >= total/3 || heads < 60 {
		t.Fatalf("%d events wrote %d live parts and %d heads", total, lives, heads)
	}
	t.Logf("%d events in %d groups: %d heads written, %d games read back", total, len(rounds), heads, b.seq.loads)
	want := dumpProjections(t, a)
	diffDumps(t, want, dumpProjections(t, b))
	a.Close()
	a = ea.open()
	diffDumps(t, want, dumpProjections(t, a))
	if err := a.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	diffDumps(t, want, dumpProjections(t, a))
	a.Close()

	db := openRaw(t, ea)
	format6Heads(t, db, nil)
	if err := db.Set(keyFormat, append([]byte{6}, a.origin...), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	db.Close()
	a = ea.open()
	diffDumps(t, want, dumpProjections(t, a))
	if split, old := splitHeads(t, a.db); split != 60 || old != 0 {
		t.Fatalf("%d heads split, %d of format 6", split, old)
	}
}

// format6 makes the closed ledger's store one of format 6: each game's
// head as format 6 kept it, no live parts (but the games split says are
// split stay so, as a migration interrupted after them leaves them), and
// the format record 6.
func format6(t *testing.T, e *testEnv, origin string, split func(string) bool) int {
	t.Helper()
	db := openRaw(t, e)
	defer db.Close()
	n := format6Heads(t, db, split)
	if err := db.Set(keyFormat, append([]byte{6}, origin...), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestUpgradeFormat6 opens a store of format 6, whose game heads held the
// whole state but its history: Open splits each into its head and its
// live part as format 7 writes them (the projections are byte for byte the
// ones written in format 7), the format record says 7, and appending,
// lookups, a reopen and a Rebuild go on. A migration interrupted between
// its batches (some heads split, the format still 6) is finished by the
// next Open.
func TestUpgradeFormat6(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chunk int
		split func(game string) bool
	}{
		{"one batch", 0, nil},
		{"batches of 7", 7, nil},
		{"interrupted", 5, func(game string) bool { return strings.ContainsAny(game[len(game)-1:], "01234567") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.cfg.migrateChunk = tc.chunk
			l := e.open()
			gen := newStreamGen(t, e.k, "upgrade6", 6, 9)
			appendAll(t, l, gen.take(600), 40)
			before := dumpProjections(t, l)
			l.Close()
			if n := format6(t, e, l.origin, tc.split); n < 10 {
				t.Fatalf("%d format-6 heads", n)
			}
			db := openRaw(t, e)
			if split, _ := splitHeads(t, db); (split > 0) != (tc.split != nil) {
				t.Fatalf("%d heads left split", split)
			}
			db.Close()
			l = e.open()
			diffDumps(t, before, dumpProjections(t, l))
			if f, err := get(l.db, keyFormat); err != nil || f[0] != storeFormat || storeFormat != 7 {
				t.Fatalf("format record %x, %v", f, err)
			}
			if split, old := splitHeads(t, l.db); split < 20 || old != 0 {
				t.Fatalf("%d heads split, %d of format 6", split, old)
			}
			appendAll(t, l, gen.take(200), 25)
			before = dumpProjections(t, l)
			l.Close()
			l = e.open()
			diffDumps(t, before, dumpProjections(t, l))
			if err := l.Rebuild(context.Background()); err != nil {
				t.Fatal(err)
			}
			diffDumps(t, before, dumpProjections(t, l))
		})
	}
}

// TestUpgradeFormat6Crash: the migration of a format-6 store is crashed
// after each of its durable batches (a power loss keeping only what was
// synced); every crashed store opens, finishes the migration and holds the
// same projections, in format 7.
func TestUpgradeFormat6Crash(t *testing.T) {
	e := newTestEnv(t)
	mem := vfs.NewCrashableMem()
	e.fs, e.cfg.FS = mem, mem
	l := e.open()
	appendAll(t, l, newStreamGen(t, e.k, "upgrade6-crash", 6, 9).take(400), 20)
	want := dumpProjections(t, l)
	l.Close()
	games := format6(t, e, l.origin, nil)

	var crashed []*vfs.MemFS
	syncs := &walFS{FS: mem}
	syncs.wrap = func(f vfs.File) vfs.File {
		return &syncHook{File: f, after: func() { crashed = append(crashed, mem.CrashClone(vfs.CrashCloneCfg{})) }}
	}
	e.cfg.FS = syncs
	e.cfg.migrateChunk = 4
	l = e.open()
	diffDumps(t, want, dumpProjections(t, l))
	l.Close()
	if len(crashed) < games/4 {
		t.Fatalf("%d syncs while splitting %d heads", len(crashed), games)
	}
	partial := 0
	for i, fs := range crashed {
		db, err := pebble.Open(e.cfg.Dir, &pebble.Options{FS: fs, Logger: quietLogger{}})
		if err != nil {
			t.Fatal(err)
		}
		if split, old := splitHeads(t, db); split > 0 && old > 0 {
			partial++
		}
		db.Close()
		e.cfg.FS = fs
		l, err := Open(context.Background(), e.cfg)
		if err != nil {
			t.Fatalf("crash after sync %d: Open: %v", i, err)
		}
		diffDumps(t, want, dumpProjections(t, l))
		if split, old := splitHeads(t, l.db); split != games || old != 0 {
			t.Errorf("crash after sync %d: %d heads split, %d of format 6", i, split, old)
		}
		l.Close()
	}
	if partial == 0 {
		t.Fatal("no crash left a store with some heads split and some not")
	}
}

// BenchmarkMigrateHeads times Open of a store of format 6 holding the
// benchmark's games (300,000 events by default, ZARLOG_MIGRATE_EVENTS), the
// heads split by migrateHeads: per game, and beside a Rebuild of the same
// log.
func BenchmarkMigrateHeads(b *testing.B) {
	events := 300_000
	if s := os.Getenv("ZARLOG_MIGRATE_EVENTS"); s != "" {
		if _, err := fmt.Sscan(s, &events); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	l := benchLedger(b, dir)
	cfg := l.cfg
	ctx := context.Background()
	in := newBenchPool(b, "heads").take(b, events)
	for i := 0; i < events; i += 1000 {
		if _, err := l.Append(ctx, in[i:min(i+1000, events)]); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	if err := l.Rebuild(ctx); err != nil {
		b.Fatal(err)
	}
	rebuild := time.Since(start)
	l.Close()
	var took time.Duration
	games := 0
	for b.Loop() {
		b.StopTimer()
		db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{}})
		if err != nil {
			b.Fatal(err)
		}
		games = format6Heads(b, db, nil)
		if err := db.Set(keyFormat, append([]byte{6}, cfg.Signer.Name()...), pebble.Sync); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t := time.Now()
		cfg.Metrics = prometheus.NewRegistry()
		l, err := Open(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		took += time.Since(t)
		b.StopTimer()
		if split, old := splitHeads(b, l.db); split != games || old != 0 {
			b.Fatalf("%d heads split of %d, %d of format 6 left", split, games, old)
		}
		l.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(took.Nanoseconds())/float64(b.N*games), "ns/game")
	b.ReportMetric(float64(rebuild.Nanoseconds())/float64(events), "rebuild-ns/event")
	b.ReportMetric(float64(games), "games")
	b.ReportMetric(float64(events), "events")
}
