package ledger

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zarlog/zarlog/events"
)

// appendOne appends one leaf and returns its outcome.
func appendOne(t *testing.T, l *Ledger, leaf []byte) Outcome {
	t.Helper()
	return mustAppend(t, l, inputs(t, leaf))[0]
}

// wantRefused checks that o is a refusal with code, whose reason names
// every word of want.
func wantRefused(t *testing.T, what string, o Outcome, code events.Code, want ...string) {
	t.Helper()
	if o.Result != Rejected || o.Reject == nil || o.Reject.Code != code {
		t.Fatalf("%s: %+v (reject %v), want refused %s", what, o, o.Reject, code)
	}
	for _, w := range want {
		if !strings.Contains(o.Reject.Msg, w) {
			t.Errorf("%s: the reason %q does not say %q", what, o.Reject.Msg, w)
		}
	}
}

// TestOpenGameLimits: one emitter (nard-west) at its limit of open games,
// of their bytes, of one game's bytes or at the service's limit of open
// game bytes is refused with a code and a reason naming it and the limit,
// counted by emitter and limit; the other emitter's games go on; an
// emitter's game at a limit can still finish (end, reveal); once games end,
// the emitter may open more; the counts survive a restart and a Rebuild
// gives them again.
func TestOpenGameLimits(t *testing.T) {
	e := newTestEnv(t)
	reg := prometheus.NewRegistry()
	e.cfg.Metrics = reg
	e.cfg.OpenGamesPerEmitter = 3
	l := e.open()
	mallory, alice := gameOpts{emitter: emitterB, rolls: 2}, gameOpts{rolls: 2}
	var mGames [][][]byte
	for i := range 4 {
		mGames = append(mGames, e.k.perRollMatch(t, fmt.Sprintf("m%d", i), mallory))
	}
	for i := range 3 {
		if o := appendOne(t, l, mGames[i][0]); o.Result != Appended {
			t.Fatalf("mallory's commit %d: %+v", i, o)
		}
	}
	wantRefused(t, "mallory's 4th commit", appendOne(t, l, mGames[3][0]), CodeOverLimit, emitterB, "3 open games", "open-games-per-emitter 3")
	if got := testutil.ToFloat64(l.met.limitRefusals.WithLabelValues(emitterB, LimitOpenGamesPerEmitter)); got != 1 {
		t.Errorf("refusals counted: %v", got)
	}
	// alice is not counted against mallory.
	for i := range 3 {
		appendAll(t, l, e.k.perRollMatch(t, fmt.Sprintf("a%d", i), alice)[:1], 1)
	}
	if got := l.OpenGames(); got[emitterB].Games != 3 || got[emitterA].Games != 3 {
		t.Fatalf("open games %+v", got)
	}
	// mallory finishes one: its 4th may begin.
	appendAll(t, l, mGames[0][1:], 3)
	if o := appendOne(t, l, mGames[3][0]); o.Result != Appended {
		t.Fatalf("mallory's 4th commit once one game ended: %+v", o)
	}
	open := l.OpenGames()
	if open[emitterB].Games != 3 || open[emitterB].Bytes == 0 {
		t.Fatalf("open games %+v", open)
	}
	if got := testutil.ToFloat64(l.met.openGames.WithLabelValues(emitterB)); got != 3 {
		t.Errorf("zarlog_ledger_open_games{emitter=%s} %v", emitterB, got)
	}

	// The counts are durable, and a Rebuild makes the same records.
	before := dumpProjections(t, l)
	l.Close()
	e.cfg.Metrics = nil
	l = e.open()
	if got := l.OpenGames(); fmt.Sprint(got) != fmt.Sprint(open) {
		t.Fatalf("open games after a restart %+v, want %+v", got, open)
	}
	if err := l.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	diffDumps(t, before, dumpProjections(t, l))
	if got := l.OpenGames(); fmt.Sprint(got) != fmt.Sprint(open) {
		t.Fatalf("open games after a Rebuild %+v, want %+v", got, open)
	}
}

// TestOpenGameBytesLimits: the limits in bytes. A commit or a roll that
// would take its emitter's open games, all emitters' or its game past its
// bytes is refused; the events that finish a game or its pending roll
// never are.
func TestOpenGameBytesLimits(t *testing.T) {
	probe := newTestEnv(t)
	pl := probe.open()
	one := probe.k.perRollMatch(t, "probe", gameOpts{emitter: emitterB, rolls: 1})
	appendAll(t, pl, one[:1], 1)
	commit := int(pl.OpenGames()[emitterB].Bytes) // a per-roll match's state after its commit
	appendAll(t, pl, one[1:5], 1)
	oneRoll := int(pl.OpenGames()[emitterB].Bytes) // after its first roll and move

	t.Run("per emitter", func(t *testing.T) {
		e := newTestEnv(t)
		e.cfg.OpenGameBytesPerEmitter = int64(2*commit + commit/2)
		l := e.open()
		for i := range 2 {
			appendAll(t, l, e.k.perRollMatch(t, fmt.Sprintf("m%d", i), gameOpts{emitter: emitterB})[:1], 1)
		}
		third := e.k.perRollMatch(t, "m2", gameOpts{emitter: emitterB})
		wantRefused(t, "a third commit", appendOne(t, l, third[0]), CodeOverLimit, emitterB, "open-game-bytes-per-emitter")
		appendAll(t, l, e.k.perRollMatch(t, "a0", gameOpts{})[:1], 1) // another emitter's
	})
	t.Run("all emitters", func(t *testing.T) {
		e := newTestEnv(t)
		e.cfg.OpenGameBytes = int64(2*commit + commit/2)
		l := e.open()
		appendAll(t, l, e.k.perRollMatch(t, "m0", gameOpts{emitter: emitterB})[:1], 1)
		appendAll(t, l, e.k.perRollMatch(t, "a0", gameOpts{})[:1], 1)
		third := e.k.perRollMatch(t, "a1", gameOpts{})
		wantRefused(t, "a third commit", appendOne(t, l, third[0]), CodeOverLimit, emitterA, "service's limit", "open-game-bytes")
	})
	t.Run("one game", func(t *testing.T) {
		e := newTestEnv(t)
		e.cfg.MaxGameBytes = oneRoll + 50
		l := e.open()
		m := e.k.perRollMatch(t, "m0", gameOpts{emitter: emitterB, rolls: 3})
		// commit; then each roll: roll-commit, roll-second, roll-reveal, move.
		appendAll(t, l, m[:1+4], 1)
		wantRefused(t, "the second roll-commit", appendOne(t, l, m[5]), CodeGameTooLarge, emitterB, "max-game-bytes")
		// The end finishes the game whatever its size (the same match,
		// made with one roll: its end is seq 5).
		short := e.k.perRollMatch(t, "m0", gameOpts{emitter: emitterB, rolls: 1})
		appendAll(t, l, short[len(short)-1:], 1)
		if got := l.OpenGames()[emitterB]; got.Games != 0 || got.Bytes != 0 {
			t.Fatalf("open games after the end: %+v", got)
		}
	})
}

// TestUpgradeFormat4: a store of format 4 had no open-game counts; Open
// counts them from the games' states (format 6's heads), then splits the
// heads (format 7), logging that the split began at format 4.
func TestUpgradeFormat4(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	gen := newStreamGen(t, e.k, "fmt4", 5, 9)
	appendAll(t, l, gen.take(700), 50)
	want := l.OpenGames()
	if len(want) != 2 {
		t.Fatalf("open games %+v", want)
	}
	before := dumpProjections(t, l)
	l.Close()
	db := openRaw(t, e)
	b := db.NewBatch()
	b.DeleteRange([]byte{prefixOpen}, prefixEnd(prefixOpen), nil)
	b.Set(keyFormat, append([]byte{4}, testOrigin...), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	format6Heads(t, db, nil)
	db.Close()
	h := new(recordingHandler)
	e.cfg.Logger = slog.New(h)
	l = e.open()
	if from, resumed := headsLog(t, h); from != 4 || resumed {
		t.Errorf("the split of the heads logged from %d, resumed %v, want from 4", from, resumed)
	}
	if from := upgradeFrom(t, h, "upgrading the store: the open games of each emitter are counted"); from != 4 {
		t.Errorf("the count of the open games logged from %d, want 4", from)
	}
	if got := l.OpenGames(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("open games counted %+v, want %+v", got, want)
	}
	diffDumps(t, before, dumpProjections(t, l))
	if f, err := get(l.db, keyFormat); err != nil || f[0] != storeFormat {
		t.Fatalf("format %x, %v", f, err)
	}
	if split, old := splitHeads(t, l.db); split == 0 || old != 0 {
		t.Fatalf("%d heads split, %d of format 6", split, old)
	}
}

// TestGameCacheShares: the cache drops the states of the emitter holding
// the most bytes first, so an emitter that opens many large games pushes
// out its own states, not another's that holds less.
func TestGameCacheShares(t *testing.T) {
	c := newGameCache(100_000)
	state := func(emitter string, settings int) (*events.Game, int) {
		g := &events.Game{Emitter: emitter, Settings: make([]byte, settings)}
		return g, g.Size()
	}
	for i := range 10 {
		g, n := state("alice", 1000)
		c.put(fmt.Sprintf("a%d", i), g, n)
	}
	aliceBytes := c.emitterBytes("alice")
	for i := range 1000 {
		g, n := state("mallory", 4000)
		c.put(fmt.Sprintf("m%d", i), g, n)
		if c.bytes > c.max {
			t.Fatalf("cache holds %d bytes, bound %d", c.bytes, c.max)
		}
	}
	for i := range 10 {
		if _, _, ok := c.get(fmt.Sprintf("a%d", i)); !ok {
			t.Errorf("alice's state a%d was dropped for mallory's", i)
		}
	}
	if c.emitterBytes("alice") != aliceBytes || c.emitterBytes("mallory") > c.max-aliceBytes {
		t.Errorf("alice %d bytes (was %d), mallory %d", c.emitterBytes("alice"), aliceBytes, c.emitterBytes("mallory"))
	}
	// A state larger than the cache is not kept; the others are.
	g, n := state("alice", 200_000)
	c.put("huge", g, n)
	if _, _, ok := c.get("huge"); ok || c.bytes > c.max {
		t.Errorf("a state larger than the cache: kept %v, cache %d bytes", ok, c.bytes)
	}
}

// TestGameCachePutAgain: put of a game already cached replaces its state
// in place; the cache holds, in each emitter's order and within its bound,
// what a naive model of its rule holds (a put makes a game its emitter's
// most recent, a get changes no order; past the bound the least recently
// put state of the emitter holding the most bytes goes), over random puts
// of new and cached games whose states grow and shrink, and gets.
func TestGameCachePutAgain(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 4))
	c := newGameCache(60_000)
	c.cutAt = -1
	type entry struct {
		game string
		g    *events.Game
		cost int64
	}
	model := map[string][]entry{} // by emitter, most recent first
	find := func(game string) (string, int) {
		for e, es := range model {
			for i, x := range es {
				if x.game == game {
					return e, i
				}
			}
		}
		return "", -1
	}
	emitters := []string{"alice", "bob", "mallory"}
	replaced, ties := 0, 0
	for op := range 20_000 {
		game := fmt.Sprintf("g%d", rng.IntN(60))
		if rng.IntN(4) == 0 {
			g, _, ok := c.get(game)
			e, i := find(game)
			if ok != (i >= 0) || ok && g != model[e][i].g {
				t.Fatalf("op %d: get %s: %v, the model holds it: %v", op, game, ok, i >= 0)
			}
			continue
		}
		emitter := emitters[len(game)%len(emitters)] // a game's emitter never changes
		g := &events.Game{Emitter: emitter, Settings: make([]byte, rng.IntN(3000))}
		if e, i := find(game); i >= 0 {
			model[e] = slices.Delete(model[e], i, i+1)
			replaced++
		}
		cost := int64(g.MemSize()+g.DecodedSize()) + cacheEntryOverhead + int64(len(game))
		model[emitter] = append([]entry{{game, g, cost}}, model[emitter]...)
		c.put(game, g, g.Size())
		tie := false
		for {
			var total int64
			big, bigBytes := "", int64(-1)
			for e, es := range model {
				var b int64
				for _, x := range es {
					b += x.cost
				}
				total += b
				if b == bigBytes {
					tie = true
				}
				if b > bigBytes {
					big, bigBytes = e, b
				}
			}
			if total <= c.max || tie {
				break
			}
			model[big] = model[big][:len(model[big])-1]
		}
		if tie {
			// Two emitters hold the most bytes: the cache may drop either's.
			// Take its choice.
			ties++
			clear(model)
			for e, ec := range c.by {
				for ce := ec.front; ce != nil; ce = ce.next {
					model[e] = append(model[e], entry{ce.game(), ce.g, ce.cost()})
				}
			}
		}
		var total int64
		for _, e := range emitters {
			var got []string
			var b int64
			if ec := c.by[e]; ec != nil {
				var back []string // the list read from its back
				for ce := ec.back; ce != nil; ce = ce.prev {
					back = append(back, ce.game())
				}
				for ce := ec.front; ce != nil; ce = ce.next {
					got = append(got, ce.game())
					b += ce.cost()
					if c.entry(ce.game()) != ce || ce.ec != ec {
						t.Fatalf("op %d: %s's entry is not the map's, or not in its emitter's share", op, ce.game())
					}
				}
				slices.Reverse(back)
				if !slices.Equal(got, back) || ec.n != len(got) {
					t.Fatalf("op %d: %s's list %v front to back, %v back to front, length %d", op, e, got, back, ec.n)
				}
				if ec.bytes != b {
					t.Fatalf("op %d: %s's bytes %d, its states cost %d", op, e, ec.bytes, b)
				}
			}
			var want []string
			for _, x := range model[e] {
				want = append(want, x.game)
				if g, _, _ := c.get(x.game); g != x.g {
					t.Fatalf("op %d: %s holds another state", op, x.game)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("op %d: %s's states %v, the model's %v", op, e, got, want)
			}
			total += b
		}
		if c.bytes != total || len(c.items) != len(model["alice"])+len(model["bob"])+len(model["mallory"]) {
			t.Fatalf("op %d: %d bytes, %d states; their costs %d", op, c.bytes, len(c.items), total)
		}
	}
	if replaced < 1000 || ties > 100 {
		t.Fatalf("%d states replaced, %d ties", replaced, ties)
	}
}

// TestGameCacheCollision: two game ids of one hash are never both cached,
// and neither is taken for the other: a get compares the id the entry
// holds (held in the entry for a short id, as a string for a long one),
// a put of one drops the other's state and its bytes.
func TestGameCacheCollision(t *testing.T) {
	long := strings.Repeat("x", shortID+1)
	for _, ids := range [][2]string{{"game-a", "game-b"}, {"game-a", "game-a2"}, {long, long + "y"}, {"game-a", long}} {
		c := newGameCache(1 << 20)
		c.testHash = func(string) uint64 { return 42 }
		a := &events.Game{ID: ids[0], Emitter: "alice"}
		b := &events.Game{ID: ids[1], Emitter: "bob"}
		c.put(ids[0], a, a.Size())
		if g, _, ok := c.get(ids[1]); ok {
			t.Fatalf("%q: get %q gives %q's state", ids, ids[1], g.ID)
		}
		c.put(ids[1], b, b.Size())
		if g, _, ok := c.get(ids[0]); ok {
			t.Fatalf("%q: get %q gives %q's state", ids, ids[0], g.ID)
		}
		if g, _, ok := c.get(ids[1]); !ok || g != b {
			t.Fatalf("%q: get %q: %v", ids, ids[1], ok)
		}
		c.remove(ids[0]) // not cached: b stays
		want := int64(b.MemSize()+b.DecodedSize()) + cacheEntryOverhead + int64(len(ids[1]))
		if len(c.items) != 1 || c.bytes != want || c.emitterBytes("alice") != 0 || c.emitterBytes("bob") != want || len(c.by) != 1 {
			t.Fatalf("%q: %d states, %d bytes (want %d), alice %d, bob %d", ids, len(c.items), c.bytes, want, c.emitterBytes("alice"), c.emitterBytes("bob"))
		}
		c.remove(ids[1])
		if len(c.items) != 0 || c.bytes != 0 || len(c.by) != 0 {
			t.Fatalf("%q: %d states, %d bytes left", ids, len(c.items), c.bytes)
		}
	}
}
