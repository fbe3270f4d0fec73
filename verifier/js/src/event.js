// Events (docs/FORMATS.md §1), parsed as package events parses them: the
// canonical JSON of one event, its members exactly, their syntax, and the
// bytes its signature covers.

import { unhex, utf8Len, HEX32, UUID, MAX_U32 } from "./bytes.js";
import { parseJSON, canon, isObj, at, MAX_SAFE } from "./cjson.js";
import { daysIn, parseRFC3339 } from "./time.js";

const te = new TextEncoder();
const MAX_EVENT = 65535;

// A Reject is an event's refusal by the parser: its code, the member
// refused ("" for the whole leaf) and, for the whole leaf, what is wrong.
function Reject(code, field, detail) { this.code = code; this.field = field; this.detail = detail || ""; }
const SCHEMES = ["tavlarena-v1", "anchored-v1", "per-roll-v1"];
const TYPES = {
  "tavlarena-v1": ["commit", "contribution", "roll", "move", "end", "reveal"],
  "anchored-v1": ["commit", "contribution", "beacon", "roll", "move", "end", "reveal"],
  "per-roll-v1": ["commit", "roll-commit", "roll-second", "roll-reveal", "move", "end"],
};
const BINDING = ["commit", "end", "reveal", "roll-commit", "roll-reveal"];
const VARIANTS = ["backgammon", "portes", "tavla", "plakoto", "fevga"];

function parseEvent(leaf) {
  if (utf8Len(leaf) > MAX_EVENT) throw new Reject("too-large", "");
  let v;
  try { v = parseJSON(leaf); } catch (e) { throw new Reject("malformed", "", "canonical json: at byte " + (e.offset === undefined ? 0 : te.encode(leaf.slice(0, e.offset)).length) + ": not canonical JSON"); }
  const c = canon(v);
  if (c !== leaf) {
    const a = te.encode(c), b = te.encode(leaf);
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    throw new Reject("not-canonical", "", "canonical json: at byte " + i + ": text is valid but not canonical (whitespace, key order, escaping or number form)");
  }
  const bad = function (field) { throw new Reject("malformed", field); };
  const exact = function (o, field, keys) {
    if (!isObj(o)) bad(field);
    for (const k of keys) if (!o.has(k)) bad(at(field, k));
    for (const k of o.keys()) if (keys.indexOf(k) < 0) bad(at(field, k));
    return o;
  };
  const int = function (x, field, lo, hi) { if (typeof x !== "number" || x < lo || x > hi) bad(field); return x; };
  const s = function (x, field) { if (typeof x !== "string") bad(field); return x; };
  const h32 = function (x, field) { if (typeof x !== "string" || !HEX32.test(x)) bad(field); return x; };
  const uid = function (x, field) { if (typeof x !== "string" || !UUID.test(x)) bad(field); return x; };
  const dice = function (x, field) {
    if (!Array.isArray(x) || x.length !== 2) bad(field);
    return [int(x[0], field + "[0]", 1, 6), int(x[1], field + "[1]", 1, 6)];
  };
  const time = function (x, field) {
    const m = typeof x === "string" && /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/.exec(x);
    if (!m || +m[2] < 1 || +m[2] > 12 || +m[3] < 1 || +m[3] > daysIn(+m[1], +m[2]) || +m[4] > 23 || +m[5] > 59 || +m[6] > 59) bad(field);
    return parseRFC3339(x);
  };
  const settings = function (x, field) {
    if (!isObj(x)) bad(field);
    const one = function (k, vals) { if (x.has(k) && vals.indexOf(x.get(k)) < 0) bad(field + "." + k); };
    one("opening", ["western", "turkish-reroll"]);
    one("opponent", ["human", "computer"]);
    one("variant", VARIANTS);
    one("moves", ["logged"]);
    if (x.has("moves") && !x.has("variant")) bad(field + ".variant");
    if (x.has("doublingCube")) {
      const c = x.get("doublingCube");
      if (typeof c !== "boolean" || (c && x.has("moves") && x.get("variant") !== "backgammon")) bad(field + ".doublingCube");
    }
    return x;
  };
  const o = exact(v, "", v instanceof Map && v.has("sig")
    ? ["body", "emitter", "game", "id", "scheme", "seq", "sig", "time", "type", "v"]
    : ["body", "emitter", "game", "id", "scheme", "seq", "time", "type", "v"]);
  int(o.get("v"), "v", 1, 1);
  const type = s(o.get("type"), "type");
  const scheme = s(o.get("scheme"), "scheme");
  if (SCHEMES.indexOf(scheme) < 0) bad("scheme");
  if (TYPES[scheme].indexOf(type) < 0) bad("type");
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(s(o.get("id"), "id"))) bad("id");
  const game = s(o.get("game"), "game");
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(game)) bad("game");
  if (scheme !== "anchored-v1" && !UUID.test(game)) bad("game");
  const seq = int(o.get("seq"), "seq", 0, MAX_SAFE);
  const emitter = s(o.get("emitter"), "emitter");
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(emitter)) bad("emitter");
  time(o.get("time"), "time");
  const binding = BINDING.indexOf(type) >= 0;
  if (binding !== o.has("sig")) bad("sig");
  if (binding && !/^[0-9a-f]{128}$/.test(s(o.get("sig"), "sig"))) bad("sig");
  const b = o.get("body"), f = "body";
  const ev = { type: type, scheme: scheme, game: game, seq: seq, emitter: emitter, body: {}, binding: binding };
  if (binding) {
    // The signature covers "zarlog-event-v1\n" and the event without its
    // sig member, canonical (FORMATS.md §1.3).
    ev.sig = unhex(o.get("sig"));
    const unsigned = new Map(o);
    unsigned.delete("sig");
    ev.signed = te.encode("zarlog-event-v1\n" + canon(unsigned));
  }
  const B = ev.body;
  switch (type) {
    case "commit":
      if (scheme === "tavlarena-v1") {
        exact(b, f, ["commitment", "seats", "settings"]);
        B.commitment = h32(b.get("commitment"), f + ".commitment");
        const seats = b.get("seats");
        if (!Array.isArray(seats) || seats.length !== 2) bad(f + ".seats");
        B.seats = [uid(seats[0], f + ".seats[0]"), uid(seats[1], f + ".seats[1]")];
        if (B.seats[0] === B.seats[1]) bad(f + ".seats");
        B.settings = settings(b.get("settings"), f + ".settings");
      } else if (scheme === "anchored-v1") {
        exact(b, f, ["anchor", "fingerprint", "gameNo", "matchId", "sealedAt", "settings"]);
        const a = exact(b.get("anchor"), f + ".anchor", ["chain", "round"]);
        B.anchor = { chain: h32(a.get("chain"), f + ".anchor.chain"), round: int(a.get("round"), f + ".anchor.round", 1, MAX_SAFE) };
        B.fingerprint = h32(b.get("fingerprint"), f + ".fingerprint");
        B.gameNo = int(b.get("gameNo"), f + ".gameNo", 0, MAX_U32);
        B.matchId = s(b.get("matchId"), f + ".matchId");
        if (utf8Len(B.matchId) < 1 || utf8Len(B.matchId) > 256) bad(f + ".matchId");
        B.sealedAt = time(b.get("sealedAt"), f + ".sealedAt");
        B.settings = settings(b.get("settings"), f + ".settings");
      } else {
        exact(b, f, ["settings"]);
        B.settings = settings(b.get("settings"), f + ".settings");
      }
      break;
    case "contribution":
      if (scheme === "tavlarena-v1") {
        exact(b, f, ["contribution", "seat"]);
        B.contribution = h32(b.get("contribution"), f + ".contribution");
      } else {
        exact(b, f, ["seat", "token"]);
        B.token = s(b.get("token"), f + ".token");
        if (utf8Len(B.token) < 1 || utf8Len(B.token) > 256) bad(f + ".token");
      }
      B.seat = int(b.get("seat"), f + ".seat", 0, 1);
      break;
    case "beacon":
      exact(b, f, ["chain", "randomness", "round", "signature"]);
      B.chain = h32(b.get("chain"), f + ".chain");
      B.randomness = h32(b.get("randomness"), f + ".randomness");
      B.round = int(b.get("round"), f + ".round", 1, MAX_SAFE);
      B.signature = s(b.get("signature"), f + ".signature");
      if (!/^(?:[0-9a-f]{2}){1,256}$/.test(B.signature)) bad(f + ".signature");
      break;
    case "roll":
      exact(b, f, ["dice", "kind", "n"]);
      B.dice = dice(b.get("dice"), f + ".dice");
      B.kind = s(b.get("kind"), f + ".kind");
      B.n = int(b.get("n"), f + ".n", 0, MAX_U32);
      if (["opening", "reroll", "turn"].indexOf(B.kind) < 0) bad(f + ".kind");
      break;
    case "move":
      exact(b, f, ["n", "play", "seat"]);
      B.n = int(b.get("n"), f + ".n", 0, MAX_U32);
      B.play = s(b.get("play"), f + ".play");
      if (utf8Len(B.play) > 1024) bad(f + ".play");
      B.seat = int(b.get("seat"), f + ".seat", 0, 1);
      break;
    case "end":
      exact(b, f, ["points", "result", "winner"]);
      B.points = int(b.get("points"), f + ".points", 0, MAX_U32);
      B.result = s(b.get("result"), f + ".result");
      if (["finished", "resigned", "abandoned"].indexOf(B.result) < 0) bad(f + ".result");
      B.winner = b.get("winner") === null ? null : int(b.get("winner"), f + ".winner", 0, 1);
      if (B.winner === null && B.result === "resigned") bad(f + ".winner");
      if (B.winner === null && B.points !== 0) bad(f + ".points");
      break;
    case "reveal":
      exact(b, f, ["seed"]);
      B.seed = h32(b.get("seed"), f + ".seed");
      break;
    case "roll-commit":
      exact(b, f, ["commitment", "rollId"]);
      B.commitment = h32(b.get("commitment"), f + ".commitment");
      B.rollId = uid(b.get("rollId"), f + ".rollId");
      break;
    case "roll-second":
      exact(b, f, ["rollId", "second", "secondFrom"]);
      B.rollId = uid(b.get("rollId"), f + ".rollId");
      B.second = h32(b.get("second"), f + ".second");
      B.secondFrom = s(b.get("secondFrom"), f + ".secondFrom");
      if (B.secondFrom !== "client" && B.secondFrom !== "server") bad(f + ".secondFrom");
      break;
    case "roll-reveal":
      exact(b, f, ["dice", "rollId", "seed"]);
      B.dice = dice(b.get("dice"), f + ".dice");
      B.rollId = uid(b.get("rollId"), f + ".rollId");
      B.seed = h32(b.get("seed"), f + ".seed");
      break;
  }
  return ev;
}

export { Reject, SCHEMES, TYPES, BINDING, VARIANTS, parseEvent };
