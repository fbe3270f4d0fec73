// The per-game state machine (docs/FORMATS.md §1.4, package events'
// Apply), replayed from a bundle's events, with the rules engine (moves.js)
// or without it (bundle.js's log-agreement).

import { hex, unhex } from "./bytes.js";
import { sha256 } from "./sha256.js";
import { Sequence } from "./dice.js";
import { QUICKNET, roundTimeNs, verifyQuicknet } from "./drand.js";

// A Refusal is an event the game's rules refuse (a RejectError of package
// events): its entry and event, the rejection code (FORMATS.md §1.5) and
// field, the rules engine's error where it decided (err), and the game's
// position before the event.
export class Refusal extends Error {
  constructor(entry, ev, code, field, err, position) {
    super("event rejected (" + code + "): " + field + (err ? ": " + err.message : ""));
    this.entry = entry;
    this.ev = ev;
    this.code = code;
    this.field = field;
    this.err = err || null;
    this.position = position;
  }
}

// verified caches the beacons whose BLS signature verified: a bundle's
// game is replayed twice (the log's order, then the moves), as in Go.
const verified = new Map();

async function beaconVerifies(round, sigHex) {
  const k = round + ":" + sigHex;
  if (!verified.has(k)) verified.set(k, await verifyQuicknet(round, unhex(sigHex), sha256));
  return verified.get(k);
}

/**
 * replay applies the events in log order as package events' Apply does
 * for an auditor (no clock checks, beacons verified against drand
 * quicknet): the order of commit, contributions, beacon, rolls, moves, end
 * and reveal, and the roll-sequence rules. It returns the game, or throws
 * a Refusal naming the first event refused.
 *
 * env.moves is the rules engine (rules/movecheck/checker.js's Checker), or
 * null: then moves are checked only structurally (the move names a roll
 * that is played, one move per roll in roll order), as the log-agreement
 * replay does. With it, every move of a game whose moves are logged is
 * checked against the rules, a played roll's move is owed before the next
 * roll and before a finished end, and the end is checked against the final
 * position (FORMATS.md §1.4).
 */
async function replay(evs, env) {
  let g = null;
  for (let i = 0; i < evs.length; i++) g = await apply(g, evs[i], i, env);
  return g;
}

/**
 * apply applies one event, the game's entry i, to g (null before the
 * commit), as package events' Apply does, and returns the game: g itself,
 * changed in place, or for a commit a new one. It throws a Refusal if the
 * game's rules refuse the event; g may then be partly changed (replay the
 * events before it to get it back). env is replay's, and env.now (the
 * time, in nanoseconds since the Unix epoch, a BigInt), if given, adds the
 * ledger's clock checks (the emitter SDK applies its events with its own
 * clock, as the Go SDK does): an anchored-v1 commit sealed after now
 * (sealed-in-future), or whose round existed at now, and a token logged
 * when the round existed (round-already-existed).
 */
async function apply(g, ev, i, env) {
  const moves = (env && env.moves) || null;
  const now = env && typeof env.now === "bigint" ? env.now : null;
  const b = ev.body;
  {
    const refuse = function (code, field, err) { throw new Refusal(i, ev, code, field, err, g ? g.position : null); };
    if (ev.type === "commit") {
      if (g) refuse("game-exists", "game");
      if (ev.seq !== 0) refuse("out-of-order", "seq");
      g = { id: ev.game, scheme: ev.scheme, emitter: ev.emitter, settings: b.settings, commit: b, next: 1,
        opening: b.settings.has("opening") ? b.settings.get("opening") : "western",
        movesLogged: b.settings.get("moves") === "logged", position: null, moveOwed: false, played: 0,
        contributed: [false, false], contributions: [null, null], tokens: [null, null], beacon: null,
        rolls: [], moves: [], end: null, seed: null, closed: false, records: [], pending: null };
      g.seq = new Sequence(g.opening);
      if (ev.scheme === "anchored-v1") {
        if (b.anchor.chain !== QUICKNET) refuse("unknown-chain", "body.anchor.chain");
        if (b.sealedAt >= roundTimeNs(b.anchor.round)) refuse("round-already-existed", "body.anchor.round");
        if (now !== null && b.sealedAt > now) refuse("sealed-in-future", "body.sealedAt");
        if (now !== null && roundTimeNs(b.anchor.round) <= now) refuse("round-already-existed", "body.anchor.round");
      }
      return g;
    }
    if (!g) refuse("unknown-game", "game");
    if (g.emitter !== ev.emitter) refuse("foreign-game", "emitter");
    if (g.scheme !== ev.scheme) refuse("wrong-scheme", "scheme");
    if (g.closed) refuse("game-closed", "type");
    if (ev.seq !== g.next) refuse("out-of-order", "seq");
    if (g.scheme !== "per-roll-v1" && g.end && ev.type !== "reveal") refuse("not-allowed-now", "type");
    g.next++;
    // flow is the rules engine where it follows this game: its moves are
    // logged (Go's Game.flow).
    const flow = g.movesLogged ? moves : null;
    const owed = function () { if (g.moveOwed) refuse("move-owed", "type"); };
    // checkRoll asks the rules engine about a roll the game's history
    // allows: the position after it, and whether its move is owed.
    const checkRoll = function (roll) {
      if (!flow) return;
      let r;
      try {
        r = flow.checkRoll({ scheme: g.scheme, settings: g.settings, position: g.position, roll: roll });
      } catch (e) {
        refuse("not-allowed-now", "type", e);
      }
      g.position = r.position;
      if (r.played && !g.moveOwed) g.played++; // rolls played (the moves check says how many)
      g.moveOwed = r.played;
    };
    switch (ev.type) {
      case "contribution":
        if (now !== null && g.scheme === "anchored-v1" && roundTimeNs(g.commit.anchor.round) <= now) refuse("round-already-existed", "body.token");
        if (g.contributed[b.seat]) refuse("not-allowed-now", "body.seat");
        g.contributed[b.seat] = true;
        if (g.scheme === "tavlarena-v1") g.contributions[b.seat] = b.contribution; else g.tokens[b.seat] = b.token;
        break;
      case "beacon": {
        if (g.beacon) refuse("not-allowed-now", "type");
        if (b.chain !== g.commit.anchor.chain) refuse("bad-beacon", "body.chain");
        if (b.round !== g.commit.anchor.round) refuse("bad-beacon", "body.round");
        if (b.chain !== QUICKNET) refuse("unknown-chain", "body.chain");
        if (!(await beaconVerifies(b.round, b.signature))) refuse("bad-beacon", "body.signature");
        if (hex(await sha256(unhex(b.signature))) !== b.randomness) refuse("bad-beacon", "body.randomness");
        if (g.commit.sealedAt >= roundTimeNs(b.round)) refuse("round-already-existed", "body.round");
        g.beacon = b;
        break;
      }
      case "roll": {
        if (!g.contributed[0] || !g.contributed[1]) refuse("not-allowed-now", "type");
        if (g.scheme === "anchored-v1" && !g.beacon) refuse("not-allowed-now", "type");
        owed();
        const r = { n: b.n, dice: b.dice, kind: b.kind };
        if (!g.seq.accept(r)) refuse("bad-sequence", "body");
        checkRoll(r);
        g.rolls.push(r);
        break;
      }
      case "move": {
        if (g.scheme !== "per-roll-v1") {
          if (b.n >= g.rolls.length) refuse("not-allowed-now", "body.n");
          const r = g.rolls[b.n];
          if (r.kind === "opening" && r.dice[0] === r.dice[1]) refuse("illegal-move", "body.n");
          if (r.kind === "opening" && g.opening === "turkish-reroll") refuse("illegal-move", "body.n");
        } else if (b.n >= g.records.length) {
          refuse("not-allowed-now", "body.n");
        }
        if (g.moves.length > 0 && b.n <= g.moves[g.moves.length - 1].n) refuse("illegal-move", "body.n");
        if (moves) {
          try {
            g.position = moves.checkMove({ scheme: g.scheme, settings: g.settings, position: g.position, move: b });
          } catch (e) {
            refuse("illegal-move", "body.play", e);
          }
        }
        g.moveOwed = false;
        g.moves.push(b);
        break;
      }
      case "end":
        if (g.scheme === "per-roll-v1" && g.pending) refuse("not-allowed-now", "type");
        if (b.result === "finished") {
          owed();
          if (flow) {
            try {
              flow.checkEnd({ scheme: g.scheme, settings: g.settings, position: g.position }, b);
            } catch (e) {
              refuse("wrong-result", "body", e);
            }
          }
        }
        if (g.scheme === "per-roll-v1") g.closed = true;
        g.end = b;
        break;
      case "reveal":
        if (!g.end) refuse("not-allowed-now", "type");
        g.seed = b.seed;
        g.closed = true;
        break;
      case "roll-commit":
        if (g.pending) refuse("not-allowed-now", "type");
        owed();
        if (g.records.some(function (r) { return r.rollId === b.rollId; })) refuse("duplicate-roll-id", "body.rollId");
        g.pending = { rollId: b.rollId, commitment: b.commitment, stage: 1 };
        break;
      case "roll-second":
      case "roll-reveal": {
        const stage = ev.type === "roll-second" ? 1 : 2;
        if (!g.pending) refuse("not-allowed-now", "type");
        if (g.pending.rollId !== b.rollId) refuse("wrong-roll", "body.rollId");
        if (g.pending.stage !== stage) refuse("not-allowed-now", "type");
        if (stage === 1) {
          g.pending.second = b.second; g.pending.secondFrom = b.secondFrom; g.pending.stage = 2;
        } else {
          g.pending.seed = b.seed; g.pending.dice = b.dice;
          checkRoll({ n: g.records.length, dice: b.dice, kind: "" });
          g.records.push(g.pending);
          g.pending = null;
        }
        break;
      }
    }
  }
  return g;
}

export { replay, apply };
