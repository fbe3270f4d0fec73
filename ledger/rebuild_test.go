package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/events"
)

// TestRebuildIdentity rebuilds the projections of a log with duplicates,
// rejections and failed reveals and checks that they are byte for byte the
// same; then it damages the projections and rebuilds them again.
func TestRebuildIdentity(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	ctx := context.Background()
	gen := newStreamGen(t, e.k, "rebuild", 13, 7)
	var in []Input
	for i := range 2500 {
		leaf := gen.next()
		in = append(in, inputs(t, leaf)...)
		if i%97 == 0 {
			in = append(in, inputs(t, leaf)...) // a duplicate
			in = append(in, Input{Emitter: emitterB, Data: leaf})
		}
	}
	in = append(in, inputs(t, e.k.tavlarenaGame(t, "rb-bad", gameOpts{rolls: 2, badSeed: true})...)...)
	in = append(in, inputs(t, e.k.perRollMatch(t, "rb-bad2", gameOpts{rolls: 3, badSeed: true})...)...)
	for i := 0; i < len(in); i += 100 {
		mustAppend(t, l, in[i:min(i+100, len(in))])
	}
	before := dumpProjections(t, l)
	if len(before) < 100 {
		t.Fatalf("only %d projection records", len(before))
	}
	if err := l.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	diffDumps(t, before, dumpProjections(t, l))

	// Damage: delete a game, change another, drop the stats; Rebuild
	// restores them. Then an interrupted rebuild (the marker left behind)
	// is finished by Open.
	l.Close()
	db := openRaw(t, e)
	var gameKeys [][]byte
	for k := range before {
		if k[0] == prefixGame && len(gameKeys) < 2 {
			gameKeys = append(gameKeys, []byte(k))
		}
	}
	db.Delete(gameKeys[0], nil)
	db.Set(gameKeys[1], []byte{1, 2, 3}, nil)
	db.Delete(keyStats, nil)
	db.Set(keyRebuild, nil, nil)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	l = e.open()
	diffDumps(t, before, dumpProjections(t, l))
	// And appending continues on the rebuilt projections.
	appendAll(t, l, gen.take(50), 25)
}

// TestRebuildRefusedLeaf rebuilds with a configuration that refuses a
// logged event (the drand chain is no longer pinned): the ledger stops and
// names the leaf.
func TestRebuildRefusedLeaf(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	appendAll(t, l, e.k.anchoredGame(t, "unpinned", gameOpts{rolls: 1}), 4)
	l.Close()
	e.cfg.Beacons = nil
	l = e.open()
	err := l.Rebuild(context.Background())
	if !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "leaf 0") || !strings.Contains(err.Error(), string(events.CodeUnknownChain)) {
		t.Fatalf("Rebuild: %v", err)
	}
	if _, err := l.Append(context.Background(), nil); !errors.Is(err, ErrStopped) {
		t.Errorf("Append after a failed rebuild: %v", err)
	}
	l.Close()
	if _, err := Open(context.Background(), e.cfg); err == nil || !strings.Contains(err.Error(), "interrupted rebuild") {
		t.Errorf("Open after a failed rebuild: %v", err)
	}
}

// TestUpgradeFormat1 opens a store of format 1, which kept each game's
// state whole under 'g' with no history chunks: Open rebuilds the
// projections into heads and chunks, the games' states are the same, the
// format record says the current format, and appending goes on. A store of a format this
// version does not know is refused.
func TestUpgradeFormat1(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	gen := newStreamGen(t, e.k, "upgrade", 11, 5)
	appendAll(t, l, gen.take(1200), 100)
	before := dumpProjections(t, l)
	var games int
	for k := range before {
		if k[0] == prefixGame {
			games++
		}
	}
	if games < 11 {
		t.Fatalf("only %d games", games)
	}
	l.Close()

	// Format 1: whole states under 'g', no 'h', format byte 1.
	db := openRaw(t, e)
	b := db.NewBatch()
	for k, whole := range before {
		if k[0] == prefixGame {
			b.Set([]byte(k), whole, nil)
		}
	}
	b.DeleteRange([]byte{prefixHistory}, prefixEnd(prefixHistory), nil)
	b.Set(keyFormat, append([]byte{1}, l.origin...), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	l = e.open()
	diffDumps(t, before, dumpProjections(t, l))
	if f, err := get(l.db, keyFormat); err != nil || f[0] != storeFormat {
		t.Fatalf("format record %x, %v", f, err)
	}
	chunks := 0
	it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixHistory}, UpperBound: prefixEnd(prefixHistory)})
	if err != nil {
		t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		chunks++
	}
	it.Close()
	if chunks < games {
		t.Errorf("%d history chunks for %d games", chunks, games)
	}
	appendAll(t, l, gen.take(300), 50)
	l.Close()

	db = openRaw(t, e)
	if err := db.Set(keyFormat, append([]byte{storeFormat + 1}, l.origin...), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(context.Background(), e.cfg); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), fmt.Sprintf("store format %02x", storeFormat+1)) {
		t.Errorf("a store of format %d: %v", storeFormat+1, err)
	}
}

// TestSmallGameCache appends the same interleaved games to two ledgers, one
// whose cache holds a single game, so that nearly every event's game is
// read back from its head and history chunks, and one with the default
// cache: the logs, the projections and every game's state are the same.
func TestSmallGameCache(t *testing.T) {
	e := newTestEnv(t)
	other := *e
	other.fs, other.clock = vfs.NewMem(), newFakeClock()
	other.cfg.FS, other.cfg.Now = other.fs, other.clock.Now
	e.cfg.GameCacheBytes = 1
	small, big := e.open(), other.open()
	gen := newStreamGen(t, e.k, "cache", 17, 9)
	leaves := gen.take(1500)
	for i, size := 0, 1; i < len(leaves); i, size = i+size, size%50+7 {
		in := inputs(t, leaves[i:min(i+size, len(leaves))]...)
		mustAppend(t, small, in)
		mustAppend(t, big, in)
	}
	a, b := dumpProjections(t, small), dumpProjections(t, big)
	diffDumps(t, a, b)
	games := 0
	for k := range a {
		if k[0] == prefixGame {
			games++
		}
	}
	n1, _ := small.Size()
	n2, _ := big.Size()
	if games < 20 || n1 != n2 || n1 != uint64(len(leaves)) {
		t.Fatalf("%d games, sizes %d and %d of %d leaves", games, n1, n2, len(leaves))
	}
}
