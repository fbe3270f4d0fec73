// How a game ends on the board (rules/result.go).

import { rulesOf, BACKGAMMON, PINNING } from "./variant.js";
import { NUM_CHECKERS, OFF, BAR } from "./position.js";

/**
 * A Result is how a game ended: winner the seat that won, or -1 for a draw
 * (plakoto, both mothers pinned); multiplier 1 (single), 2 (double: gammon,
 * mars, diplo) or 3 (backgammon), 0 for a draw.
 */
export function Result(winner, multiplier) { this.winner = winner; this.multiplier = multiplier; }

/** draw reports whether the result is a draw. */
Result.prototype.draw = function () { return this.winner < 0; };

Result.prototype.toString = function () {
  if (this.draw()) return "draw";
  if (this.multiplier === 1) return "seat " + this.winner + " wins a single game";
  if (this.multiplier === 2) return "seat " + this.winner + " wins a double game";
  return "seat " + this.winner + " wins a triple game";
};

/**
 * outcome reports whether the game of variant v is over in position p, and
 * how it ended: {result, over}. A seat that has borne off all 15 checkers
 * wins; double if the loser has borne off none; in Western backgammon
 * triple if, besides, the loser has a checker on the bar or in the
 * winner's home board. Plakoto: a seat whose mother checker (its last
 * checker on its 24-point) is pinned loses a double game, unless the
 * opponent still has checkers on its own starting point; both mothers
 * pinned is a draw.
 */
export function outcome(v, p) {
  const rs = rulesOf(v);
  for (let s = 0; s < 2; s++) {
    if (p.n[s][OFF] !== NUM_CHECKERS) continue;
    const l = 1 - s;
    const r = new Result(s, 1);
    if (p.n[l][OFF] === 0) {
      r.multiplier = 2;
      if (v === BACKGAMMON) {
        let back = p.n[l][BAR] > 0;
        for (let q = 19; q <= 24; q++) back = back || p.n[l][q] > 0;
        if (back) r.multiplier = 3;
      }
    }
    return { result: r, over: true };
  }
  if (rs.style === PINNING) {
    const m0 = (p.pin[0] & (1 << 24)) !== 0, m1 = (p.pin[1] & (1 << 24)) !== 0;
    if (m0 && m1) return { result: new Result(-1, 0), over: true };
    if (m0 && p.n[1][24] === 0) return { result: new Result(1, 2), over: true };
    if (m1 && p.n[0][24] === 0) return { result: new Result(0, 2), over: true };
  }
  return { result: new Result(0, 0), over: false };
}
