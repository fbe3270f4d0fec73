package movecheck

import (
	"fmt"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/rules"
)

// A Checker checks the rolls, moves and end of games whose moves are logged
// against package rules: it implements events.FlowChecker. It keeps no
// state of its own — a game's State travels in events.Game.Position — so the
// zero Checker is ready to use, and one value may serve every game and
// goroutine.
//
// For a game whose settings do not declare its moves logged it checks
// nothing: CheckMove returns no position and no error.
//
// The errors of CheckMove are *rules.IllegalMoveError (the rule a move
// breaks, RULES.md §6), those of CheckRoll *rules.RollError and those of
// CheckEnd *ResultError; a position that is not a State gives an error
// wrapping ErrState, and settings that events.ParseSettings refuses its
// error.
type Checker struct{}

var _ events.DecodingChecker = Checker{}

// A decoded is a State and its text in one allocation: the position the
// Checker returns is text[:n], and the *decoded is the decoded form it
// returns beside it (events.DecodingChecker), so that it takes the State
// back at the game's next event instead of parsing the text.
type decoded struct {
	s    State
	n    int
	text [100]byte // a State's text is at most 100 bytes (ParseState)
}

// of reports whether pos is d's own text: the very bytes (not a copy) that
// d was returned beside. Positions are never modified, so d.s is then what
// ParseState(pos) returns; any other pos, or another decoded form (one
// stale beside a position read back from storage), is parsed.
func (d *decoded) of(pos []byte) bool {
	return d.n > 0 && len(pos) == d.n && &pos[0] == &d.text[0]
}

// encode returns s's text and its decoded form.
func encode(s State) ([]byte, any) {
	d := &decoded{s: s}
	t := s.appendText(d.text[:0])
	if len(t) > len(d.text) { // unreachable: the text is at most 100 bytes
		return t, nil
	}
	d.n = len(t)
	return t[:len(t):len(t)], d
}

// state returns the game's state before in's event, and false if the
// game's moves are not logged.
func state(in events.MoveInput) (State, bool, error) {
	if in.Position != nil {
		if d, ok := in.Decoded.(*decoded); ok && d.of(in.Position) {
			return d.s, true, nil
		}
		s, err := ParseState(in.Position)
		return s, err == nil, err
	}
	gs, err := events.ParseSettings(in.Settings)
	if err != nil {
		return State{}, false, fmt.Errorf("movecheck: settings: %w", err)
	}
	if !gs.MovesLogged {
		return State{}, false, nil
	}
	v, err := rules.ParseVariant(gs.Variant)
	if err != nil {
		return State{}, false, fmt.Errorf("movecheck: settings: %w", err)
	}
	return newState(v, rules.Opening(gs.Opening)), true, nil
}

// CheckRoll follows roll in.Roll: under the game's opening it decides the
// starter, or gives the roll to the seat on turn. It returns the new state
// and whether the roll is played. A per-game roll after the game is over on
// the board is refused (rules.RuleGameOver); under per-roll-v1 it starts the
// match's next game from the opening.
func (c Checker) CheckRoll(in events.MoveInput) ([]byte, bool, error) {
	pos, _, played, err := c.CheckRollDecoded(in)
	return pos, played, err
}

// CheckRollDecoded is CheckRoll, also returning the new state decoded
// (events.DecodingChecker).
func (Checker) CheckRollDecoded(in events.MoveInput) ([]byte, any, bool, error) {
	s, logged, err := state(in)
	if !logged {
		return nil, nil, false, err
	}
	d := rules.Dice(in.Roll.Dice)
	n := int(in.Roll.N)
	fail := func(r rules.Rule, format string, args ...any) ([]byte, any, bool, error) {
		return nil, nil, false, &rules.RollError{Rule: r, N: n, Dice: d, Detail: fmt.Sprintf(format, args...)}
	}
	if !d.Valid() {
		return fail(rules.RuleBadDice, "dice %s are not two faces from 1 to 6", d)
	}
	if s.Phase == PhaseOver {
		if in.Scheme.PerGame() {
			r, _ := rules.Outcome(s.Variant, s.Position)
			return fail(rules.RuleGameOver, "the game is over on the board (%s)", r)
		}
		s = newState(s.Variant, s.Opening) // the match's next game
	}
	var kind rules.RollKind
	switch s.Phase {
	case PhasePlay:
		return fail(rules.RulePlayPending, "roll %d (%s) still waits for seat %d's move", s.N, s.Dice, s.Seat)
	case PhaseOpening:
		kind = rules.RollOpening
		if !d.IsDouble() {
			s.Seat = 1
			if d[0] > d[1] {
				s.Seat = 0
			}
			s.Phase = PhasePlay
			if s.Opening == rules.OpeningTurkishReroll {
				s.Phase = PhaseReroll
			}
		}
	case PhaseReroll:
		kind, s.Phase = rules.RollReroll, PhasePlay
	case PhaseTurn:
		kind, s.Phase = rules.RollTurn, PhasePlay
	}
	if in.Scheme.PerGame() && string(in.Roll.Kind) != string(kind) {
		return nil, nil, false, fmt.Errorf("movecheck: roll %d is logged as %s, but the game expects a roll of kind %s: %w", n, in.Roll.Kind, kind, ErrState)
	}
	if s.Phase == PhasePlay {
		s.N, s.Dice = in.Roll.N, d
	}
	pos, dec := encode(s)
	return pos, dec, s.Phase == PhasePlay, nil
}

// CheckMove checks move event in.Move against the roll that waits: it must
// be by the seat on turn, name that roll, and carry the canonical text of a
// legal play of its dice (rules.CanonicalPlay). It returns the state after
// the play: the other seat's turn, or the game over on the board.
func (c Checker) CheckMove(in events.MoveInput) ([]byte, error) {
	pos, _, err := c.CheckMoveDecoded(in)
	return pos, err
}

// CheckMoveDecoded is CheckMove, also returning the new state decoded
// (events.DecodingChecker).
func (Checker) CheckMoveDecoded(in events.MoveInput) ([]byte, any, error) {
	s, logged, err := state(in)
	if !logged {
		return nil, nil, err
	}
	m := in.Move
	fail := func(r rules.Rule, d rules.Dice, format string, args ...any) ([]byte, any, error) {
		return nil, nil, &rules.IllegalMoveError{Rule: r, Seat: m.Seat, Dice: d, Play: m.Play, Detail: fmt.Sprintf(format, args...)}
	}
	switch {
	case s.Phase == PhaseOver:
		r, _ := rules.Outcome(s.Variant, s.Position)
		return fail(rules.RuleGameOver, rules.Dice{}, "the game is over on the board (%s)", r)
	case s.Phase != PhasePlay:
		return fail(rules.RuleNotOnTurn, rules.Dice{}, "no roll waits for a move")
	case m.N != s.N:
		return fail(rules.RuleRollMismatch, s.Dice, "move of roll %d, but roll %d (%s) waits for a move", m.N, s.N, s.Dice)
	case m.Seat != s.Seat:
		return fail(rules.RuleNotOnTurn, s.Dice, "seat %d is to play roll %d (%s)", s.Seat, s.N, s.Dice)
	}
	p, err := rules.ParsePlay(m.Play)
	if err != nil {
		return nil, nil, &rules.IllegalMoveError{Rule: rules.RuleNotation, Seat: m.Seat, Dice: s.Dice, Play: m.Play, Detail: err.Error(), Err: err}
	}
	pos, c, err := rules.ApplyPlay(s.Variant, s.Position, s.Seat, s.Dice, p)
	if err != nil {
		if ie, ok := err.(*rules.IllegalMoveError); ok {
			ie.Play = m.Play
		}
		return nil, nil, err
	}
	var buf [128]byte
	if cs := rules.AppendPlay(buf[:0], c); string(cs) != m.Play {
		return fail(rules.RuleNonCanonical, s.Dice, "the canonical form of this play is %q", string(cs))
	}
	s.Position = pos
	s.Phase, s.Seat, s.N, s.Dice = PhaseTurn, 1-s.Seat, 0, rules.Dice{}
	if _, over := rules.Outcome(s.Variant, pos); over {
		s.Phase, s.Seat = PhaseOver, -1
	}
	text, dec := encode(s)
	return text, dec, nil
}

// CheckEnd checks a finished end against the final position: the game must
// be over on the board, the end must name its winner (none for a draw) and
// give the result's points: the multiplier, times a power of two up to
// 2^15 where the doubling cube is in use (its value is not logged).
func (Checker) CheckEnd(in events.MoveInput, end events.End) error {
	s, logged, err := state(in)
	if !logged {
		return err
	}
	gs, err := events.ParseSettings(in.Settings)
	if err != nil {
		return fmt.Errorf("movecheck: settings: %w", err)
	}
	e := &ResultError{End: end, Cube: gs.Cube}
	if s.Phase != PhaseOver {
		e.Reason = NotOver
		e.Phase, e.Seat = s.Phase, s.Seat
		return e
	}
	e.Over = true
	e.Result, _ = rules.Outcome(s.Variant, s.Position)
	r := e.Result
	switch {
	case r.Draw() && end.Winner != events.NoWinner:
		e.Reason = WrongWinner
	case r.Draw():
		return nil // the parser allows no points without a winner
	case end.Winner != r.Winner:
		e.Reason = WrongWinner
	case !pointsFit(uint32(r.Multiplier), end.Points, gs.Cube):
		e.Reason = WrongPoints
	default:
		return nil
	}
	return e
}

// MaxCube is the largest doubling-cube value CheckEnd accepts.
const MaxCube = 1 << 15

// pointsFit reports whether points are m times the cube: 1 without the
// cube, a power of two up to MaxCube with it.
func pointsFit(m, points uint32, cube bool) bool {
	if !cube {
		return points == m
	}
	if points%m != 0 {
		return false
	}
	c := points / m
	return c >= 1 && c <= MaxCube && c&(c-1) == 0
}

// A Reason says why an end does not fit the final position.
type Reason string

// Reasons of a ResultError.
const (
	NotOver     Reason = "not-over"     // the game is not over on the board
	WrongWinner Reason = "wrong-winner" // the winner is not the position's (or a draw named a winner)
	WrongPoints Reason = "wrong-points" // the points are not the result's
)

// A ResultError says why a finished end does not fit the game's final
// position.
type ResultError struct {
	Reason Reason
	End    events.End
	Cube   bool         // the doubling cube is in use: points are the multiplier times its value
	Over   bool         // the game is over on the board, with Result
	Result rules.Result // when Over
	Phase  Phase        // when not Over: the game's phase
	Seat   int          // when not Over: the seat to roll or play, or -1
}

func (e *ResultError) Error() string {
	got := fmt.Sprintf("seat %d wins %d points", e.End.Winner, e.End.Points)
	if e.End.Winner == events.NoWinner {
		got = "a draw"
	}
	if !e.Over {
		return fmt.Sprintf("movecheck: the end says the game is finished (%s), but it is not over on the board (%s)", got, e.Phase.describe(e.Seat))
	}
	want := e.Result.String()
	switch {
	case e.Result.Draw():
	case e.Cube:
		want += fmt.Sprintf(": %d points times the doubling cube's value", e.Result.Multiplier)
	default:
		want += fmt.Sprintf(": %d points", e.Result.Multiplier)
	}
	return fmt.Sprintf("movecheck: %s: the end says %s, but the final position gives %s", e.Reason, got, want)
}

func (p Phase) describe(seat int) string {
	switch p {
	case PhaseOpening:
		return "an opening roll is next"
	case PhaseReroll:
		return fmt.Sprintf("seat %d's re-roll is next", seat)
	case PhaseTurn:
		return fmt.Sprintf("seat %d is to roll", seat)
	case PhasePlay:
		return fmt.Sprintf("seat %d is to move", seat)
	}
	return "over"
}
