// The moves check (package verifier's moves.go): the events of a bundle's
// game replayed through the rules engine (rules/movecheck), as the ledger
// appends them, naming the first event it refuses.

import { M } from "./render.js";
import { pass, fail, skipped, diceStr } from "./check.js";
import { replay, Refusal } from "./game.js";
import { Checker, gameSettings, ResultError } from "./rules/movecheck/checker.js";
import { parseState } from "./rules/movecheck/state.js";
import { IllegalMoveError, RollError } from "./rules/errors.js";
import { validDice } from "./rules/movegen.js";
import { outcome } from "./rules/result.js";

// RULE_MSG is the message of each rule (RULES.md §6).
const RULE_MSG = {
  "notation": "RuNotation", "non-canonical": "RuNonCanonical", "no-checker": "RuNoChecker", "blocked": "RuBlocked",
  "hit-mark": "RuHitMark", "bar-first": "RuBarFirst", "pinned": "RuPinned", "hit-and-run": "RuHitAndRun",
  "first-checker": "RuFirstChecker", "bear-off-not-home": "RuBearOffNotHome", "bear-off-higher": "RuBearOffHigher",
  "start-quarter": "RuStartQuarter", "prime-trap": "RuPrimeTrap", "must-move": "RuMustMove", "must-use-both-dice": "RuBothDice",
  "must-use-max-dice": "RuMaxDice", "must-use-larger-die": "RuLargerDie", "dice": "RuDice", "game-over": "RuGameOver",
  "not-on-turn": "RuNotOnTurn", "roll-mismatch": "RuRollMismatch",
};

// Rolls and players are counted from 1 in every text (seat 0 is player 1),
// as in Go; the move reference (c.move) keeps the log's numbers.

// ruleText describes a rule in every language.
function ruleText(r) { return RULE_MSG[r] ? M(RULE_MSG[r]) : M("RuUnknown", r); }

const MULT_MSG = { 1: "MvSingle", 2: "MvDouble", 3: "MvTriple" };

// resultText describes how a game ended on the board.
function resultText(r, cube) {
  if (r.draw()) return M("MvDraw");
  if (cube) return M("MvWinsCube", r.winner + 1, M(MULT_MSG[r.multiplier]), r.multiplier);
  return M("MvWins", r.winner + 1, M(MULT_MSG[r.multiplier]), r.multiplier);
}

// END_RESULT says an end's result in words (package verifier's endResult).
const END_RESULT = { finished: "EndFinished", resigned: "EndResigned", abandoned: "EndAbandoned" };

// endText describes what an end event says.
function endText(e) {
  if (e.winner === null) return M("MvEndDraw", M(END_RESULT[e.result]));
  return M("MvEnd", M(END_RESULT[e.result]), e.winner + 1, e.points);
}

/**
 * movesCheck replays the events of a bundle's game (evs, whose log-order
 * passed; game the game they replayed to, or null) through the rules
 * engine and names the first event it refuses. It is skipped for a game
 * whose settings do not declare its moves logged, and when the events do
 * not replay to a game at all. It resolves to {check, res}: res says what
 * the statements need (logged, passed, variant, cube, end).
 */
export async function movesCheck(evs, game) {
  const res = { logged: false, passed: false, variant: "", cube: false, end: null };
  if (!game) return { check: skipped("moves", M("MvNoGame")), res: res };
  if (!game.movesLogged) return { check: skipped("moves", M("MvNotLogged", game.moves.length)), res: res };
  const gs = gameSettings(game.settings);
  res.logged = true;
  res.variant = gs.variant;
  res.cube = gs.cube;
  res.end = game.end;
  let g;
  try {
    g = await replay(evs, { moves: Checker });
  } catch (x) {
    if (!(x instanceof Refusal)) throw x;
    return { check: moveFailure(x), res: res };
  }
  res.passed = true;
  if (g.position === null) return { check: pass("moves", M("MvPassNone", gs.variant)), res: res }; // no roll: the game ended before its opening
  const st = parseState(g.position);
  let detail = M("MvPass", g.moves.length, g.played, gs.variant);
  if (g.end && g.end.result === "finished") {
    detail = M("MvPassFinished", detail, endText(g.end), resultText(outcome(st.variant, st.position).result, gs.cube));
  } else if (g.end) {
    detail = M("MvPassResigned", detail, endText(g.end));
  }
  return { check: pass("moves", detail), res: res };
}

// moveFailure describes refusal x of the rules engine.
function moveFailure(x) {
  const i = x.entry, ev = x.ev, code = x.code, err = x.err;
  const ref = { entry: i, seq: ev.seq, code: code };
  let c;
  if (code === "illegal-move" && err instanceof IllegalMoveError) {
    const m = ev.body;
    ref.rule = err.rule;
    ref.n = m.n;
    ref.seat = m.seat;
    ref.play = m.play;
    if (validDice(err.dice)) ref.dice = err.dice.slice();
    c = fail("moves", M("MvIllegal", i, ev.seq, m.n + 1, m.seat + 1, m.play, err.rule, ruleText(err.rule)));
  } else if (code === "move-owed") {
    const st = parseState(x.position); // a move is owed only with a state
    ref.n = st.n;
    ref.seat = st.seat;
    ref.dice = st.dice.slice();
    c = fail("moves", M("MvOwed", i, ev.seq, ev.type, st.n + 1, diceStr(st.dice), st.seat + 1));
  } else if (code === "wrong-result" && err instanceof ResultError) {
    ref.rule = err.reason;
    if (!err.over) c = fail("moves", M("MvNotOver", i, ev.seq, endText(err.end)));
    else c = fail("moves", M("MvWrongResult", i, ev.seq, endText(err.end), resultText(err.result, err.cube)));
  } else if (code === "not-allowed-now" && err instanceof RollError) {
    ref.rule = err.rule;
    ref.n = err.n;
    ref.dice = err.dice.slice();
    c = fail("moves", M("MvRollRefused", i, ev.seq, err.n + 1, diceStr(err.dice), err.rule, ruleText(err.rule)));
  } else {
    c = fail("moves", M("MvRefused", i, ev.seq, ev.type, code || "error", x.message));
    if (!code) ref.code = "error";
  }
  c.move = ref;
  return c;
}

/** movesStatements adds what the moves check proves and does not prove. */
export function movesStatements(r, m, bundle) {
  if (m.passed) {
    r.proves.push(M("StMoves", m.variant));
    if (m.cube && m.end && m.end.result === "finished") r.notProves.push(M("StMovesCube"));
    if (m.end && m.end.result !== "finished") r.notProves.push(M("StMovesEnd", M(END_RESULT[m.end.result])));
  } else if (bundle && !m.logged) {
    r.notProves.push(M("StMovesNotLogged"));
  }
}
