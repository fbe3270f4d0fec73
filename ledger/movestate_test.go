package ledger

import (
	"bytes"
	"context"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// TestMovePositionsAcrossEvictionAndRestart: the rules engine's position
// of a game whose moves are logged lives in the game's state
// (events.Game.Position), which the sequencer keeps in its cache between
// events and stores with the state, so that checking a move never replays
// the game. A ledger whose cache holds nothing (every state is dropped as
// soon as it is kept, and read back from the store at the game's next
// event), restarted every few appends, accepts every move of interleaved
// games of four variants, holds after each append the position that
// replaying the game's events from its commit gives, and ends with the
// same store as a ledger that cached every state and never restarted, and
// as one that appended every event in one call. The evicting ledger's
// checker always parses the stored position (a state read back has no
// decoded form); the others take back the decoded form the checker
// returned with the game's previous event (events.DecodingChecker), and
// the third one's sequencer writes most states into a state of the same
// group that the game's next event replaced; a fourth, appending one event
// of each game a call (the human pace), writes them into the states that
// the group before replaced.
func TestMovePositionsAcrossEvictionAndRestart(t *testing.T) {
	ctx := context.Background()
	newEnv := func(cacheBytes int64) *testEnv {
		e := newTestEnv(t)
		e.cfg.Moves = movecheck.Checker{}
		e.cfg.GameCacheBytes = cacheBytes
		return e
	}
	evicting, cached, whole, paced := newEnv(1), newEnv(0), newEnv(0), newEnv(0)

	configs := []testonly.Config{
		{Scheme: events.Tavlarena, Variant: rules.Backgammon, Label: "pos-bg", Emitter: emitterA},
		{Scheme: events.Tavlarena, Variant: rules.Tavla, Opening: rules.OpeningTurkishReroll, Label: "pos-tavla", Emitter: emitterB},
		{Scheme: events.PerRoll, Variant: rules.Plakoto, Label: "pos-plakoto", Emitter: emitterA},
		{Scheme: events.Tavlarena, Variant: rules.Fevga, Label: "pos-fevga", Emitter: emitterB},
	}
	// Each game's leaves, and the position replaying its first k events
	// gives (want[g][k-1]).
	var leaves [][][]byte
	var want [][][]byte
	for _, c := range configs {
		c.Start = testStart
		p, err := testonly.Play(c)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := testonly.Events(c, p.Bodies, evicting.k.emitters[c.Emitter])
		if err != nil {
			t.Fatal(err)
		}
		var ls, ps [][]byte
		var g *events.Game
		for i, ev := range evs {
			if g, err = events.Apply(g, ev, testonly.Env(ev, uint64(i), movecheck.Checker{})); err != nil {
				t.Fatalf("%s event %d: %v", c.Label, i, err)
			}
			leaf, err := events.Format(ev)
			if err != nil {
				t.Fatal(err)
			}
			ls, ps = append(ls, leaf), append(ps, g.Position)
		}
		if p.Moves == 0 || g.Position == nil {
			t.Fatalf("%s: %d moves, position %q: want a game whose moves the rules engine checked", c.Label, p.Moves, g.Position)
		}
		leaves, want = append(leaves, ls), append(want, ps)
	}
	// Interleave the games, one event of each in turn.
	type item struct{ game, seq int }
	var order []item
	for seq := 0; ; seq++ {
		n := len(order)
		for g := range leaves {
			if seq < len(leaves[g]) {
				order = append(order, item{g, seq})
			}
		}
		if len(order) == n {
			break
		}
	}

	a, b := evicting.open(), cached.open()
	const perAppend, restartEvery = 5, 4
	for i, call := 0, 0; i < len(order); i, call = i+perAppend, call+1 {
		batch := order[i:min(i+perAppend, len(order))]
		var in [][]byte
		for _, it := range batch {
			in = append(in, leaves[it.game][it.seq])
		}
		for _, l := range []*Ledger{a, b} {
			for j, o := range mustAppend(t, l, inputs(t, in...)) {
				if o.Result != Appended {
					it := batch[j]
					t.Fatalf("%s event %d: %v (%v)", configs[it.game].Label, it.seq, o.Result, o.Reject)
				}
			}
		}
		for _, it := range batch {
			id := configs[it.game].GameID()
			g, err := a.Game(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if g.NextSeq() > uint64(it.seq+1) {
				continue // a later event of the game was in the same append
			}
			if w := want[it.game][it.seq]; !bytes.Equal(g.Position, w) {
				t.Fatalf("%s after event %d: position %q, replaying the game gives %q", configs[it.game].Label, it.seq, g.Position, w)
			}
		}
		if a.seq.games.bytes > 1 {
			t.Fatalf("the evicting ledger's cache holds %d bytes", a.seq.games.bytes)
		}
		if call%restartEvery == restartEvery-1 {
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			a = evicting.open()
		}
	}
	mustSign(t, a)
	mustSign(t, b)
	diffDumps(t, dumpProjections(t, a), dumpProjections(t, b))

	c := whole.open()
	var in [][]byte
	for _, it := range order {
		in = append(in, leaves[it.game][it.seq])
	}
	for j, o := range mustAppend(t, c, inputs(t, in...)) {
		if o.Result != Appended {
			t.Fatalf("%s event %d in one call: %v (%v)", configs[order[j].game].Label, order[j].seq, o.Result, o.Reject)
		}
	}
	for g, cfg := range configs {
		st, err := c.Game(ctx, cfg.GameID())
		if err != nil {
			t.Fatal(err)
		}
		if w := want[g][len(want[g])-1]; !bytes.Equal(st.Position, w) {
			t.Fatalf("%s in one call: position %q, replaying the game gives %q", cfg.Label, st.Position, w)
		}
	}
	mustSign(t, c)
	diffDumps(t, dumpProjections(t, a), dumpProjections(t, c))

	// At a human pace: each call appends one event of each game in play,
	// so each group changes each of its games once, and the sequencer
	// writes most new states into the states the group before replaced
	// (sequencer.free). Every state it kept is checked against the replay
	// after each call, from its cache (what the next event is checked
	// against), not only from the store.
	d := paced.open()
	for i := 0; i < len(order); {
		seq := order[i].seq
		var in [][]byte
		var round []item
		for ; i < len(order) && order[i].seq == seq; i++ {
			in = append(in, leaves[order[i].game][order[i].seq])
			round = append(round, order[i])
		}
		for j, o := range mustAppend(t, d, inputs(t, in...)) {
			if o.Result != Appended {
				t.Fatalf("%s event %d at a human pace: %v (%v)", configs[round[j].game].Label, round[j].seq, o.Result, o.Reject)
			}
		}
		for _, it := range round {
			g, _, ok := d.seq.games.get(configs[it.game].GameID())
			if !ok {
				if it.seq == len(leaves[it.game])-1 {
					continue // the game ended: the cache holds the games in play
				}
				t.Fatalf("%s after event %d at a human pace: not in the cache", configs[it.game].Label, it.seq)
			}
			if w := want[it.game][it.seq]; g.NextSeq() != uint64(it.seq+1) || !bytes.Equal(g.Position, w) {
				t.Fatalf("%s after event %d at a human pace: the cached state has %d events and position %q, replaying the game gives %q", configs[it.game].Label, it.seq, g.NextSeq(), g.Position, w)
			}
		}
	}
	if d.seq.reused == 0 {
		t.Fatal("at a human pace, no state was written into one its group's predecessor replaced")
	}
	mustSign(t, d)
	diffDumps(t, dumpProjections(t, a), dumpProjections(t, d))
}
