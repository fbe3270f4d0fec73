package ledger

import (
	"context"
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

// chosenIDs returns a game's leaves with the ids a backend chose:
// prefix-<seq>.
func chosenIDs(t testing.TB, k *testKeys, leaves [][]byte, prefix string) [][]byte {
	t.Helper()
	out := make([][]byte, len(leaves))
	for i, leaf := range leaves {
		out[i] = withID(t, k, leaf, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

// TestPerEmitterIDs: event ids are per emitter. The attacker (emitterB)
// reads the victim's id pattern and logs its own valid events under the
// victim's next ids first; the victim's events are logged all the same, each
// emitter's duplicates are its own, and Lookup and Locate answer each
// emitter with its own event. Both orders, within one group and across
// committed groups (the sequencer forgets, so Pebble answers).
func TestPerEmitterIDs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sameCall bool // the attacker's and the victim's events in one Append
		forget   bool // the sequencer keeps one group's ids: lookups go to Pebble
	}{
		{"separate calls", false, false},
		{"one group", true, false},
		{"from Pebble", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			l := e.open()
			if tc.forget {
				l.seq.maxIDs = 1
			}
			k := e.k
			ctx := context.Background()
			victim := chosenIDs(t, k, k.tavlarenaGame(t, "victim", gameOpts{rolls: 3}), "order-7")
			attacker := chosenIDs(t, k, k.tavlarenaGame(t, "attacker", gameOpts{rolls: 3, emitter: emitterB}), "order-7")
			var in []Input
			if tc.sameCall {
				for i := range max(len(victim), len(attacker)) {
					if i < len(attacker) {
						in = append(in, inputs(t, attacker[i])...)
					}
					if i < len(victim) {
						in = append(in, inputs(t, victim[i])...)
					}
				}
				for i, o := range mustAppend(t, l, in) {
					if o.Result != Appended {
						t.Fatalf("input %d: %v %v", i, o.Result, o.Reject)
					}
				}
			} else {
				appendAll(t, l, attacker, 2)
				if tc.forget {
					appendAll(t, l, k.tavlarenaGame(t, "between", gameOpts{rolls: 1}), 1)
				}
				appendAll(t, l, victim, 3)
			}
			if tc.forget {
				appendAll(t, l, k.tavlarenaGame(t, "after", gameOpts{rolls: 1}), 1)
			}
			size, _ := l.Size()

			index := func(emitter string, leaf []byte) uint64 {
				t.Helper()
				id := parse(t, leaf).ID
				i, h, err := l.Lookup(ctx, emitter, id)
				if err != nil {
					t.Fatalf("Lookup(%s, %q): %v", emitter, id, err)
				}
				if h != merkle.LeafHash(leaf) {
					t.Fatalf("Lookup(%s, %q) found leaf %d, with another emitter's bytes", emitter, id, i)
				}
				got, err := l.LeavesAt(ctx, []uint64{i})
				if err != nil || string(got[0]) != string(leaf) {
					t.Fatalf("leaf %d is not %s's event %q: %v", i, emitter, id, err)
				}
				return i
			}
			for _, g := range []struct {
				emitter string
				leaves  [][]byte
			}{{emitterA, victim}, {emitterB, attacker}} {
				for _, leaf := range g.leaves {
					i := index(g.emitter, leaf)
					id := parse(t, leaf).ID
					// Its own retry is a duplicate of its own leaf.
					if o := mustAppend(t, l, inputs(t, leaf))[0]; o.Result != Duplicate || o.Index != i {
						t.Errorf("%s's %q again: %v at %d (%v), want a duplicate of %d", g.emitter, id, o.Result, o.Index, o.Reject, i)
					}
					if o, err := l.Locate(ctx, g.emitter, id); err != nil || o.Result != Appended || o.Index != i {
						t.Errorf("Locate(%s, %q) = %+v, %v, want leaf %d", g.emitter, id, o, err, i)
					}
				}
			}
			if after, _ := l.Size(); after != size {
				t.Errorf("%d leaves appended by the retries", after-size)
			}

			// Other bytes under one's own id are still a duplicate id,
			// named with the emitter's own leaf.
			v := parse(t, victim[3])
			other := withID(t, k, mkEvent(t, k, events.Header{Scheme: v.Scheme, Game: v.Game, Seq: v.Seq, Emitter: emitterA}, events.Move{N: 9, Play: "x"}, nil), v.ID)
			o := mustAppend(t, l, inputs(t, other))[0]
			if o.Result != Rejected || o.Reject.Code != events.CodeDuplicateID || !strings.Contains(o.Reject.Msg, fmt.Sprintf("leaf %d ", index(emitterA, victim[3]))) {
				t.Errorf("other bytes under the victim's own id: %v %v", o.Result, o.Reject)
			}
			// The attacker's locate never names the victim's rejection.
			if o, err := l.Locate(ctx, emitterB, v.ID); err != nil || o.Result != Appended || o.Index != index(emitterB, attacker[3]) {
				t.Errorf("Locate(attacker, %q) = %+v, %v", v.ID, o, err)
			}

			before := dumpProjections(t, l)
			if err := l.Rebuild(ctx); err != nil {
				t.Fatal(err)
			}
			diffDumps(t, before, dumpProjections(t, l))
			keys := indexedKeys(t, l.db, prefixDedup)
			for _, leaf := range append(slices.Clone(victim), attacker...) {
				ev := parse(t, leaf)
				if !keys[ev.Emitter+"\x00"+ev.ID] {
					t.Errorf("no dedup record of (%s, %q)", ev.Emitter, ev.ID)
				}
			}
		})
	}
}

// TestCanonicalIDsOfAnotherEmitter: canonical ids (<game>:<seq>) are found
// through their game, and a game is its committing emitter's. Another
// emitter that sends events of that game under their canonical ids gets
// foreign-game, never duplicate-id, and cannot make the owner's events,
// receipts or rejections its own; its events for a game nobody has
// committed yet are unknown-game, and the game id stays free. What it can do
// is commit a game id first (game ids are global: docs/SECURITY.md): then
// the owner's commit is refused game-exists, and the owner's Locate says so.
func TestCanonicalIDsOfAnotherEmitter(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	k := e.k
	ctx := context.Background()
	owned := k.tavlarenaGame(t, "owned", gameOpts{rolls: 2})
	appendAll(t, l, owned[:4], 4)
	g := parse(t, owned[0]).Game
	move := events.Move{N: 0, Play: "x"}
	foreign := func(seq uint64) []byte {
		return mkEvent(t, k, events.Header{Scheme: events.Tavlarena, Game: g, Seq: seq, Emitter: emitterB}, move, nil)
	}
	for _, seq := range []uint64{1, 3, 4, 40} { // logged, logged, the next, far ahead
		leaf := foreign(seq)
		id := parse(t, leaf).ID
		if id != events.CanonicalID(g, seq) {
			t.Fatalf("test event's id %q", id)
		}
		o := mustAppend(t, l, inputs(t, leaf))[0]
		if o.Result != Rejected || o.Reject.Code != events.CodeForeignGame {
			t.Errorf("another emitter's %q: %v %v, want %s", id, o.Result, o.Reject, events.CodeForeignGame)
		}
		if lo, err := l.Locate(ctx, emitterB, id); err != nil || lo.Result != Rejected || lo.Reject.Code != events.CodeForeignGame {
			t.Errorf("Locate(attacker, %q) = %+v, %v", id, lo, err)
		}
		if _, _, err := l.Lookup(ctx, emitterB, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Lookup(attacker, %q): %v, want ErrNotFound", id, err)
		}
		lo, err := l.Locate(ctx, emitterA, id)
		switch {
		case seq < 4 && (err != nil || lo.Result != Appended || lo.Index != seq):
			t.Errorf("Locate(owner, %q) = %+v, %v, want leaf %d", id, lo, err, seq)
		case seq >= 4 && !errors.Is(err, ErrNotFound):
			t.Errorf("Locate(owner, %q) = %+v, %v, want ErrNotFound: the attacker's rejection is not the owner's", id, lo, err)
		}
	}
	appendAll(t, l, owned[4:], 3) // the owner's next events are unaffected

	// A game nobody committed: the attacker's events are refused, and the
	// id stays free for its owner.
	later := k.tavlarenaGame(t, "later", gameOpts{rolls: 1})
	lg := parse(t, later[0]).Game
	early := mkEvent(t, k, events.Header{Scheme: events.Tavlarena, Game: lg, Seq: 1, Emitter: emitterB}, move, nil)
	if o := mustAppend(t, l, inputs(t, early))[0]; o.Result != Rejected || o.Reject.Code != events.CodeUnknownGame {
		t.Errorf("an event of an uncommitted game: %v %v", o.Result, o.Reject)
	}
	appendAll(t, l, later, 2)

	// Squatting a game id the attacker learned in advance: a denial of
	// service, said to the owner, never a changed game.
	victim := k.tavlarenaGame(t, "squatted", gameOpts{rolls: 1})
	squat := k.tavlarenaGame(t, "squatted", gameOpts{rolls: 1, emitter: emitterB})
	appendAll(t, l, squat[:1], 1)
	o := mustAppend(t, l, inputs(t, victim[0]))[0]
	if o.Result != Rejected || o.Reject.Code != events.CodeGameExists {
		t.Errorf("the owner's commit of a squatted game id: %v %v", o.Result, o.Reject)
	}
	id := parse(t, victim[0]).ID
	if lo, err := l.Locate(ctx, emitterA, id); err != nil || lo.Result != Rejected || lo.Reject.Code != events.CodeGameExists {
		t.Errorf("Locate(owner, %q) = %+v, %v, want its game-exists rejection", id, lo, err)
	}
	if lo, err := l.Locate(ctx, emitterB, id); err != nil || lo.Result != Appended || lo.Index == 0 {
		t.Errorf("Locate(attacker, %q) = %+v, %v, want its own commit", id, lo, err)
	}
}

// format3 rewrites the dedup index of the closed ledger's store as store
// format 3 kept it (by event id alone, under 'i') and sets its format
// record to 3; the records of the given emitters' ids stay in the new
// index, as a migration interrupted after moving them leaves them.
func format3(t *testing.T, e *testEnv, origin string, moved func(key string) bool) (old int) {
	t.Helper()
	db := openRaw(t, e)
	defer db.Close()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixDedup}, UpperBound: prefixEnd(prefixDedup)})
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	for ok := it.First(); ok; ok = it.Next() {
		key := string(it.Key()[1:])
		if moved(key) {
			continue
		}
		_, id, _ := strings.Cut(key, "\x00")
		b.Set(strKey(prefixDedupV3, id), slices.Clone(it.Value()), nil)
		b.Delete(it.Key(), nil)
		old++
	}
	it.Close()
	b.DeleteRange([]byte{prefixOpen}, prefixEnd(prefixOpen), nil) // format 5's
	b.Set(keyFormat, append([]byte{3}, origin...), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if format6Heads(t, db, nil) == 0 { // format 7's
		t.Fatal("no game heads")
	}
	return old
}

// TestUpgradeFormat3 opens a store of format 3, whose dedup index was keyed
// by event id alone: Open moves every record to its (emitter, id) key, read
// from its leaf, the projections are as format 4 writes them (and as a
// Rebuild makes them), the format record says 4, and duplicates, lookups
// and appending go on. A migration interrupted between its batches (some
// records moved, the format still 3) is finished by the next Open.
func TestUpgradeFormat3(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chunk int
		moved func(key string) bool
	}{
		{"one batch", 0, func(string) bool { return false }},
		{"batches of 7", 7, func(string) bool { return false }},
		{"interrupted", 5, func(key string) bool { return strings.HasPrefix(key, emitterB+"\x00") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.cfg.migrateChunk = tc.chunk
			l := e.open()
			k := e.k
			gen := newStreamGen(t, k, "upgrade3", 5, 5)
			stream := gen.take(300)
			for i := range stream {
				if i%3 == 0 {
					stream[i] = withID(t, k, stream[i], fmt.Sprintf("own-%d", i))
				}
			}
			appendAll(t, l, stream, 25)
			a := chosenIDs(t, k, k.tavlarenaGame(t, "fmt3-a", gameOpts{rolls: 2}), "a-order")
			b := chosenIDs(t, k, k.tavlarenaGame(t, "fmt3-b", gameOpts{rolls: 2, emitter: emitterB}), "b-order")
			appendAll(t, l, a, 4)
			appendAll(t, l, b, 4)
			before := dumpProjections(t, l)
			size, _ := l.Size()
			l.Close()

			old := format3(t, e, l.origin, tc.moved)
			if old < 50 {
				t.Fatalf("the format-3 store has %d dedup records", old)
			}
			h := new(recordingHandler)
			e.cfg.Logger = slog.New(h)
			l = e.open()
			e.cfg.Logger = nil
			if from, resumed := headsLog(t, h); from != 3 || resumed {
				t.Errorf("the split of the heads logged from %d, resumed %v, want from 3", from, resumed)
			}
			if from := upgradeFrom(t, h, "upgrading the store: the open games of each emitter are counted"); from != 3 {
				t.Errorf("the count of the open games logged from %d, want 3", from)
			}
			diffDumps(t, before, dumpProjections(t, l))
			if f, err := get(l.db, keyFormat); err != nil || f[0] != storeFormat {
				t.Fatalf("format record %x, %v", f, err)
			}
			if n := len(indexedKeys(t, l.db, prefixDedupV3)); n != 0 {
				t.Errorf("%d format-3 dedup records left", n)
			}
			ctx := context.Background()
			for i := range stream {
				ev := parse(t, stream[i])
				if j, _, err := l.Lookup(ctx, ev.Emitter, ev.ID); err != nil || j != uint64(i) {
					t.Fatalf("Lookup(%s, %q) = %d, %v, want %d", ev.Emitter, ev.ID, j, err, i)
				}
			}
			for _, leaf := range [][]byte{stream[30], stream[31], a[2], b[3]} {
				if o := mustAppend(t, l, inputs(t, leaf))[0]; o.Result != Duplicate {
					t.Errorf("%q again after the upgrade: %v %v", parse(t, leaf).ID, o.Result, o.Reject)
				}
			}
			// Now the other emitter may take a's ids.
			appendAll(t, l, chosenIDs(t, k, k.tavlarenaGame(t, "fmt3-c", gameOpts{rolls: 2, emitter: emitterB}), "a-order"), 4)
			appendAll(t, l, gen.take(50), 10)
			if after, _ := l.Size(); after <= size {
				t.Error("nothing appended after the upgrade")
			}
			before = dumpProjections(t, l)
			if err := l.Rebuild(ctx); err != nil {
				t.Fatal(err)
			}
			diffDumps(t, before, dumpProjections(t, l))
		})
	}
}

// TestUpgradeFormat3Crash: the migration of a format-3 store is crashed
// after each of its durable batches (a power loss keeping only what was
// synced); every crashed store opens, finishes the migration and holds the
// same projections.
func TestUpgradeFormat3Crash(t *testing.T) {
	e := newTestEnv(t)
	mem := vfs.NewCrashableMem()
	e.fs, e.cfg.FS = mem, mem
	l := e.open()
	k := e.k
	stream := newStreamGen(t, k, "upgrade3-crash", 5, 5).take(120)
	for i := range stream {
		stream[i] = withID(t, k, stream[i], fmt.Sprintf("own-%d", i))
	}
	appendAll(t, l, stream, 20)
	want := dumpProjections(t, l)
	l.Close()
	format3(t, e, l.origin, func(string) bool { return false })

	var crashed []*vfs.MemFS
	syncs := &walFS{FS: mem}
	syncs.wrap = func(f vfs.File) vfs.File {
		return &syncHook{File: f, after: func() { crashed = append(crashed, mem.CrashClone(vfs.CrashCloneCfg{})) }}
	}
	e.cfg.FS = syncs
	e.cfg.migrateChunk = 16
	l = e.open()
	diffDumps(t, want, dumpProjections(t, l))
	l.Close()
	if len(crashed) < 120/16 {
		t.Fatalf("%d syncs during the migration", len(crashed))
	}
	for i, fs := range crashed {
		e.cfg.FS = fs
		l, err := Open(context.Background(), e.cfg)
		if err != nil {
			t.Fatalf("crash after sync %d: Open: %v", i, err)
		}
		diffDumps(t, want, dumpProjections(t, l))
		if n := len(indexedKeys(t, l.db, prefixDedupV3)); n != 0 {
			t.Errorf("crash after sync %d: %d format-3 records left", i, n)
		}
		l.Close()
	}
}

// A syncHook calls after once each sync of its file has returned.
type syncHook struct {
	vfs.File
	after func()
}

func (f *syncHook) Sync() error {
	err := f.File.Sync()
	f.after()
	return err
}

func (f *syncHook) SyncData() error {
	err := f.File.SyncData()
	f.after()
	return err
}

func (f *syncHook) SyncTo(n int64) (bool, error) {
	ok, err := f.File.SyncTo(n)
	f.after()
	return ok, err
}
