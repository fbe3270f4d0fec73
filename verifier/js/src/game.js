// The per-game state machine (docs/FORMATS.md §1.4, package events'
// Apply), replayed from a bundle's events.

import { hex, unhex } from "./bytes.js";
import { sha256 } from "./sha256.js";
import { Sequence } from "./dice.js";
import { QUICKNET, roundTimeNs } from "./drand.js";

// replay applies the events in log order through the structural rules of
// the per-game state machine (FORMATS.md §1.4) that decide what the
// evidence is: the order of commit, contributions, beacon, rolls, end and
// reveal, and the roll-sequence rules. Moves are checked only for the
// roll they name; their legality is the rules engine's (zarlog-verify).
async function replay(evs) {
  let g = null;
  for (let i = 0; i < evs.length; i++) {
    const ev = evs[i], b = ev.body;
    const refuse = function (code, field) { throw { entry: i, ev: ev, code: code, field: field }; };
    if (ev.type === "commit") {
      if (g) refuse("game-exists", "game");
      g = { id: ev.game, scheme: ev.scheme, emitter: ev.emitter, settings: b.settings, commit: b, next: 1,
        opening: b.settings.has("opening") ? b.settings.get("opening") : "western",
        contributed: [false, false], contributions: [null, null], tokens: [null, null], beacon: null,
        rolls: [], moves: [], end: null, seed: null, closed: false, records: [], pending: null };
      g.seq = new Sequence(g.opening);
      if (ev.scheme === "anchored-v1" && b.anchor.chain !== QUICKNET) refuse("unknown-chain", "body.anchor.chain");
      continue;
    }
    if (!g) refuse("unknown-game", "game");
    if (g.emitter !== ev.emitter) refuse("foreign-game", "emitter");
    if (g.scheme !== ev.scheme) refuse("wrong-scheme", "scheme");
    if (g.closed) refuse("game-closed", "type");
    if (ev.seq !== g.next) refuse("out-of-order", "seq");
    if (g.scheme !== "per-roll-v1" && g.end && ev.type !== "reveal") refuse("not-allowed-now", "type");
    g.next++;
    switch (ev.type) {
      case "contribution":
        if (g.contributed[b.seat]) refuse("not-allowed-now", "body.seat");
        g.contributed[b.seat] = true;
        if (g.scheme === "tavlarena-v1") g.contributions[b.seat] = b.contribution; else g.tokens[b.seat] = b.token;
        break;
      case "beacon": {
        if (g.beacon) refuse("not-allowed-now", "type");
        if (b.chain !== g.commit.anchor.chain) refuse("bad-beacon", "body.chain");
        if (b.round !== g.commit.anchor.round) refuse("bad-beacon", "body.round");
        if (b.chain !== QUICKNET) refuse("unknown-chain", "body.chain");
        // The beacon's BLS signature is not checked here (no BLS in
        // WebCrypto): the anchor check says so.
        if (hex(await sha256(unhex(b.signature))) !== b.randomness) refuse("bad-beacon", "body.randomness");
        if (g.commit.sealedAt >= roundTimeNs(b.round)) refuse("round-already-existed", "body.round");
        g.beacon = b;
        break;
      }
      case "roll":
        if (!g.contributed[0] || !g.contributed[1]) refuse("not-allowed-now", "type");
        if (g.scheme === "anchored-v1" && !g.beacon) refuse("not-allowed-now", "type");
        if (!g.seq.accept({ n: b.n, dice: b.dice, kind: b.kind })) refuse("bad-sequence", "body");
        g.rolls.push({ n: b.n, dice: b.dice, kind: b.kind });
        break;
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
        g.moves.push(b);
        break;
      }
      case "end":
        if (g.scheme === "per-roll-v1") {
          if (g.pending) refuse("not-allowed-now", "type");
          g.closed = true;
        }
        g.end = b;
        break;
      case "reveal":
        if (!g.end) refuse("not-allowed-now", "type");
        g.seed = b.seed;
        g.closed = true;
        break;
      case "roll-commit":
        if (g.pending) refuse("not-allowed-now", "type");
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
          g.records.push(g.pending);
          g.pending = null;
        }
        break;
      }
    }
  }
  return g;
}

export { replay };
