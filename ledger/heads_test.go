package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
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
// back as format 6 wrote them and Open splits them again. A group's batch
// holds its games' records (heads, history, live parts) in key order.
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
	var heads, lives, unordered int
	a.seq.onBatch = func(batch *pebble.Batch) {
		r := batch.Reader()
		var last []byte // the batch's last game record's key
		for {
			kind, k, _, ok, err := r.Next()
			if err != nil || !ok {
				return
			}
			if k[0] == prefixGame || k[0] == prefixHistory || k[0] == prefixLive {
				// A group writes its games' records in key order
				// (the memtable's inserts; writeProjections).
				if last != nil && bytes.Compare(last, k) >= 0 {
					unordered++
				}
				last = append(last[:0], k...)
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
			// against its bound beside the state's memory (its MemSize: a
			// cut state's, or a full state's Size and its cut part's pointer).
			var cached int64
			decoded := 0
			for _, e := range a.seq.games.items {
				g := e.g
				cached += int64(g.MemSize()+g.DecodedSize()) + cacheEntryOverhead + int64(len(g.ID))
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
	if unordered > 0 {
		t.Fatalf("%d game records were written after a greater key of their group's batch", unordered)
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
// split stay so, as a migration interrupted after them leaves them), each
// full entry bundle whole under 'e' (wholeBundles), and the format record 6.
func format6(t *testing.T, e *testEnv, origin string, split func(string) bool) int {
	t.Helper()
	return format6As(t, e, origin, split, 6, false)
}

// format6As is format6 with the format record f, and the marker of a split
// of the heads if marker (what migrateHeads leaves when it stops after its
// first batch: f 7 and the marker).
func format6As(t *testing.T, e *testEnv, origin string, split func(string) bool, f byte, marker bool) int {
	t.Helper()
	db := openRaw(t, e)
	defer db.Close()
	n := format6Heads(t, db, split)
	wholeBundles(t, db)
	b := db.NewBatch()
	defer b.Close()
	b.Set(keyFormat, append([]byte{f}, origin...), nil)
	if marker {
		b.Set(keySplitHeads, nil, nil)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	return n
}

// headsLog returns the log record of Open's split of the game heads
// (migrateHeads): whether Open began it (and from which format: its "from"
// attribute) or went on with an interrupted one. It fails t if there is
// none, or more than one.
func headsLog(t *testing.T, h *recordingHandler) (from int64, resumed bool) {
	t.Helper()
	return migrationLog(t, h, "the split of the heads",
		"upgrading the store: each game's head is split",
		"upgrading the store: going on with the interrupted split of each game's head")
}

// migrationLog returns the log record of an upgrade step that Open may
// begin (a record starting with began, its "from" attribute the format) or
// go on with (resumed), what the step is. It fails t if there is none, or
// more than one.
func migrationLog(t *testing.T, h *recordingHandler, what, began, goneOn string) (from int64, resumed bool) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.records {
		switch {
		case strings.HasPrefix(r.Message, began):
			r.Attrs(func(a slog.Attr) bool {
				if a.Key == "from" {
					from = a.Value.Int64()
				}
				return true
			})
		case strings.HasPrefix(r.Message, goneOn):
			resumed = true
		default:
			continue
		}
		n++
	}
	if n != 1 || !resumed && from == 0 {
		t.Fatalf("%d log records of %s (from %d, resumed %v)", n, what, from, resumed)
	}
	return from, resumed
}

// upgradeFrom returns the "from" attribute of the one log record whose
// message begins with prefix (an upgrade step's), and fails t if there is
// not exactly one, or it has no "from".
func upgradeFrom(t *testing.T, h *recordingHandler, prefix string) int64 {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	var from []int64
	for _, r := range h.records {
		if !strings.HasPrefix(r.Message, prefix) {
			continue
		}
		f := int64(0)
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "from" {
				f = a.Value.Int64()
			}
			return true
		})
		from = append(from, f)
	}
	if len(from) != 1 || from[0] == 0 {
		t.Fatalf("log records %q: the formats they began at are %v, want one", prefix, from)
	}
	return from[0]
}

// TestUpgradeFormat6 opens a store of format 6, whose game heads held the
// whole state but its history: Open splits each into its head and its
// live part as format 7 writes them (the projections are byte for byte the
// ones written in format 7), logs that it began at format 6, the format
// record says 7 and the marker of the split is gone, and appending,
// lookups, a reopen and a Rebuild go on. A migration interrupted between
// its batches (some heads split, the format record 7 and the marker) is
// finished by the next Open, which says so; so is a store of format 6
// with some heads split (what migrateHeads left before the marker).
func TestUpgradeFormat6(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunk  int
		split  func(game string) bool
		format byte // the format record of the store Open finds
	}{
		{"one batch", 0, nil, 6},
		{"batches of 7", 7, nil, 6},
		{"interrupted", 5, func(game string) bool { return strings.ContainsAny(game[len(game)-1:], "01234567") }, 7},
		{"some split, format 6", 5, func(game string) bool { return strings.ContainsAny(game[len(game)-1:], "01234567") }, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.cfg.migrateChunk = tc.chunk
			l := e.open()
			gen := newStreamGen(t, e.k, "upgrade6", 6, 9)
			appendAll(t, l, gen.take(600), 40)
			before := dumpProjections(t, l)
			l.Close()
			if n := format6As(t, e, l.origin, tc.split, tc.format, tc.format == 7); n < 10 {
				t.Fatalf("%d format-6 heads", n)
			}
			db := openRaw(t, e)
			if split, _ := splitHeads(t, db); (split > 0) != (tc.split != nil) {
				t.Fatalf("%d heads left split", split)
			}
			db.Close()
			h := new(recordingHandler)
			e.cfg.Logger = slog.New(h)
			l = e.open()
			e.cfg.Logger = nil
			if from, resumed := headsLog(t, h); resumed != (tc.format == 7) || !resumed && from != 6 {
				t.Errorf("the split of the heads logged from %d, resumed %v", from, resumed)
			}
			diffDumps(t, before, dumpProjections(t, l))
			if f, err := get(l.db, keyFormat); err != nil || f[0] != storeFormat || storeFormat != 9 {
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
// synced). A crashed store that holds a split head says format 7, and
// holds the marker of the split if it holds a head of format 6 too, so that an older version (which accepts the formats 1 to 6, and whose
// loadGame fails on a split game) refuses it; one that holds none is the
// format-6 store as it was. Only a store with every head split and no
// marker says 8 (Open's next step, which keeps full bundles as pieces
// from then on) or 9 (the step after, which moves the games to their
// numbers: TestUpgradeFormat8Crash). Every crashed store opens, finishes the
// migration (saying it goes on with it, or that it begins it from format 6)
// and holds the same projections, in format 9, without the markers. A store
// whose format record says 6 beside the marker is refused as corrupt.
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
	partial, refused, done7, done8 := 0, 0, 0, 0
	for i, fs := range crashed {
		db, err := pebble.Open(e.cfg.Dir, &pebble.Options{FS: fs, Logger: quietLogger{}})
		if err != nil {
			t.Fatal(err)
		}
		split, old := splitHeads(t, db)
		f, err := get(db, keyFormat)
		if err != nil {
			t.Fatalf("crash after sync %d: the format record: %v", i, err)
		}
		_, err = get(db, keySplitHeads)
		marker := err == nil
		if err != nil && !errors.Is(err, pebble.ErrNotFound) {
			t.Fatal(err)
		}
		db.Close()
		if split > 0 && old > 0 {
			partial++
		}
		if old == 0 && !marker && f[0] == 7 {
			done7++ // before the format record 8
		}
		if f[0] == 8 {
			done8++
		}
		switch {
		case split == 0:
			if f[0] != 6 || marker {
				t.Errorf("crash after sync %d: no head split, the format record %d, the marker %v", i, f[0], marker)
			}
		case f[0] >= 1 && f[0] <= 6:
			t.Errorf("crash after sync %d: %d heads split, %d not, and the format record %d, which an older version accepts", i, split, old, f[0])
		case (f[0] == 8 || f[0] == 9) && (old > 0 || marker):
			t.Errorf("crash after sync %d: %d heads split, %d not, the marker %v, and the format record %d, which says the split is done", i, split, old, marker, f[0])
		case f[0] < 7 || f[0] > 9 || old > 0 && !marker:
			t.Errorf("crash after sync %d: %d heads split, %d not, the format record %d, the marker %v", i, split, old, f[0], marker)
		default:
			refused++
		}
		h := new(recordingHandler)
		e.cfg.FS, e.cfg.Logger = fs, slog.New(h)
		l, err := Open(context.Background(), e.cfg)
		if err != nil {
			t.Fatalf("crash after sync %d: Open: %v", i, err)
		}
		if old > 0 || marker {
			if from, resumed := headsLog(t, h); resumed != marker || !resumed && from != 6 {
				t.Errorf("crash after sync %d: the split of the heads logged from %d, resumed %v", i, from, resumed)
			}
		}
		diffDumps(t, want, dumpProjections(t, l))
		if split, old := splitHeads(t, l.db); split != games || old != 0 {
			t.Errorf("crash after sync %d: %d heads split, %d of format 6", i, split, old)
		}
		if f, err := get(l.db, keyFormat); err != nil || f[0] != storeFormat {
			t.Errorf("crash after sync %d: the format record %x after Open, %v", i, f, err)
		}
		l.Close()
	}
	if partial == 0 || done7 == 0 || done8 == 0 {
		t.Fatalf("of the crashes, %d left a store with some heads split and some not, %d one split of format 7, %d one of format 8: want some of each", partial, done7, done8)
	}
	t.Logf("%d crashes, %d with some heads split and some not, %d an older version refuses", len(crashed), partial, refused)

	fs := crashed[len(crashed)-1]
	db, err := pebble.Open(e.cfg.Dir, &pebble.Options{FS: fs, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	b.Set(keyFormat, append([]byte{6}, l.origin...), nil)
	b.Set(keySplitHeads, nil, nil)
	if err := errors.Join(b.Commit(pebble.Sync), b.Close(), db.Close()); err != nil {
		t.Fatal(err)
	}
	e.cfg.FS, e.cfg.Logger = fs, nil
	if l, err := Open(context.Background(), e.cfg); !errors.Is(err, ErrCorrupt) {
		if err == nil {
			l.Close()
		}
		t.Fatalf("Open of a format-6 store with the marker of the split: %v", err)
	}
}

// BenchmarkMigrateHeads times Open of a store of format 6 holding the
// benchmark's games (300,000 events by default, ZARLOG_MIGRATE_EVENTS), the
// heads split by migrateHeads: per game, and beside a Rebuild of the same
// log.
func BenchmarkMigrateHeads(b *testing.B) {
	benchMigrate(b, "heads", 6, format6Heads, func(b *testing.B, db *pebble.DB, games int) {
		if split, old := splitHeads(b, db); split != games || old != 0 {
			b.Fatalf("%d heads split of %d, %d of format 6 left", split, games, old)
		}
	})
}

// benchMigrate times Open of a store that downgrade has put back in format
// from (returning its games), per game, and checks its games with done
// after each Open; beside a Rebuild of the same log (the benchmark's games,
// 300,000 events by default, ZARLOG_MIGRATE_EVENTS).
func benchMigrate(b *testing.B, pool string, from byte, downgrade func(testing.TB, *pebble.DB, func(game string) bool) int, done func(*testing.B, *pebble.DB, int)) {
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
	in := newBenchPool(b, pool).take(b, events)
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
		games = downgrade(b, db, nil)
		if err := db.Set(keyFormat, append([]byte{from}, cfg.Signer.Name()...), pebble.Sync); err != nil {
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
		done(b, l.db, games)
		l.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(took.Nanoseconds())/float64(b.N*games), "ns/game")
	b.ReportMetric(float64(rebuild.Nanoseconds())/float64(events), "rebuild-ns/event")
	b.ReportMetric(float64(games), "games")
	b.ReportMetric(float64(events), "events")
}
