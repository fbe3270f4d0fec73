// The dice of the three schemes (docs/SCHEMES.md §1–5, package
// events/dice): seal codes, what a person types as the expected
// commitment, the rejection rule that turns MAC blocks into dice, each
// scheme's roller, and the roll-sequence rules.

import { concat, eq, unhex, u32, u64, uuidBytes, MAX_U32 } from "./bytes.js";
import { sha256, hmacKey, hmac } from "./sha256.js";

const te = new TextEncoder();

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
function sealCode(c) {
  let v = 0n;
  for (let i = 0; i < 5; i++) v = (v << 8n) | BigInt(c[i]);
  let s = "";
  for (let i = 7; i >= 0; i--) s += CROCKFORD[Number((v >> BigInt(5 * i)) & 31n)];
  return s.slice(0, 4) + "-" + s.slice(4);
}

// parseExpected reads what a person typed: 64 hex digits (any case) or a
// seal code (case ignored, O is 0, I and L are 1, hyphens and spaces
// ignored). It returns null if it is neither.
function parseExpected(s) {
  const t = s.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) {
    const full = unhex(t.toLowerCase());
    return { full: full, seal: sealCode(full), str: t.toLowerCase() };
  }
  let code = "";
  for (const ch of t) {
    if (ch === "-" || ch === " ") continue;
    let c = ch.toUpperCase();
    if (ch >= "a" && ch <= "z") c = ch.toUpperCase(); else if (ch.length !== 1 || ch > "\x7f") return null;
    if (c === "O") c = "0";
    if (c === "I" || c === "L") c = "1";
    if (CROCKFORD.indexOf(c) < 0) return null;
    code += c;
  }
  if (code.length !== 8) return null;
  const seal = code.slice(0, 4) + "-" + code.slice(4);
  return { full: null, seal: seal, str: seal };
}
function expectedMatches(e, c) { return e.full ? eq(e.full, c) : sealCode(c) === e.seal; }

// diceFrom turns MAC blocks into two dice (SCHEMES.md §1).
async function diceFrom(block) {
  const out = [];
  for (let k = 0; k <= MAX_U32; k++) {
    const b = await block(k);
    for (let j = 0; j < b.length && out.length < 2; j++) {
      if (b[j] < 252) out.push((b[j] % 6) + 1);
    }
    if (out.length === 2) return out;
  }
  throw new Error("no dice");
}

const CTX_COMMIT = te.encode("tavlarena-dice-commit-v1");
const CTX_ROLL = te.encode("tavlarena-dice-roll-v1");

// tavlarenaCommitment is a tavlarena-v1 game's commitment (SCHEMES.md §2):
// SHA-256 of the context, the game id, SHA-256 of the canonical settings,
// both seats and the seed.
async function tavlarenaCommitment(gameId, settingsCanonical, seats, seed) {
  const sh = await sha256(te.encode(settingsCanonical));
  return sha256(concat(CTX_COMMIT, uuidBytes(gameId), sh, uuidBytes(seats[0]), uuidBytes(seats[1]), seed));
}

async function tavlarenaRoller(t) {
  const key = await hmacKey(t.seed);
  const prefix = concat(CTX_ROLL, uuidBytes(t.gameId), t.contributions[0], t.contributions[1]);
  return function (n) { return diceFrom(function (k) { return hmac(key, concat(prefix, u32(n), u32(k))); }); };
}
function lp(b) { return concat(u32(b.length), b); }
function anchoredBinding(a) {
  return concat(lp(te.encode(a.matchId)), lp(u32(a.gameNo)), lp(te.encode(a.tokens[0])), lp(te.encode(a.tokens[1])),
    lp(a.anchor.chain), lp(u64(a.anchor.round)), lp(a.anchor.randomness));
}
async function anchoredRoller(a) {
  const key = await hmacKey(a.seed);
  const binding = anchoredBinding(a);
  return function (n) { return diceFrom(function (k) { return hmac(key, concat(binding, u32(n), u32(k))); }); };
}
async function perRollDice(matchId, r) {
  const key = await hmacKey(r.seed);
  const prefix = concat(uuidBytes(matchId), uuidBytes(r.rollId));
  return diceFrom(function (k) { return hmac(key, concat(prefix, u32(k), r.second)); });
}

// The roll sequence (SCHEMES.md §5), as package events/dice has it.
function Sequence(opening) { this.opening = opening; this.next = 0; this.want = "opening"; this.starter = -1; }
Sequence.prototype.accept = function (r) {
  if (r.n !== this.next || r.kind !== this.want) return false;
  if (r.kind === "opening") {
    if (r.dice[0] !== r.dice[1]) {
      this.starter = r.dice[0] > r.dice[1] ? 0 : 1;
      this.want = this.opening === "turkish-reroll" ? "reroll" : "turn";
    }
  } else if (r.kind === "reroll") {
    this.want = "turn";
  }
  this.next++;
  return true;
};

export { CROCKFORD, sealCode, parseExpected, expectedMatches, diceFrom, CTX_COMMIT, tavlarenaCommitment, tavlarenaRoller, anchoredRoller, perRollDice, Sequence };
