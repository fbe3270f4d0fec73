package events

import (
	"testing"

	"github.com/zarlog/zarlog/events/dice"
)

// TestStarterAllocs: a game's starter, asked at every roll and move of a
// per-game scheme, is read from a dice.Sequence kept on the stack, and the
// answer is the replay's.
func TestStarterAllocs(t *testing.T) {
	rolls := []dice.Roll{
		{N: 0, Dice: dice.Dice{3, 3}, Kind: dice.KindOpening}, // a tie: rolled again
		{N: 1, Dice: dice.Dice{2, 5}, Kind: dice.KindOpening},
		{N: 2, Dice: dice.Dice{6, 1}, Kind: dice.KindTurn},
	}
	g := &Game{Scheme: Tavlarena, Opening: dice.OpeningWestern, Rolls: rolls}
	s := dice.NewSequence(dice.OpeningWestern)
	for _, r := range rolls {
		if err := s.Next(r); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := g.Starter(), s.Starter(); got != want || got != 1 {
		t.Fatalf("Starter: %d, the replay's %d (want 1)", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { g.Starter() }); n != 0 {
		t.Errorf("Starter allocates %v objects, want 0", n)
	}
}
