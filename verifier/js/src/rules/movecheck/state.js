// A game's flow of play between events (rules/movecheck/state.go): the
// variant and opening, the phase, and the position, in the canonical text
// that the ledger stores as the game's position:
//
//   variant " " opening " " flow " " position
//   flow = "o" | "r" seat | "t" seat | "p" seat ":" n ":" die die | "x"

import { parseVariant, parseOpening, OPENING_TURKISH_REROLL } from "../variant.js";
import { start, parsePosition } from "../position.js";
import { outcome } from "../result.js";
import { validDice } from "../movegen.js";

export const PHASE_OPENING = "o"; // an opening roll is next (also after a tie)
export const PHASE_REROLL = "r"; // the starter's Turkish re-roll is next
export const PHASE_TURN = "t"; // a turn roll of seat is next
export const PHASE_PLAY = "p"; // roll n (dice) waits for seat's move
export const PHASE_OVER = "x"; // the game is over on the board

/** A StateError is a state that does not parse (Go's ErrState): a fault of whoever stored it. */
export class StateError extends Error {
  constructor(why) { super("invalid move-check state: " + why); }
}

/** A State is the flow of play of one game, as the Checker keeps it between events. */
export class State {
  constructor(variant, opening, phase, seat, n, dice, position) {
    this.variant = variant;
    this.opening = opening;
    this.phase = phase;
    this.seat = seat; // the seat to roll (reroll, turn) or to play (play); -1 otherwise
    this.n = n; // play: the number of the roll that waits
    this.dice = dice; // play: its dice as logged
    this.position = position;
  }

  clone() { return new State(this.variant, this.opening, this.phase, this.seat, this.n, this.dice.slice(), this.position); }

  /** toString returns the state's canonical text. */
  toString() {
    let b = this.variant + " " + this.opening + " " + this.phase;
    if (this.phase === PHASE_REROLL || this.phase === PHASE_TURN) b += this.seat;
    else if (this.phase === PHASE_PLAY) b += this.seat + ":" + this.n + ":" + this.dice[0] + this.dice[1];
    return b + " " + this.position.toString();
  }
}

/** newState returns the state of a game of v and o before its first roll. */
export function newState(v, o) { return new State(v, o, PHASE_OPENING, -1, 0, [0, 0], start(v)); }

/**
 * parseState parses the text form of a State. It accepts exactly what
 * toString writes for a state the Checker can reach; it throws a
 * StateError otherwise.
 */
export function parseState(b) {
  const fail = function (why) { throw new StateError(why); };
  if (new TextEncoder().encode(b).length > 100) fail(b.length + " bytes");
  const parts = b.split(" ");
  if (parts.length !== 4) fail(JSON.stringify(b) + ": want variant, opening, flow and position separated by single spaces");
  let v, o, pos;
  try {
    v = parseVariant(parts[0]);
    o = parseOpening(parts[1]);
    pos = parsePosition(v, parts[3]);
  } catch (e) {
    fail(e.message);
  }
  const s = new State(v, o, "", -1, 0, [0, 0], pos);
  const f = parts[2];
  if (f === "") fail("empty flow");
  s.phase = f[0];
  const seat = function (c) {
    if (c !== "0" && c !== "1") return false;
    s.seat = c.charCodeAt(0) - 48;
    return true;
  };
  switch (s.phase) {
    case PHASE_OPENING: case PHASE_OVER:
      if (f.length !== 1) fail("flow " + JSON.stringify(f));
      break;
    case PHASE_REROLL: case PHASE_TURN:
      if (f.length !== 2 || !seat(f[1])) fail("flow " + JSON.stringify(f));
      break;
    case PHASE_PLAY: {
      // p seat ":" n ":" die die
      if (f.length < 7 || !seat(f[1]) || f[2] !== ":" || f[f.length - 3] !== ":") fail("flow " + JSON.stringify(f));
      const num = f.slice(3, f.length - 3);
      if (!/^(0|[1-9][0-9]*)$/.test(num) || Number(num) > 4294967295) fail("flow " + JSON.stringify(f) + ": roll number " + JSON.stringify(num));
      s.n = Number(num);
      s.dice = [f.charCodeAt(f.length - 2) - 48, f.charCodeAt(f.length - 1) - 48];
      if (!validDice(s.dice)) fail("flow " + JSON.stringify(f) + ": dice");
      break;
    }
    default:
      fail("flow " + JSON.stringify(f));
  }
  const over = outcome(s.variant, s.position).over;
  if ((s.phase === PHASE_OPENING || s.phase === PHASE_REROLL) && !s.position.equal(start(s.variant))) fail("phase " + s.phase + ", but the position is not the start");
  else if (s.phase === PHASE_REROLL && s.opening !== OPENING_TURKISH_REROLL) fail("a re-roll under the " + s.opening + " opening");
  else if (over && s.phase !== PHASE_OVER) fail("phase " + s.phase + ", but the game is over on the board");
  else if (!over && s.phase === PHASE_OVER) fail("phase x, but the game is not over on the board");
  return s;
}
