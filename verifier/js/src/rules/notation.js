// The notation of plays (rules/notation.go): ParsePlay, FormatPlay, and
// notate, which writes a legal play's steps in canonical notation.

import { BAR, OFF } from "./position.js";

/**
 * A Move is one checker's part of a play, in the mover's own numbering:
 * from point `from` (BAR for the bar) to point `to` (OFF when borne off);
 * `via` has bit q for each point q strictly between where the notation
 * shows the checker landing, `hits` bit q for each point marked "*".
 */
export function Move(from, to, via, hits) {
  this.from = from;
  this.to = to;
  this.via = via >>> 0;
  this.hits = hits >>> 0;
}

function sameMove(a, b) { return a.from === b.from && a.to === b.to && a.via === b.via && a.hits === b.hits; }

/** EMPTY_PLAY is the text of the empty play. */
export const EMPTY_PLAY = "-";

// MAX_NOTATION bounds the length of a play's text, in bytes.
const MAX_NOTATION = 128;

/** A NotationError says why a play's text is not valid notation. */
export class NotationError extends Error {
  constructor(text, reason) {
    super("rules: play " + JSON.stringify(text) + ": " + reason);
    this.text = text;
    this.reason = reason;
  }
}

function onesCount(x) { let n = 0; for (x >>>= 0; x !== 0; x >>>= 1) n += x & 1; return n; }

/**
 * parsePlay parses a play in standard notation from the mover's point of
 * view ("24/18 13/11", "bar/22*", "6/off", "24/18*\/13", "13/11(2)", "-")
 * and returns its moves (an array of Move), or throws a NotationError. It
 * accepts what Go's ParsePlay accepts, byte for byte.
 */
export function parsePlay(s) {
  const bytes = new TextEncoder().encode(s);
  const short = bytes.length > MAX_NOTATION ? new TextDecoder().decode(bytes.subarray(0, MAX_NOTATION)) : s;
  const bad = function (why) { throw new NotationError(short, why); };
  if (bytes.length > MAX_NOTATION) bad("longer than " + MAX_NOTATION + " bytes");
  if (s === EMPTY_PLAY) return [];
  if (s === "") bad("empty; the empty play is written \"-\"");
  // Every symbol of the notation is ASCII: another character is not a
  // point, and Go's byte offsets are then JavaScript's indices.
  const p = [];
  let steps = 0;
  for (let part of s.split(" ")) {
    if (part === "") bad("moves must be separated by exactly one space");
    if (/[^\x00-\x7f]/.test(part)) bad("move " + JSON.stringify(part) + ": a character that is no part of the notation");
    let count = 1;
    const i = part.indexOf("(");
    if (i >= 0) {
      if (part.length !== i + 3 || part[i + 2] !== ")" || part[i + 1] < "2" || part[i + 1] > "4") {
        bad("move " + JSON.stringify(part) + ": a repetition is written (2), (3) or (4) at the end");
      }
      count = part.charCodeAt(i + 1) - 48;
      part = part.slice(0, i);
    }
    const fields = part.split("/");
    if (fields.length < 2) bad("move " + JSON.stringify(part) + ": want from/to");
    const m = new Move(0, 0, 0, 0);
    let prev = 0;
    for (let j = 0; j < fields.length; j++) {
      let f = fields[j];
      const hit = f.endsWith("*");
      if (hit) f = f.slice(0, -1);
      const q = parsePoint(f);
      const first = j === 0, last = j === fields.length - 1;
      if (q === null) bad("move " + JSON.stringify(part) + ": " + JSON.stringify(f) + " is not a point (1-24, bar or off)");
      else if (q === BAR && !first) bad("move " + JSON.stringify(part) + ": only the first point may be the bar");
      else if (q === OFF && !last) bad("move " + JSON.stringify(part) + ": only the last point may be off");
      else if (first && hit) bad("move " + JSON.stringify(part) + ": the starting point cannot be marked *");
      else if (q === OFF && hit) bad("move " + JSON.stringify(part) + ": off cannot be marked *");
      else if (!first && q >= prev) bad("move " + JSON.stringify(part) + ": points must decrease along the move");
      if (first) m.from = q;
      else if (last) m.to = q;
      else m.via = (m.via | (1 << q)) >>> 0;
      if (hit) m.hits = (m.hits | (1 << q)) >>> 0;
      prev = q;
    }
    if (m.from - m.to > 24) bad("move " + JSON.stringify(part) + ": a checker moves at most 24 pips in a turn");
    steps += count * (onesCount(m.via) + 1);
    if (steps > 4) bad("more than four checker moves");
    for (let k = 0; k < count; k++) p.push(new Move(m.from, m.to, m.via, m.hits));
  }
  return p;
}

// parsePoint parses "bar", "off" or a point 1-24 without leading zeros, as
// Go's strconv.Atoi reads at most two bytes (a sign included); null if not.
function parsePoint(f) {
  if (f === "bar") return BAR;
  if (f === "off") return OFF;
  if (f.length === 0 || f.length > 2 || f[0] === "0" || !/^[+-]?[0-9]+$/.test(f)) return null;
  const n = Number(f);
  return n >= 1 && n <= 24 ? n : null;
}

function cmp(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

/** compareMoves orders moves for formatting: from the highest starting point down, then the highest destination, then the larger via and hits sets. */
export function compareMoves(a, b) {
  return cmp(b.from, a.from) || cmp(b.to, a.to) || cmp(b.via, a.via) || cmp(b.hits, a.hits);
}

/** formatPlay writes a play in notation: moves sorted, identical moves grouped as "(n)", "-" for the empty play. */
export function formatPlay(p) {
  if (p.length === 0) return EMPTY_PLAY;
  const ms = p.slice().sort(compareMoves);
  let b = "";
  for (let i = 0; i < ms.length;) {
    let j = i + 1;
    while (j < ms.length && sameMove(ms[j], ms[i])) j++;
    if (i > 0) b += " ";
    b += writeMove(ms[i]);
    if (j - i > 1) b += "(" + (j - i) + ")";
    i = j;
  }
  return b;
}

function writeMove(m) {
  let b = writePoint(m.from);
  for (let q = 24; q >= 1; q--) {
    if ((m.via & (1 << q)) !== 0 && q < m.from && q > m.to) {
      b += "/" + writePoint(q);
      if ((m.hits & (1 << q)) !== 0) b += "*";
    }
  }
  b += "/" + writePoint(m.to);
  if (m.to >= 1 && m.to <= 24 && (m.hits & (1 << m.to)) !== 0) b += "*";
  return b;
}

function writePoint(q) {
  if (q === BAR) return "bar";
  if (q === OFF) return "off";
  return String(q);
}

/** A Step is one die's worth of one checker's move; to is OFF for a checker borne off. */
export function Step(from, to, die) { this.from = from; this.to = to; this.die = die; }

/**
 * notate turns the steps of a legal play into its canonical notation.
 * hits is the set of points where the play hit (or newly pinned) an
 * opposing checker, computed from the positions before and after the play.
 *
 * The steps are sorted from the highest starting point down and chained
 * greedily into one move per checker; each hit is credited to the first
 * move, in that order, that ends on the hit point, or else to the first
 * that lands on it on the way; intermediate points are shown only where a
 * hit is credited.
 */
export function notate(steps, hits) {
  const ss = steps.slice().sort(function (a, b) { return cmp(b.from, a.from) || cmp(b.to, a.to); });
  const ps = [];
  for (const s of ss) {
    let joined = false;
    for (const p of ps) {
      if (p.to === s.from) {
        p.lands = (p.lands | (1 << s.from)) >>> 0;
        p.to = s.to;
        joined = true;
        break;
      }
    }
    if (!joined) ps.push({ from: s.from, to: s.to, lands: 0 });
  }
  // Array.prototype.sort is stable, as Go's SortStableFunc.
  ps.sort(function (a, b) { return cmp(b.from, a.from) || cmp(b.to, a.to); });
  const play = ps.map(function (p) { return new Move(p.from, p.to, 0, 0); });
  for (let q = 24; q >= 1; q--) {
    const bit = 1 << q;
    if ((hits & bit) === 0) continue;
    let done = false;
    for (let i = 0; i < ps.length; i++) {
      if (ps[i].to === q) {
        play[i].hits = (play[i].hits | bit) >>> 0;
        done = true;
        break;
      }
    }
    if (done) continue;
    for (let i = 0; i < ps.length; i++) {
      if ((ps[i].lands & bit) !== 0) {
        play[i].hits = (play[i].hits | bit) >>> 0;
        play[i].via = (play[i].via | bit) >>> 0;
        break;
      }
    }
  }
  return play.sort(compareMoves);
}
