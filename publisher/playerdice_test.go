package publisher

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/verifier"
)

// position builds a backgammon position from each seat's checkers
// (point in the seat's own numbering → count; 25 is the bar); the rest of
// each seat's fifteen are borne off.
func position(t testing.TB, v rules.Variant, seats ...map[int]int) rules.Position {
	t.Helper()
	var b strings.Builder
	for s, m := range seats {
		if s == 1 {
			b.WriteByte('/')
		}
		for q := 1; q <= 25; q++ {
			b.WriteByte("0123456789abcdef"[m[q]])
		}
	}
	p, err := rules.ParsePosition(v, b.String())
	if err != nil {
		t.Fatalf("position %s: %v", b.String(), err)
	}
	return p
}

// TestChances holds the need counts to the numbers every backgammon book
// prints: the direct shots at a blot 1 to 12 pips away with nothing in
// between (11, 12, 14, 15, 15, 17, 6, 6, 5, 3, 2, 3 of 36), and entering
// from the bar against a board of five closed points (11 of 36).
func TestChances(t *testing.T) {
	shots := []int{11, 12, 14, 15, 15, 17, 6, 6, 5, 3, 2, 3}
	for d := 1; d <= 12; d++ {
		// Seat 0's checker on its 13-point; seat 1's blot d pips ahead of
		// it, and seat 1's other fourteen behind it, out of the way.
		p := position(t, rules.Backgammon, map[int]int{13: 1}, map[int]int{25 - (13 - d): 1, 1: 14})
		_, of36 := chances(rules.Backgammon, p, 0, rules.Dice{1, 2})
		if of36[NeedHit] != shots[d-1] {
			t.Errorf("a blot %d pips away: %d rolls hit it, want %d", d, of36[NeedHit], shots[d-1])
		}
		if of36[NeedEnter] != 0 {
			t.Errorf("a blot %d pips away: %d rolls enter, with nothing on the bar", d, of36[NeedEnter])
		}
	}
	// On the bar against seat 1's points 2 to 6 (seat 0's 19 to 23): only
	// a 1 enters, onto seat 0's 24-point.
	p := position(t, rules.Backgammon, map[int]int{25: 1, 13: 14}, map[int]int{2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 5})
	for _, tc := range []struct {
		d     rules.Dice
		could bool
	}{{rules.Dice{1, 5}, true}, {rules.Dice{6, 1}, true}, {rules.Dice{1, 1}, true}, {rules.Dice{6, 5}, false}, {rules.Dice{2, 2}, false}} {
		could, of36 := chances(rules.Backgammon, p, 0, tc.d)
		if of36[NeedEnter] != 11 || could[NeedEnter] != tc.could {
			t.Errorf("bar against five points, roll %v: enter %v, %d of 36; want %v, 11", tc.d, could[NeedEnter], of36[NeedEnter], tc.could)
		}
	}
	// Fevga has no hitting: a blot in reach is never a shot.
	start := rules.Start(rules.Fevga)
	if _, of36 := chances(rules.Fevga, start, 0, rules.Dice{3, 1}); of36[NeedHit] != 0 {
		t.Errorf("fevga: %d rolls hit", of36[NeedHit])
	}
}

// TestDiceOf counts a hand-made game's dice by seat: the opening dice one
// per seat (the tie too), the re-roll to the starter, the turns
// alternating from the other seat.
func TestDiceOf(t *testing.T) {
	rolls := []dice.Roll{
		{N: 0, Dice: dice.Dice{3, 3}, Kind: dice.KindOpening}, // a tie
		{N: 1, Dice: dice.Dice{2, 5}, Kind: dice.KindOpening}, // seat 1 starts
		{N: 2, Dice: dice.Dice{4, 4}, Kind: dice.KindReroll},  // seat 1
		{N: 3, Dice: dice.Dice{6, 1}, Kind: dice.KindTurn},    // seat 0
		{N: 4, Dice: dice.Dice{6, 1}, Kind: dice.KindTurn},    // seat 1
		{N: 5, Dice: dice.Dice{2, 2}, Kind: dice.KindTurn},    // seat 0
	}
	ev := &verifier.Evidence{Scheme: "tavlarena-v1", Opening: dice.OpeningTurkishReroll, Tavlarena: &verifier.TavlarenaEvidence{Rolls: rolls}}
	got := DiceOf(GameSummary{}, ev)
	var want GameDice
	want.Seats[0].Opening[2], want.Seats[0].Opening[1] = 1, 1 // the 3 of the tie, the 2
	want.Seats[1].Opening[2], want.Seats[1].Opening[4] = 1, 1 // the 3 of the tie, the 5
	want.Seats[1].Played.Pairs[3][3] = 1
	want.Seats[0].Played.Pairs[5][0] = 1
	want.Seats[1].Played.Pairs[5][0] = 1
	want.Seats[0].Played.Pairs[1][1] = 1
	if got != want {
		t.Errorf("DiceOf:\n got %+v\nwant %+v", got, want)
	}
	if got := DiceOf(GameSummary{}, &verifier.Evidence{Scheme: "per-roll-v1", PerRoll: &verifier.PerRollEvidence{}}); got != (GameDice{}) {
		t.Errorf("a per-roll-v1 match: %+v", got)
	}
}

// genBundle plays a game with package gamegen (every move chosen by the
// rules engine's strategy, every event accepted by the ledger's rules) and
// returns its proof bundle at a checkpoint of log.
func genBundle(t testing.TB, log *memLog, signer note.Signer, c testonly.Config) (string, []byte) {
	t.Helper()
	p, err := testonly.Play(c)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := testonly.Events(c, p.Bodies, signer.(events.Signer))
	if err != nil {
		t.Fatal(err)
	}
	var leaves []IndexedLeaf
	for _, ev := range evs {
		leaf, err := events.Format(ev)
		if err != nil {
			t.Fatal(err)
		}
		leaves = append(leaves, IndexedLeaf{Index: log.append(t, leaf), Leaf: leaf})
	}
	b, err := BuildBundle(context.Background(), log, leaves, log.checkpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	return evs[0].Game, b
}

// TestDiceOfPlayedGames replays games of every variant and opening
// through the rules engine: every played roll is counted once, to the
// seat that moved on it, and the chances are counted on every game whose
// moves are logged.
func TestDiceOfPlayedGames(t *testing.T) {
	signer, _ := testKey(t, testEmitter)
	log := newMemLog(t)
	for _, v := range rules.AllVariants() {
		for _, o := range []rules.Opening{rules.OpeningWestern, rules.OpeningTurkishReroll} {
			c := testonly.Config{Scheme: events.Tavlarena, Variant: v, Opening: o, Label: fmt.Sprintf("dice-of/%s/%s", v, o)}
			id, b := genBundle(t, log, signer, c)
			sum, ev, err := Summarize(id, b)
			if err != nil {
				t.Fatal(err)
			}
			gd := DiceOf(sum, ev)
			if !gd.NeedsCounted {
				t.Errorf("%s %s: the chances were not counted", v, o)
			}
			moves := map[uint32]int{}
			for _, m := range sum.Moves {
				moves[m.N] = m.Seat
			}
			var want [2]uint64
			for _, r := range ev.Tavlarena.Rolls {
				if s, ok := moves[r.N]; ok && r.Kind != dice.KindOpening {
					want[s]++
				}
			}
			for s := range 2 {
				if got := gd.Seats[s].Played.Total(); got != want[s] {
					t.Errorf("%s %s: seat %d played %d rolls, counted %d", v, o, s, want[s], got)
				}
				for need, c := range gd.Seats[s].Needs {
					if c.Came > c.Turns || c.Expected <= 0 && c.Turns > 0 || c.Expected > float64(c.Turns) {
						t.Errorf("%s %s: seat %d, %v: %+v", v, o, s, Need(need), c)
					}
				}
			}
			if v == rules.Fevga && (gd.Seats[0].Needs[NeedHit].Turns != 0 || gd.Seats[0].Needs[NeedEnter].Turns != 0) {
				t.Errorf("fevga: chances to hit or enter: %+v", gd.Seats[0].Needs)
			}
			if v == rules.Backgammon && gd.Seats[0].Needs[NeedBearOff].Turns+gd.Seats[1].Needs[NeedBearOff].Turns == 0 {
				t.Errorf("backgammon played to the end: no chance to bear off counted")
			}
		}
	}
}

// TestIntervalCoverage: the intervals the player page draws cover the
// true value about 95% of the time, from the smallest sample the page
// judges (MinRolls) up. Fixed seeds: the test gives the same numbers on
// every run.
func TestIntervalCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const trials = 4000
	for _, n := range []uint64{MinRolls, 60, 200, 1000} {
		covered, well := 0, 0
		for range trials {
			k := uint64(0)
			for range n {
				if r.IntN(6) == 0 {
					k++
				}
			}
			if lo, hi := Wilson(k, n); lo <= 1.0/6 && 1.0/6 <= hi {
				covered++
			}
			if RateVerdict(k, n, 1.0/6) == Within {
				well++
			}
		}
		if f := float64(well) / trials; f < 0.75 || f > 0.88 {
			t.Errorf("doubles in %d rolls: well within what fair dice do in %.3f of %d trials, want about 0.80", n, f, trials)
		}
		// The Wilson interval of a count is discrete: its coverage swings
		// around 95%, a little above it at small n.
		if f := float64(covered) / trials; f < 0.93 || f > 0.985 {
			t.Errorf("Wilson, doubles in %d rolls: covers 1/6 in %.3f of %d trials", n, f, trials)
		}
	}
	// Chances: each turn its own p, drawn from the shot table. The verdict
	// is within the 95% range (Within, EdgeHigh, EdgeLow) about 95% of
	// the time, and well within it (Within) about 80%.
	shots := []float64{11, 12, 14, 15, 15, 17, 6, 6, 5, 3, 2, 3, 36 - 11}
	for _, turns := range []int{MinRolls, 100, 500} {
		covered, well, judged := 0, 0, 0
		for range trials {
			var c NeedCount
			for range turns {
				p := shots[r.IntN(len(shots))] / 36
				c.Turns++
				c.Expected += p
				c.Variance += p * (1 - p)
				if r.Float64() < p {
					c.Came++
				}
			}
			v := NeedVerdict(c)
			if v == TooFew {
				continue
			}
			judged++
			if v != High && v != Low {
				covered++
			}
			if v == Within {
				well++
			}
		}
		if judged < trials/2 {
			t.Fatalf("%d turns: judged only %d of %d", turns, judged, trials)
		}
		if f := float64(covered) / float64(judged); f < 0.93 || f > 0.975 {
			t.Errorf("chances over %d turns: within the range in %.3f of %d trials", turns, f, judged)
		}
		if f := float64(well) / float64(judged); f < 0.75 || f > 0.86 {
			t.Errorf("chances over %d turns: well within the range in %.3f of %d trials, want about 0.80", turns, f, judged)
		}
	}
	if lo, hi := Wilson(0, 0); lo != 0 || hi != 1 {
		t.Errorf("Wilson(0, 0) = %v, %v", lo, hi)
	}
	if lo, hi := Wilson(5, 5); hi != 1 || math.Abs(lo-0.5655) > 1e-3 {
		t.Errorf("Wilson(5, 5) = %v, %v; want 0.5655, 1", lo, hi)
	}
}

// BenchmarkDiceOf counts one backgammon game's dice and chances (the
// rules engine tries the 21 distinct rolls before every turn).
func BenchmarkDiceOf(b *testing.B) {
	signer, _ := testKey(b, testEmitter)
	id, bundle := genBundle(b, newMemLog(b), signer, testonly.Config{Scheme: events.Tavlarena, Variant: rules.Backgammon, Label: "bench-dice-of"})
	sum, ev, err := Summarize(id, bundle)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if !DiceOf(sum, ev).NeedsCounted {
			b.Fatal("not counted")
		}
	}
	b.ReportMetric(float64(sum.Rolls), "rolls/game")
}
