package ledger

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// withID returns leaf as an event with another id (signed again if it is
// a binding event).
func withID(t testing.TB, k *testKeys, leaf []byte, id string) []byte {
	t.Helper()
	ev := parse(t, leaf)
	return mkEvent(t, k, events.Header{ID: id, Scheme: ev.Scheme, Game: ev.Game, Seq: ev.Seq, Emitter: ev.Emitter, Time: ev.Time}, ev.Body, nil)
}

// indexedIDs returns the ids that have a record in the dedup index (their
// emitter's name is left out).
func indexedIDs(t testing.TB, db pebble.Reader) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for k := range indexedKeys(t, db, prefixDedup) {
		_, id, ok := strings.Cut(k, "\x00")
		if !ok {
			t.Fatalf("dedup key %q has no emitter", k)
		}
		out[id] = true
	}
	return out
}

// indexedKeys returns the keys, without their prefix, of the dedup index
// (prefixDedup: emitter 0x00 id) or of format 3's (prefixDedupV3: id).
func indexedKeys(t testing.TB, db pebble.Reader, prefix byte) map[string]bool {
	t.Helper()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefix}, UpperBound: prefixEnd(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	out := map[string]bool{}
	for ok := it.First(); ok; ok = it.Next() {
		out[string(it.Key()[1:])] = true
	}
	return out
}

// TestCanonicalIDs appends one game with canonical ids and one whose odd
// events carry ids of their own: only the latter are in the dedup index,
// and both kinds are still found, as duplicates, as conflicts and by
// Lookup, once the sequencer has forgotten them (it keeps one group's ids).
func TestCanonicalIDs(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	l.seq.maxIDs = 1 // before any Append: the sequencer is idle
	k := e.k
	ctx := context.Background()
	ga := k.tavlarenaGame(t, "canon-a", gameOpts{rolls: 3})
	gb := k.tavlarenaGame(t, "canon-b", gameOpts{rolls: 3})
	gb = gb[:len(gb)-1] // b stays open
	own := map[string]bool{}
	for i := 1; i < len(gb); i += 2 {
		id := "b-own." + string(rune('a'+i))
		gb[i] = withID(t, k, gb[i], id)
		own[id] = true
	}
	appendAll(t, l, ga, 3)
	appendAll(t, l, gb, 3)
	appendAll(t, l, k.tavlarenaGame(t, "canon-c", gameOpts{rolls: 2}), 2) // more groups: the sequencer forgets a and b
	if got := indexedIDs(t, l.db); len(got) != len(own) {
		t.Errorf("the dedup index holds %d ids, want the %d that are not canonical: %v", len(got), len(own), got)
	} else {
		for id := range own {
			if !got[id] {
				t.Errorf("the dedup index lacks %q", id)
			}
		}
	}

	a, b := parse(t, ga[0]).Game, parse(t, gb[0]).Game
	size, _ := l.Size()
	for _, tc := range []struct {
		name  string
		leaf  []byte
		index uint64 // of the original
	}{
		{"canonical", ga[3], 3},
		{"canonical, a game's commit", ga[0], 0},
		{"own id", gb[1], uint64(len(ga)) + 1},
		{"canonical after an own id", gb[2], uint64(len(ga)) + 2},
	} {
		out := mustAppend(t, l, inputs(t, tc.leaf))[0]
		if out.Result != Duplicate || out.Index != tc.index {
			t.Errorf("%s again: %v %d (%v), want a duplicate of leaf %d", tc.name, out.Result, out.Index, out.Reject, tc.index)
		}
		index, hash, err := l.Lookup(ctx, emitterA, parse(t, tc.leaf).ID)
		if err != nil || index != tc.index || hash != merkle.LeafHash(tc.leaf) {
			t.Errorf("%s: Lookup = %d %x %v, want %d", tc.name, index, hash[:4], err, tc.index)
		}
	}
	move := events.Move{N: 0, Play: "x"}
	for _, tc := range []struct {
		name string
		data []byte
		code events.Code
	}{
		{"a canonical id with other bytes", mkEvent(t, k, events.Header{Scheme: events.Tavlarena, Game: a, Seq: 3, Emitter: emitterA}, move, nil), events.CodeDuplicateID},
		{"an own id with other bytes", withID(t, k, mkEvent(t, k, events.Header{Scheme: events.Tavlarena, Game: a, Seq: 3, Emitter: emitterA}, move, nil), "b-own.b"), events.CodeDuplicateID},
		// Event 1 of b has an id of its own, so b:1 is not in the log:
		// the event is new, at a seq already taken.
		{"the canonical id of an event logged with its own", mkEvent(t, k, events.Header{Scheme: events.Tavlarena, Game: b, Seq: 1, Emitter: emitterA}, move, nil), events.CodeOutOfOrder},
		{"the canonical id of another game's event", withID(t, k, ga[len(ga)-1], events.CanonicalID(b, 99)), events.CodeReservedID},
		{"the canonical id of another seq", withID(t, k, ga[len(ga)-1], events.CanonicalID(a, 2)), events.CodeReservedID},
	} {
		out := mustAppend(t, l, inputs(t, tc.data))[0]
		if out.Result != Rejected || out.Reject.Code != tc.code {
			t.Errorf("%s: %v %v, want %s", tc.name, out.Result, out.Reject, tc.code)
		}
	}
	if after, _ := l.Size(); after != size {
		t.Errorf("%d leaves appended", after-size)
	}
	for _, id := range []string{events.CanonicalID(b, 1), events.CanonicalID(a, uint64(len(ga))), events.CanonicalID(testUUID("none").String(), 0), "no-such-id"} {
		if _, _, err := l.Lookup(ctx, emitterA, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Lookup(%q): %v, want ErrNotFound", id, err)
		}
	}

	before := dumpProjections(t, l)
	if err := l.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	diffDumps(t, before, dumpProjections(t, l))
}

// TestUpgradeFormat2 opens a store of format 2, which kept a dedup record
// for every id: Open rebuilds its projections, the canonical ids' records
// are gone, and the rest is as format 3 writes it.
func TestUpgradeFormat2(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	gen := newStreamGen(t, e.k, "upgrade2", 7, 5)
	leaves := gen.take(600)
	leaves[10] = withID(t, e.k, leaves[10], "own-10")
	appendAll(t, l, leaves, 50)
	before := dumpProjections(t, l)
	l.Close()

	db := openRaw(t, e)
	b := db.NewBatch()
	for i, leaf := range leaves {
		ev := parse(t, leaf)
		b.Set(strKey(prefixDedupV3, ev.ID), dedupRecord{Index: uint64(i), LeafHash: merkle.LeafHash(leaf)}.append(nil), nil)
	}
	b.DeleteRange([]byte{prefixDedup}, prefixEnd(prefixDedup), nil) // format 2 had no per-emitter index
	b.Set(keyFormat, append([]byte{2}, l.origin...), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if n := len(indexedKeys(t, db, prefixDedupV3)); n != len(leaves) {
		t.Fatalf("format 2 store: %d dedup records", n)
	}
	db.Close()

	l = e.open()
	diffDumps(t, before, dumpProjections(t, l))
	if f, err := get(l.db, keyFormat); err != nil || f[0] != storeFormat {
		t.Fatalf("format record %x, %v", f, err)
	}
	if got := indexedIDs(t, l.db); len(got) != 1 || !got["own-10"] {
		t.Errorf("dedup records after the upgrade: %v", got)
	}
	if got := indexedKeys(t, l.db, prefixDedupV3); len(got) != 0 {
		t.Errorf("format 2's dedup records left after the upgrade: %d", len(got))
	}
	if out := mustAppend(t, l, inputs(t, leaves[300]))[0]; out.Result != Duplicate || out.Index != 300 {
		t.Errorf("a duplicate after the upgrade: %+v", out)
	}
	appendAll(t, l, gen.take(100), 50)
}

// TestLegacyIDs: a log from before format 3 may hold an event whose id is
// another event's canonical id. Upgraded, the ledger marks it and keeps
// looking canonical ids up in the index, so the later event with that
// canonical id is refused as a duplicate id, not appended again under it.
func TestLegacyIDs(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	l.allowReservedIDs = true // as versions before format 3 did
	k := e.k
	gc := k.tavlarenaGame(t, "legacy-c", gameOpts{rolls: 1})
	gb := k.tavlarenaGame(t, "legacy-b", gameOpts{rolls: 1})
	c := parse(t, gc[0]).Game
	taken := events.CanonicalID(c, 1)
	gb[0] = withID(t, k, gb[0], taken)
	appendAll(t, l, [][]byte{gc[0], gb[0]}, 1)
	l.Close()

	db := openRaw(t, e)
	if err := db.Set(keyFormat, append([]byte{2}, l.origin...), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	db.Close()
	l = e.open()
	if !l.legacyIDs.Load() {
		t.Fatal("the upgrade did not mark the legacy id")
	}
	if index, _, err := l.Lookup(context.Background(), emitterA, taken); err != nil || index != 1 {
		t.Errorf("Lookup(%q) = %d, %v, want leaf 1", taken, index, err)
	}
	out := mustAppend(t, l, inputs(t, gc[1]))[0]
	if out.Result != Rejected || out.Reject.Code != events.CodeDuplicateID || !strings.Contains(out.Reject.Msg, "leaf 1 ") {
		t.Errorf("event 1 of game c, whose id an older event took: %v %v", out.Result, out.Reject)
	}
	appendAll(t, l, gb[1:], 2)

	// The mark is a projection: a Rebuild finds it again, and Open reads it.
	before := dumpProjections(t, l)
	if _, ok := before[string(keyLegacyIDs)]; !ok {
		t.Error("no legacy-ids record")
	}
	if err := l.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	diffDumps(t, before, dumpProjections(t, l))
	l.Close()
	if l = e.open(); !l.legacyIDs.Load() {
		t.Error("Open did not read the legacy-ids record")
	}
}

// A gateFS holds every WAL sync while it is shut, so that the group being
// committed stays uncommitted and the sequencer prepares the next ones.
type gateFS struct {
	walFS
	shut atomic.Bool
	hit  chan struct{} // receives once per sync held
	open chan struct{} // closed to let the syncs through
}

func (g *gateFS) wrapWAL(f vfs.File) vfs.File { return &gateFile{File: f, g: g} }

type gateFile struct {
	vfs.File
	g *gateFS
}

func (f *gateFile) wait() {
	if f.g.shut.Load() {
		f.g.hit <- struct{}{}
		<-f.g.open
	}
}

func (f *gateFile) Sync() error     { f.wait(); return f.File.Sync() }
func (f *gateFile) SyncData() error { f.wait(); return f.File.SyncData() }
func (f *gateFile) SyncTo(n int64) (bool, error) {
	f.wait()
	return f.File.SyncTo(n)
}

// waitSequencerBlocked waits until the sequencer goroutine is blocked
// handing a prepared group to the committer: the groups before it are
// prepared, dedup included.
func waitSequencerBlocked(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for range 2000 {
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if strings.Contains(g, "[chan send") && strings.Contains(g, "ledger.(*sequencer).prepareGroup") {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the sequencer never blocked on the committer")
}

// TestCanonicalIDsInFlight: an event with its canonical id is found as a
// duplicate (or a conflict, with other bytes) while the group that appended
// it is not yet committed, and within the group that appends it, where
// Pebble cannot see it yet.
func TestCanonicalIDsInFlight(t *testing.T) {
	e := newTestEnv(t)
	gate := &gateFS{hit: make(chan struct{}), open: make(chan struct{})}
	gate.walFS = walFS{e.fs, gate.wrapWAL}
	e.cfg.FS = gate
	l := e.open()
	k := e.k
	g := k.tavlarenaGame(t, "in-flight", gameOpts{rolls: 3})
	ev := parse(t, g[2])
	other := mkEvent(t, k, events.Header{Scheme: ev.Scheme, Game: ev.Game, Seq: ev.Seq, Emitter: ev.Emitter}, events.Move{N: 0, Play: "x"}, nil)
	if !ev.HasCanonicalID() || parse(t, other).ID != ev.ID {
		t.Fatal("the test events do not have the canonical id")
	}

	// Within one group: the first copy is appended, the second is a
	// duplicate of it, other bytes under its id are refused.
	out := mustAppend(t, l, inputs(t, g[0], g[1], g[0], g[2], g[2], other))
	want := []struct {
		r     Result
		index uint64
	}{{Appended, 0}, {Appended, 1}, {Duplicate, 0}, {Appended, 2}, {Duplicate, 2}, {Rejected, 0}}
	for i, w := range want {
		if out[i].Result != w.r || (w.r != Rejected && out[i].Index != w.index) {
			t.Errorf("same group, input %d: %v at %d (%v), want %v at %d", i, out[i].Result, out[i].Index, out[i].Reject, w.r, w.index)
		}
	}
	if out[5].Reject == nil || out[5].Reject.Code != events.CodeDuplicateID {
		t.Errorf("same group, other bytes under a canonical id: %v, want %s", out[5].Reject, events.CodeDuplicateID)
	}

	// Across groups: the group appending g[3] and g[4] is held in its WAL
	// sync while the next group sends them again. (Pebble makes a batch
	// readable before that sync returns, so here Pebble could answer too;
	// within the group being prepared, above, only fLeaves can.)
	gate.shut.Store(true)
	first := make(chan []Outcome, 1)
	go func() { first <- mustAppend(t, l, inputs(t, g[3], g[4])) }()
	<-gate.hit
	gate.shut.Store(false)
	second := make(chan []Outcome, 1)
	other4 := mkEvent(t, k, events.Header{Scheme: ev.Scheme, Game: ev.Game, Seq: 4, Emitter: ev.Emitter}, events.Move{N: 1, Play: "y"}, nil)
	go func() { second <- mustAppend(t, l, inputs(t, g[3], g[4], other4)) }()
	waitSequencerBlocked(t)
	close(gate.open)
	a, b := <-first, <-second
	for i := range 2 {
		if a[i].Result != Appended || a[i].Index != uint64(3+i) {
			t.Errorf("held group, input %d: %v at %d (%v)", i, a[i].Result, a[i].Index, a[i].Reject)
		}
		if b[i].Result != Duplicate || b[i].Index != uint64(3+i) {
			t.Errorf("next group, input %d: %v at %d (%v), want a duplicate of leaf %d", i, b[i].Result, b[i].Index, b[i].Reject, 3+i)
		}
	}
	if b[2].Result != Rejected || b[2].Reject.Code != events.CodeDuplicateID {
		t.Errorf("next group, other bytes under an uncommitted canonical id: %v %v, want %s", b[2].Result, b[2].Reject, events.CodeDuplicateID)
	}
	if size, _ := l.Size(); size != 5 {
		t.Errorf("log has %d leaves, want 5", size)
	}
}
