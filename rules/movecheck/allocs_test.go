package movecheck_test

import (
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// TestCheckMoveAllocs counts the allocations of the append path's move
// check, which runs for every move the ledger appends: for every move of a
// game of each variant, Checker.CheckMove (parse the state, parse the play,
// check it, compare its canonical text, write the next state) allocates at
// most five objects: the state's text as a string, the parsed play, the
// canonical play and the next state's text (a few moves need a fifth, in
// the rules engine's search); it allocated 9 to 10 before the canonical
// text was compared without a string. The canonical text is compared
// in a buffer on the stack (rules.AppendPlay), the play's moves are sorted
// and chained in arrays on the stack.
func TestCheckMoveAllocs(t *testing.T) {
	for _, v := range rules.AllVariants() {
		_, evs := play(t, testonly.Config{Scheme: events.Tavlarena, Variant: v, Label: "allocs"})
		states := applyAll(t, evs)
		moves := 0
		for i, ev := range evs {
			if ev.Type != events.TypeMove {
				continue
			}
			moves++
			g := states[i-1]
			b := ev.Body.(events.Move)
			in := events.MoveInput{Scheme: g.Scheme, Settings: g.Settings, Position: g.Position, Starter: g.Starter(), Roll: g.Rolls[b.N], Move: b}
			if _, err := (movecheck.Checker{}).CheckMove(in); err != nil {
				t.Fatalf("%s, event %d: %v", v, i, err)
			}
			if n := testing.AllocsPerRun(10, func() { movecheck.Checker{}.CheckMove(in) }); n > 5 {
				t.Errorf("%s, event %d (%s): CheckMove allocates %v objects, want at most 5", v, i, b.Play, n)
			}
		}
		if moves == 0 {
			t.Fatalf("%s: no move", v)
		}
	}
}
