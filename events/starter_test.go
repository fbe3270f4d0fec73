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

// TestPositionKept: Apply keeps the position a MoveChecker returns, not a
// copy (one allocation less at every roll and move of a game whose moves
// are logged), with its capacity clipped, so that nothing appended to the
// state's position can land in the checker's slice.
func TestPositionKept(t *testing.T) {
	f := newFixture(t)
	T := tavlarenaGame(t, f)
	ts := applyAll(t, f, T)
	if T[7].Type != TypeMove {
		t.Fatalf("event 7 is a %s, want a move", T[7].Type)
	}
	ret := append(make([]byte, 0, 16), "pos-1"...)
	env := Env{Emitter: emitter, Now: f.start, Beacons: BeaconsOf(f.chains),
		Moves: moveFunc(func(MoveInput) ([]byte, error) { return ret, nil })}
	ng, err := Apply(ts[6], T[7], env)
	if err != nil {
		t.Fatal(err)
	}
	if string(ng.Position) != "pos-1" || &ng.Position[0] != &ret[0] {
		t.Errorf("the state's position is %q at %p, the checker's %q at %p: want the checker's slice", ng.Position, &ng.Position[0], ret, &ret[0])
	}
	if cap(ng.Position) != len(ng.Position) {
		t.Errorf("the state's position has capacity %d beyond its length %d", cap(ng.Position), len(ng.Position))
	}
}
