package movecheck

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zarlog/zarlog/rules"
)

// A Phase is where a game's flow of play is: what the next event must be.
type Phase byte

// Phases, with their symbol in the state's text.
const (
	PhaseOpening Phase = 'o' // an opening roll is next (also after a tie)
	PhaseReroll  Phase = 'r' // the starter's Turkish re-roll is next
	PhaseTurn    Phase = 't' // a turn roll of Seat is next
	PhasePlay    Phase = 'p' // roll N (Dice) waits for Seat's move
	PhaseOver    Phase = 'x' // the game is over on the board
)

// A State is the flow of play of one game as the Checker keeps it between
// events: the game's variant and opening, the phase, and the position. It
// is what events.Game.Position holds for a game whose moves are logged.
//
// Its text form (String, ParseState) is canonical and at most 100 bytes:
//
//	variant " " opening " " flow " " position
//	flow = "o" | "r" seat | "t" seat | "p" seat ":" n ":" die die | "x"
//
// with the variant and opening by name (docs/RULES.md §1), seat 0 or 1, n
// the waiting roll's number in decimal (per-roll-v1: its index in the
// match), the two dice as logged, and the position in the text form of
// rules.Position (docs/RULES.md §5). For example
//
//	portes turkish-reroll p0:3:31 0000050300005000000000020/0000050300005000000000020
//
// is a portes game whose roll 3, 3-1, waits for seat 0's move from the
// start.
type State struct {
	Variant  rules.Variant
	Opening  rules.Opening
	Phase    Phase
	Seat     int        // the seat to roll (PhaseReroll, PhaseTurn) or to play (PhasePlay); -1 otherwise
	N        uint32     // PhasePlay: the number of the roll that waits
	Dice     rules.Dice // PhasePlay: its dice as logged
	Position rules.Position
}

// ErrState is wrapped by the errors of ParseState and by the Checker's
// errors about a position that is not a State: a fault of whoever stored
// it, not of the event checked.
var ErrState = errors.New("invalid move-check state")

// newState returns the state of a game of v and o before its first roll.
func newState(v rules.Variant, o rules.Opening) State {
	return State{Variant: v, Opening: o, Phase: PhaseOpening, Seat: -1, Position: rules.Start(v)}
}

// String returns the state's canonical text.
func (s State) String() string {
	var buf [100]byte
	return string(s.appendText(buf[:0]))
}

// appendText appends the state's canonical text to b.
func (s State) appendText(b []byte) []byte {
	b = append(b, s.Variant...)
	b = append(b, ' ')
	b = append(b, s.Opening...)
	b = append(b, ' ', byte(s.Phase))
	switch s.Phase {
	case PhaseReroll, PhaseTurn:
		b = append(b, byte('0'+s.Seat))
	case PhasePlay:
		b = strconv.AppendInt(b, int64(s.Seat), 10)
		b = append(b, ':')
		b = strconv.AppendUint(b, uint64(s.N), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(s.Dice[0]), 10)
		b = strconv.AppendInt(b, int64(s.Dice[1]), 10)
	}
	b = append(b, ' ')
	return s.Position.AppendText(b)
}

// ParseState parses the text form of a State. It accepts exactly what
// String writes for a state the Checker can reach: a known variant and
// opening, a well-formed position, the starting position before the first
// play, a position that is over exactly in PhaseOver.
func ParseState(b []byte) (State, error) {
	fail := func(format string, args ...any) (State, error) {
		return State{}, fmt.Errorf("%w: %s", ErrState, fmt.Sprintf(format, args...))
	}
	if len(b) > 100 {
		return fail("%d bytes", len(b))
	}
	str := string(b)
	variant, rest, ok1 := strings.Cut(str, " ")
	opening, rest, ok2 := strings.Cut(rest, " ")
	f, pos, ok3 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !ok3 || strings.IndexByte(pos, ' ') >= 0 {
		return fail("%q: want variant, opening, flow and position separated by single spaces", b)
	}
	var s State
	var err error
	if s.Variant, err = rules.ParseVariant(variant); err == nil {
		if s.Opening, err = rules.ParseOpening(opening); err == nil {
			s.Position, err = rules.ParsePosition(s.Variant, pos)
		}
	}
	if err != nil {
		return State{}, fmt.Errorf("%w: %w", ErrState, err)
	}
	if f == "" {
		return fail("empty flow")
	}
	s.Phase, s.Seat = Phase(f[0]), -1
	seat := func(c byte) bool {
		if c != '0' && c != '1' {
			return false
		}
		s.Seat = int(c - '0')
		return true
	}
	switch s.Phase {
	case PhaseOpening, PhaseOver:
		if len(f) != 1 {
			return fail("flow %q", f)
		}
	case PhaseReroll, PhaseTurn:
		if len(f) != 2 || !seat(f[1]) {
			return fail("flow %q", f)
		}
	case PhasePlay:
		// p seat ":" n ":" die die
		if len(f) < 7 || !seat(f[1]) || f[2] != ':' || f[len(f)-3] != ':' {
			return fail("flow %q", f)
		}
		num := f[3 : len(f)-3]
		n, err := strconv.ParseUint(num, 10, 32)
		if err != nil || strconv.FormatUint(n, 10) != num {
			return fail("flow %q: roll number %q", f, num)
		}
		s.N = uint32(n)
		s.Dice = rules.Dice{int(f[len(f)-2]) - '0', int(f[len(f)-1]) - '0'}
		if !s.Dice.Valid() {
			return fail("flow %q: dice", f)
		}
	default:
		return fail("flow %q", f)
	}
	_, over := rules.Outcome(s.Variant, s.Position)
	switch {
	case (s.Phase == PhaseOpening || s.Phase == PhaseReroll) && s.Position != rules.Start(s.Variant):
		return fail("phase %c, but the position is not the start", s.Phase)
	case s.Phase == PhaseReroll && s.Opening != rules.OpeningTurkishReroll:
		return fail("a re-roll under the %s opening", s.Opening)
	case over && s.Phase != PhaseOver:
		return fail("phase %c, but the game is over on the board", s.Phase)
	case !over && s.Phase == PhaseOver:
		return fail("phase x, but the game is not over on the board")
	}
	return s, nil
}
