package rules

import (
	"fmt"
	"math/rand/v2"
)

// A RollKind says what a roll of a game was used for. The values are those
// of the roll events' "kind" member (and of package events/dice).
type RollKind string

// Roll kinds.
const (
	RollOpening RollKind = "opening" // one die per seat; a tie is rolled again
	RollReroll  RollKind = "reroll"  // the Turkish re-roll the starter plays
	RollTurn    RollKind = "turn"    // every other roll
)

type phase uint8

const (
	phaseOpening phase = iota
	phaseReroll
	phaseTurn
	phaseOver
)

// A Game follows one game as its rolls and plays arrive in log order: it
// decides the starter from the opening rolls, knows whose turn it is and
// which roll waits for a play, checks each play against the rules, and
// detects the end of the game.
//
// Every roll that is played (the starter's opening roll under the western
// opening, the re-roll under turkish-reroll, every turn roll) must be
// followed by exactly one play before the next roll, even when no checker can
// move (the empty play "-"). Opening ties and, under turkish-reroll, the
// deciding opening roll are not played.
//
// A Game is not safe for concurrent use.
type Game struct {
	v       Variant
	opening Opening
	pos     Position
	phase   phase
	rolls   int  // number of rolls accepted
	turn    int  // the seat to play; -1 until the opening decides
	pending bool // a roll waits for its play
	pendN   int
	pendD   Dice
	plays   int
	result  Result
}

// NewGame returns a game of variant v with opening style o, at the
// starting position, before the first opening roll.
func NewGame(v Variant, o Opening) (*Game, error) {
	if !v.Valid() {
		return nil, fmt.Errorf("rules: new game: unknown variant %q", string(v))
	}
	if _, err := ParseOpening(string(o)); err != nil {
		return nil, fmt.Errorf("rules: new game: %w", err)
	}
	return &Game{v: v, opening: o, pos: Start(v), turn: -1}, nil
}

// Variant returns the game's variant.
func (g *Game) Variant() Variant { return g.v }

// Opening returns the game's opening style.
func (g *Game) Opening() Opening { return g.opening }

// Position returns the current position.
func (g *Game) Position() Position { return g.pos }

// Rolls returns the number of rolls accepted; the next roll's number.
func (g *Game) Rolls() int { return g.rolls }

// Plays returns the number of plays accepted.
func (g *Game) Plays() int { return g.plays }

// Turn returns the seat to play (the seat whose roll waits, or who rolls
// next), or -1 before the opening has decided the starter and after the end.
func (g *Game) Turn() int {
	if g.phase == phaseOver {
		return -1
	}
	return g.turn
}

// Pending reports the roll that waits for a play: its number, its dice and
// the seat to play it.
func (g *Game) Pending() (n int, d Dice, seat int, ok bool) {
	if !g.pending {
		return 0, Dice{}, -1, false
	}
	return g.pendN, g.pendD, g.turn, true
}

// Result reports whether the game is over and how it ended.
func (g *Game) Result() (Result, bool) { return g.result, g.phase == phaseOver }

// Over reports whether the game is over.
func (g *Game) Over() bool { return g.phase == phaseOver }

// Roll accepts roll number n with dice d and returns what it is used for.
// Rolls must come in order (n = Rolls()), and not while a play is pending.
// A rejected roll leaves the game unchanged; the error is a *RollError.
func (g *Game) Roll(n int, d Dice) (RollKind, error) {
	fail := func(r Rule, format string, args ...any) (RollKind, error) {
		return "", &RollError{Rule: r, N: n, Dice: d, Detail: fmt.Sprintf(format, args...)}
	}
	switch {
	case g.phase == phaseOver:
		return fail(RuleGameOver, "the game is over")
	case n != g.rolls:
		return fail(RuleRollOrder, "roll number %d, want %d", n, g.rolls)
	case !d.Valid():
		return fail(RuleBadDice, "dice %s are not two faces from 1 to 6", d)
	case g.pending:
		return fail(RulePlayPending, "roll %d (%s) still waits for seat %d's play", g.pendN, g.pendD, g.turn)
	}
	var kind RollKind
	switch g.phase {
	case phaseOpening:
		kind = RollOpening
		if !d.IsDouble() {
			g.turn = 1
			if d[0] > d[1] {
				g.turn = 0
			}
			if g.opening == OpeningTurkishReroll {
				g.phase = phaseReroll
			} else {
				g.phase = phaseTurn
				g.pending, g.pendN, g.pendD = true, n, d
			}
		}
	case phaseReroll:
		kind = RollReroll
		g.phase = phaseTurn
		g.pending, g.pendN, g.pendD = true, n, d
	default:
		kind = RollTurn
		g.pending, g.pendN, g.pendD = true, n, d
	}
	g.rolls++
	return kind, nil
}

// LegalPlays returns the legal plays of the seat to play with dice d (see
// the package function LegalPlays), or nil when no seat is to play.
func (g *Game) LegalPlays(d Dice) []Play {
	if g.Turn() < 0 {
		return nil
	}
	return LegalPlays(g.v, g.pos, g.turn, d)
}

// Apply plays p for seat with dice d: the roll that waits for a play must
// be seat's and show d (in either order). p may be any spelling of a legal
// play (see ApplyPlay). A rejected play leaves the game unchanged; the error
// is an *IllegalMoveError.
func (g *Game) Apply(seat int, d Dice, p Play) error {
	np, _, err := g.check(seat, d, p, FormatPlay(p))
	if err != nil {
		return err
	}
	g.commit(np)
	return nil
}

// Move plays the move event of roll n: {"n": n, "play": play, "seat":
// seat}. play must be the canonical text of a legal play (CanonicalPlay), so
// that the log holds one spelling per play. A rejected move leaves the game
// unchanged; the error is an *IllegalMoveError.
func (g *Game) Move(n, seat int, play string) error {
	if g.pending && n != g.pendN {
		return &IllegalMoveError{Rule: RuleRollMismatch, Seat: seat, Dice: g.pendD, Play: play,
			Detail: fmt.Sprintf("move for roll %d, but roll %d waits for a play", n, g.pendN)}
	}
	p, err := ParsePlay(play)
	if err != nil {
		return &IllegalMoveError{Rule: RuleNotation, Seat: seat, Dice: g.pendD, Play: play, Detail: err.Error(), Err: err}
	}
	np, c, err := g.check(seat, g.pendD, p, play)
	if err != nil {
		return err
	}
	if cs := FormatPlay(c); cs != play {
		return &IllegalMoveError{Rule: RuleNonCanonical, Seat: seat, Dice: g.pendD, Play: play,
			Detail: fmt.Sprintf("the canonical form of this play is %q", cs)}
	}
	g.commit(np)
	return nil
}

func (g *Game) check(seat int, d Dice, p Play, text string) (Position, Play, error) {
	fail := func(r Rule, format string, args ...any) (Position, Play, error) {
		return g.pos, nil, &IllegalMoveError{Rule: r, Seat: seat, Dice: d, Play: text, Detail: fmt.Sprintf(format, args...)}
	}
	switch {
	case g.phase == phaseOver:
		return fail(RuleGameOver, "the game is over")
	case !g.pending:
		return fail(RuleNotOnTurn, "no roll waits for a play")
	case seat != g.turn:
		return fail(RuleNotOnTurn, "seat %d is to play roll %d", g.turn, g.pendN)
	case d != g.pendD && d != (Dice{g.pendD[1], g.pendD[0]}):
		return fail(RuleRollMismatch, "roll %d is %s", g.pendN, g.pendD)
	}
	np, c, err := ApplyPlay(g.v, g.pos, seat, d, p)
	if err != nil {
		if e, ok := err.(*IllegalMoveError); ok {
			e.Play = text
		}
		return g.pos, nil, err
	}
	return np, c, nil
}

func (g *Game) commit(np Position) {
	g.pos = np
	g.pending = false
	g.plays++
	if r, over := Outcome(g.v, np); over {
		g.result = r
		g.phase = phaseOver
		return
	}
	g.turn = 1 - g.turn
}

// ChoosePlay picks a play for the roll that waits for one, with the simple
// strategy of Choose; it returns false if no roll waits.
func (g *Game) ChoosePlay(r *rand.Rand) (Play, bool) {
	if !g.pending || g.phase == phaseOver {
		return nil, false
	}
	return Choose(g.v, g.pos, g.turn, g.pendD, r), true
}
