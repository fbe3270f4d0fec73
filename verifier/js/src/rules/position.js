// Positions (rules/position.go): where the checkers of both seats stand,
// each seat in its own numbering (points 1-24 in the order it moves, 0
// borne off, 25 the bar), with plakoto's pinned checkers; the text form of
// docs/RULES.md §5.

import { validVariant, rulesOf, HITTING, PINNING } from "./variant.js";

export const NUM_CHECKERS = 15;
export const OFF = 0;
export const BAR = 25;

// POINT_MASK has a bit for each board point 1..24.
export const POINT_MASK = ((1 << 25) - 1) & ~1;

/**
 * A Position: n[seat][q] checkers of seat on its point q, and pin[seat]
 * with bit q set where seat's single checker on its point q is pinned.
 * Positions are values: clone() before changing one that is shared.
 */
export class Position {
  constructor() {
    this.n = [new Int8Array(26), new Int8Array(26)];
    this.pin = [0, 0];
  }

  clone() {
    const p = new Position();
    p.n[0].set(this.n[0]);
    p.n[1].set(this.n[1]);
    p.pin[0] = this.pin[0];
    p.pin[1] = this.pin[1];
    return p;
  }

  /** key returns a string that two positions share exactly when they are equal (Go's ==). */
  key() {
    return String.fromCharCode.apply(null, this.n[0]) + String.fromCharCode.apply(null, this.n[1]) + "|" + this.pin[0] + "|" + this.pin[1];
  }

  /** equal reports whether p and o are the same position. */
  equal(o) { return this.key() === o.key(); }

  /** pipCount returns the seat's pip count. */
  pipCount(seat) {
    let t = 0;
    for (let q = 1; q <= 25; q++) t += q * this.n[seat][q];
    return t;
  }

  /** toString returns the position in its canonical text form (RULES.md §5). */
  toString() {
    let b = "";
    for (let s = 0; s < 2; s++) {
      if (s === 1) b += "/";
      for (let q = 1; q <= 25; q++) {
        if (q <= 24 && (this.pin[s] & (1 << q)) !== 0) b += "p";
        else if (this.n[s][q] >= 0 && this.n[s][q] < 16) b += POS_DIGITS[this.n[s][q]];
        else b += "?"; // not reachable for a checked position
      }
    }
    return b;
  }
}

const POS_DIGITS = "0123456789abcdef";

/** start returns the starting position of variant v. */
export function start(v) {
  const rs = rulesOf(v);
  const p = new Position();
  p.n[0].set(rs.start);
  p.n[1].set(rs.start);
  return p;
}

/** A PositionError is thrown by parsePosition and checkPosition (Go's ErrPosition). */
export class PositionError extends Error {}

/** parsePosition parses the text form and checks the position under v; it accepts exactly what toString writes. */
export function parsePosition(v, s) {
  if (!validVariant(v)) throw new PositionError("rules: position: unknown variant " + JSON.stringify(v) + ": invalid position");
  if (s.length !== 51 || s[25] !== "/" || /[^\x00-\x7f]/.test(s)) {
    throw new PositionError("rules: position " + JSON.stringify(s) + ": want 25 symbols, \"/\", 25 symbols: invalid position");
  }
  const p = new Position();
  for (let seat = 0; seat < 2; seat++) {
    let total = 0;
    for (let q = 1; q <= 25; q++) {
      const c = s[seat * 26 + q - 1];
      if (c >= "0" && c <= "9") p.n[seat][q] = c.charCodeAt(0) - 48;
      else if (c >= "a" && c <= "f") p.n[seat][q] = c.charCodeAt(0) - 97 + 10;
      else if (c === "p" && q <= 24) { p.n[seat][q] = 1; p.pin[seat] |= 1 << q; }
      else throw new PositionError("rules: position: seat " + seat + " point " + q + ": bad symbol " + JSON.stringify(c) + ": invalid position");
      total += p.n[seat][q];
    }
    if (total > NUM_CHECKERS) {
      throw new PositionError("rules: position: seat " + seat + " has " + total + " checkers on the board, more than 15: invalid position");
    }
    p.n[seat][OFF] = NUM_CHECKERS - total;
  }
  checkPosition(v, p);
  return p;
}

/**
 * checkPosition throws a PositionError unless p is a well-formed position
 * of v: 15 checkers a seat; no point held by both seats except a pinned
 * checker under opposing checkers (plakoto only); a bar only in the hitting
 * games; not both seats borne off.
 */
export function checkPosition(v, p) {
  const bad = function (why) { throw new PositionError("rules: position: " + why + ": invalid position"); };
  if (!validVariant(v)) bad("unknown variant " + JSON.stringify(v));
  const rs = rulesOf(v);
  for (let s = 0; s < 2; s++) {
    let total = 0;
    for (let q = 0; q <= 25; q++) {
      if (p.n[s][q] < 0 || p.n[s][q] > NUM_CHECKERS) bad("seat " + s + " point " + q + " has " + p.n[s][q] + " checkers");
      total += p.n[s][q];
    }
    if (total !== NUM_CHECKERS) bad("seat " + s + " has " + total + " checkers, want 15");
    if (rs.style !== HITTING && p.n[s][BAR] !== 0) bad("seat " + s + " has " + p.n[s][BAR] + " checkers on the bar, but " + v + " has no bar");
    if ((p.pin[s] & ~POINT_MASK) !== 0 || (rs.style !== PINNING && p.pin[s] !== 0)) bad("seat " + s + " has pinned checkers, but " + v + " has no pinning");
  }
  if (p.n[0][OFF] === NUM_CHECKERS && p.n[1][OFF] === NUM_CHECKERS) bad("both seats have borne off every checker");
  for (let q = 1; q <= 24; q++) {
    const o = rs.opposite(q);
    const a = p.n[0][q], b = p.n[1][o];
    const pa = (p.pin[0] & (1 << q)) !== 0, pb = (p.pin[1] & (1 << o)) !== 0;
    if (pa && pb) bad("seat 0 point " + q + ": both seats pinned");
    else if (pa && (a !== 1 || b === 0)) bad("seat 0 point " + q + ": a pinned checker must be alone under opposing checkers");
    else if (pb && (b !== 1 || a === 0)) bad("seat 1 point " + o + ": a pinned checker must be alone under opposing checkers");
    else if (a > 0 && b > 0 && !pa && !pb) bad("seat 0 point " + q + " and seat 1 point " + o + ": both seats hold the same point");
  }
}
