package rules

import (
	"fmt"
	"slices"
	"strings"
)

// sortLegal orders legal plays by their canonical text.
func sortLegal(ls []legalPlay) {
	for i := range ls {
		ls[i].text = FormatPlay(ls[i].play)
	}
	slices.SortFunc(ls, func(a, b legalPlay) int { return strings.Compare(a.text, b.text) })
}

func checkArgs(v Variant, seat int, d Dice) error {
	switch {
	case !v.Valid():
		return fmt.Errorf("rules: unknown variant %q", string(v))
	case seat != 0 && seat != 1:
		return fmt.Errorf("rules: seat %d: want 0 or 1", seat)
	case !d.Valid():
		return fmt.Errorf("rules: dice %s: want two faces from 1 to 6", d)
	}
	return nil
}

// LegalPlays returns the legal plays of seat with dice d in position p under
// variant v: one play per distinct resulting position, each in canonical
// form, sorted by canonical text. When no checker can move the result is the
// single empty play. It returns nil if v, seat or d is invalid.
//
// A play is legal when each of its single-die moves is (see docs/RULES.md),
// it ends in a position the variant allows, and it uses as many dice as any
// such play can; when only one die of a non-double can be used, it must be
// the larger one if that one can be.
func LegalPlays(v Variant, p Position, seat int, d Dice) []Play {
	if checkArgs(v, seat, d) != nil {
		return nil
	}
	ls, _ := legalPlays(v, p, seat, d)
	out := make([]Play, len(ls))
	for i, l := range ls {
		out[i] = l.play
	}
	return out
}

// ApplyPlay checks that pl is a legal play of seat with dice d in position p
// under variant v and returns the position it leads to and its canonical
// form. pl may be any spelling of the play whose effect (the checkers moved
// and the opposing checkers hit) is that of a legal play: moves in any order,
// chains, intermediate points without hits, missing "*". If pl is not legal
// the error is an *IllegalMoveError naming the rule it breaks.
func ApplyPlay(v Variant, p Position, seat int, d Dice, pl Play) (Position, Play, error) {
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
	g, all := findAll(v, p, seat, d, end)
	if !all {
		g = newFind(v, seat, d, end)
		g.run(p)
	}
	if g.hasFound {
		n := &g.found
		pos, play := n.pos, notate(n.steps[:n.n], hitsOf(rs, seat, &p, &n.pos))
		g.release()
		return pos, play, nil
	}
	best := g.best
	g.release()
	rule, detail = diagnose(v, p, seat, d, end, best)
	return fail(rule, detail)
}

// CanonicalPlay returns the canonical text of the legal play written s (see
// ApplyPlay for the spellings accepted). The log carries only canonical
// texts.
func CanonicalPlay(v Variant, p Position, seat int, d Dice, s string) (string, error) {
	pl, err := ParsePlay(s)
	if err != nil {
		return "", &IllegalMoveError{Rule: RuleNotation, Seat: seat, Dice: d, Play: s, Detail: err.Error(), Err: err}
	}
	_, c, err := ApplyPlay(v, p, seat, d, pl)
	if err != nil {
		return "", err
	}
	return FormatPlay(c), nil
}

// simulate carries out the moves of pl from p as written, without the
// rules of movement: checkers leave their points and land on the points the
// notation shows, hitting (pinning) single opposing checkers where they land.
// It reports the first move that cannot be carried out at all.
func simulate(rs *ruleset, p Position, me int, pl Play) (Position, Rule, string) {
	op := 1 - me
	ms := sortedMoves(pl, new([4]Move))
	var hit uint32 // points hit or pinned so far in this play
	for _, m := range ms {
		if m.From < 1 || m.From > Bar || m.To < Off || m.To > 24 || m.To >= m.From ||
			m.Via&^between(m.To, m.From) != 0 || m.Hits&^(m.Via|between(m.To-1, m.To+1)) != 0 {
			return p, RuleNotation, fmt.Sprintf("move %s is malformed", FormatPlay(Play{m}))
		}
		mine, theirs := &p.n[me], &p.n[op]
		if mine[m.From] == 0 {
			return p, RuleNoChecker, fmt.Sprintf("no checker on %s", pointName(m.From))
		}
		if m.From <= 24 && p.pin[me]&(1<<m.From) != 0 {
			return p, RulePinned, fmt.Sprintf("the checker on %s is pinned", pointName(m.From))
		}
		mine[m.From]--
		if m.From <= 24 && mine[m.From] == 0 && rs.style == pinning {
			p.pin[op] &^= 1 << rs.opposite(m.From)
		}
		for q := m.From - 1; q >= max(m.To, 1); q-- {
			bit := uint32(1) << q
			if q != m.To && m.Via&bit == 0 {
				continue
			}
			o := rs.opposite(q)
			marked := m.Hits&bit != 0
			blocked := false
			switch rs.style {
			case hitting:
				switch {
				case theirs[o] >= 2:
					blocked = true
				case theirs[o] == 1:
					theirs[o] = 0
					theirs[Bar]++
					hit |= bit
				}
			case pinning:
				switch {
				case theirs[o] >= 2 || (theirs[o] == 1 && p.pin[me]&bit != 0):
					blocked = true
				case theirs[o] == 1 && p.pin[op]&(1<<o) == 0:
					if q == m.To {
						p.pin[op] |= 1 << o
					}
					hit |= bit
				}
			case running:
				blocked = theirs[o] >= 1
			}
			if blocked {
				return p, RuleBlocked, fmt.Sprintf("%s is held by the opponent", pointName(q))
			}
			if marked && hit&bit == 0 {
				return p, RuleHitMark, fmt.Sprintf("%s is marked * but no single opposing checker stands there", pointName(q))
			}
		}
		mine[m.To]++
	}
	return p, "", ""
}

// between returns the points strictly between lo and hi.
func between(lo, hi int) uint32 {
	var b uint32
	for q := max(lo+1, 1); q < hi && q <= 24; q++ {
		b |= 1 << q
	}
	return b
}

func pointName(q int) string {
	switch q {
	case Bar:
		return "the bar"
	case Off:
		return "off"
	}
	return fmt.Sprintf("point %d", q)
}

// diagnose names the rule that makes the play leading to end illegal. If
// single-die moves that the rules allow reach end, the play breaks a rule of
// the number of dice (or of the larger die). Otherwise the movement rules
// are switched off one after the other, in diagnosisOrder, until end becomes
// reachable, and the first of them that must stay switched off is named. If
// end is out of reach even then, the play does not fit the dice. best is the
// number of dice the legal plays use.
func diagnose(v Variant, p Position, seat int, d Dice, end Position, best int) (Rule, string) {
	g := newGen(v, seat, d, 0, true)
	defer g.release()
	g.run(p)
	if n := g.node(end); n != nil {
		switch {
		case n.depths&(1<<best) != 0:
			return RuleLargerDie, fmt.Sprintf("only one die can be played, and the %d can be", max(d[0], d[1]))
		case end == p:
			return RuleMustMove, fmt.Sprintf("a checker can be moved with %s", d)
		case d.IsDouble():
			return RuleMaxDice, fmt.Sprintf("%d of the four %ds can be played", best, d[0])
		default:
			return RuleBothDice, "both dice can be played"
		}
	}
	reaches := func(relax relaxation) bool {
		g := newGen(v, seat, d, relax, true)
		defer g.release()
		g.run(p)
		return g.node(end) != nil
	}
	// Switch rules off in order until the play becomes possible; then name
	// the first of those rules that it still needs switched off.
	var relax relaxation
	for k, r := range diagnosisOrder {
		relax |= r.r
		if !reaches(relax) {
			continue
		}
		for _, s := range diagnosisOrder[:k+1] {
			if !reaches(relax &^ s.r) {
				return s.rule, ruleDetail(s.rule)
			}
		}
		return r.rule, ruleDetail(r.rule)
	}
	return RuleDice, fmt.Sprintf("the play cannot be made with %s", d)
}

func ruleDetail(r Rule) string {
	switch r {
	case RuleBarFirst:
		return "a checker on the bar must enter before any other checker moves"
	case RulePinned:
		return "a pinned checker cannot move"
	case RuleHitAndRun:
		return "a checker that hits in the home board stops there for the rest of the turn"
	case RuleFirstChecker:
		return "the first checker must pass the opponent's starting point before another leaves the start"
	case RuleBlocked:
		return "the play lands on a point the opponent holds"
	case RuleBearOffNotHome:
		return "checkers are borne off only when all are in the home board, none on the bar or pinned"
	case RuleBearOffHigher:
		return "a die larger than the point bears off only when no checker stands on a higher point"
	case RuleStartQuarter:
		return "a play may not end holding all six points of the starting quarter"
	case RulePrimeTrap:
		return "a play may not end with a prime that every opposing checker is still behind"
	}
	return string(r)
}
