// The Checker (rules/movecheck/checker.go): the rules engine connected to
// the log. It follows the rolls, moves and end of a game whose moves are
// logged, as the ledger does, and keeps nothing between calls: the flow of
// play travels in the game's position, a State's canonical text.
//
// Its input `in` is the MoveInput of package events: {scheme, settings (the
// commit's settings, a Map), position (the text, or null before the first),
// roll: {n, dice, kind}, move: {n, play, seat}}. Its errors: an
// IllegalMoveError (checkMove), a RollError (checkRoll), a ResultError
// (checkEnd), a StateError for a position that is not a State.

import { parseVariant, parseOpening } from "../variant.js";
import {
  IllegalMoveError, RollError, diceString, RULE_BAD_DICE, RULE_GAME_OVER, RULE_PLAY_PENDING, RULE_NOT_ON_TURN, RULE_ROLL_MISMATCH,
  RULE_NOTATION, RULE_NON_CANONICAL,
} from "../errors.js";
import { parsePlay, formatPlay } from "../notation.js";
import { applyPlay } from "../play.js";
import { outcome } from "../result.js";
import { validDice, isDouble } from "../movegen.js";
import {
  newState, parseState, StateError, PHASE_OPENING, PHASE_REROLL, PHASE_TURN, PHASE_PLAY, PHASE_OVER,
} from "./state.js";
import { OPENING_TURKISH_REROLL } from "../variant.js";

const ROLL_OPENING = "opening", ROLL_REROLL = "reroll", ROLL_TURN = "turn";

function perGame(scheme) { return scheme !== "per-roll-v1"; }

/** gameSettings reads what the Checker needs of a commit's settings (events.ParseSettings; the parser checked them). */
export function gameSettings(settings) {
  const get = function (k, d) { return settings.has(k) ? settings.get(k) : d; };
  const variant = get("variant", "");
  return {
    movesLogged: get("moves", "") === "logged",
    variant: variant,
    opening: get("opening", "western"),
    cube: variant === "backgammon" && get("doublingCube", true) !== false,
  };
}

// state returns the game's state before in's event, or null if the game's
// moves are not logged.
function state(input) {
  if (input.position !== null && input.position !== undefined) return parseState(input.position);
  const gs = gameSettings(input.settings);
  if (!gs.movesLogged) return null;
  return newState(parseVariant(gs.variant), parseOpening(gs.opening));
}

/**
 * checkRoll follows roll in.roll: under the game's opening it decides the
 * starter, or gives the roll to the seat on turn. It returns {position,
 * played}; position null for a game whose moves are not logged. A per-game
 * roll after the game is over on the board is refused (game-over); under
 * per-roll-v1 it starts the match's next game from the opening.
 */
export function checkRoll(input) {
  let s = state(input);
  if (s === null) return { position: null, played: false };
  const d = input.roll.dice;
  const n = input.roll.n;
  const fail = function (r, detail) { throw new RollError(r, n, d, detail); };
  if (!validDice(d)) fail(RULE_BAD_DICE, "dice " + diceString(d) + " are not two faces from 1 to 6");
  if (s.phase === PHASE_OVER) {
    if (perGame(input.scheme)) fail(RULE_GAME_OVER, "the game is over on the board (" + outcome(s.variant, s.position).result + ")");
    s = newState(s.variant, s.opening); // the match's next game
  }
  let kind;
  switch (s.phase) {
    case PHASE_PLAY:
      fail(RULE_PLAY_PENDING, "roll " + s.n + " (" + diceString(s.dice) + ") still waits for seat " + s.seat + "'s move");
      break;
    case PHASE_OPENING:
      kind = ROLL_OPENING;
      if (!isDouble(d)) {
        s.seat = d[0] > d[1] ? 0 : 1;
        s.phase = s.opening === OPENING_TURKISH_REROLL ? PHASE_REROLL : PHASE_PLAY;
      }
      break;
    case PHASE_REROLL:
      kind = ROLL_REROLL;
      s.phase = PHASE_PLAY;
      break;
    case PHASE_TURN:
      kind = ROLL_TURN;
      s.phase = PHASE_PLAY;
      break;
  }
  if (perGame(input.scheme) && input.roll.kind !== kind) {
    throw new StateError("roll " + n + " is logged as " + input.roll.kind + ", but the game expects a roll of kind " + kind);
  }
  if (s.phase === PHASE_PLAY) {
    s.n = n;
    s.dice = d.slice();
  }
  return { position: s.toString(), played: s.phase === PHASE_PLAY };
}

/**
 * checkMove checks move event in.move against the roll that waits: it must
 * be by the seat on turn, name that roll, and carry the canonical text of a
 * legal play of its dice. It returns the state's text after the play (null
 * for a game whose moves are not logged), or throws an IllegalMoveError.
 */
export function checkMove(input) {
  const s = state(input);
  if (s === null) return null;
  const m = input.move;
  const fail = function (r, d, detail) { throw new IllegalMoveError(r, m.seat, d, m.play, detail); };
  if (s.phase === PHASE_OVER) fail(RULE_GAME_OVER, [0, 0], "the game is over on the board (" + outcome(s.variant, s.position).result + ")");
  else if (s.phase !== PHASE_PLAY) fail(RULE_NOT_ON_TURN, [0, 0], "no roll waits for a move");
  else if (m.n !== s.n) fail(RULE_ROLL_MISMATCH, s.dice, "move of roll " + m.n + ", but roll " + s.n + " (" + diceString(s.dice) + ") waits for a move");
  else if (m.seat !== s.seat) fail(RULE_NOT_ON_TURN, s.dice, "seat " + s.seat + " is to play roll " + s.n + " (" + diceString(s.dice) + ")");
  let p;
  try {
    p = parsePlay(m.play);
  } catch (e) {
    throw new IllegalMoveError(RULE_NOTATION, m.seat, s.dice, m.play, e.message, e);
  }
  let r;
  try {
    r = applyPlay(s.variant, s.position, s.seat, s.dice, p);
  } catch (e) {
    if (e instanceof IllegalMoveError) e.play = m.play;
    throw e;
  }
  const cs = formatPlay(r.play);
  if (cs !== m.play) fail(RULE_NON_CANONICAL, s.dice, "the canonical form of this play is " + JSON.stringify(cs));
  s.position = r.pos;
  s.phase = PHASE_TURN;
  s.seat = 1 - s.seat;
  s.n = 0;
  s.dice = [0, 0];
  if (outcome(s.variant, r.pos).over) {
    s.phase = PHASE_OVER;
    s.seat = -1;
  }
  return s.toString();
}

/** MAX_CUBE is the largest doubling-cube value checkEnd accepts. */
export const MAX_CUBE = 1 << 15;

// pointsFit reports whether points are m times the cube: 1 without the
// cube, a power of two up to MAX_CUBE with it.
function pointsFit(m, points, cube) {
  if (!cube) return points === m;
  if (points % m !== 0) return false;
  const c = points / m;
  return c >= 1 && c <= MAX_CUBE && (c & (c - 1)) === 0;
}

/** The reasons of a ResultError. */
export const NOT_OVER = "not-over";
export const WRONG_WINNER = "wrong-winner";
export const WRONG_POINTS = "wrong-points";

/** A ResultError says why a finished end does not fit the game's final position. */
export class ResultError extends Error {
  constructor(reason, end, cube, over, result, phase, seat) {
    super("movecheck: " + reason);
    this.reason = reason;
    this.end = end; // {result, winner, points}
    this.cube = cube;
    this.over = over;
    this.result = result; // when over
    this.phase = phase; // when not over
    this.seat = seat;
  }
}

/**
 * checkEnd checks a finished end ({result, winner, points}; winner null
 * for none) against the final position: the game must be over on the
 * board, the end must name its winner (none for a draw) and give the
 * result's points: the multiplier, times a power of two up to 2^15 where
 * the doubling cube is in use. It throws a ResultError if not.
 */
export function checkEnd(input, end) {
  const s = state(input);
  if (s === null) return;
  const gs = gameSettings(input.settings);
  if (s.phase !== PHASE_OVER) throw new ResultError(NOT_OVER, end, gs.cube, false, null, s.phase, s.seat);
  const r = outcome(s.variant, s.position).result;
  let reason = "";
  if (r.draw() && end.winner !== null) reason = WRONG_WINNER;
  else if (r.draw()) return; // the parser allows no points without a winner
  else if (end.winner !== r.winner) reason = WRONG_WINNER;
  else if (!pointsFit(r.multiplier, end.points, gs.cube)) reason = WRONG_POINTS;
  else return;
  throw new ResultError(reason, end, gs.cube, true, r, s.phase, s.seat);
}

/** The Checker as one object, as events.Env's Moves takes it (game.js). */
export const Checker = { checkRoll: checkRoll, checkMove: checkMove, checkEnd: checkEnd };


