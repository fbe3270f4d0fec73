package rules

import (
	"fmt"
)

// A Rule is the stable code of a rule that a play or a roll can break. The
// codes are part of the log's contract (the ledger's rejections and the
// verifier's reports name them); docs/RULES.md lists them.
type Rule string

// Rules a play can break.
const (
	// RuleNotation: the play's text is not valid notation (see ParsePlay).
	RuleNotation Rule = "notation"
	// RuleNonCanonical: the play is legal but not written in its canonical
	// form (only the log requires the canonical form; see Game.Move).
	RuleNonCanonical Rule = "non-canonical"
	// RuleNoChecker: a move starts where the mover has no checker.
	RuleNoChecker Rule = "no-checker"
	// RuleBlocked: a checker lands on a point the opponent holds (two or
	// more checkers; in plakoto also a point where the opponent pins; in
	// fevga any point with an opposing checker).
	RuleBlocked Rule = "blocked"
	// RuleHitMark: the "*" marks do not match the hits the play makes (a
	// "*" where no single opposing checker stands).
	RuleHitMark Rule = "hit-mark"
	// RuleBarFirst: a checker moves while another is on the bar.
	RuleBarFirst Rule = "bar-first"
	// RulePinned: a pinned checker moves (plakoto).
	RulePinned Rule = "pinned"
	// RuleHitAndRun: a checker that hit in its home board moves on in the
	// same turn (tavla).
	RuleHitAndRun Rule = "hit-and-run"
	// RuleFirstChecker: a second checker leaves the starting point before
	// the first has passed the opponent's starting point (fevga).
	RuleFirstChecker Rule = "first-checker"
	// RuleBearOffNotHome: a checker is borne off while another is outside
	// the home board, on the bar, or pinned.
	RuleBearOffNotHome Rule = "bear-off-not-home"
	// RuleBearOffHigher: a checker is borne off with a die larger than its
	// point while a checker stands on a higher point.
	RuleBearOffHigher Rule = "bear-off-higher"
	// RuleStartQuarter: the play ends holding all six points of the
	// mover's starting quarter (fevga).
	RuleStartQuarter Rule = "start-quarter"
	// RulePrimeTrap: the play ends with six consecutive points that every
	// opposing checker on the board still has to pass (fevga).
	RulePrimeTrap Rule = "prime-trap"
	// RuleMustMove: the play is empty although a checker can move.
	RuleMustMove Rule = "must-move"
	// RuleBothDice: only one die is used although both can be.
	RuleBothDice Rule = "must-use-both-dice"
	// RuleMaxDice: fewer of the four numbers of a double are used than can
	// be.
	RuleMaxDice Rule = "must-use-max-dice"
	// RuleLargerDie: only one die can be used and the smaller one is,
	// although the larger one can be.
	RuleLargerDie Rule = "must-use-larger-die"
	// RuleDice: the play cannot be made with these dice at all (distances
	// that are not the dice, too many moves).
	RuleDice Rule = "dice"
)

// Rules of the game flow (Game.Roll, Game.Apply, Game.Move).
const (
	// RuleGameOver: the game has ended.
	RuleGameOver Rule = "game-over"
	// RuleNotOnTurn: the seat is not the one to play, or no roll is
	// waiting for a play.
	RuleNotOnTurn Rule = "not-on-turn"
	// RuleRollMismatch: the play names a roll (number or dice) other than
	// the one waiting for a play.
	RuleRollMismatch Rule = "roll-mismatch"
	// RuleRollOrder: a roll's number is not the next one.
	RuleRollOrder Rule = "roll-order"
	// RulePlayPending: a roll arrives while the previous roll still waits
	// for its play.
	RulePlayPending Rule = "play-pending"
	// RuleBadDice: the dice are not two faces from 1 to 6.
	RuleBadDice Rule = "bad-dice"
)

// An IllegalMoveError says which rule a play breaks.
type IllegalMoveError struct {
	Rule   Rule
	Seat   int    // the seat that played
	Dice   Dice   // the dice played
	Play   string // the play's text as given
	Detail string // a human-readable explanation (not stable)
	Err    error  // the underlying error, e.g. a *NotationError
}

func (e *IllegalMoveError) Error() string {
	return fmt.Sprintf("rules: seat %d dice %s play %q: %s: %s", e.Seat, e.Dice, e.Play, e.Rule, e.Detail)
}

func (e *IllegalMoveError) Unwrap() error { return e.Err }

// A RollError says why a roll does not fit the game.
type RollError struct {
	Rule   Rule
	N      int // the roll's number
	Dice   Dice
	Detail string
}

func (e *RollError) Error() string {
	return fmt.Sprintf("rules: roll %d (%s): %s: %s", e.N, e.Dice, e.Rule, e.Detail)
}
