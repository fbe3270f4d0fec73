package rules

import (
	"fmt"
)

// This file is an independent reference implementation of the move rules,
// used to check the engine (and to generate the perft goldens). It shares no
// code with the engine's generator: it keeps the board in one global frame
// (squares 1..24 as seat 0 numbers them), tries every order of the dice and
// every checker at every step without pruning or memoisation, and applies
// the "as many dice as possible, else the larger die" rule afterwards over
// complete and partial sequences alike.

type refSquare struct {
	n     [2]int8 // checkers of each seat on the square
	under int8    // the seat whose single checker is pinned under the other's, or -1
}

type refBoard struct {
	sq  [25]refSquare // 1..24
	bar [2]int8
	off [2]int8
}

type refRules struct {
	v       Variant
	sqOf    [2][25]int // sqOf[s][q]: the square of seat s's point q
	ownOf   [2][25]int // ownOf[s][g]: seat s's point number of square g
	hitting bool       // blots are hit to the bar
	pinning bool       // blots are pinned (plakoto)
	running bool       // one checker holds a point (fevga)
	noRunIn bool       // a checker that hits in its home board stops (tavla)
	anyEnd  bool       // ignore the rules about where a play ends
}

func newRefRules(v Variant) refRules {
	r := refRules{v: v}
	switch v {
	case Backgammon, Portes:
		r.hitting = true
	case Tavla:
		r.hitting, r.noRunIn = true, true
	case Plakoto:
		r.pinning = true
	case Fevga:
		r.running = true
	}
	for s := 0; s < 2; s++ {
		for q := 1; q <= 24; q++ {
			g := r.squareOf(s, q)
			r.sqOf[s][q] = g
			r.ownOf[s][g] = q
		}
	}
	return r
}

func (r refRules) square(s, q int) int { return r.sqOf[s][q] }
func (r refRules) own(s, g int) int    { return r.ownOf[s][g] }

// squareOf returns the global square of seat s's own point q (1..24).
func (r refRules) squareOf(s, q int) int {
	if s == 0 {
		return q
	}
	if r.running {
		// Seat 1 starts on square 12 and runs 12..1, then 24..13.
		if q <= 12 {
			return q + 12
		}
		return q - 12
	}
	return 25 - q
}

func refFromPosition(r refRules, p Position) refBoard {
	var b refBoard
	for g := 1; g <= 24; g++ {
		b.sq[g].under = -1
	}
	for s := 0; s < 2; s++ {
		b.bar[s] = int8(p.Checkers(s, Bar))
		b.off[s] = int8(p.Checkers(s, Off))
		for q := 1; q <= 24; q++ {
			g := r.square(s, q)
			b.sq[g].n[s] = int8(p.Checkers(s, q))
			if p.Pinned(s, q) {
				b.sq[g].under = int8(s)
			}
		}
	}
	return b
}

func (b *refBoard) toPosition(r refRules) Position {
	var p Position
	for s := 0; s < 2; s++ {
		p.n[s][Bar] = b.bar[s]
		p.n[s][Off] = b.off[s]
		for g := 1; g <= 24; g++ {
			q := r.own(s, g)
			p.n[s][q] = b.sq[g].n[s]
			if b.sq[g].under == int8(s) {
				p.pin[s] |= 1 << q
			}
		}
	}
	return p
}

// count returns how many checkers seat s has on its own point q.
func (b *refBoard) count(r refRules, s, q int) int { return int(b.sq[r.square(s, q)].n[s]) }

// movable returns how many of seat s's checkers on square g may move:
// none if its checker there is pinned.
func (b *refBoard) movable(s, g int) int {
	if b.sq[g].under == int8(s) {
		return 0
	}
	return int(b.sq[g].n[s])
}

func (b *refBoard) allHome(r refRules, s int) bool {
	if b.bar[s] > 0 {
		return false
	}
	for g := 1; g <= 24; g++ {
		if b.sq[g].n[s] > 0 && (r.own(s, g) > 6 || b.sq[g].under == int8(s)) {
			return false
		}
	}
	return true
}

// refMove tries to move one checker of seat s from own point q (25: the
// bar) by d. frozen counts, per square, checkers that hit in their home
// board this turn (tavla). It returns false if the move is illegal.
func refMove(r refRules, b *refBoard, frozen *[25]int8, s, q, d int) bool {
	o := 1 - s
	if q == 25 {
		if !r.hitting || b.bar[s] == 0 {
			return false
		}
	} else {
		if b.bar[s] > 0 {
			return false // enter first
		}
		g := r.square(s, q)
		if b.movable(s, g)-int(frozen[g]) <= 0 {
			return false
		}
		if r.running && q == 24 && b.count(r, s, 24) < 15 {
			// The first checker must pass the opponent's start (own 12).
			ok := b.off[s] > 0
			for k := 1; k <= 11; k++ {
				ok = ok || b.count(r, s, k) > 0
			}
			if !ok {
				return false
			}
		}
	}
	t := q - d
	if t <= 0 {
		if !b.allHome(r, s) {
			return false
		}
		if t < 0 {
			for k := q + 1; k <= 6; k++ {
				if b.count(r, s, k) > 0 {
					return false
				}
			}
		}
	} else {
		tg := r.square(s, t)
		dst := &b.sq[tg]
		if dst.n[o] > 0 {
			switch {
			case r.running:
				return false
			case r.hitting:
				if dst.n[o] > 1 {
					return false
				}
			case r.pinning:
				// A single free opposing checker can be pinned; one that
				// is pinned under ours is no obstacle; anything else is.
				if !(dst.n[o] == 1 && (dst.under == int8(o) || dst.n[s] == 0)) {
					return false
				}
			}
		}
	}
	// Take the checker off its square.
	if q == 25 {
		b.bar[s]--
	} else {
		g := r.square(s, q)
		b.sq[g].n[s]--
		if b.sq[g].n[s] == 0 && b.sq[g].under == int8(o) {
			b.sq[g].under = -1 // the pinned checker is free again
		}
	}
	if t <= 0 {
		b.off[s]++
		return true
	}
	tg := r.square(s, t)
	dst := &b.sq[tg]
	if dst.n[o] == 1 && r.hitting {
		dst.n[o] = 0
		b.bar[o]++
		if r.noRunIn && t <= 6 {
			frozen[tg]++
		}
	}
	if dst.n[o] == 1 && r.pinning && dst.n[s] == 0 {
		dst.under = int8(o)
	}
	dst.n[s]++
	return true
}

// refEndOK applies the rules about where a play may end (fevga).
func refEndOK(r refRules, b *refBoard, s int) bool {
	if !r.running {
		return true
	}
	o := 1 - s
	quarter := true
	for q := 19; q <= 24; q++ {
		quarter = quarter && b.count(r, s, q) > 0
	}
	if quarter {
		return false
	}
	// A prime: six points in a row of the opponent's way held by s, with
	// every opposing checker on the board still before it.
	for lo := 1; lo+5 <= 24; lo++ {
		prime := true
		for k := lo; k <= lo+5; k++ {
			prime = prime && b.sq[r.square(o, k)].n[s] > 0
		}
		if !prime {
			continue
		}
		behind, ahead := 0, 0
		for k := 1; k <= 24; k++ {
			c := b.count(r, o, k)
			if k > lo+5 {
				behind += c
			} else {
				ahead += c
			}
		}
		if behind > 0 && ahead == 0 {
			return false
		}
	}
	return true
}

type refLeaf struct {
	b     refBoard
	used  int
	first int // the die of the first step, for one-step plays
}

func refSearch(r refRules, b refBoard, frozen [25]int8, s int, dice []int, used, first int, out map[refLeaf]bool) {
	if r.anyEnd || refEndOK(r, &b, s) {
		out[refLeaf{b, used, first}] = true
	}
	for i, d := range dice {
		rest := append(append([]int{}, dice[:i]...), dice[i+1:]...)
		for q := 25; q >= 1; q-- {
			nb, nf := b, frozen
			if refMove(r, &nb, &nf, s, q, d) {
				f := first
				if used == 0 {
					f = d
				}
				refSearch(r, nb, nf, s, rest, used+1, f, out)
			}
		}
	}
}

// refPlays returns the positions the legal plays of seat s with dice d
// lead to, by brute force.
func refPlays(v Variant, p Position, s int, d Dice) map[Position]bool {
	r := newRefRules(v)
	dice := []int{d[0], d[1]}
	if d[0] == d[1] {
		dice = []int{d[0], d[0], d[0], d[0]}
	}
	leaves := make(map[refLeaf]bool)
	var frozen [25]int8
	refSearch(r, refFromPosition(r, p), frozen, s, dice, 0, 0, leaves)
	if len(leaves) == 0 {
		// Nothing ends where fevga allows: those rules do not apply.
		r.anyEnd = true
		refSearch(r, refFromPosition(r, p), frozen, s, dice, 0, 0, leaves)
	}
	most := 0
	for l := range leaves {
		most = max(most, l.used)
	}
	larger := max(d[0], d[1])
	onlyLarger := false
	if most == 1 && d[0] != d[1] {
		for l := range leaves {
			if l.used == 1 && l.first == larger {
				onlyLarger = true
			}
		}
	}
	out := make(map[Position]bool)
	for l := range leaves {
		if l.used != most || (onlyLarger && l.first != larger) {
			continue
		}
		out[l.b.toPosition(r)] = true
	}
	return out
}

func (b refBoard) String() string { return fmt.Sprintf("%v", b.sq) }
