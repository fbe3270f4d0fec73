package rules

import (
	"fmt"
	"sync"
)

// Dice are the two dice of a roll, each from 1 to 6. The type has the
// layout of events/dice.Dice, so one converts to the other.
type Dice [2]int

// Valid reports whether both dice are between 1 and 6.
func (d Dice) Valid() bool { return d[0] >= 1 && d[0] <= 6 && d[1] >= 1 && d[1] <= 6 }

// IsDouble reports whether both dice show the same face.
func (d Dice) IsDouble() bool { return d[0] == d[1] }

func (d Dice) String() string { return fmt.Sprintf("%d-%d", d[0], d[1]) }

// AllRolls returns the 21 distinct rolls, 1-1, 2-1, 2-2, … 6-6, the larger
// die first.
func AllRolls() []Dice {
	var r []Dice
	for a := 1; a <= 6; a++ {
		for b := 1; b <= a; b++ {
			r = append(r, Dice{a, b})
		}
	}
	return r
}

// relaxation bits: each switches one rule off (used to find which rule an
// illegal play breaks).
type relaxation uint16

const (
	relaxBarFirst relaxation = 1 << iota
	relaxPinned
	relaxHitAndRun
	relaxFirstChecker
	relaxBlocked
	relaxBearOffNotHome
	relaxBearOffHigher
	relaxStartQuarter
	relaxPrimeTrap
)

// diagnosisOrder is the order in which rules are switched off to name the
// rule an illegal play breaks.
var diagnosisOrder = [...]struct {
	r    relaxation
	rule Rule
}{
	{relaxBarFirst, RuleBarFirst},
	{relaxPinned, RulePinned},
	{relaxHitAndRun, RuleHitAndRun},
	{relaxFirstChecker, RuleFirstChecker},
	{relaxBlocked, RuleBlocked},
	{relaxBearOffNotHome, RuleBearOffNotHome},
	{relaxBearOffHigher, RuleBearOffHigher},
	{relaxStartQuarter, RuleStartQuarter},
	{relaxPrimeTrap, RulePrimeTrap},
}

// A node is a position a sequence of steps reaches.
type node struct {
	pos     Position
	steps   [4]step
	n       int   // number of steps of the recorded sequence
	depths  uint8 // bit k: reachable with k steps (every-node mode)
	dieMask uint8 // bit d: reachable with one step of die d
	order   int   // discovery order
}

type nodeKey struct {
	p     Position
	stuck uint32
	used  uint8
}

// A gen enumerates the plays of one roll. Its maps and node storage are
// reused from one roll to the next (genPool): newGen takes one, release
// gives it back once its nodes are no longer read.
type gen struct {
	rs     *ruleset
	me, op int
	dice   Dice
	double bool
	relax  relaxation
	every  bool // record every node, not only those of the largest depth
	best   int
	nodes  map[Position]int32 // the recorded nodes, by position: their index in slab
	slab   []node
	count  int
	seen   map[nodeKey]struct{}
	path   [4]step

	// Find mode (newFind): only the plays that end in target are kept,
	// in found, instead of every node; any says whether any play was
	// recorded, and hiAt1 whether one of the best depth (while it is 1)
	// starts with the larger die.
	find, any, hiAt1, hasFound bool
	target                     Position
	found                      node

	// Directed mode (newFind's first search, directed): only the steps
	// that can still lead to target are taken (canReach), and the search
	// stops at the first sequence that reaches it with every die (done).
	directed, done bool
	// reach[k] is how many of the mover's checkers target has on points k
	// and above (k = 0..Bar), which no step can raise.
	reach [Bar + 1]int8
}

// genPool holds gens to reuse: a roll's enumeration fills maps of hundreds
// to thousands of entries, which were allocated and grown anew for every
// move checked (the ledger checks every move of a game whose moves are
// logged).
var genPool = sync.Pool{New: func() any {
	return &gen{nodes: make(map[Position]int32), seen: make(map[nodeKey]struct{})}
}}

func newGen(v Variant, seat int, d Dice, relax relaxation, every bool) *gen {
	g := genPool.Get().(*gen)
	nodes, seen, slab := g.nodes, g.seen, g.slab[:0]
	clear(nodes)
	clear(seen)
	*g = gen{
		rs: v.rules(), me: seat, op: 1 - seat, dice: d, double: d.IsDouble(),
		relax: relax, every: every, best: -1,
		nodes: nodes, slab: slab, seen: seen,
	}
	return g
}

// newFind returns a gen that looks for the legal plays that end in target
// (ApplyPlay): run then leaves in g.found, if g.hasFound, the node the full
// enumeration would have recorded for target, without recording the
// others. The rules, the depth of the legal plays and the larger-die rule
// are decided exactly as there.
func newFind(v Variant, seat int, d Dice, target Position) *gen {
	g := newGen(v, seat, d, 0, false)
	g.find, g.target = true, target
	return g
}

// findAll reports whether a play that uses every die (two, or four of a
// double) reaches target, and if so returns the gen holding it in g.found,
// as newFind's run would: it searches only the sequences of steps that can
// still end in target and stops at the first that does with every die.
// Such a play is legal whatever else the roll allows: no play uses more
// dice, and the larger-die rule binds only plays of one die of two. The
// first sequence it meets is the one the whole search meets first, since
// the steps it skips lead only to positions that cannot reach target. If
// it returns false (the play uses fewer dice, or is illegal), the caller
// runs the whole search (newFind) to decide; the gen is then released.
func findAll(v Variant, p Position, seat int, d Dice, target Position) (*gen, bool) {
	g := newFind(v, seat, d, target)
	g.directed = true
	mine := &target.n[seat]
	var c int8
	for k := Bar; k >= 0; k-- {
		c += mine[k]
		g.reach[k] = c
	}
	g.dfs(p, 0, 0, 0)
	if g.hasFound && g.best == g.maxDepth() {
		return g, true
	}
	g.release()
	return nil, false
}

func (g *gen) maxDepth() int {
	if g.double {
		return 4
	}
	return 2
}

// canReach reports whether target can still follow from p in directed
// mode: a step moves one of the mover's checkers to a lower point, so the
// count of the mover's checkers on points k and above never rises; a hit
// sends an opposing checker to the bar and nothing brings one back to a
// point of the board (in the hitting and running variants).
func (g *gen) canReach(p *Position) bool {
	mine := &p.n[g.me]
	var c int8
	for k := Bar; k >= 1; k-- {
		c += mine[k]
		if c < g.reach[k] {
			return false
		}
	}
	if g.rs.style == pinning {
		return true
	}
	theirs, want := &p.n[g.op], &g.target.n[g.op]
	for o := 1; o <= 24; o++ {
		if theirs[o] < want[o] {
			return false
		}
	}
	return true
}

// release returns g to genPool; neither g nor its nodes may be used after.
func (g *gen) release() { genPool.Put(g) }

// node returns the node recorded for position p, or nil.
func (g *gen) node(p Position) *node {
	if i, ok := g.nodes[p]; ok {
		return &g.slab[i]
	}
	return nil
}

func (g *gen) relaxed(r relaxation) bool { return g.relax&r != 0 }

// run enumerates every sequence of steps from p.
func (g *gen) run(p Position) {
	g.dfs(p, 0, 0, 0)
	if g.find {
		g.runFind(p)
		return
	}
	if len(g.nodes) == 0 && g.rs.fevga && g.relax&(relaxStartQuarter|relaxPrimeTrap) == 0 {
		// No play, not even the empty one, ends where fevga allows (this
		// only happens in positions that play cannot reach): the rules
		// about where a play ends do not apply.
		g.relax |= relaxStartQuarter | relaxPrimeTrap
		clear(g.seen)
		g.best = -1
		g.dfs(p, 0, 0, 0)
	}
	if g.every || g.double || g.best != 1 {
		return
	}
	// Only one die can be played: the larger one if it can.
	hi := max(g.dice[0], g.dice[1])
	canHi := false
	for _, i := range g.nodes {
		if g.slab[i].dieMask&(1<<hi) != 0 {
			canHi = true
			break
		}
	}
	if canHi {
		for k, i := range g.nodes {
			if g.slab[i].dieMask&(1<<hi) == 0 {
				delete(g.nodes, k)
			}
		}
	}
}

// runFind is run's end in find mode, after the first search.
func (g *gen) runFind(p Position) {
	if !g.any && g.rs.fevga && g.relax&(relaxStartQuarter|relaxPrimeTrap) == 0 {
		g.relax |= relaxStartQuarter | relaxPrimeTrap
		clear(g.seen)
		g.best = -1
		g.dfs(p, 0, 0, 0)
	}
	if g.double || g.best != 1 || !g.hasFound {
		return
	}
	// Only one die can be played: the larger one if it can.
	hi := max(g.dice[0], g.dice[1])
	if g.hiAt1 && g.found.dieMask&(1<<hi) == 0 {
		g.hasFound = false
	}
}

func (g *gen) dfs(p Position, stuck uint32, used uint8, depth int) {
	g.record(p, depth)
	maxDepth := g.maxDepth()
	if depth == maxDepth {
		if g.directed && g.hasFound && g.best == maxDepth {
			g.done = true
		}
		return
	}
	for i := 0; i < 2; i++ {
		if g.double {
			if i == 1 {
				break
			}
		} else if used&(1<<i) != 0 {
			continue
		}
		d := g.dice[i]
		nu := used | 1<<i
		if g.double {
			nu = used + 1
		}
		for q := Bar; q >= 1; q-- {
			np, ns, ok := g.step(&p, stuck, q, d)
			if !ok || g.directed && !g.canReach(&np) {
				continue
			}
			// The states one step deep are all distinct (each moved a
			// checker off a different point), and those of the last
			// depth are only recorded, which a second arrival repeats to
			// no effect: only the depths between need the seen set,
			// which a non-double has none of.
			if depth+1 > 1 && depth+1 < maxDepth {
				k := nodeKey{np, ns, nu}
				if _, dup := g.seen[k]; dup {
					continue
				}
				g.seen[k] = struct{}{}
			}
			to := q - d
			if to < 0 {
				to = 0
			}
			g.path[depth] = step{from: int8(q), to: int8(to), die: int8(d)}
			g.dfs(np, ns, nu, depth+1)
			if g.done {
				return
			}
		}
	}
}

func (g *gen) record(p Position, depth int) {
	if !g.validEnd(&p) {
		return
	}
	if g.find {
		g.recordFind(p, depth)
		return
	}
	if !g.every {
		if depth < g.best {
			return
		}
		if depth > g.best {
			g.best = depth
			clear(g.nodes)
			g.slab = g.slab[:0]
		}
	} else if depth > g.best {
		g.best = depth
	}
	n := g.node(p)
	if n == nil {
		g.nodes[p] = int32(len(g.slab))
		g.slab = append(g.slab, node{pos: p, steps: g.path, n: depth, order: g.count})
		g.count++
		n = &g.slab[len(g.slab)-1]
	}
	n.depths |= 1 << depth
	if depth == 1 {
		n.dieMask |= 1 << g.path[0].die
	}
}

// recordFind is record in find mode: it keeps what record keeps of the
// node of target, and what run needs of the others (any, hiAt1).
func (g *gen) recordFind(p Position, depth int) {
	g.any = true
	if depth < g.best {
		return
	}
	if depth > g.best {
		g.best = depth
		g.hasFound, g.hiAt1 = false, false
	}
	if depth == 1 && int(g.path[0].die) == max(g.dice[0], g.dice[1]) {
		g.hiAt1 = true
	}
	if p != g.target {
		return
	}
	if !g.hasFound {
		g.found = node{pos: p, steps: g.path, n: depth, order: g.count}
		g.count++
		g.hasFound = true
	}
	g.found.depths |= 1 << depth
	if depth == 1 {
		g.found.dieMask |= 1 << g.path[0].die
	}
}

// passed reports whether a fevga player has brought a checker past the
// opponent's starting point (own point 12) or borne one off.
func passed(mine *[26]int8) bool {
	if mine[Off] > 0 {
		return true
	}
	for q := 1; q <= 11; q++ {
		if mine[q] > 0 {
			return true
		}
	}
	return false
}

// step moves one checker of the mover from point q by d pips, if the rules
// (less the relaxed ones) allow it.
func (g *gen) step(p *Position, stuck uint32, q, d int) (Position, uint32, bool) {
	rs := g.rs
	me, op := g.me, g.op
	mine := &p.n[me]
	avail := int(mine[q])
	if avail == 0 {
		return Position{}, 0, false
	}
	bit := uint32(1) << q
	if q <= 24 {
		if p.pin[me]&bit != 0 && !g.relaxed(relaxPinned) {
			return Position{}, 0, false
		}
		if stuck&bit != 0 {
			avail--
			if avail == 0 && !g.relaxed(relaxHitAndRun) {
				return Position{}, 0, false
			}
		}
	}
	if q != Bar && mine[Bar] > 0 && !g.relaxed(relaxBarFirst) {
		return Position{}, 0, false
	}
	if rs.fevga && q == 24 && mine[24] < NumCheckers && !passed(mine) && !g.relaxed(relaxFirstChecker) {
		return Position{}, 0, false
	}
	t := q - d
	np := *p
	nm, no := &np.n[me], &np.n[op]
	ns := stuck
	if t >= 1 {
		o := rs.opposite(t)
		switch rs.style {
		case hitting:
			switch {
			case no[o] >= 2:
				if !g.relaxed(relaxBlocked) {
					return Position{}, 0, false
				}
			case no[o] == 1:
				no[o] = 0
				no[Bar]++
				if !rs.hitAndRun && t <= 6 {
					ns |= 1 << t
				}
			}
		case pinning:
			switch {
			case no[o] >= 2 || (no[o] == 1 && np.pin[me]&(1<<t) != 0):
				if !g.relaxed(relaxBlocked) {
					return Position{}, 0, false
				}
			case no[o] == 1 && np.pin[op]&(1<<o) == 0:
				np.pin[op] |= 1 << o
			}
		case running:
			if no[o] >= 1 && !g.relaxed(relaxBlocked) {
				return Position{}, 0, false
			}
		}
	} else {
		if !g.allHome(p) && !g.relaxed(relaxBearOffNotHome) {
			return Position{}, 0, false
		}
		if t < 0 && !g.relaxed(relaxBearOffHigher) {
			for r := q + 1; r <= 6; r++ {
				if mine[r] > 0 {
					return Position{}, 0, false
				}
			}
		}
		t = Off
	}
	nm[q]--
	nm[t]++
	if q <= 24 && nm[q] == 0 {
		np.pin[me] &^= bit // a relaxed move of a pinned checker
		ns &^= bit
		if rs.style == pinning {
			np.pin[op] &^= 1 << rs.opposite(q) // its pinned checker is free
		}
	}
	return np, ns, true
}

// allHome reports whether the mover may bear off: every checker on points
// 1-6 or borne off, none on the bar, none pinned.
func (g *gen) allHome(p *Position) bool {
	mine := &p.n[g.me]
	if mine[Bar] > 0 || p.pin[g.me] != 0 {
		return false
	}
	for q := 7; q <= 24; q++ {
		if mine[q] > 0 {
			return false
		}
	}
	return true
}

// validEnd reports whether a play may end in p (the fevga blocking rules).
func (g *gen) validEnd(p *Position) bool {
	if !g.rs.fevga {
		return true
	}
	mine, theirs := &p.n[g.me], &p.n[g.op]
	if !g.relaxed(relaxStartQuarter) {
		all := true
		for q := 19; q <= 24; q++ {
			if mine[q] == 0 {
				all = false
				break
			}
		}
		if all {
			return false
		}
	}
	if !g.relaxed(relaxPrimeTrap) {
		// held[o]: the mover holds the opponent's point o.
		var held [25]bool
		for q := 1; q <= 24; q++ {
			held[g.rs.opposite(q)] = mine[q] > 0
		}
		lowest, highest := 0, 0 // the opponent's checkers on the board
		for o := 1; o <= 24; o++ {
			if theirs[o] > 0 {
				if lowest == 0 {
					lowest = o
				}
				highest = o
			}
		}
		if lowest != 0 {
			run := 0
			for o := 1; o <= 24; o++ {
				if !held[o] {
					run = 0
					continue
				}
				run++
				// A prime on o-5..o traps them all if every one is above it.
				if run >= 6 && lowest > o && highest > o {
					return false
				}
			}
		}
	}
	return true
}

// hitsOf returns the points (mover's numbering) where a play from p to np
// hit or newly pinned an opposing checker.
func hitsOf(rs *ruleset, me int, p, np *Position) uint32 {
	op := 1 - me
	var h uint32
	for q := 1; q <= 24; q++ {
		o := rs.opposite(q)
		switch rs.style {
		case hitting:
			if p.n[op][o] == 1 && np.n[op][o] == 0 {
				h |= 1 << q
			}
		case pinning:
			if p.pin[op]&(1<<o) == 0 && np.pin[op]&(1<<o) != 0 {
				h |= 1 << q
			}
		}
	}
	return h
}

// A legalPlay is a legal play with the position it leads to.
type legalPlay struct {
	play Play
	text string
	pos  Position
}

// legalPlays returns the legal plays of seat with dice d in p, one per
// resulting position, in a deterministic order (by canonical text), and the
// number of dice they use.
func legalPlays(v Variant, p Position, seat int, d Dice) ([]legalPlay, int) {
	g := newGen(v, seat, d, 0, false)
	defer g.release()
	g.run(p)
	out := make([]legalPlay, 0, len(g.nodes))
	for _, i := range g.nodes {
		n := &g.slab[i]
		out = append(out, legalPlay{play: notate(n.steps[:n.n], hitsOf(g.rs, seat, &p, &n.pos)), pos: n.pos})
	}
	sortLegal(out)
	return out, g.best
}
