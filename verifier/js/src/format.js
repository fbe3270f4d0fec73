// The evidence a replayed game gives, and the JSON object of an evidence
// that log-agreement compares (package verifier's format.go).

import { hex, unhex } from "./bytes.js";
import { evidenceTime } from "./time.js";
import { M } from "./render.js";
import { InputError, parseSettings } from "./evidence.js";

// evidenceOf derives the evidence from a replayed game, as
// verifier.EvidenceOf does; it returns {err: Message} if it cannot.
function evidenceOf(g) {
  if (!g || !g.closed) return { err: M("EoNotClosed", g ? g.id : "") };
  const ev = { scheme: g.scheme };
  try {
    parseSettings(ev, g.settings, "settings");
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    return { err: M("EoSettings", e.field) };
  }
  if (g.scheme === "tavlarena-v1") {
    ev.tavlarena = { gameId: g.id, seats: g.commit.seats, commitment: unhex(g.commit.commitment), seed: unhex(g.seed),
      contributions: g.contributions.map(unhex), rolls: g.rolls };
  } else if (g.scheme === "anchored-v1") {
    if (!g.beacon) return { err: M("EoNoBeacon", g.id) };
    const c = g.commit;
    ev.anchored = { matchId: c.matchId, gameNo: c.gameNo, tokens: g.tokens, fingerprint: unhex(c.fingerprint), seed: unhex(g.seed),
      sealedAt: c.sealedAt, rolls: g.rolls,
      anchor: { chain: unhex(g.beacon.chain), round: g.beacon.round, signature: unhex(g.beacon.signature), randomness: unhex(g.beacon.randomness) } };
  } else {
    ev.perRoll = { matchId: g.id, rolls: g.records.map(function (r) {
      return { rollId: r.rollId, commitment: unhex(r.commitment), seed: unhex(r.seed), second: unhex(r.second), secondFrom: r.secondFrom, dice: r.dice };
    }) };
  }
  return { ev: ev };
}

// evidenceObject is the JSON object of an evidence's members, in the
// order package verifier writes them; log-agreement compares two.
function evidenceObject(ev) {
  const o = new Map([["format", "dice-proof-v1"], ["scheme", ev.scheme]]);
  if (ev.settings) o.set("settings", ev.settings);
  const rollsValue = function (rolls) { return rolls.map(function (r) { return new Map([["n", r.n], ["dice", r.dice.slice()], ["kind", r.kind]]); }); };
  if (ev.tavlarena) {
    const t = ev.tavlarena;
    o.set("gameId", t.gameId); o.set("seats", t.seats.slice()); o.set("commitment", hex(t.commitment)); o.set("seed", hex(t.seed));
    o.set("contributions", t.contributions.map(hex)); o.set("rolls", rollsValue(t.rolls));
  } else if (ev.anchored) {
    const a = ev.anchored;
    o.set("matchId", a.matchId); o.set("gameNo", a.gameNo); o.set("tokens", a.tokens.slice());
    o.set("fingerprint", hex(a.fingerprint)); o.set("seed", hex(a.seed));
    o.set("anchor", new Map([["chain", hex(a.anchor.chain)], ["round", a.anchor.round], ["signature", hex(a.anchor.signature)], ["randomness", hex(a.anchor.randomness)]]));
    o.set("sealedAt", evidenceTime(a.sealedAt)); o.set("rolls", rollsValue(a.rolls));
  } else {
    const p = ev.perRoll;
    o.set("matchId", p.matchId);
    o.set("rolls", p.rolls.map(function (r) {
      return new Map([["rollId", r.rollId], ["commitment", hex(r.commitment)], ["seed", hex(r.seed)], ["second", hex(r.second)],
        ["secondFrom", r.secondFrom], ["dice", r.dice.slice()]]);
    }));
  }
  return o;
}

export { evidenceOf, evidenceObject };
