// The move generator (rules/movegen.go): every sequence of single-die steps
// a roll allows, one node per resulting position, with the rules of
// movement as switches that diagnose (play.js) turns off one by one to name
// the rule an illegal play breaks.

import { rulesOf, HITTING, PINNING, RUNNING } from "./variant.js";
import { NUM_CHECKERS, OFF, BAR } from "./position.js";
import {
  RULE_BAR_FIRST, RULE_PINNED, RULE_HIT_AND_RUN, RULE_FIRST_CHECKER, RULE_BLOCKED, RULE_BEAR_OFF_NOT_HOME,
  RULE_BEAR_OFF_HIGHER, RULE_START_QUARTER, RULE_PRIME_TRAP,
} from "./errors.js";
import { Step, notate, formatPlay } from "./notation.js";

/** validDice reports whether both dice are between 1 and 6. */
export function validDice(d) { return d[0] >= 1 && d[0] <= 6 && d[1] >= 1 && d[1] <= 6 && Number.isInteger(d[0]) && Number.isInteger(d[1]); }

/** isDouble reports whether both dice show the same face. */
export function isDouble(d) { return d[0] === d[1]; }

// Relaxation bits: each switches one rule off.
export const RELAX_BAR_FIRST = 1 << 0;
export const RELAX_PINNED = 1 << 1;
export const RELAX_HIT_AND_RUN = 1 << 2;
export const RELAX_FIRST_CHECKER = 1 << 3;
export const RELAX_BLOCKED = 1 << 4;
export const RELAX_BEAR_OFF_NOT_HOME = 1 << 5;
export const RELAX_BEAR_OFF_HIGHER = 1 << 6;
export const RELAX_START_QUARTER = 1 << 7;
export const RELAX_PRIME_TRAP = 1 << 8;

// DIAGNOSIS_ORDER is the order in which rules are switched off to name
// the rule an illegal play breaks.
export const DIAGNOSIS_ORDER = [
  { r: RELAX_BAR_FIRST, rule: RULE_BAR_FIRST },
  { r: RELAX_PINNED, rule: RULE_PINNED },
  { r: RELAX_HIT_AND_RUN, rule: RULE_HIT_AND_RUN },
  { r: RELAX_FIRST_CHECKER, rule: RULE_FIRST_CHECKER },
  { r: RELAX_BLOCKED, rule: RULE_BLOCKED },
  { r: RELAX_BEAR_OFF_NOT_HOME, rule: RULE_BEAR_OFF_NOT_HOME },
  { r: RELAX_BEAR_OFF_HIGHER, rule: RULE_BEAR_OFF_HIGHER },
  { r: RELAX_START_QUARTER, rule: RULE_START_QUARTER },
  { r: RELAX_PRIME_TRAP, rule: RULE_PRIME_TRAP },
];

// A Node is a position a sequence of steps reaches.
function Node(pos, steps, n, order) {
  this.pos = pos;
  this.steps = steps; // the recorded sequence (its first n steps)
  this.n = n;
  this.depths = 0; // bit k: reachable with k steps (every-node mode)
  this.dieMask = 0; // bit d: reachable with one step of die d
  this.order = order; // discovery order
}

/** A Gen enumerates the plays of one roll. */
export class Gen {
  constructor(v, seat, d, relax, every) {
    this.rs = rulesOf(v);
    this.me = seat;
    this.op = 1 - seat;
    this.dice = d;
    this.double = isDouble(d);
    this.relax = relax;
    this.every = every; // record every node, not only those of the largest depth
    this.best = -1;
    this.nodes = new Map(); // position key -> Node
    this.count = 0;
    this.seen = new Set();
    this.path = [null, null, null, null];
  }

  relaxed(r) { return (this.relax & r) !== 0; }

  // run enumerates every sequence of steps from p.
  run(p) {
    this.dfs(p, 0, 0, 0);
    if (this.nodes.size === 0 && this.rs.fevga && (this.relax & (RELAX_START_QUARTER | RELAX_PRIME_TRAP)) === 0) {
      // No play, not even the empty one, ends where fevga allows (only in
      // positions that play cannot reach): the rules about where a play
      // ends do not apply.
      this.relax |= RELAX_START_QUARTER | RELAX_PRIME_TRAP;
      this.seen.clear();
      this.best = -1;
      this.dfs(p, 0, 0, 0);
    }
    if (this.every || this.double || this.best !== 1) return;
    // Only one die can be played: the larger one if it can.
    const hi = Math.max(this.dice[0], this.dice[1]);
    let canHi = false;
    for (const n of this.nodes.values()) {
      if ((n.dieMask & (1 << hi)) !== 0) { canHi = true; break; }
    }
    if (canHi) {
      for (const [k, n] of this.nodes) if ((n.dieMask & (1 << hi)) === 0) this.nodes.delete(k);
    }
  }

  dfs(p, stuck, used, depth) {
    this.record(p, depth);
    const maxDepth = this.double ? 4 : 2;
    if (depth === maxDepth) return;
    for (let i = 0; i < 2; i++) {
      if (this.double) {
        if (i === 1) break;
      } else if ((used & (1 << i)) !== 0) {
        continue;
      }
      const d = this.dice[i];
      const nu = this.double ? used + 1 : used | (1 << i);
      for (let q = BAR; q >= 1; q--) {
        const r = this.step(p, stuck, q, d);
        if (r === null) continue;
        const k = r.pos.key() + "," + r.stuck + "," + nu;
        if (this.seen.has(k)) continue;
        this.seen.add(k);
        this.path[depth] = new Step(q, Math.max(q - d, 0), d);
        this.dfs(r.pos, r.stuck, nu, depth + 1);
      }
    }
  }

  record(p, depth) {
    if (!this.validEnd(p)) return;
    if (!this.every) {
      if (depth < this.best) return;
      if (depth > this.best) {
        this.best = depth;
        this.nodes.clear();
      }
    } else if (depth > this.best) {
      this.best = depth;
    }
    const key = p.key();
    let n = this.nodes.get(key);
    if (n === undefined) {
      n = new Node(p, this.path.slice(), depth, this.count++);
      this.nodes.set(key, n);
    }
    n.depths |= 1 << depth;
    if (depth === 1) n.dieMask |= 1 << this.path[0].die;
  }

  // step moves one checker of the mover from point q by d pips, if the
  // rules (less the relaxed ones) allow it: {pos, stuck} or null.
  step(p, stuck, q, d) {
    const rs = this.rs, me = this.me, op = this.op;
    const mine = p.n[me];
    let avail = mine[q];
    if (avail === 0) return null;
    const bit = 1 << q;
    if (q <= 24) {
      if ((p.pin[me] & bit) !== 0 && !this.relaxed(RELAX_PINNED)) return null;
      if ((stuck & bit) !== 0) {
        avail--;
        if (avail === 0 && !this.relaxed(RELAX_HIT_AND_RUN)) return null;
      }
    }
    if (q !== BAR && mine[BAR] > 0 && !this.relaxed(RELAX_BAR_FIRST)) return null;
    if (rs.fevga && q === 24 && mine[24] < NUM_CHECKERS && !passed(mine) && !this.relaxed(RELAX_FIRST_CHECKER)) return null;
    let t = q - d;
    const np = p.clone();
    const nm = np.n[me], no = np.n[op];
    let ns = stuck;
    if (t >= 1) {
      const o = rs.opposite(t);
      switch (rs.style) {
        case HITTING:
          if (no[o] >= 2) {
            if (!this.relaxed(RELAX_BLOCKED)) return null;
          } else if (no[o] === 1) {
            no[o] = 0;
            no[BAR]++;
            if (!rs.hitAndRun && t <= 6) ns |= 1 << t;
          }
          break;
        case PINNING:
          if (no[o] >= 2 || (no[o] === 1 && (np.pin[me] & (1 << t)) !== 0)) {
            if (!this.relaxed(RELAX_BLOCKED)) return null;
          } else if (no[o] === 1 && (np.pin[op] & (1 << o)) === 0) {
            np.pin[op] |= 1 << o;
          }
          break;
        case RUNNING:
          if (no[o] >= 1 && !this.relaxed(RELAX_BLOCKED)) return null;
          break;
      }
    } else {
      if (!this.allHome(p) && !this.relaxed(RELAX_BEAR_OFF_NOT_HOME)) return null;
      if (t < 0 && !this.relaxed(RELAX_BEAR_OFF_HIGHER)) {
        for (let r = q + 1; r <= 6; r++) if (mine[r] > 0) return null;
      }
      t = OFF;
    }
    nm[q]--;
    nm[t]++;
    if (q <= 24 && nm[q] === 0) {
      np.pin[me] &= ~bit; // a relaxed move of a pinned checker
      ns &= ~bit;
      if (rs.style === PINNING) np.pin[op] &= ~(1 << rs.opposite(q)); // its pinned checker is free
    }
    return { pos: np, stuck: ns };
  }

  // allHome reports whether the mover may bear off: every checker on
  // points 1-6 or borne off, none on the bar, none pinned.
  allHome(p) {
    const mine = p.n[this.me];
    if (mine[BAR] > 0 || p.pin[this.me] !== 0) return false;
    for (let q = 7; q <= 24; q++) if (mine[q] > 0) return false;
    return true;
  }

  // validEnd reports whether a play may end in p (the fevga blocking rules).
  validEnd(p) {
    if (!this.rs.fevga) return true;
    const mine = p.n[this.me], theirs = p.n[this.op];
    if (!this.relaxed(RELAX_START_QUARTER)) {
      let all = true;
      for (let q = 19; q <= 24; q++) if (mine[q] === 0) { all = false; break; }
      if (all) return false;
    }
    if (!this.relaxed(RELAX_PRIME_TRAP)) {
      // held[o]: the mover holds the opponent's point o.
      const held = new Array(25).fill(false);
      for (let q = 1; q <= 24; q++) held[this.rs.opposite(q)] = mine[q] > 0;
      let lowest = 0, highest = 0; // the opponent's checkers on the board
      for (let o = 1; o <= 24; o++) {
        if (theirs[o] > 0) {
          if (lowest === 0) lowest = o;
          highest = o;
        }
      }
      if (lowest !== 0) {
        let run = 0;
        for (let o = 1; o <= 24; o++) {
          if (!held[o]) { run = 0; continue; }
          run++;
          // A prime on o-5..o traps them all if every one is above it.
          if (run >= 6 && lowest > o && highest > o) return false;
        }
      }
    }
    return true;
  }
}

// passed reports whether a fevga player has brought a checker past the
// opponent's starting point (own point 12) or borne one off.
function passed(mine) {
  if (mine[OFF] > 0) return true;
  for (let q = 1; q <= 11; q++) if (mine[q] > 0) return true;
  return false;
}

/** hitsOf returns the points (mover's numbering) where a play from p to np hit or newly pinned an opposing checker. */
export function hitsOf(rs, me, p, np) {
  const op = 1 - me;
  let h = 0;
  for (let q = 1; q <= 24; q++) {
    const o = rs.opposite(q);
    if (rs.style === HITTING) {
      if (p.n[op][o] === 1 && np.n[op][o] === 0) h |= 1 << q;
    } else if (rs.style === PINNING) {
      if ((p.pin[op] & (1 << o)) === 0 && (np.pin[op] & (1 << o)) !== 0) h |= 1 << q;
    }
  }
  return h >>> 0;
}

/**
 * legalPlays returns the legal plays of seat with dice d in p, one per
 * resulting position, sorted by canonical text ({play, text, pos} each),
 * and the number of dice they use.
 */
export function legalPlays(v, p, seat, d) {
  const g = new Gen(v, seat, d, 0, false);
  g.run(p);
  const out = [];
  for (const n of g.nodes.values()) {
    const play = notate(n.steps.slice(0, n.n), hitsOf(g.rs, seat, p, n.pos));
    out.push({ play: play, text: formatPlay(play), pos: n.pos });
  }
  out.sort(function (a, b) { return a.text < b.text ? -1 : a.text > b.text ? 1 : 0; });
  return { plays: out, best: g.best };
}
