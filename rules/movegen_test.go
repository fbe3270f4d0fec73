package rules

import (
	"math/rand/v2"
	"os"
	"testing"
)

// TestAgainstReference checks the engine's legal plays against the
// brute-force reference implementation, for every variant, on positions
// from random games.
func TestAgainstReference(t *testing.T) {
	n := 150
	if os.Getenv("ZARLOG_SLOW") == "1" {
		n = 3000
	}
	for _, v := range AllVariants() {
		t.Run(string(v), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, uint64(len(v))))
			qs := randomQueries(rng, v, n)
			if len(qs) == 0 {
				t.Fatal("no positions")
			}
			bad := 0
			for _, q := range qs {
				ref := refPlays(v, q.pos, q.seat, q.dice)
				ls, _ := legalPlays(v, q.pos, q.seat, q.dice)
				got := make(map[Position]bool)
				for _, l := range ls {
					got[l.pos] = true
				}
				same := len(got) == len(ref)
				for p := range ref {
					same = same && got[p]
				}
				if !same {
					bad++
					t.Errorf("position %s seat %d dice %s: engine %d plays, reference %d", q.pos, q.seat, q.dice, len(got), len(ref))
					for p := range ref {
						if !got[p] {
							t.Errorf("  missing %s", p)
						}
					}
					for p := range got {
						if !ref[p] {
							t.Errorf("  extra   %s", p)
						}
					}
					if bad > 5 {
						t.FailNow()
					}
				}
			}
		})
	}
}

// randomPosition returns a random well-formed (not necessarily reachable)
// position of variant v, biased towards the situations the special rules
// are about: primes, crowded starting quarters, pins, checkers on the bar,
// bear-offs.
func randomPosition(rng *rand.Rand, v Variant) Position {
	rs := v.rules()
	for {
		var p Position
		// global[g] holds the seat occupying square g (seat 0's numbering),
		// or -1.
		var owner [25]int
		for g := range owner {
			owner[g] = -1
		}
		for s := 0; s < 2; s++ {
			left := NumCheckers
			place := func(q, n int) {
				g := q
				if s == 1 {
					g = rs.opposite(q)
				}
				if n <= 0 || left == 0 || (owner[g] != -1 && owner[g] != s) {
					return
				}
				n = min(n, left)
				owner[g] = s
				p.n[s][q] += int8(n)
				left -= n
			}
			if rng.IntN(3) == 0 { // a prime or a wall
				lo := 1 + rng.IntN(19)
				for q := lo; q < lo+6; q++ {
					place(q, 1+rng.IntN(2))
				}
			}
			if rng.IntN(4) == 0 { // a home board for bearing off
				for range 8 {
					place(1+rng.IntN(6), 1+rng.IntN(2))
				}
			}
			if rs.style == hitting && rng.IntN(4) == 0 {
				n := min(left, 1+rng.IntN(3))
				p.n[s][Bar] += int8(n)
				left -= n
			}
			if rng.IntN(3) == 0 {
				n := min(left, rng.IntN(6))
				p.n[s][Off] += int8(n)
				left -= n
			}
			for tries := 0; left > 0 && tries < 200; tries++ {
				place(1+rng.IntN(24), 1+rng.IntN(3))
			}
			p.n[s][Off] += int8(left)
		}
		if rs.style == pinning {
			// Pin a few single checkers under opposing ones.
			for range rng.IntN(3) {
				s := rng.IntN(2)
				q := 1 + rng.IntN(24)
				o := rs.opposite(q)
				if p.n[s][q] == 1 && p.n[1-s][o] == 0 && p.n[1-s][Off] > 0 {
					p.n[1-s][Off]--
					p.n[1-s][o]++
					p.pin[s] |= 1 << q
				}
			}
		}
		if p.n[0][Off] == NumCheckers || p.n[1][Off] == NumCheckers {
			continue
		}
		if Check(v, p) == nil {
			return p
		}
	}
}

func TestAgainstReferenceRandomPositions(t *testing.T) {
	n := 300
	if os.Getenv("ZARLOG_SLOW") == "1" {
		n = 5000
	}
	for _, v := range AllVariants() {
		t.Run(string(v), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(len(v))))
			bad := 0
			for range n {
				p := randomPosition(rng, v)
				seat := rng.IntN(2)
				d := Dice{1 + rng.IntN(6), 1 + rng.IntN(6)}
				ref := refPlays(v, p, seat, d)
				ls, _ := legalPlays(v, p, seat, d)
				got := make(map[Position]bool)
				for _, l := range ls {
					got[l.pos] = true
				}
				same := len(got) == len(ref)
				for q := range ref {
					same = same && got[q]
				}
				if !same {
					bad++
					t.Errorf("position %s seat %d dice %s: engine %d plays, reference %d", p, seat, d, len(got), len(ref))
					if bad > 5 {
						t.FailNow()
					}
				}
			}
		})
	}
}
