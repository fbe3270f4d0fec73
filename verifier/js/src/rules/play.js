// Legal plays and their check (rules/play.go): LegalPlays, ApplyPlay,
// CanonicalPlay, and the diagnosis that names the rule an illegal play
// breaks.

import { validVariant, rulesOf, HITTING, PINNING, RUNNING } from "./variant.js";
import { BAR, OFF } from "./position.js";
import {
  IllegalMoveError, diceString, RULE_NOTATION, RULE_NO_CHECKER, RULE_PINNED, RULE_BLOCKED, RULE_HIT_MARK, RULE_LARGER_DIE,
  RULE_MUST_MOVE, RULE_MAX_DICE, RULE_BOTH_DICE, RULE_DICE, RULE_BAR_FIRST, RULE_HIT_AND_RUN, RULE_FIRST_CHECKER,
  RULE_BEAR_OFF_NOT_HOME, RULE_BEAR_OFF_HIGHER, RULE_START_QUARTER, RULE_PRIME_TRAP,
} from "./errors.js";
import { parsePlay, formatPlay, compareMoves, notate } from "./notation.js";
import { Gen, legalPlays as legal, hitsOf, validDice, isDouble, DIAGNOSIS_ORDER } from "./movegen.js";

function checkArgs(v, seat, d) {
  if (!validVariant(v)) return "rules: unknown variant " + JSON.stringify(v);
  if (seat !== 0 && seat !== 1) return "rules: seat " + seat + ": want 0 or 1";
  if (!validDice(d)) return "rules: dice " + diceString(d) + ": want two faces from 1 to 6";
  return "";
}

/**
 * legalPlays returns the legal plays of seat with dice d in position p
 * under variant v: one play per distinct resulting position, each in
 * canonical form, sorted by canonical text; the single empty play when no
 * checker can move; null if v, seat or d is invalid.
 */
export function legalPlays(v, p, seat, d) {
  if (checkArgs(v, seat, d) !== "") return null;
  return legal(v, p, seat, d).plays.map(function (l) { return l.play; });
}

/**
 * applyPlay checks that pl is a legal play of seat with dice d in position
 * p under variant v and returns {pos, play}: the position it leads to and
 * its canonical form. pl may be any spelling of a legal play (moves in any
 * order, chains, intermediate points without hits, missing "*"). If pl is
 * not legal it throws an IllegalMoveError naming the rule it breaks.
 */
export function applyPlay(v, p, seat, d, pl) {
  const why = checkArgs(v, seat, d);
  if (why !== "") throw new Error(why);
  const fail = function (rule, detail) { throw new IllegalMoveError(rule, seat, d, formatPlay(pl), detail); };
  const rs = rulesOf(v);
  const sim = simulate(rs, p, seat, pl);
  if (sim.rule !== "") fail(sim.rule, sim.detail);
  const g = new Gen(v, seat, d, 0, false);
  g.run(p);
  const n = g.nodes.get(sim.pos.key());
  if (n !== undefined) return { pos: n.pos, play: notate(n.steps.slice(0, n.n), hitsOf(rs, seat, p, n.pos)) };
  const dg = diagnose(v, p, seat, d, sim.pos, g.best);
  return fail(dg.rule, dg.detail);
}

/** canonicalPlay returns the canonical text of the legal play written s, or throws an IllegalMoveError. */
export function canonicalPlay(v, p, seat, d, s) {
  let pl;
  try {
    pl = parsePlay(s);
  } catch (e) {
    throw new IllegalMoveError(RULE_NOTATION, seat, d, s, e.message, e);
  }
  return formatPlay(applyPlay(v, p, seat, d, pl).play);
}

// simulate carries out the moves of pl from p as written, without the
// rules of movement: checkers leave their points and land on the points the
// notation shows, hitting (pinning) single opposing checkers where they
// land. It reports the first move that cannot be carried out at all:
// {pos, rule, detail}, rule "" if none.
function simulate(rs, p0, me, pl) {
  const p = p0.clone();
  const op = 1 - me;
  const ms = pl.slice().sort(compareMoves);
  let hit = 0; // points hit or pinned so far in this play
  for (const m of ms) {
    if (m.from < 1 || m.from > BAR || m.to < OFF || m.to > 24 || m.to >= m.from ||
      (m.via & ~between(m.to, m.from)) !== 0 || (m.hits & ~(m.via | between(m.to - 1, m.to + 1))) !== 0) {
      return { pos: p, rule: RULE_NOTATION, detail: "move " + formatPlay([m]) + " is malformed" };
    }
    const mine = p.n[me], theirs = p.n[op];
    if (mine[m.from] === 0) return { pos: p, rule: RULE_NO_CHECKER, detail: "no checker on " + pointName(m.from) };
    if (m.from <= 24 && (p.pin[me] & (1 << m.from)) !== 0) return { pos: p, rule: RULE_PINNED, detail: "the checker on " + pointName(m.from) + " is pinned" };
    mine[m.from]--;
    if (m.from <= 24 && mine[m.from] === 0 && rs.style === PINNING) p.pin[op] &= ~(1 << rs.opposite(m.from));
    for (let q = m.from - 1; q >= Math.max(m.to, 1); q--) {
      const bit = 1 << q;
      if (q !== m.to && (m.via & bit) === 0) continue;
      const o = rs.opposite(q);
      const marked = (m.hits & bit) !== 0;
      let blocked = false;
      switch (rs.style) {
        case HITTING:
          if (theirs[o] >= 2) blocked = true;
          else if (theirs[o] === 1) { theirs[o] = 0; theirs[BAR]++; hit |= bit; }
          break;
        case PINNING:
          if (theirs[o] >= 2 || (theirs[o] === 1 && (p.pin[me] & bit) !== 0)) blocked = true;
          else if (theirs[o] === 1 && (p.pin[op] & (1 << o)) === 0) {
            if (q === m.to) p.pin[op] |= 1 << o;
            hit |= bit;
          }
          break;
        case RUNNING:
          blocked = theirs[o] >= 1;
          break;
      }
      if (blocked) return { pos: p, rule: RULE_BLOCKED, detail: pointName(q) + " is held by the opponent" };
      if (marked && (hit & bit) === 0) return { pos: p, rule: RULE_HIT_MARK, detail: pointName(q) + " is marked * but no single opposing checker stands there" };
    }
    mine[m.to]++;
  }
  return { pos: p, rule: "", detail: "" };
}

// between returns the points strictly between lo and hi.
function between(lo, hi) {
  let b = 0;
  for (let q = Math.max(lo + 1, 1); q < hi && q <= 24; q++) b |= 1 << q;
  return b;
}

function pointName(q) {
  if (q === BAR) return "the bar";
  if (q === OFF) return "off";
  return "point " + q;
}

// diagnose names the rule that makes the play leading to end illegal
// ({rule, detail}). If single-die moves that the rules allow reach end, the
// play breaks a rule of the number of dice (or of the larger die).
// Otherwise the movement rules are switched off one after the other, in
// DIAGNOSIS_ORDER, until end becomes reachable, and the first of them that
// must stay switched off is named. If end is out of reach even then, the
// play does not fit the dice. best is the number of dice the legal plays
// use.
function diagnose(v, p, seat, d, end, best) {
  const g = new Gen(v, seat, d, 0, true);
  g.run(p);
  const n = g.nodes.get(end.key());
  if (n !== undefined) {
    if ((n.depths & (1 << best)) !== 0) return { rule: RULE_LARGER_DIE, detail: "only one die can be played, and the " + Math.max(d[0], d[1]) + " can be" };
    if (end.equal(p)) return { rule: RULE_MUST_MOVE, detail: "a checker can be moved with " + diceString(d) };
    if (isDouble(d)) return { rule: RULE_MAX_DICE, detail: best + " of the four " + d[0] + "s can be played" };
    return { rule: RULE_BOTH_DICE, detail: "both dice can be played" };
  }
  const reaches = function (relax) {
    const g = new Gen(v, seat, d, relax, true);
    g.run(p);
    return g.nodes.has(end.key());
  };
  // Switch rules off in order until the play becomes possible; then name
  // the first of those rules that it still needs switched off.
  let relax = 0;
  for (let k = 0; k < DIAGNOSIS_ORDER.length; k++) {
    relax |= DIAGNOSIS_ORDER[k].r;
    if (!reaches(relax)) continue;
    for (const s of DIAGNOSIS_ORDER.slice(0, k + 1)) {
      if (!reaches(relax & ~s.r)) return { rule: s.rule, detail: ruleDetail(s.rule) };
    }
    return { rule: DIAGNOSIS_ORDER[k].rule, detail: ruleDetail(DIAGNOSIS_ORDER[k].rule) };
  }
  return { rule: RULE_DICE, detail: "the play cannot be made with " + diceString(d) };
}

function ruleDetail(r) {
  switch (r) {
    case RULE_BAR_FIRST: return "a checker on the bar must enter before any other checker moves";
    case RULE_PINNED: return "a pinned checker cannot move";
    case RULE_HIT_AND_RUN: return "a checker that hits in the home board stops there for the rest of the turn";
    case RULE_FIRST_CHECKER: return "the first checker must pass the opponent's starting point before another leaves the start";
    case RULE_BLOCKED: return "the play lands on a point the opponent holds";
    case RULE_BEAR_OFF_NOT_HOME: return "checkers are borne off only when all are in the home board, none on the bar or pinned";
    case RULE_BEAR_OFF_HIGHER: return "a die larger than the point bears off only when no checker stands on a higher point";
    case RULE_START_QUARTER: return "a play may not end holding all six points of the starting quarter";
    case RULE_PRIME_TRAP: return "a play may not end with a prime that every opposing checker is still behind";
  }
  return r;
}
