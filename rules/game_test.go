package rules

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func ruleOf(err error) Rule {
	var me *IllegalMoveError
	if errors.As(err, &me) {
		return me.Rule
	}
	var re *RollError
	if errors.As(err, &re) {
		return re.Rule
	}
	return ""
}

func mustGame(t testing.TB, v Variant, o Opening) *Game {
	t.Helper()
	g, err := NewGame(v, o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGameOpenings(t *testing.T) {
	type roll struct {
		d    Dice
		kind RollKind
		seat int // the seat to play after the roll; -1 if none
	}
	for _, c := range []struct {
		o     Opening
		rolls []roll
	}{
		// DICE.md's worked example: 3-3 and 2-2 tie, 5-1 gives seat 0 the
		// start, and under turkish-reroll seat 0 plays the next roll.
		{OpeningTurkishReroll, []roll{{Dice{3, 3}, RollOpening, -1}, {Dice{2, 2}, RollOpening, -1}, {Dice{5, 1}, RollOpening, -1}, {Dice{3, 1}, RollReroll, 0}}},
		{OpeningWestern, []roll{{Dice{3, 3}, RollOpening, -1}, {Dice{5, 1}, RollOpening, 0}}},
		{OpeningWestern, []roll{{Dice{2, 6}, RollOpening, 1}}},
		{OpeningTurkishReroll, []roll{{Dice{2, 6}, RollOpening, -1}, {Dice{4, 4}, RollReroll, 1}}},
	} {
		g := mustGame(t, Backgammon, c.o)
		for n, r := range c.rolls {
			k, err := g.Roll(n, r.d)
			if err != nil {
				t.Fatalf("%s roll %d: %v", c.o, n, err)
			}
			if k != r.kind {
				t.Errorf("%s roll %d %s: kind %s, want %s", c.o, n, r.d, k, r.kind)
			}
			_, d, seat, ok := g.Pending()
			if r.seat < 0 {
				if ok {
					t.Errorf("%s roll %d: seat %d to play, want none", c.o, n, seat)
				}
				continue
			}
			if !ok || seat != r.seat || d != r.d {
				t.Errorf("%s roll %d: pending %v seat %d dice %s, want seat %d dice %s", c.o, n, ok, seat, d, r.seat, r.d)
			}
		}
	}
}

func TestGameFlowErrors(t *testing.T) {
	g := mustGame(t, Backgammon, OpeningWestern)
	if _, err := g.Roll(1, Dice{3, 1}); ruleOf(err) != RuleRollOrder {
		t.Errorf("roll out of order: %v", err)
	}
	if _, err := g.Roll(0, Dice{7, 1}); ruleOf(err) != RuleBadDice {
		t.Errorf("bad dice: %v", err)
	}
	if err := g.Move(0, 0, "8/5 6/5"); ruleOf(err) != RuleNotOnTurn {
		t.Errorf("move before any roll: %v", err)
	}
	if _, err := g.Roll(0, Dice{3, 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Roll(1, Dice{6, 5}); ruleOf(err) != RulePlayPending {
		t.Errorf("roll while a play is pending: %v", err)
	}
	before := g.Position()
	for _, c := range []struct {
		n, seat int
		play    string
		rule    Rule
	}{
		{1, 0, "8/5 6/5", RuleRollMismatch},
		{0, 1, "8/5 6/5", RuleNotOnTurn},
		{0, 0, "8-5 6-5", RuleNotation},
		{0, 0, "6/5 8/5", RuleNonCanonical},
		{0, 0, "13/10", RuleBothDice},
	} {
		if err := g.Move(c.n, c.seat, c.play); ruleOf(err) != c.rule {
			t.Errorf("Move(%d, %d, %q) = %v, want rule %s", c.n, c.seat, c.play, err, c.rule)
		}
	}
	if err := g.Apply(0, Dice{6, 5}, mustParse(t, "13/7 13/8")); ruleOf(err) != RuleRollMismatch {
		t.Errorf("Apply with other dice: %v", err)
	}
	if g.Position() != before {
		t.Fatal("a rejected move changed the position")
	}
	if n, _, seat, ok := g.Pending(); !ok || n != 0 || seat != 0 {
		t.Fatal("a rejected move changed the pending roll")
	}
	// Dice in either order, any spelling through Apply.
	if err := g.Apply(0, Dice{1, 3}, mustParse(t, "6/5 8/5")); err != nil {
		t.Fatal(err)
	}
	if g.Turn() != 1 {
		t.Fatalf("turn %d after seat 0's play, want 1", g.Turn())
	}
}

func mustParse(t testing.TB, s string) Play {
	t.Helper()
	p, err := ParsePlay(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// playGame plays a whole game with Choose, through the log interface (Roll
// and Move with canonical texts), and returns it.
func playGame(t testing.TB, v Variant, o Opening, rng *rand.Rand) *Game {
	g := mustGame(t, v, o)
	for n := 0; !g.Over(); n++ {
		if n > 2000 {
			t.Fatalf("%s: game not over after %d rolls", v, n)
		}
		d := Dice{1 + rng.IntN(6), 1 + rng.IntN(6)}
		if _, err := g.Roll(n, d); err != nil {
			t.Fatalf("%s roll %d: %v", v, n, err)
		}
		if _, _, seat, ok := g.Pending(); ok {
			p, _ := g.ChoosePlay(rng)
			if err := g.Move(n, seat, p.String()); err != nil {
				t.Fatalf("%s roll %d: %v", v, n, err)
			}
			if err := Check(v, g.Position()); err != nil {
				t.Fatalf("%s roll %d: %v", v, n, err)
			}
		}
	}
	return g
}

func TestGamesToTheEnd(t *testing.T) {
	for _, v := range AllVariants() {
		rng := rand.New(rand.NewPCG(21, uint64(len(v))))
		kinds := map[int]int{}
		for range 20 {
			g := playGame(t, v, OpeningTurkishReroll, rng)
			r, over := g.Result()
			if !over {
				t.Fatal("not over")
			}
			if r2, ok := Outcome(v, g.Position()); !ok || r2 != r {
				t.Fatalf("%s: Result %v, Outcome %v %v", v, r, r2, ok)
			}
			if r.Multiplier > v.MaxMultiplier() {
				t.Fatalf("%s: multiplier %d", v, r.Multiplier)
			}
			kinds[r.Multiplier]++
			if _, err := g.Roll(g.Rolls(), Dice{1, 2}); ruleOf(err) != RuleGameOver {
				t.Fatalf("roll after the end: %v", err)
			}
			if err := g.Move(g.Rolls(), 0, "-"); ruleOf(err) != RuleGameOver {
				t.Fatalf("move after the end: %v", err)
			}
		}
		t.Logf("%s: results by multiplier %v", v, kinds)
	}
}
