package rules

import (
	"math/rand/v2"
	"testing"
)

// busyBackgammon is the busiest position of testdata/perft.json
// (backgammon/busy, seat 0 on roll).
const busyBackgammon = "4010110000001100300111000/5400010000000011010010100"

func BenchmarkLegalPlays(b *testing.B) {
	busy, err := ParsePosition(Backgammon, busyBackgammon)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		p    Position
		d    Dice
	}{
		{"opening/3-1", Start(Backgammon), Dice{3, 1}},
		{"opening/6-6", Start(Backgammon), Dice{6, 6}},
		{"busy/5-2", busy, Dice{5, 2}},
		{"busy/2-2", busy, Dice{2, 2}},
		{"busy/1-1", busy, Dice{1, 1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				n = len(LegalPlays(Backgammon, c.p, 0, c.d))
			}
			b.ReportMetric(float64(n), "plays")
		})
	}
}

// gameLog is a recorded game: its rolls and, for each played roll, the
// canonical play.
type gameLog struct {
	v     Variant
	o     Opening
	rolls []Dice
	plays map[int]logMove
}

type logMove struct {
	seat int
	play string
}

// recordGame plays a game with Choose and records it.
func recordGame(tb testing.TB, v Variant, o Opening, seed uint64) gameLog {
	rng := rand.New(rand.NewPCG(seed, 99))
	g := mustGame(tb, v, o)
	lg := gameLog{v: v, o: o, plays: make(map[int]logMove)}
	for n := 0; !g.Over(); n++ {
		d := Dice{1 + rng.IntN(6), 1 + rng.IntN(6)}
		if _, err := g.Roll(n, d); err != nil {
			tb.Fatal(err)
		}
		lg.rolls = append(lg.rolls, d)
		if _, _, seat, ok := g.Pending(); ok {
			p, _ := g.ChoosePlay(rng)
			if err := g.Move(n, seat, p.String()); err != nil {
				tb.Fatal(err)
			}
			lg.plays[n] = logMove{seat, p.String()}
		}
	}
	return lg
}

func replay(lg gameLog) error {
	g, err := NewGame(lg.v, lg.o)
	if err != nil {
		return err
	}
	for n, d := range lg.rolls {
		if _, err := g.Roll(n, d); err != nil {
			return err
		}
		if m, ok := lg.plays[n]; ok {
			if err := g.Move(n, m.seat, m.play); err != nil {
				return err
			}
		}
	}
	return nil
}

func BenchmarkReplay(b *testing.B) {
	for _, v := range AllVariants() {
		// The first seeded game with 55 to 70 rolls.
		var lg gameLog
		for seed := uint64(1); ; seed++ {
			lg = recordGame(b, v, OpeningWestern, seed)
			if len(lg.rolls) >= 55 && len(lg.rolls) <= 70 {
				break
			}
		}
		b.Run(string(v), func(b *testing.B) {
			for b.Loop() {
				if err := replay(lg); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(lg.rolls)), "rolls")
		})
	}
}

// BenchmarkIllegalPlay measures the refusal of an illegal play, which
// searches for the rule it breaks.
func BenchmarkIllegalPlay(b *testing.B) {
	busy, err := ParsePosition(Backgammon, busyBackgammon)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, play string
		rule       Rule
	}{
		{"too-few-dice", "13/11", RuleMaxDice},
		{"not-the-dice", "13/10", RuleDice},
	} {
		p, err := ParsePlay(c.play)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_, _, err := ApplyPlay(Backgammon, busy, 0, Dice{2, 2}, p)
				if ruleOf(err) != c.rule {
					b.Fatalf("ApplyPlay(%q) = %v, want rule %s", c.play, err, c.rule)
				}
			}
		})
	}
}

func BenchmarkChoose(b *testing.B) {
	busy, err := ParsePosition(Backgammon, busyBackgammon)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		Choose(Backgammon, busy, 0, Dice{5, 2}, rng)
	}
}
