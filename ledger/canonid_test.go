package ledger

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"

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

// indexedIDs returns the ids that have a record in the dedup index.
func indexedIDs(t testing.TB, db pebble.Reader) map[string]bool {
	t.Helper()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixDedup}, UpperBound: prefixEnd(prefixDedup)})
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
		index, hash, err := l.Lookup(ctx, parse(t, tc.leaf).ID)
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
		if _, _, err := l.Lookup(ctx, id); !errors.Is(err, ErrNotFound) {
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
		b.Set(strKey(prefixDedup, ev.ID), dedupRecord{Index: uint64(i), LeafHash: merkle.LeafHash(leaf)}.append(nil), nil)
	}
	b.Set(keyFormat, append([]byte{2}, l.origin...), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if n := len(indexedIDs(t, db)); n != len(leaves) {
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
	if index, _, err := l.Lookup(context.Background(), taken); err != nil || index != 1 {
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
