package rules

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// Perft-style counts: for a position and the side on roll, the number of
// distinct legal plays (distinct resulting positions) of each of the 21
// rolls, and their sum. The goldens in testdata/perft.json are written by
// the brute-force reference implementation (reference_test.go), not by the
// engine:
//
//	ZARLOG_UPDATE_GOLDEN=1 go test ./rules -run TestPerft
//
// The positions are the starting position of each variant and positions
// picked, by fixed rules, from seeded random games (the busiest, one with a
// checker on the bar, one bearing off, one with pins).

type perftCase struct {
	Name     string         `json:"name"`
	Variant  Variant        `json:"variant"`
	Position string         `json:"position"`
	Seat     int            `json:"seat"`
	Total    int            `json:"total"`
	Rolls    map[string]int `json:"rolls"`
}

const perftGolden = "testdata/perft.json"

func perftPositions() []perftCase {
	var cs []perftCase
	add := func(name string, v Variant, p Position, seat int) {
		cs = append(cs, perftCase{Name: name, Variant: v, Position: p.String(), Seat: seat})
	}
	for _, v := range AllVariants() {
		add(string(v)+"/start", v, Start(v), 0)
		rng := rand.New(rand.NewPCG(1234, uint64(len(v))))
		qs := randomQueries(rng, v, 400)
		busiest, most := 0, -1
		for i, q := range qs {
			if n := len(LegalPlays(v, q.pos, q.seat, Dice{2, 2})); n > most {
				busiest, most = i, n
			}
		}
		add(string(v)+"/busy", v, qs[busiest].pos, qs[busiest].seat)
		for _, q := range qs {
			if q.pos.n[q.seat][Bar] > 0 {
				add(string(v)+"/bar", v, q.pos, q.seat)
				break
			}
		}
		for _, q := range qs {
			g := newGen(v, q.seat, q.dice, 0, false)
			if g.allHome(&q.pos) && q.pos.n[q.seat][Off] > 0 && q.pos.n[q.seat][Off] < 10 {
				add(string(v)+"/bearoff", v, q.pos, q.seat)
				break
			}
		}
		for _, q := range qs {
			if q.pos.pin[0]|q.pos.pin[1] != 0 {
				add(string(v)+"/pins", v, q.pos, q.seat)
				break
			}
		}
	}
	return cs
}

func perftOf(v Variant, p Position, seat int, plays func(Variant, Position, int, Dice) int) (int, map[string]int) {
	total, rolls := 0, make(map[string]int)
	for _, d := range AllRolls() {
		n := plays(v, p, seat, d)
		rolls[d.String()] = n
		total += n
	}
	return total, rolls
}

func enginePlays(v Variant, p Position, seat int, d Dice) int { return len(LegalPlays(v, p, seat, d)) }
func refCount(v Variant, p Position, seat int, d Dice) int    { return len(refPlays(v, p, seat, d)) }

func TestPerft(t *testing.T) {
	if os.Getenv("ZARLOG_UPDATE_GOLDEN") == "1" {
		cs := perftPositions()
		for i := range cs {
			c := &cs[i]
			p, err := ParsePosition(c.Variant, c.Position)
			if err != nil {
				t.Fatal(err)
			}
			c.Total, c.Rolls = perftOf(c.Variant, p, c.Seat, refCount)
		}
		b, err := json.MarshalIndent(cs, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(perftGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(perftGolden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(perftGolden)
	if err != nil {
		t.Fatal(err)
	}
	var cs []perftCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	if len(cs) < 10 {
		t.Fatalf("%s holds %d cases, want at least 10", perftGolden, len(cs))
	}
	for _, c := range cs {
		t.Run(c.Name, func(t *testing.T) {
			p, err := ParsePosition(c.Variant, c.Position)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Rolls) != 21 {
				t.Fatalf("golden has %d rolls", len(c.Rolls))
			}
			total, rolls := perftOf(c.Variant, p, c.Seat, enginePlays)
			for _, d := range AllRolls() {
				if rolls[d.String()] != c.Rolls[d.String()] {
					t.Errorf("%s: engine %d plays, golden %d", d, rolls[d.String()], c.Rolls[d.String()])
				}
			}
			if total != c.Total {
				t.Errorf("perft %d, golden %d", total, c.Total)
			}
			if !testing.Short() {
				if rt, _ := perftOf(c.Variant, p, c.Seat, refCount); rt != c.Total {
					t.Errorf("reference perft %d, golden %d", rt, c.Total)
				}
			}
		})
	}
}

// TestPerftGnubg checks the backgammon goldens against GNU Backgammon.
func TestPerftGnubg(t *testing.T) {
	bin := needGnubg(t)
	b, err := os.ReadFile(perftGolden)
	if err != nil {
		t.Fatal(err)
	}
	var cs []perftCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	var qs []gnubgQuery
	var want []int
	var names []string
	for _, c := range cs {
		if c.Variant != Backgammon {
			continue
		}
		p, err := ParsePosition(c.Variant, c.Position)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range AllRolls() {
			qs = append(qs, gnubgQuery{p, c.Seat, d})
			want = append(want, c.Rolls[d.String()])
			names = append(names, fmt.Sprintf("%s %s", c.Name, d))
		}
	}
	if len(qs) == 0 {
		t.Fatal("no backgammon goldens")
	}
	answers := askGnubg(t, bin, qs)
	for i := range qs {
		n := len(answers[i])
		if len(answers[i]) == 1 && answers[i][0] == EmptyPlay {
			n = 1
		}
		if n != want[i] {
			t.Errorf("%s: gnubg %d plays, golden %d", names[i], n, want[i])
		}
	}
}
