package rules

import (
	"math/rand/v2"
	"testing"
)

// TestNotationDependsOnlyOnPosition enumerates, without memoisation, every
// sequence of single-die moves that makes a legal play, and checks that all
// sequences that lead to the same position are written the same way: the
// canonical text is a function of the position reached, not of the order
// the checkers were moved in.
func TestNotationDependsOnlyOnPosition(t *testing.T) {
	for _, v := range AllVariants() {
		t.Run(string(v), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(len(v))))
			qs := randomQueries(rng, v, 150)
			for range 150 {
				qs = append(qs, gnubgQuery{randomPosition(rng, v), rng.IntN(2), Dice{1 + rng.IntN(6), 1 + rng.IntN(6)}})
			}
			checked := 0
			for _, q := range qs {
				legal, _ := legalPlays(v, q.pos, q.seat, q.dice)
				want := make(map[Position]string)
				for _, l := range legal {
					want[l.pos] = l.text
				}
				g := newGen(v, q.seat, q.dice, 0, false)
				var path []step
				var walk func(p Position, stuck uint32, used uint8, depth int)
				walk = func(p Position, stuck uint32, used uint8, depth int) {
					if w, ok := want[p]; ok && g.validEnd(&p) && len(path) == g.best {
						got := FormatPlay(notate(path, hitsOf(g.rs, q.seat, &q.pos, &p)))
						if got != w && !(len(path) == 1 && !q.dice.IsDouble() && int(path[0].die) != max(q.dice[0], q.dice[1])) {
							t.Errorf("position %s seat %d dice %s: sequence %v is written %q, canonical %q", q.pos, q.seat, q.dice, path, got, w)
						}
						checked++
					}
					for i := 0; i < 2; i++ {
						if q.dice.IsDouble() && (i == 1 || used >= 4) || !q.dice.IsDouble() && used&(1<<i) != 0 {
							continue
						}
						d := q.dice[i]
						nu := used | 1<<i
						if q.dice.IsDouble() {
							nu = used + 1
						}
						for from := Bar; from >= 1; from-- {
							np, ns, ok := g.step(&p, stuck, from, d)
							if !ok {
								continue
							}
							path = append(path, step{from: int8(from), to: int8(max(from-d, 0)), die: int8(d)})
							walk(np, ns, nu, depth+1)
							path = path[:len(path)-1]
						}
					}
				}
				g.run(q.pos) // sets g.best
				walk(q.pos, 0, 0, 0)
			}
			if checked == 0 {
				t.Fatal("no sequences checked")
			}
			t.Logf("%d sequences checked", checked)
		})
	}
}

func TestPlayRoundTrip(t *testing.T) {
	canonical := []string{
		"-",
		"24/18 13/11",
		"bar/22",
		"bar/22*",
		"6/off",
		"8/2*",
		"13/11(2)",
		"24/18*/13",
		"bar/22*/16",
		"24/18(2) 13/7(2)",
		"6/off(2) 5/off(2)",
		"13/7* 8/7",
		"8/5* 8/5",
		"24/20*/16*/12*/8*",
		"1/off",
		"24/23 6/5(3)",
	}
	for _, s := range canonical {
		p, err := ParsePlay(s)
		if err != nil {
			t.Errorf("ParsePlay(%q): %v", s, err)
			continue
		}
		if got := FormatPlay(p); got != s {
			t.Errorf("FormatPlay(ParsePlay(%q)) = %q", s, got)
		}
	}
}

func TestParsePlayNormalises(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"13/11 24/18", "24/18 13/11"},
		{"13/11 13/11", "13/11(2)"},
		{"6/5 6/5(2)", "6/5(3)"},
		{"8/5 8/5*", "8/5* 8/5"},
		{"24/18/13", "24/18/13"}, // FormatPlay keeps what is written
		{"13/8 8/3", "13/8 8/3"},
	} {
		p, err := ParsePlay(c.in)
		if err != nil {
			t.Errorf("ParsePlay(%q): %v", c.in, err)
			continue
		}
		if got := FormatPlay(p); got != c.out {
			t.Errorf("FormatPlay(ParsePlay(%q)) = %q, want %q", c.in, got, c.out)
		}
	}
}

func TestParsePlayRejects(t *testing.T) {
	for _, s := range []string{
		"", " ", "24/18 ", " 24/18", "24/18  13/11", "24-18", "24 18", "24/", "/18", "24",
		"25/18", "0/1", "18/24", "24/24", "24/18**", "bar*/22", "off/3", "24/off*", "3/bar",
		"13/11(1)", "13/11(5)", "13/11(2", "13/11(2)(2)", "13/11 (2)", "024/18", "bar/off",
		"24/18/18", "24/19/20", "6/off 5/off 4/off 3/off 2/off", "13/11(2) 13/11(3)",
		"Bar/22", "BAR/22", "24/18\t13/11", "24/18\n", "６/off", "1/0", "-1/off", "- ",
		"24/20/16/12/8/4", "bar/22/16/10/4/off",
	} {
		if p, err := ParsePlay(s); err == nil {
			t.Errorf("ParsePlay(%q) = %v, want an error", s, p)
		} else if _, ok := err.(*NotationError); !ok {
			t.Errorf("ParsePlay(%q): error %T, want *NotationError", s, err)
		}
	}
}

func FuzzParsePlay(f *testing.F) {
	for _, s := range []string{"-", "24/18 13/11", "bar/22*", "6/off", "8/2*", "13/11(2)", "24/18*/13", "13/8 8/3", "8/5*(2)", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePlay(s)
		if err != nil {
			return
		}
		out := FormatPlay(p)
		q, err := ParsePlay(out)
		if err != nil {
			t.Fatalf("ParsePlay(FormatPlay(ParsePlay(%q)) = %q): %v", s, out, err)
		}
		if again := FormatPlay(q); again != out {
			t.Fatalf("FormatPlay is not stable: %q -> %q -> %q", s, out, again)
		}
	})
}
