package rules

import (
	"math/rand/v2"
)

// Choose picks a legal play of seat with dice d in position p under variant
// v with a small greedy strategy, for demonstration bots: it scores the
// position each legal play leads to (see score) and returns a best one,
// breaking ties with r. The same position, dice and random state give the
// same play. It returns nil if v, seat or d is invalid.
func Choose(v Variant, p Position, seat int, d Dice, r *rand.Rand) Play {
	if checkArgs(v, seat, d) != nil {
		return nil
	}
	ls, _ := legalPlays(v, p, seat, d)
	rs := v.rules()
	best, ties := 0, 0
	var pick Play
	for i, l := range ls {
		s := score(rs, &l.pos, seat)
		switch {
		case i == 0 || s > best:
			best, ties, pick = s, 1, l.play
		case s == best:
			// Reservoir sampling keeps each tied play with equal chance.
			ties++
			if r.IntN(ties) == 0 {
				pick = l.play
			}
		}
	}
	return pick
}

// score rates position p for seat (higher is better): the race (pip counts),
// checkers borne off, points made, and the variant's interactions (blots
// within reach of the opponent, checkers sent to the bar, pins, blocks).
func score(rs *ruleset, p *Position, seat int) int {
	op := 1 - seat
	mine, theirs := &p.n[seat], &p.n[op]
	s := 2*(p.PipCount(op)-p.PipCount(seat)) + 10*int(mine[Off])
	for q := 1; q <= 24; q++ {
		n := int(mine[q])
		if n >= 2 {
			s += 4
			if q <= 6 {
				s += 2
			}
		}
		if n == 1 && rs.style != running && p.pin[seat]&(1<<q) == 0 && threatened(rs, p, seat, q) {
			s -= 8 + q/2
		}
	}
	switch rs.style {
	case hitting:
		s += 15 * int(theirs[Bar])
	case pinning:
		for q := 1; q <= 24; q++ {
			if p.pin[op]&(1<<q) != 0 {
				s += 20
				if q == 24 {
					s += 100 // the opponent's mother
				}
			}
			if p.pin[seat]&(1<<q) != 0 {
				s -= 20
			}
		}
	case running:
		for q := 1; q <= 24; q++ {
			if mine[q] > 0 {
				s++
			}
		}
	}
	return s
}

// threatened reports whether an opposing checker stands within 12 pips
// behind point q (seat's numbering) on the opponent's way, so that it could
// land on q.
func threatened(rs *ruleset, p *Position, seat, q int) bool {
	op := 1 - seat
	o := rs.opposite(q)
	if rs.style == hitting && p.n[op][Bar] > 0 && 25-o <= 12 {
		return true
	}
	for k := o + 1; k <= min(o+12, 24); k++ {
		if p.n[op][k] > 0 && p.pin[op]&(1<<k) == 0 {
			return true
		}
	}
	return false
}
