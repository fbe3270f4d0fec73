package ledger

import (
	"maps"
	"testing"

	"github.com/zarlog/zarlog/events"
)

// TestReleasedStatesUnread: the sequencer reads no game state after it has
// released it (sequencer.free). A ledger that spoils every state it
// releases (closed and failed: what a reader of a released state would then
// see) and appends a stream in one call, where each game has many events in
// one group and the intermediate states are released as the next event
// replaces them, keeps the same projections (the open games and their
// bytes, the statistics, the finished games) as a ledger that appends it
// one event per call and so releases no state within a group. Before the
// fix, add released the replaced state before counting the event from it
// (count, Stats.observe), and the spoiled state's Closed left its game
// counted open twice.
func TestReleasedStatesUnread(t *testing.T) {
	spoiled := newTestEnv(t)
	one := newTestEnv(t)
	one.k = spoiled.k
	one.cfg.Signer, one.cfg.Verifier, one.cfg.Emitters = spoiled.cfg.Signer, spoiled.cfg.Verifier, spoiled.cfg.Emitters
	a, b := spoiled.open(), one.open()
	released := 0
	a.seq.onRelease = func(g *events.Game) { // before the first request: the sequencer waits for it
		released++
		g.Closed, g.Status, g.ID = true, events.StatusFailed, "spoiled"
	}
	gen := newStreamGen(t, spoiled.k, "release", 31, 5)
	leaves := gen.take(1500)
	for i, o := range mustAppend(t, a, inputs(t, leaves...)) {
		if o.Result != Appended {
			t.Fatalf("input %d in one call: %v (%v)", i, o.Result, o.Reject)
		}
	}
	appendAll(t, b, leaves, 1)
	if released == 0 || a.seq.reused == 0 {
		t.Fatalf("the one-call ledger released %d states and wrote %d events into released ones: the test checks nothing", released, a.seq.reused)
	}
	if gen.games < 10 || len(gen.active) == 0 {
		t.Fatalf("%d games, %d still open: want games that end and games in play", gen.games, len(gen.active))
	}
	if oa, ob := a.OpenGames(), b.OpenGames(); !maps.Equal(oa, ob) {
		t.Errorf("open games after one call: %v; one event per call: %v", oa, ob)
	}
	sa, err := a.Stats()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if sa != sb {
		t.Errorf("stats after one call: %+v; one event per call: %+v", sa, sb)
	}
	// The stored counts and finished games too (the games' states differ
	// in their groups' times).
	counts := func(l *Ledger) map[string][]byte {
		out := dumpProjections(t, l)
		maps.DeleteFunc(out, func(k string, _ []byte) bool {
			return k[0] != prefixOpen && k[0] != prefixFinished && k != string(keyStats)
		})
		return out
	}
	ca := counts(a)
	if len(ca) < 10 {
		t.Fatalf("%d records of counts", len(ca))
	}
	diffDumps(t, ca, counts(b))
	t.Logf("%d games (%d in play), %d states released, %d events written into them", gen.games, len(gen.active), released, a.seq.reused)
}
