package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// A fakeClock advances one millisecond per reading.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: testStart} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// testEnv is a ledger on an in-memory file system, with the test keys and a
// fake clock, and no signer loop: tests sign with Sign.
type testEnv struct {
	t     testing.TB
	k     *testKeys
	fs    vfs.FS
	clock *fakeClock
	cfg   Config
}

func newTestEnv(t testing.TB) *testEnv {
	k := newTestKeys(t)
	e := &testEnv{t: t, k: k, fs: vfs.NewMem(), clock: newFakeClock()}
	e.cfg = Config{
		Dir:                "db",
		FS:                 e.fs,
		Signer:             k.signer,
		Verifier:           k.verifier,
		Emitters:           k.keyring,
		Beacons:            testBeacons,
		CheckpointInterval: -1,
		Now:                e.clock.Now,
	}
	return e
}

func (e *testEnv) open() *Ledger {
	e.t.Helper()
	l, err := Open(context.Background(), e.cfg)
	if err != nil {
		e.t.Fatalf("Open: %v", err)
	}
	e.t.Cleanup(func() { l.Close() })
	return l
}

func mustAppend(t testing.TB, l *Ledger, in []Input) []Outcome {
	t.Helper()
	out, err := l.Append(context.Background(), in)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if len(out) != len(in) {
		t.Fatalf("Append returned %d outcomes for %d inputs", len(out), len(in))
	}
	return out
}

// appendAll appends leaves in calls of n and checks they are all appended
// at consecutive indices.
func appendAll(t testing.TB, l *Ledger, leaves [][]byte, n int) {
	t.Helper()
	size, err := l.Size()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(leaves); i += n {
		out := mustAppend(t, l, inputs(t, leaves[i:min(i+n, len(leaves))]...))
		for j, o := range out {
			if o.Result != Appended || o.Index != size {
				t.Fatalf("input %d: %+v (reject %v), want appended at %d", i+j, o, o.Reject, size)
			}
			size++
		}
	}
}

func mustSign(t testing.TB, l *Ledger) merkle.Checkpoint {
	t.Helper()
	n, err := l.Sign(context.Background())
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	cp, err := merkle.Open(n, l.cfg.Verifier)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// dumpProjections returns every projection record of the store.
func dumpProjections(t testing.TB, l *Ledger) map[string][]byte {
	t.Helper()
	v, err := l.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer v.release()
	out := map[string][]byte{}
	for _, p := range []byte{prefixDedup, prefixGame, prefixLive, prefixFinished, prefixOpen} {
		it, err := v.snap.NewIter(&pebble.IterOptions{LowerBound: []byte{p}, UpperBound: prefixEnd(p)})
		if err != nil {
			t.Fatal(err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			out[string(it.Key())] = slices.Clone(it.Value())
		}
		it.Close()
	}
	// A game's state is its head, its live part and its history chunks,
	// which a rebuild may cut in other places: the dump holds the whole
	// state and the head record's bytes, and every live part and chunk
	// must belong to a game, by its number (store format 9).
	heads := map[string][]byte{}
	numbers := map[uint64]bool{}
	for k, rec := range out {
		if k[0] != prefixGame {
			continue
		}
		at, _, err := parseHeadRecord(k[1:], rec)
		if err != nil || !at.numbered {
			t.Fatalf("game %q: head record %x: %v", k[1:], rec, err)
		}
		if numbers[at.n] {
			t.Fatalf("game %q: number %d is another game's too", k[1:], at.n)
		}
		numbers[at.n] = true
		g, err := loadGame(v.snap, k[1:])
		if err != nil || g == nil {
			t.Fatalf("game %q: %v", k[1:], err)
		}
		out[k] = mustMarshalGame(t, g)
		heads["head "+k[1:]] = rec
	}
	for k := range out {
		if k[0] == prefixLive && (len(k) != 9 || !numbers[binary.BigEndian.Uint64([]byte(k[1:]))]) {
			t.Errorf("live part %q of no game", k)
		}
	}
	maps.Copy(out, heads)
	it, err := v.snap.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixHistory}, UpperBound: prefixEnd(prefixHistory)})
	if err != nil {
		t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != 17 {
			t.Errorf("history chunk key %q", k)
			continue
		}
		if !numbers[binary.BigEndian.Uint64(k[1:])] {
			t.Errorf("history chunk %q of no game", k)
		}
	}
	it.Close()
	if s, err := get(v.snap, keyStats); err == nil {
		out[string(keyStats)] = s
	}
	if _, err := get(v.snap, keyLegacyIDs); err == nil {
		out[string(keyLegacyIDs)] = []byte{}
	}
	if _, err := get(v.snap, keyRebuild); !errors.Is(err, pebble.ErrNotFound) {
		t.Fatalf("rebuild marker: %v", err)
	}
	if _, err := get(v.snap, keySplitHeads); !errors.Is(err, pebble.ErrNotFound) {
		t.Fatalf("the marker of the split of the game heads: %v", err)
	}
	if _, err := get(v.snap, keyGameNums); !errors.Is(err, pebble.ErrNotFound) {
		t.Fatalf("the marker of the move of the games to their numbers: %v", err)
	}
	return out
}

func mustMarshalGame(t testing.TB, g *events.Game) []byte {
	t.Helper()
	b, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func diffDumps(t testing.TB, a, b map[string][]byte) {
	t.Helper()
	for k, v := range a {
		if w, ok := b[k]; !ok {
			t.Errorf("key %q: only before", k)
		} else if !bytes.Equal(v, w) {
			t.Errorf("key %q: %x before, %x after", k, v, w)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("key %q: only after", k)
		}
	}
}

func parse(t testing.TB, leaf []byte) *events.Event {
	t.Helper()
	ev, err := events.Parse(leaf)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// openRaw opens the test ledger's Pebble store directly, to damage it.
func openRaw(t testing.TB, e *testEnv) *pebble.DB {
	t.Helper()
	db, err := pebble.Open(e.cfg.Dir, &pebble.Options{FS: e.fs, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)         {}
func (quietLogger) Errorf(string, ...any)        {}
func (quietLogger) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }

// format8Games rewrites every game of db as store format 8 kept it: its
// head record without its number, its live part and history chunks under
// its id's keys ('l' game, 'h' game 0x00 I), the values as they are, and
// leaves the format record to the caller; but the games numbered says are
// numbered stay as they are, as a migration interrupted after them leaves
// them (numbered nil: none). It returns how many games it rewrote.
func format8Games(t testing.TB, db *pebble.DB, numbered func(game string) bool) int {
	t.Helper()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixGame}, UpperBound: prefixEnd(prefixGame)})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	b := db.NewBatch()
	defer b.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		id := string(it.Key()[1:])
		at, head, err := parseHeadRecord(id, it.Value())
		if err != nil {
			t.Fatal(err)
		}
		if !at.numbered || numbered != nil && numbered(id) {
			continue
		}
		old := gamePlace{id: id}
		live, err := get(db, at.liveKey())
		if err != nil {
			t.Fatalf("the live part of game %q: %v", id, err)
		}
		b.Delete(at.liveKey(), nil)
		b.Set(old.liveKey(), live, nil)
		lo, hi := at.historyBounds()
		olo, _ := old.historyBounds()
		hs, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			t.Fatal(err)
		}
		for ok := hs.First(); ok; ok = hs.Next() {
			b.Delete(hs.Key(), nil)
			b.Set(append(slices.Clone(olo), hs.Key()[len(lo):]...), hs.Value(), nil)
		}
		if err := hs.Close(); err != nil {
			t.Fatal(err)
		}
		b.Set(it.Key(), head, nil)
		n++
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	return n
}

// format6Heads rewrites every game of db as store format 6 kept it: its
// head as its state without its history (events.Game.MarshalBinary's
// version 2, rewritten at each event), no live part, its history chunks
// under its id's keys (format8Games), and leaves the format record to the
// caller; but the heads of the games split says are split stay as format
// 8 wrote them, as a migration interrupted after them leaves them (split
// nil: none). It returns how many heads it rewrote.
func format6Heads(t testing.TB, db *pebble.DB, split func(game string) bool) int {
	t.Helper()
	format8Games(t, db, nil)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixGame}, UpperBound: prefixEnd(prefixGame)})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	b := db.NewBatch()
	defer b.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if split != nil && split(string(it.Key()[1:])) {
			continue
		}
		live, err := get(db, strKey(prefixLive, string(it.Key()[1:])))
		if err != nil {
			t.Fatalf("the live part of game %q: %v", it.Key()[1:], err)
		}
		var g events.Game
		if err := g.UnmarshalSplit(it.Value(), live, nil); err != nil {
			t.Fatal(err)
		}
		old, err := g.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		b.Set(it.Key(), old, nil)
		b.Delete(strKey(prefixLive, string(it.Key()[1:])), nil)
		n++
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	return n
}

// splitHeads reports how many games of r have a head of format 7 on and a
// live part (where the head record says: by number or by id), and how many
// a head of format 6 and none; any other game fails t.
func splitHeads(t testing.TB, r pebble.Reader) (split, old int) {
	t.Helper()
	lives := indexedKeys(t, r, prefixLive)
	for id := range indexedKeys(t, r, prefixGame) {
		rec, err := get(r, strKey(prefixGame, id))
		if err != nil {
			t.Fatal(err)
		}
		at, head, err := parseHeadRecord(id, rec)
		if err != nil {
			t.Fatal(err)
		}
		lk := string(at.liveKey()[1:])
		hasLive := lives[lk]
		delete(lives, lk)
		switch {
		case oldHead(head) && !hasLive:
			old++
		case !oldHead(head) && hasLive:
			split++
		default:
			t.Fatalf("game %q: a head of format 6 %v, a live part %v", id, oldHead(head), hasLive)
		}
	}
	if len(lives) > 0 {
		t.Fatalf("%d live parts without a head", len(lives))
	}
	return split, old
}
