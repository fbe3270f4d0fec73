package verifier

import (
	"errors"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// A MoveRef identifies the event the moves check failed at.
type MoveRef struct {
	Entry int        `json:"entry"`          // its position in log.entries
	Seq   uint64     `json:"seq"`            // its seq in the game
	Code  string     `json:"code"`           // the ledger's rejection code (docs/FORMATS.md §1.5): illegal-move, move-owed, wrong-result, not-allowed-now
	Rule  string     `json:"rule,omitempty"` // the rule broken (docs/RULES.md §6), or the result's fault (not-over, wrong-winner, wrong-points)
	N     *uint32    `json:"n,omitempty"`    // the roll played, or owed a move (per-roll-v1: its index in the match)
	Seat  *int       `json:"seat,omitempty"` // the seat that moved, or had to
	Play  string     `json:"play,omitempty"` // the move's play, as logged
	Dice  *dice.Dice `json:"dice,omitempty"` // the roll's dice
}

// movesResult is what the moves check found, for the statements.
type movesResult struct {
	logged  bool // the game's moves are logged and were replayed
	passed  bool
	variant string
	cube    bool
	end     *events.End
}

var ruleMsg = map[rules.Rule]msgID{
	rules.RuleNotation: mRuNotation, rules.RuleNonCanonical: mRuNonCanonical, rules.RuleNoChecker: mRuNoChecker,
	rules.RuleBlocked: mRuBlocked, rules.RuleHitMark: mRuHitMark, rules.RuleBarFirst: mRuBarFirst, rules.RulePinned: mRuPinned,
	rules.RuleHitAndRun: mRuHitAndRun, rules.RuleFirstChecker: mRuFirstChecker, rules.RuleBearOffNotHome: mRuBearOffNotHome,
	rules.RuleBearOffHigher: mRuBearOffHigher, rules.RuleStartQuarter: mRuStartQuarter, rules.RulePrimeTrap: mRuPrimeTrap,
	rules.RuleMustMove: mRuMustMove, rules.RuleBothDice: mRuBothDice, rules.RuleMaxDice: mRuMaxDice, rules.RuleLargerDie: mRuLargerDie,
	rules.RuleDice: mRuDice, rules.RuleGameOver: mRuGameOver, rules.RuleNotOnTurn: mRuNotOnTurn, rules.RuleRollMismatch: mRuRollMismatch,
}

// ruleText describes a rule in every language ("" codes and codes this
// verifier does not know are shown as they are).
func ruleText(r rules.Rule) Message {
	if id, ok := ruleMsg[r]; ok {
		return msg(id)
	}
	return msg(mRuUnknown, string(r))
}

// resultText describes how a game ended on the board.
func resultText(r rules.Result, cube bool) Message {
	switch {
	case r.Draw():
		return msg(mMvDraw)
	case cube:
		return msg(mMvWinsCube, r.Winner+1, msg(multMsg[r.Multiplier]), r.Multiplier)
	}
	return msg(mMvWins, r.Winner+1, msg(multMsg[r.Multiplier]), r.Multiplier)
}

var multMsg = map[int]msgID{1: mMvSingle, 2: mMvDouble, 3: mMvTriple}

// endResult says the result of an end event in words.
func endResult(r events.Result) Message {
	switch r {
	case events.Finished:
		return msg(mEndFinished)
	case events.Resigned:
		return msg(mEndResigned)
	case events.Abandoned:
		return msg(mEndAbandoned)
	}
	panic("verifier: an end event with the result " + string(r) + ", which events.Parse refuses")
}

// endText describes what an end event says.
func endText(e events.End) Message {
	if e.Winner == events.NoWinner {
		return msg(mMvEndDraw, endResult(e.Result))
	}
	return msg(mMvEnd, endResult(e.Result), e.Winner+1, e.Points)
}

// movesCheck replays the events of a bundle's game through the rules
// engine (events.Apply with movecheck.Checker, as the ledger appends them)
// and names the first event it refuses. It is skipped for a game whose
// settings do not declare its moves logged, and when the events do not
// replay to a game at all (log-order or log-agreement fails).
func movesCheck(l *Log, evs []*events.Event, game *events.Game) (Check, movesResult) {
	var res movesResult
	if game == nil {
		return skipped(CheckMoves, msg(mMvNoGame)), res
	}
	if !game.MovesLogged {
		return skipped(CheckMoves, msg(mMvNotLogged, len(game.Moves))), res
	}
	gs, _ := events.ParseSettings(game.Settings) // the commit replayed: they parse
	res.logged, res.variant, res.cube, res.end = true, gs.Variant, gs.Cube, game.End
	beacons := events.BeaconsOf(drand.ChainByHash)
	var g *events.Game
	played := 0
	for i, ev := range evs {
		env := events.Env{Emitter: ev.Emitter, Index: l.Entries[i].Index, SkipClockChecks: true, Beacons: beacons, Moves: movecheck.Checker{}}
		ng, err := events.Apply(g, ev, env)
		if err != nil {
			return moveFailure(i, ev, g, err), res
		}
		if ng.MoveOwed && (g == nil || !g.MoveOwed) {
			played++
		}
		g = ng
	}
	res.passed = true
	if g.Position == nil { // no roll: the game ended before its opening
		return pass(CheckMoves, msg(mMvPassNone, gs.Variant)), res
	}
	st, err := movecheck.ParseState(g.Position)
	if err != nil { // the Checker wrote it
		panic("verifier: the rules engine's own state does not parse: " + err.Error())
	}
	detail := msg(mMvPass, len(g.Moves), played, gs.Variant)
	switch {
	case g.End != nil && g.End.Result == events.Finished:
		r, _ := rules.Outcome(st.Variant, st.Position)
		detail = msg(mMvPassFinished, detail, endText(*g.End), resultText(r, gs.Cube))
	case g.End != nil:
		detail = msg(mMvPassResigned, detail, endText(*g.End))
	}
	return pass(CheckMoves, detail), res
}

// moveFailure describes the refusal of event i, ev, by the rules engine,
// where g is the game before it.
func moveFailure(i int, ev *events.Event, g *events.Game, err error) Check {
	code, _ := events.CodeOf(err)
	ref := &MoveRef{Entry: i, Seq: ev.Seq, Code: string(code)}
	var c Check
	var ime *rules.IllegalMoveError
	var rre *rules.RollError
	var rse *movecheck.ResultError
	switch {
	case code == events.CodeIllegalMove && errors.As(err, &ime):
		m := ev.Body.(events.Move)
		n, seat := m.N, m.Seat
		ref.Rule, ref.N, ref.Seat, ref.Play = string(ime.Rule), &n, &seat, m.Play
		if ime.Dice.Valid() {
			d := dice.Dice(ime.Dice)
			ref.Dice = &d
		}
		c = fail(CheckMoves, msg(mMvIllegal, i, ev.Seq, n+1, seat+1, m.Play, string(ime.Rule), ruleText(ime.Rule)))
	case code == events.CodeMoveOwed:
		st, _ := movecheck.ParseState(g.Position) // a move is owed only with a state
		n, seat, d := st.N, st.Seat, dice.Dice(st.Dice)
		ref.N, ref.Seat, ref.Dice = &n, &seat, &d
		c = fail(CheckMoves, msg(mMvOwed, i, ev.Seq, string(ev.Type), n+1, d, seat+1))
	case code == events.CodeWrongResult && errors.As(err, &rse):
		ref.Rule = string(rse.Reason)
		if !rse.Over {
			c = fail(CheckMoves, msg(mMvNotOver, i, ev.Seq, endText(rse.End)))
		} else {
			c = fail(CheckMoves, msg(mMvWrongResult, i, ev.Seq, endText(rse.End), resultText(rse.Result, rse.Cube)))
		}
	case code == events.CodeNotAllowedNow && errors.As(err, &rre):
		n := uint32(rre.N)
		d := dice.Dice(rre.Dice)
		ref.Rule, ref.N, ref.Dice = string(rre.Rule), &n, &d
		c = fail(CheckMoves, msg(mMvRollRefused, i, ev.Seq, n+1, d, string(rre.Rule), ruleText(rre.Rule)))
	default:
		if code == "" {
			code = "error"
			ref.Code = string(code)
		}
		c = fail(CheckMoves, msg(mMvRefused, i, ev.Seq, string(ev.Type), string(code), err.Error()))
	}
	c.Move = ref
	return c
}

// movesStatements adds what the moves check proves and does not prove.
func movesStatements(r *Report, m movesResult, bundle bool) {
	switch {
	case m.passed:
		r.proves = append(r.proves, msg(mStMoves, m.variant))
		if m.cube && m.end != nil && m.end.Result == events.Finished {
			r.notProves = append(r.notProves, msg(mStMovesCube))
		}
		if m.end != nil && m.end.Result != events.Finished {
			r.notProves = append(r.notProves, msg(mStMovesEnd, endResult(m.end.Result)))
		}
	case bundle && !m.logged:
		r.notProves = append(r.notProves, msg(mStMovesNotLogged))
	}
}
