package movecheck_test

import (
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// benchEvents returns a backgammon game's events and states, and the
// indices of its events of type typ.
func benchEvents(b *testing.B, v rules.Variant, typ events.Type) ([]*events.Event, []*events.Game, []int) {
	_, evs := play(b, testonly.Config{Scheme: events.Tavlarena, Variant: v, Label: "bench"})
	states := applyAll(b, evs)
	var idx []int
	for i, ev := range evs {
		if ev.Type == typ {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		b.Fatalf("no %s event", typ)
	}
	return evs, states, idx
}

// BenchmarkApplyMove is the ledger's cost of one move event of a game
// whose moves are logged: events.Apply with the Checker (parse the state,
// check the play against the rules, write the new state), cycling through
// every move of a game.
func BenchmarkApplyMove(b *testing.B) {
	for _, v := range rules.AllVariants() {
		b.Run(string(v), func(b *testing.B) {
			evs, states, idx := benchEvents(b, v, events.TypeMove)
			k := 0
			for b.Loop() {
				i := idx[k%len(idx)]
				k++
				if _, err := events.Apply(states[i-1], evs[i], testonly.Env(evs[i], uint64(i), movecheck.Checker{})); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkApplyMoveUnchecked is the same without a checker: the
// structural checks only.
func BenchmarkApplyMoveUnchecked(b *testing.B) {
	evs, states, idx := benchEvents(b, rules.Backgammon, events.TypeMove)
	k := 0
	for b.Loop() {
		i := idx[k%len(idx)]
		k++
		if _, err := events.Apply(states[i-1], evs[i], testonly.Env(evs[i], uint64(i), nil)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyRoll is one roll event with the Checker.
func BenchmarkApplyRoll(b *testing.B) {
	evs, states, idx := benchEvents(b, rules.Backgammon, events.TypeRoll)
	k := 0
	for b.Loop() {
		i := idx[k%len(idx)]
		k++
		if _, err := events.Apply(states[i-1], evs[i], testonly.Env(evs[i], uint64(i), movecheck.Checker{})); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReplayGame replays a whole backgammon game (commit to reveal)
// with the Checker.
func BenchmarkReplayGame(b *testing.B) {
	_, evs := play(b, testonly.Config{Scheme: events.Tavlarena, Variant: rules.Backgammon, Label: "bench"})
	b.ReportMetric(float64(len(evs)), "events")
	for b.Loop() {
		var g *events.Game
		var err error
		for i, ev := range evs {
			if g, err = events.Apply(g, ev, testonly.Env(ev, uint64(i), movecheck.Checker{})); err != nil {
				b.Fatal(err)
			}
		}
	}
}
