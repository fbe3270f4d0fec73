package rules

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
)

// applyPlayEnumerated is ApplyPlay as it was before the find mode: the
// whole enumeration of the roll's legal plays, then the node of the play's
// end. TestFindAgainstEnumeration holds ApplyPlay to it.
func applyPlayEnumerated(v Variant, p Position, seat int, d Dice, pl Play) (Position, Play, error) {
	if err := checkArgs(v, seat, d); err != nil {
		return p, nil, err
	}
	fail := func(r Rule, detail string) (Position, Play, error) {
		return p, nil, &IllegalMoveError{Rule: r, Seat: seat, Dice: d, Play: FormatPlay(pl), Detail: detail}
	}
	rs := v.rules()
	end, rule, detail := simulate(rs, p, seat, pl)
	if rule != "" {
		return fail(rule, detail)
	}
	g := newGen(v, seat, d, 0, false)
	defer g.release()
	g.run(p)
	if n := g.node(end); n != nil {
		return n.pos, notate(n.steps[:n.n], hitsOf(rs, seat, &p, &n.pos)), nil
	}
	rule, detail = diagnose(v, p, seat, d, end, g.best)
	return fail(rule, detail)
}

// TestFindAgainstEnumeration: ApplyPlay, which looks only for the plays
// ending where the given one ends (newFind), gives exactly the answer of
// the whole enumeration (applyPlayEnumerated) — the position, the canonical
// play, or the rule broken and its detail — for every legal play of random
// positions of each variant (from games and made up), for the legal plays
// of the other dice and of the other seat, and for each legal play less
// one of its moves, and for every checker moved by one die alone.
func TestFindAgainstEnumeration(t *testing.T) {
	n := 25
	if os.Getenv("ZARLOG_SLOW") == "1" {
		n = 400
	}
	for _, v := range AllVariants() {
		t.Run(string(v), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(31, uint64(len(v))))
			qs := randomQueries(rng, v, n)
			for range n {
				qs = append(qs, gnubgQuery{randomPosition(rng, v), rng.IntN(2), Dice{1 + rng.IntN(6), 1 + rng.IntN(6)}})
			}
			// And positions where only one die of a roll can be played,
			// either one: the larger-die rule's.
			larger := 0
			for tries := 0; larger < 10 && tries < 20000; tries++ {
				q := gnubgQuery{randomPosition(rng, v), rng.IntN(2), Dice{1 + rng.IntN(6), 1 + rng.IntN(6)}}
				if q.dice.IsDouble() {
					continue
				}
				g := newGen(v, q.seat, q.dice, 0, false)
				g.run(q.pos)
				best := g.best
				g.release()
				if best != 1 {
					continue
				}
				lo := min(q.dice[0], q.dice[1])
				for from := Bar; from >= 1; from-- {
					if q.pos.n[q.seat][from] == 0 {
						continue
					}
					_, _, err := applyPlayEnumerated(v, q.pos, q.seat, q.dice, Play{{From: from, To: max(from-lo, Off)}})
					if e, ok := err.(*IllegalMoveError); ok && e.Rule == RuleLargerDie {
						qs = append(qs, q)
						larger++
						break
					}
				}
			}
			if larger == 0 {
				t.Fatal("no position where only the larger die may be played")
			}
			accepted, refused := 0, 0
			for _, q := range qs {
				legal := LegalPlays(v, q.pos, q.seat, q.dice)
				tries := append([]Play{}, legal...)
				other := LegalPlays(v, q.pos, q.seat, Dice{1 + rng.IntN(6), 1 + rng.IntN(6)})
				tries = append(tries, other[:min(len(other), 5)]...)
				other = LegalPlays(v, q.pos, 1-q.seat, q.dice)
				tries = append(tries, other[:min(len(other), 5)]...)
				for _, pl := range legal[:min(len(legal), 3)] {
					for i := range pl {
						tries = append(tries, append(append(Play{}, pl[:i]...), pl[i+1:]...))
					}
				}
				// Every single checker moved by one die: where only one
				// die can be played, the larger-die rule decides these.
				for _, d := range q.dice {
					for from := Bar; from >= 1; from-- {
						if q.pos.n[q.seat][from] > 0 {
							tries = append(tries, Play{{From: from, To: max(from-d, Off)}})
						}
					}
				}
				for _, pl := range tries {
					np, c, err := ApplyPlay(v, q.pos, q.seat, q.dice, pl)
					wp, wc, werr := applyPlayEnumerated(v, q.pos, q.seat, q.dice, pl)
					if np != wp || FormatPlay(c) != FormatPlay(wc) || fmt.Sprint(err) != fmt.Sprint(werr) {
						t.Fatalf("%s seat %d dice %s play %q: ApplyPlay gives %s %q %v, the enumeration %s %q %v",
							q.pos, q.seat, q.dice, FormatPlay(pl), np, FormatPlay(c), err, wp, FormatPlay(wc), werr)
					}
					if err == nil {
						accepted++
					} else {
						refused++
					}
				}
			}
			if accepted == 0 || refused == 0 {
				t.Fatalf("%d plays accepted, %d refused", accepted, refused)
			}
			t.Logf("%d positions: %d plays accepted, %d refused, the same way", len(qs), accepted, refused)
		})
	}
}
