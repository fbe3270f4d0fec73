package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// storeReads returns what l answers, from its store, for the events of
// leaves and their games: each game's state (Game), each event's Lookup,
// Locate and LocateEach (the status and receipt lookups, by canonical id,
// and the next seq of its game, not logged, and the same id asked by
// another emitter), an inclusion proof of each event, the finished games,
// the open games, the statistics and every entry bundle at its full width.
func storeReads(t *testing.T, l *Ledger, leaves [][]byte) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	size, err := l.Size()
	if err != nil {
		t.Fatal(err)
	}
	games := map[string]bool{}
	byEmitter := map[string][]string{}
	for _, leaf := range leaves {
		ev := parse(t, leaf)
		games[ev.Game] = true
		next := events.CanonicalID(ev.Game, ev.Seq+1)
		for _, q := range [][2]string{{ev.Emitter, ev.ID}, {ev.Emitter, next}, {"other-" + ev.Emitter, ev.ID}} {
			i, h, err := l.Lookup(ctx, q[0], q[1])
			out["lookup "+q[0]+" "+q[1]] = fmt.Sprintf("%d %x %v", i, h, err)
			o, err := l.Locate(ctx, q[0], q[1])
			out["locate "+q[0]+" "+q[1]] = fmt.Sprintf("%+v %v", o, err)
			byEmitter[q[0]] = append(byEmitter[q[0]], q[1])
		}
	}
	for e, ids := range byEmitter {
		o, errs := l.LocateEach(ctx, e, ids)
		for i, id := range ids {
			out["each "+e+" "+id] = fmt.Sprintf("%+v %v", o[i], errs[i])
			if o[i].Result == Appended {
				p, err := l.InclusionProof(ctx, o[i].Index, size)
				out["proof "+e+" "+id] = fmt.Sprintf("%x %v", p, err)
			}
		}
	}
	for id := range games {
		g, err := l.Game(ctx, id)
		if err != nil || g == nil {
			t.Fatalf("game %q: %v", id, err)
		}
		out["game "+id] = fmt.Sprintf("%x", mustMarshalGame(t, g))
	}
	fin, err := l.Finished(ctx, 0, 1<<20)
	out["finished"] = fmt.Sprintf("%+v %v", fin, err)
	out["open"] = fmt.Sprintf("%+v", l.OpenGames())
	st, err := l.Stats()
	out["stats"] = fmt.Sprintf("%+v %v", st, err)
	for n := uint64(0); n*merkle.TileWidth < size; n++ {
		full, _ := merkle.TileAt(merkle.EntriesLevel, n, size)
		tile := merkle.Tile{Level: merkle.EntriesLevel, Index: n, Width: full.Width}
		b, err := l.ReadTile(ctx, tile)
		out["bundle "+tile.Path()] = fmt.Sprintf("%x %v", b, err)
	}
	return out
}

// numberedGames reports how many games of r are keyed by their number
// (store format 9) and how many by their id (format 8); a game whose live
// part or history is not all where its head record says fails t, and so
// does a live part or chunk of no game.
func numberedGames(t testing.TB, r pebble.Reader) (numbered, byID int) {
	t.Helper()
	lives := indexedKeys(t, r, prefixLive)
	chunks := indexedKeys(t, r, prefixHistory)
	for id := range indexedKeys(t, r, prefixGame) {
		rec, err := get(r, strKey(prefixGame, id))
		if err != nil {
			t.Fatal(err)
		}
		at, _, err := parseHeadRecord(id, rec)
		if err != nil {
			t.Fatal(err)
		}
		if at.numbered {
			numbered++
		} else {
			byID++
		}
		lk := string(at.liveKey()[1:])
		if !lives[lk] {
			t.Fatalf("game %q (numbered %v): no live part", id, at.numbered)
		}
		delete(lives, lk)
		lo, hi := at.historyBounds()
		it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			if len(it.Key()) == len(lo)+8 {
				delete(chunks, string(it.Key()[1:]))
				n++
			}
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("game %q (numbered %v): no history", id, at.numbered)
		}
	}
	if len(lives) > 0 || len(chunks) > 0 {
		t.Fatalf("%d live parts and %d history chunks of no game", len(lives), len(chunks))
	}
	return numbered, byID
}

// format8As makes the closed ledger's store one of format 8: every game
// keyed by its id (format8Games; but the games numbered says are numbered
// stay so, as a migration interrupted after them leaves them), with the
// format record f, and the marker of the move if marker (what
// migrateGameNumbers leaves when it stops after its first batch: f 9 and
// the marker). It returns how many games it rewrote.
func format8As(t *testing.T, e *testEnv, origin string, numbered func(string) bool, f byte, marker bool) int {
	t.Helper()
	db := openRaw(t, e)
	defer db.Close()
	n := format8Games(t, db, numbered)
	b := db.NewBatch()
	defer b.Close()
	b.Set(keyFormat, append([]byte{f}, origin...), nil)
	if marker {
		b.Set(keyGameNums, nil, nil)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	return n
}

// numbersLog returns the log record of Open's move of the games to their
// numbers (migrateGameNumbers): whether Open began it (and from which
// format) or went on with an interrupted one. It fails t if there is none,
// or more than one.
func numbersLog(t *testing.T, h *recordingHandler) (from int64, resumed bool) {
	t.Helper()
	return migrationLog(t, h, "the move of the games",
		"upgrading the store: each game's live part and history are keyed by its number",
		"upgrading the store: going on with the interrupted move of each game's records")
}

// TestUpgradeFormat8 opens a store of format 8, whose games' live parts and
// history chunks were keyed by the game's id: Open moves them to the game's
// number (the projections are then byte for byte the ones written in format
// 9), logs that it began at format 8, the format record says 9 and the
// marker of the move is gone, and every read of the store (games, lookups,
// status, receipts' proofs, finished and open games, entry bundles) answers
// as before; appending, a reopen and a Rebuild go on. A move interrupted
// between its batches (some games numbered, the format record 9 and the
// marker) is finished by the next Open, which says so. A store of format 8
// with the marker is refused.
func TestUpgradeFormat8(t *testing.T) {
	for _, tc := range []struct {
		name     string
		chunk    int
		numbered func(game string) bool
		format   byte // the format record of the store Open finds
	}{
		{"one batch", 0, nil, 8},
		{"batches of 3", 3, nil, 8},
		{"interrupted", 5, func(game string) bool { return strings.ContainsAny(game[len(game)-1:], "01234") }, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.cfg.migrateChunk = tc.chunk
			l := e.open()
			gen := newStreamGen(t, e.k, "upgrade8", 8, 9)
			leaves := gen.take(700)
			appendAll(t, l, leaves, 23)
			mustSign(t, l)
			before := dumpProjections(t, l)
			l.Close()
			l = e.open() // every read below from the store
			reads := storeReads(t, l, leaves)
			l.Close()
			games := format8As(t, e, l.origin, tc.numbered, tc.format, tc.format == 9)
			db := openRaw(t, e)
			numbered, byID := numberedGames(t, db)
			db.Close()
			if byID != games || games < 20 || (numbered > 0) != (tc.numbered != nil) {
				t.Fatalf("%d games keyed by id (%d rewritten), %d by number", byID, games, numbered)
			}
			h := new(recordingHandler)
			e.cfg.Logger = slog.New(h)
			l = e.open()
			e.cfg.Logger = nil
			if from, resumed := numbersLog(t, h); resumed != (tc.format == 9) || !resumed && from != 8 {
				t.Errorf("the move of the games logged from %d, resumed %v", from, resumed)
			}
			diffDumps(t, before, dumpProjections(t, l))
			diffReads(t, reads, storeReads(t, l, leaves))
			if f, err := get(l.db, keyFormat); err != nil || f[0] != storeFormat || storeFormat != 9 {
				t.Fatalf("format record %x, %v", f, err)
			}
			if n, b := numberedGames(t, l.db); n != numbered+byID || b != 0 {
				t.Fatalf("%d games numbered, %d keyed by id, of %d", n, b, numbered+byID)
			}
			more := gen.take(200)
			appendAll(t, l, more, 25)
			before = dumpProjections(t, l)
			l.Close()
			l = e.open()
			diffDumps(t, before, dumpProjections(t, l))
			if err := l.Rebuild(context.Background()); err != nil {
				t.Fatal(err)
			}
			diffDumps(t, before, dumpProjections(t, l))
			reads = storeReads(t, l, append(slices.Clone(leaves), more...))
			l.Close()
			l = e.open()
			diffReads(t, reads, storeReads(t, l, append(slices.Clone(leaves), more...)))
			l.Close()
		})
	}
	t.Run("format 8 with the marker", func(t *testing.T) {
		e := newTestEnv(t)
		l := e.open()
		appendAll(t, l, newStreamGen(t, e.k, "upgrade8m", 8, 3).take(50), 10)
		l.Close()
		format8As(t, e, l.origin, nil, 8, true)
		if l, err := Open(context.Background(), e.cfg); !errors.Is(err, ErrCorrupt) {
			if err == nil {
				l.Close()
			}
			t.Fatalf("Open of a format-8 store with the marker of the move: %v", err)
		}
	})
}

func diffReads(t *testing.T, a, b map[string]string) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%d reads before, %d after", len(a), len(b))
	}
	bad := 0
	for k, v := range a {
		if w := b[k]; w != v && bad < 10 {
			t.Errorf("%s: %.200s before, %.200s after", k, v, w)
			bad++
		}
	}
}

// TestUpgradeFormat8Crash: the move of a format-8 store's games to their
// numbers is crashed after each of its durable batches (a power loss
// keeping only what was synced). A crashed store that holds a numbered game
// says format 9, so that an older version (which accepts the formats 1 to
// 8, and whose loadGame finds no live part for a numbered game) refuses
// it, and holds the marker of the move if it holds a game keyed by id too;
// one that holds none is the format-8 store as it was. Every game is whole
// in one layout or the other. Every crashed store opens, finishes the move
// (saying it goes on with it, or that it begins it from format 8) and holds
// the same projections, in format 9, without the marker, and answers every
// read as before.
func TestUpgradeFormat8Crash(t *testing.T) {
	e := newTestEnv(t)
	mem := vfs.NewCrashableMem()
	e.fs, e.cfg.FS = mem, mem
	l := e.open()
	leaves := newStreamGen(t, e.k, "upgrade8-crash", 8, 9).take(400)
	appendAll(t, l, leaves, 20)
	mustSign(t, l)
	want := dumpProjections(t, l)
	l.Close()
	l = e.open()
	reads := storeReads(t, l, leaves)
	l.Close()
	games := format8As(t, e, l.origin, nil, 8, false)

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
		t.Fatalf("%d syncs while moving %d games", len(crashed), games)
	}
	partial, untouched, done := 0, 0, 0
	for i, fs := range crashed {
		db, err := pebble.Open(e.cfg.Dir, &pebble.Options{FS: fs, Logger: quietLogger{}})
		if err != nil {
			t.Fatal(err)
		}
		numbered, byID := numberedGames(t, db)
		f, err := get(db, keyFormat)
		if err != nil {
			t.Fatalf("crash after sync %d: the format record: %v", i, err)
		}
		_, err = get(db, keyGameNums)
		marker := err == nil
		if err != nil && !errors.Is(err, pebble.ErrNotFound) {
			t.Fatal(err)
		}
		db.Close()
		switch {
		case numbered == 0:
			untouched++
			if f[0] != 8 || marker {
				t.Errorf("crash after sync %d: no game moved, the format record %d, the marker %v", i, f[0], marker)
			}
		case f[0] != 9:
			t.Errorf("crash after sync %d: %d games moved, %d not, and the format record %d, which an older version accepts", i, numbered, byID, f[0])
		case byID > 0 && !marker:
			t.Errorf("crash after sync %d: %d games moved, %d not, and no marker", i, numbered, byID)
		case byID > 0:
			partial++
		default:
			done++
		}
		h := new(recordingHandler)
		e.cfg.FS, e.cfg.Logger = fs, slog.New(h)
		l, err := Open(context.Background(), e.cfg)
		if err != nil {
			t.Fatalf("crash after sync %d: Open: %v", i, err)
		}
		if byID > 0 || marker {
			if from, resumed := numbersLog(t, h); resumed != marker || !resumed && from != 8 {
				t.Errorf("crash after sync %d: the move of the games logged from %d, resumed %v", i, from, resumed)
			}
		}
		diffDumps(t, want, dumpProjections(t, l))
		if i%3 == 0 || i == len(crashed)-1 {
			diffReads(t, reads, storeReads(t, l, leaves))
		}
		if numbered, byID := numberedGames(t, l.db); numbered != games || byID != 0 {
			t.Errorf("crash after sync %d: %d games numbered, %d keyed by id", i, numbered, byID)
		}
		if f, err := get(l.db, keyFormat); err != nil || f[0] != storeFormat {
			t.Errorf("crash after sync %d: the format record %x after Open, %v", i, f, err)
		}
		l.Close()
	}
	if partial == 0 || done == 0 {
		t.Fatalf("of the crashes, %d left the store as it was, %d with some games moved and some not, %d with all moved: want some of the last two", untouched, partial, done)
	}
	t.Logf("%d games, %d crashes: %d left the store as it was, %d with some games moved and some not, %d with all moved", games, len(crashed), untouched, partial, done)
}

// TestGameNumberKeys: a game's live part and history chunks are keyed by its
// number, the leaf index of its commit, and its head record says it; a head
// record that is not one (a short one, a number past maxGameNumber, a
// format-6 head after a number) is refused as corrupt by every reader.
func TestGameNumberKeys(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	leaves := newStreamGen(t, e.k, "numbers", 3, 4).take(120)
	appendAll(t, l, leaves, 7)
	commits := map[string]uint64{}
	for i, leaf := range leaves {
		if ev := parse(t, leaf); ev.Seq == 0 {
			commits[ev.Game] = uint64(i)
		}
	}
	if len(commits) < 4 {
		t.Fatalf("%d games", len(commits))
	}
	for id, n := range commits {
		rec, err := get(l.db, strKey(prefixGame, id))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(rec[:9], appendHeadRecord(nil, n)) {
			t.Fatalf("game %q, committed at leaf %d: head record %x", id, n, rec[:9])
		}
		if _, err := get(l.db, appendLiveKey(nil, n)); err != nil {
			t.Fatalf("game %q: the live part at its number %d: %v", id, n, err)
		}
		if _, err := get(l.db, appendHistoryKey(nil, n, n)); err != nil {
			t.Fatalf("game %q: its first history chunk at its number %d: %v", id, n, err)
		}
	}
	var game string
	for id := range commits {
		game = id
		break
	}
	rec, _ := get(l.db, strKey(prefixGame, game))
	ev := parse(t, leaves[commits[game]])
	l.Close()
	for _, bad := range [][]byte{
		{numberedHead},
		rec[:9],
		append(binary.BigEndian.AppendUint64([]byte{numberedHead}, maxGameNumber), rec[9:]...),
		append(appendHeadRecord(nil, commits[game]+1), rec[9:]...), // another number than its first leaf
		append(appendHeadRecord(nil, commits[game]), 2, 0),
	} {
		db := openRaw(t, e)
		if err := db.Set(strKey(prefixGame, game), bad, pebble.Sync); err != nil {
			t.Fatal(err)
		}
		db.Close()
		l = e.open()
		ctx := context.Background()
		if _, err := l.Game(ctx, game); !errors.Is(err, ErrCorrupt) {
			t.Errorf("head record %x: Game: %v", bad, err)
		}
		_, _, err := l.Lookup(ctx, ev.Emitter, ev.ID)
		_, errs := l.LocateEach(ctx, ev.Emitter, []string{ev.ID})
		if bytes.HasPrefix(bad, appendHeadRecord(nil, commits[game])) || len(bad) < 10 || binary.BigEndian.Uint64(bad[1:9]) >= maxGameNumber {
			// The lookups read the head record's place, not the state.
			if !errors.Is(err, ErrCorrupt) || !errors.Is(errs[0], ErrCorrupt) {
				t.Errorf("head record %x: Lookup: %v, LocateEach: %v", bad, err, errs[0])
			}
		}
		l.Close()
	}
}

// FuzzParseHeadRecord: parseHeadRecord never panics, refuses what it
// cannot place, and what it accepts as numbered is appendHeadRecord of its
// number and a head; anything else it returns as it is, keyed by the id.
func FuzzParseHeadRecord(f *testing.F) {
	f.Add([]byte{numberedHead, 0, 0, 0, 0, 0, 0, 1, 2, 3, 1})
	f.Add([]byte{3, 1, 'a'})
	f.Add([]byte{2})
	f.Add([]byte{numberedHead})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		at, head, err := parseHeadRecord("g", v)
		switch {
		case err != nil:
			if !errors.Is(err, ErrCorrupt) || len(v) == 0 || v[0] != numberedHead {
				t.Fatalf("%x: %v", v, err)
			}
		case at.numbered:
			if at.n >= maxGameNumber || !bytes.Equal(append(appendHeadRecord(nil, at.n), head...), v) || len(head) == 0 || oldHead(head) {
				t.Fatalf("%x: number %d, head %x", v, at.n, head)
			}
			lo, hi := at.historyBounds()
			if len(lo) != 9 || bytes.Compare(lo, hi) >= 0 || !bytes.Equal(at.liveKey(), appendLiveKey(nil, at.n)) {
				t.Fatalf("%x: history from %x to %x, live part %x", v, lo, hi, at.liveKey())
			}
		default:
			if !bytes.Equal(head, v) || at.id != "g" || len(v) > 0 && v[0] == numberedHead {
				t.Fatalf("%x: head %x, %+v", v, head, at)
			}
		}
	})
}

// BenchmarkMigrateGameNumbers times Open of a store of format 8 holding the
// benchmark's games (300,000 events by default, ZARLOG_MIGRATE_EVENTS), its
// games moved to their numbers by migrateGameNumbers: per game, and beside
// a Rebuild of the same log.
func BenchmarkMigrateGameNumbers(b *testing.B) {
	benchMigrate(b, "numbers", 8, format8Games, func(b *testing.B, db *pebble.DB, games int) {
		if numbered, byID := numberedGames(b, db); numbered != games || byID != 0 {
			b.Fatalf("%d games numbered of %d, %d keyed by id left", numbered, games, byID)
		}
	})
}
