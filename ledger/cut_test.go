package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// TestCutStates: a ledger whose game cache holds cut states (events.Game.Cut:
// every state it keeps, cut to the last few events) accepts, refuses and
// stores exactly what one whose cache holds full states does, and so does
// one that also evicts most states and restarts every few appends. The
// stream interleaves whole games of every scheme and four variants, checked
// by the rules engine, and between their events: resends of earlier events
// (duplicates, found by their leaves, which a cut state leaves out), other
// bytes under an earlier event's id (duplicate-id), moves of older rolls
// and of rolls not logged yet (the rolls a cut state leaves out), roll-commits
// that repeat an earlier roll id (duplicate-roll-id), and each per-game game
// ends with its reveal (every roll rechecked). Every outcome is the same, and
// so is every key and value of the three stores, then after a Rebuild of the
// cut ledger (whose replay reads cut states too). Game hands out the same
// full states from the three all along. Without the variants, the
// cut ledger reads no state back (a reveal rechecks the dice that a cut
// state keeps of the rolls it leaves out).
func TestCutStates(t *testing.T) {
	for _, variants := range []bool{true, false} {
		t.Run(fmt.Sprintf("variants=%v", variants), func(t *testing.T) { testCutStates(t, variants) })
	}
}

func testCutStates(t *testing.T, variants bool) {
	ctx := context.Background()
	newEnv := func(cacheBytes int64) *testEnv {
		e := newTestEnv(t)
		e.cfg.Moves = movecheck.Checker{}
		e.cfg.GameCacheBytes = cacheBytes
		e.cfg.Beacons = nil                                    // the pinned chains: the anchored game's quicknet round
		e.clock.t = testonly.BeaconTime.Add(-30 * time.Second) // its commit and tokens are appended before the round exists
		return e
	}
	whole, cut, evicting := newEnv(0), newEnv(0), newEnv(6000)
	open := func(e *testEnv, cutAt int) *Ledger {
		l := e.open()
		l.seq.games.cutAt = cutAt // the sequencer is waiting for requests
		return l
	}

	configs := []testonly.Config{
		{Scheme: events.Tavlarena, Variant: rules.Backgammon, Label: "cut-bg", Emitter: emitterA},
		{Scheme: events.Tavlarena, Variant: rules.Tavla, Opening: rules.OpeningTurkishReroll, Label: "cut-tavla", Emitter: emitterB},
		{Scheme: events.Anchored, Variant: rules.Backgammon, Label: "cut-anchored", Emitter: emitterA},
		{Scheme: events.PerRoll, Variant: rules.Plakoto, Label: "cut-plakoto", Emitter: emitterA, Games: 2},
		{Scheme: events.Tavlarena, Variant: rules.Fevga, Label: "cut-fevga", Emitter: emitterB},
		{Scheme: events.PerRoll, Variant: rules.Backgammon, Label: "cut-perroll", Emitter: emitterB},
	}
	rng := rand.New(rand.NewPCG(31, 8))
	// Each game's inputs in order: its events, and after some of them
	// the variants above.
	var games [][][]byte
	for _, c := range configs {
		if c.Scheme != events.Anchored {
			c.Start = testStart
		}
		p, err := testonly.Play(c)
		if err != nil {
			t.Fatal(err)
		}
		signer := whole.k.emitters[c.Emitter]
		evs, err := testonly.Events(c, p.Bodies, signer)
		if err != nil {
			t.Fatal(err)
		}
		format := func(h events.Header, b events.Body) []byte {
			t.Helper()
			var ev *events.Event
			var err error
			if b.Type().Binding() {
				ev, err = events.NewSigned(h, b, signer)
			} else {
				ev, err = events.New(h, b)
			}
			if err != nil {
				t.Fatalf("%s: %v", c.Label, err)
			}
			leaf, err := events.Format(ev)
			if err != nil {
				t.Fatal(err)
			}
			return leaf
		}
		var in [][]byte
		var rollIDs [][16]byte
		rolls := 0
		for i, ev := range evs {
			h := c.Header(uint64(i))
			if variants && i > 20 && rng.IntN(3) == 0 {
				j := rng.IntN(i)
				in = append(in, format(c.Header(uint64(j)), evs[j].Body)) // a resend
				hj := c.Header(uint64(j))
				hj.Time = hj.Time.Add(time.Millisecond)
				in = append(in, format(hj, evs[j].Body)) // other bytes, the same id
			}
			switch b := ev.Body.(type) {
			case events.Move:
				if variants && i > 20 {
					for _, n := range []uint32{0, uint32(rng.IntN(rolls)), uint32(rolls - 1), uint32(rolls), uint32(rolls + 1)} {
						if n == b.N {
							continue
						}
						m := b
						m.N = n
						in = append(in, format(h, m))
					}
				}
			case events.Roll:
				rolls++
			case events.RollCommit:
				if variants && len(rollIDs) > 0 {
					for _, j := range []int{0, rng.IntN(len(rollIDs)), len(rollIDs) - 1} {
						rc := b
						rc.RollID = rollIDs[j]
						in = append(in, format(h, rc))
					}
				}
				rollIDs = append(rollIDs, b.RollID)
			case events.RollReveal:
				rolls++
			}
			leaf, err := events.Format(ev)
			if err != nil {
				t.Fatal(err)
			}
			in = append(in, leaf)
		}
		games = append(games, in)
	}
	// Interleave the games, a few inputs of each in turn.
	var order [][]byte
	for len(games) > 0 {
		i := rng.IntN(len(games))
		n := min(1+rng.IntN(4), len(games[i]))
		order = append(order, games[i][:n]...)
		if games[i] = games[i][n:]; len(games[i]) == 0 {
			games = slices.Delete(games, i, i+1)
		}
	}

	a, b, c := open(whole, -1), open(cut, 0), open(evicting, 0)
	const restartEvery = 5
	counts := map[Result]int{}
	for i, call := 0, 0; i < len(order); call++ {
		n := min(1+rng.IntN(8), len(order)-i)
		in := inputs(t, order[i:i+n]...)
		want := mustAppend(t, a, in)
		for _, l := range []*Ledger{b, c} {
			for j, o := range mustAppend(t, l, in) {
				if w := outcomeText(want[j]); outcomeText(o) != w {
					t.Fatalf("input %d: the full states' ledger: %s; a cut states' ledger: %s", i+j, w, outcomeText(o))
				}
			}
		}
		for j, o := range want {
			counts[o.Result]++
			if !variants && o.Result != Appended {
				t.Fatalf("input %d: %s", i+j, outcomeText(o))
			}
		}
		i += n
		if call%restartEvery == 0 {
			// The ledger's API hands out full states, whatever its cache holds.
			for _, cfg := range configs {
				w, err := a.Game(ctx, cfg.GameID())
				if errors.Is(err, ErrNotFound) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range []*Ledger{b, c} {
					g, err := l.Game(ctx, cfg.GameID())
					if err != nil || g.IsCut() || !bytes.Equal(mustMarshalGame(t, g), mustMarshalGame(t, w)) {
						t.Fatalf("%s: Game gives another state (%v)", cfg.Label, err)
					}
				}
			}
		}
		if call%restartEvery == restartEvery-1 {
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			c = open(evicting, 0)
		}
	}
	if variants && (counts[Appended] < 500 || counts[Duplicate] < 20 || counts[Rejected] < 100) {
		t.Fatalf("outcomes %v: want many of each", counts)
	}
	cutHeld := 0
	for _, e := range b.seq.games.items {
		if e.Value.(*cacheEntry).g.IsCut() {
			cutHeld++
		}
	}
	if variants && b.seq.loads == 0 || !variants && b.seq.loads != 0 || a.seq.loads != 0 {
		t.Fatalf("the cut ledger read %d states back, the full one %d, for %d events appended", b.seq.loads, a.seq.loads, counts[Appended])
	}
	t.Logf("%v; the cut ledger read %d states back, the evicting one %d (since its last restart); %d cut states cached", counts, b.seq.loads, c.seq.loads, cutHeld)
	for _, l := range []*Ledger{a, b, c} {
		mustSign(t, l)
	}
	da := dumpStore(t, a)
	diffDumps(t, da, dumpStore(t, b))
	diffDumps(t, da, dumpStore(t, c))
	if err := b.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	diffDumps(t, dumpProjections(t, a), dumpProjections(t, b))
}

func outcomeText(o Outcome) string {
	s := fmt.Sprintf("%v %s index %d", o.Result, o.ID, o.Index)
	if o.Reject != nil {
		s += fmt.Sprintf(" %s %s %q seq %d record %q", o.Reject.Code, o.Reject.Field, o.Reject.Msg, o.Seq, o.RecordID)
	}
	return s
}

// dumpStore returns every key and value of l's store.
func dumpStore(t testing.TB, l *Ledger) map[string][]byte {
	t.Helper()
	v, err := l.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer v.release()
	it, err := v.snap.NewIter(&pebble.IterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	out := map[string][]byte{}
	for ok := it.First(); ok; ok = it.Next() {
		out[string(it.Key())] = bytes.Clone(it.Value())
	}
	return out
}
