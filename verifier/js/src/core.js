// zarlog-verify: the verifier core, an ES module for browsers and Node.
//
// It checks a dice-proof-v1 evidence file or proof bundle (docs/SCHEMES.md
// §7–9, docs/FORMATS.md §3) with the platform's own WebCrypto, the way
// zarlog-verify (Go) does, under the same check names and message ids:
// format, commitment, expected-commitment, anchor, rolls, sequence,
// log-inclusion, log-signature, log-order, log-agreement,
// log-emitter-signatures. The drand beacon's BLS12-381 signature is checked
// with @noble/curves (bls.js); Ed25519 with WebCrypto, or with
// @noble/curves where WebCrypto has none (ed25519.js). What it still cannot
// check is reported as "skipped" with the reason, never as passed:
//
//   - log-witnesses: witness cosignatures (zarlog-verify --witness-policy);
//   - moves: the rules engine is Go (zarlog-verify and the ledger).
//
// Messages are ids of the Go verifier's catalog (package verifier), which
// render() formats in English, Turkish or Arabic.

import { verifyQuicknet, QUICKNET_PUBLIC_KEY } from "./bls.js";
import { ed25519Verify, webCryptoEd25519 } from "./ed25519.js";
import { parsePolicy, verifyCosignatures, quorumMet } from "./policy.js";

const te = new TextEncoder();
const subtle = (globalThis.crypto && globalThis.crypto.subtle) || null;
const MAX_SAFE = 9007199254740991;
const MAX_U32 = 4294967295;
const MAX_EVIDENCE = 64 << 20;
const MAX_EVENT = 65535;
const MAX_NOTE = 64 << 10;

// ---------------------------------------------------------------- messages

function M(id, ...args) { return { id: id, args: args }; }

// goQuote renders a string as Go's %q does for the strings in these
// messages (printable text): a double-quoted string with escapes.
function goQuote(s) { return JSON.stringify(s); }

// render returns message m in language index li (0 en, 1 tr, 2 ar) from
// catalog cat (id -> [en, tr, ar] Go format strings with %[n]s/d/q).
function render(m, cat, li) {
  if (typeof m === "string") return m;
  if (!m) return "";
  const t = cat[m.id];
  if (!t) return m.id + "(" + m.args.join(", ") + ")";
  return t[li].replace(/%%|%\[(\d+)\]([sdqv])/g, function (all, n, verb) {
    if (all === "%%") return "%";
    let a = m.args[Number(n) - 1];
    if (a && typeof a === "object" && a.id) a = render(a, cat, li);
    else if (Array.isArray(a)) a = a.map(function (x) { return render(x, cat, li); }).join(li === 2 ? "؛ " : "; ");
    if (verb === "q") return goQuote(String(a));
    return String(a);
  });
}

// ---------------------------------------------------------------- bytes

function hex(b) {
  let s = "";
  for (let i = 0; i < b.length; i++) s += (b[i] < 16 ? "0" : "") + b[i].toString(16);
  return s;
}
function unhex(s) {
  const b = new Uint8Array(s.length / 2);
  for (let i = 0; i < b.length; i++) b[i] = parseInt(s.substr(2 * i, 2), 16);
  return b;
}
function concat(...parts) {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}
function u32(n) { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, n); return b; }
function u64(n) { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(n)); return b; }
function eq(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
function uuidBytes(s) { return unhex(s.replace(/-/g, "")); }
async function sha256(b) { return new Uint8Array(await subtle.digest("SHA-256", b)); }
async function hmacKey(key) {
  return subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}
async function hmac(k, msg) { return new Uint8Array(await subtle.sign("HMAC", k, msg)); }

// b64 decodes standard base64 with padding; strict: the text must be the
// canonical encoding of the bytes. It returns null on any error.
function b64(s) {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s)) return null;
  let bin;
  try { bin = atob(s); } catch (e) { return null; }
  const b = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) b[i] = bin.charCodeAt(i);
  return b;
}
function b64canonical(s) {
  const b = b64(s);
  if (!b) return null;
  let bin = "";
  for (let i = 0; i < b.length; i++) bin += String.fromCharCode(b[i]);
  return btoa(bin) === s ? b : null;
}

// ---------------------------------------------------------------- JSON

// A JSON value is null, a boolean, a safe integer (Number), a string, an
// Array or an object as a Map (member order kept, duplicates refused).
function JSONError(kind, offset) { this.kind = kind; this.offset = offset; }

// parseJSON parses text under the canonical-JSON value rules of
// SCHEMES.md §1: one value, integers only within ±(2^53−1), no duplicate
// key, nesting at most 64 deep, no lone surrogate.
function parseJSON(s) {
  let i = 0;
  const ws = function () { while (i < s.length && (s[i] === " " || s[i] === "\t" || s[i] === "\n" || s[i] === "\r")) i++; };
  const fail = function (kind) { throw new JSONError(kind || "json", i); };
  function value(depth) {
    if (depth > 64) fail("depth");
    if (i >= s.length) fail();
    const c = s[i];
    if (c === "{") return object(depth);
    if (c === "[") return array(depth);
    if (c === '"') return string();
    if (c === "-" || (c >= "0" && c <= "9")) return number();
    for (const [lit, v] of [["true", true], ["false", false], ["null", null]]) {
      if (s.startsWith(lit, i)) { i += lit.length; return v; }
    }
    fail();
  }
  function object(depth) {
    i++;
    const m = new Map();
    ws();
    if (s[i] === "}") { i++; return m; }
    for (;;) {
      ws();
      if (s[i] !== '"') fail();
      const at = i;
      const k = string();
      if (m.has(k)) throw new JSONError("dup", at);
      ws();
      if (s[i] !== ":") fail();
      i++;
      ws();
      m.set(k, value(depth + 1));
      ws();
      if (s[i] === ",") { i++; continue; }
      if (s[i] === "}") { i++; return m; }
      fail();
    }
  }
  function array(depth) {
    i++;
    const a = [];
    ws();
    if (s[i] === "]") { i++; return a; }
    for (;;) {
      ws();
      a.push(value(depth + 1));
      ws();
      if (s[i] === ",") { i++; continue; }
      if (s[i] === "]") { i++; return a; }
      fail();
    }
  }
  function hex4() {
    const h = s.substr(i, 4);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) fail();
    i += 4;
    return parseInt(h, 16);
  }
  function string() {
    i++;
    let out = "";
    for (;;) {
      if (i >= s.length) fail();
      const c = s.charCodeAt(i);
      if (c === 0x22) { i++; return out; }
      if (c < 0x20) fail();
      if (c !== 0x5c) {
        // Raw text: UTF-8 decoding already refused lone surrogates.
        out += s[i++];
        continue;
      }
      i++;
      const e = s[i++];
      switch (e) {
        case '"': out += '"'; break;
        case "\\": out += "\\"; break;
        case "/": out += "/"; break;
        case "b": out += "\b"; break;
        case "f": out += "\f"; break;
        case "n": out += "\n"; break;
        case "r": out += "\r"; break;
        case "t": out += "\t"; break;
        case "u": {
          const u = hex4();
          if (u >= 0xd800 && u <= 0xdbff) {
            if (s[i] !== "\\" || s[i + 1] !== "u") fail();
            i += 2;
            const l = hex4();
            if (l < 0xdc00 || l > 0xdfff) fail();
            out += String.fromCharCode(u, l);
          } else if (u >= 0xdc00 && u <= 0xdfff) {
            fail();
          } else {
            out += String.fromCharCode(u);
          }
          break;
        }
        default: fail();
      }
    }
  }
  function number() {
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(s.slice(i, i + 400));
    if (!m || (m[0] === "-")) fail();
    if (m[2] || m[3]) fail("float");
    const digits = m[1];
    if (digits.length > 16 || Number(digits) > MAX_SAFE) fail("unsafe");
    i += m[0].length;
    const n = Number(m[0]);
    return n === 0 ? 0 : n;
  }
  ws();
  const v = value(0);
  ws();
  if (i !== s.length) fail();
  return v;
}

function isObj(v) { return v instanceof Map; }

// jcsString writes a string as RFC 8785 does.
function jcsString(s) {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    switch (c) {
      case 0x22: out += '\\"'; break;
      case 0x5c: out += "\\\\"; break;
      case 0x08: out += "\\b"; break;
      case 0x0c: out += "\\f"; break;
      case 0x0a: out += "\\n"; break;
      case 0x0d: out += "\\r"; break;
      case 0x09: out += "\\t"; break;
      default:
        out += c < 0x20 ? "\\u00" + (c < 16 ? "0" : "") + c.toString(16) : s[i];
    }
  }
  return out + '"';
}

// canon returns the canonical JSON text of a value (keys sorted by UTF-16
// code units, which is how JavaScript compares strings).
function canon(v) {
  if (v === null) return "null";
  if (v === true) return "true";
  if (v === false) return "false";
  if (typeof v === "number") return String(v);
  if (typeof v === "string") return jcsString(v);
  if (Array.isArray(v)) return "[" + v.map(canon).join(",") + "]";
  const keys = Array.from(v.keys()).sort();
  return "{" + keys.map(function (k) { return jcsString(k) + ":" + canon(v.get(k)); }).join(",") + "}";
}

// snippet is a short rendering of a value, as the Go verifier gives.
function snippet(v) {
  const b = te.encode(canon(v));
  if (b.length <= 40) return canon(v);
  let cut = 40;
  while (cut > 0 && (b[cut] & 0xc0) === 0x80) cut--;
  return new TextDecoder().decode(b.subarray(0, cut)) + "…";
}

// ---------------------------------------------------------------- dice

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

// ---------------------------------------------------------------- drand

const QUICKNET = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971";
const GENESIS = 1692803367n;
const PERIOD = 3n;
function roundTimeNs(r) { return (GENESIS + (BigInt(r) - 1n) * PERIOD) * 1000000000n; }

// ---------------------------------------------------------------- times

function daysFromCivil(y, m, d) {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}
function civilFromDays(z) {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}
function daysIn(y, m) { return [31, (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]; }

// parseRFC3339 returns nanoseconds since the Unix epoch (BigInt), or null.
function parseRFC3339(s) {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/.exec(s);
  if (!m) return null;
  const y = +m[1], mo = +m[2], d = +m[3], h = +m[4], mi = +m[5], se = +m[6];
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || se > 59) return null;
  let off = 0;
  if (!m[8]) {
    const oh = +m[10], om = +m[11];
    if (oh > 23 || om > 59) return null;
    off = (oh * 60 + om) * 60 * (m[9] === "-" ? -1 : 1);
  }
  const secs = BigInt(daysFromCivil(y, mo, d)) * 86400n + BigInt(h * 3600 + mi * 60 + se - off);
  const frac = BigInt(((m[7] || "") + "000000000").slice(0, 9));
  return secs * 1000000000n + frac;
}
function pad(n, w) { return String(n).padStart(w, "0"); }
// formatTime writes ns in UTC: RFC 3339, with fraction digits as Go's
// RFC3339Nano (trailing zeros dropped) or, with ms, exactly 3 (events).
function formatTime(ns, style) {
  let secs = ns / 1000000000n;
  let frac = ns % 1000000000n;
  if (frac < 0n) { frac += 1000000000n; secs -= 1n; }
  let days = secs / 86400n;
  let rem = secs % 86400n;
  if (rem < 0n) { rem += 86400n; days -= 1n; }
  const [y, mo, d] = civilFromDays(Number(days));
  const r = Number(rem);
  let s = pad(y, 4) + "-" + pad(mo, 2) + "-" + pad(d, 2) + "T" + pad(Math.floor(r / 3600), 2) + ":" + pad(Math.floor(r / 60) % 60, 2) + ":" + pad(r % 60, 2);
  const f = pad(frac, 9);
  if (style === "ms") s += "." + f.slice(0, 3);
  else if (style === "nano" && frac !== 0n) s += "." + f.replace(/0+$/, "");
  return s + "Z";
}
function evidenceTime(ns) { return ns % 1000000n === 0n ? formatTime(ns, "ms") : formatTime(ns, "nano"); }

// ---------------------------------------------------------------- parsing

function InputError(field, m) { this.field = field; this.msg = m; }

// A Parser reads fields and throws an InputError at the first bad one,
// naming it by its JSON path, as package verifier does.
function at(path, key) { return path === "" ? key : path + "." + key; }
function need(o, path, key) {
  if (!o.has(key)) throw new InputError(at(path, key), M("InMissing", at(path, key)));
  return o.get(key);
}
function want(field, wantId, v) { throw new InputError(field, M("InWant", field, M(wantId), snippet(v))); }
function object(o, path, key) {
  const v = need(o, path, key);
  if (!isObj(v)) want(at(path, key), "WantObject", v);
  return v;
}
function str(o, path, key) {
  const v = need(o, path, key);
  if (typeof v !== "string") want(at(path, key), "WantString", v);
  return v;
}
function oneOf(o, path, key, wantId, values) {
  const v = need(o, path, key);
  if (typeof v !== "string" || values.indexOf(v) < 0) want(at(path, key), wantId, v);
  return v;
}
function intValue(field, v, lo, hi, wantId) {
  if (typeof v !== "number" || v < lo || v > hi) want(field, wantId, v);
  return v;
}
function integer(o, path, key, lo, hi, wantId) { return intValue(at(path, key), need(o, path, key), lo, hi, wantId); }
function array(o, path, key) {
  const v = need(o, path, key);
  if (!Array.isArray(v)) want(at(path, key), "WantArray", v);
  return v;
}
function pair(o, path, key) {
  const a = array(o, path, key);
  if (a.length !== 2) want(at(path, key), "WantPair", a);
  return a;
}
const HEX32 = /^[0-9a-f]{64}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
function hex32Value(field, v) {
  if (typeof v !== "string" || !HEX32.test(v)) want(field, "WantHex32", v);
  return unhex(v);
}
function hex32(o, path, key) { return hex32Value(at(path, key), need(o, path, key)); }
function uuidValue(field, v) {
  if (typeof v !== "string" || !UUID.test(v)) want(field, "WantUUID", v);
  return v;
}
function uuid(o, path, key) { return uuidValue(at(path, key), need(o, path, key)); }
function utf8Len(s) { return te.encode(s).length; }

function parseSettings(ev, s, path) {
  ev.settings = s;
  ev.opening = "western";
  ev.opponent = "human";
  if (s.has("opening")) ev.opening = oneOf(s, path, "opening", "WantOpening", ["western", "turkish-reroll"]);
  if (s.has("opponent")) ev.opponent = oneOf(s, path, "opponent", "WantOpponent", ["human", "computer"]);
}

function parseDice(o, path) {
  const p = pair(o, path, "dice");
  return [0, 1].map(function (j) { return intValue(path + ".dice[" + j + "]", p[j], 1, 6, "WantDie"); });
}
function parseGameRolls(root) {
  return array(root, "", "rolls").map(function (v, i) {
    const path = "rolls[" + i + "]";
    if (!isObj(v)) want(path, "WantObject", v);
    const n = integer(v, path, "n", 0, MAX_U32, "WantU32");
    const d = parseDice(v, path);
    const k = oneOf(v, path, "kind", "WantKind", ["opening", "reroll", "turn"]);
    return { n: n, dice: d, kind: k };
  });
}

// parseEvidence is verifier.Parse: it returns the evidence or throws an
// InputError.
// firstInvalidUTF8 returns the offset of the first byte that does not
// begin a valid UTF-8 sequence (Go's encoding/json reports the same one).
function firstInvalidUTF8(b) {
  for (let i = 0; i < b.length;) {
    const c = b[i];
    let n = 0, min = 0;
    if (c < 0x80) { i++; continue; }
    else if (c >= 0xc2 && c <= 0xdf) { n = 1; min = 0x80; }
    else if (c >= 0xe0 && c <= 0xef) { n = 2; min = 0x800; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 3; min = 0x10000; }
    else return i;
    if (i + n >= b.length) return i;
    let cp = c & (0x3f >> n);
    for (let k = 1; k <= n; k++) {
      const x = b[i + k];
      if (x === undefined || (x & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (x & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += n + 1;
  }
  return b.length;
}

function parseEvidence(bytes) {
  if (bytes.length > MAX_EVIDENCE) throw new InputError("", M("InTooLarge", MAX_EVIDENCE));
  let text, root;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (e) {
    throw new InputError("", M("InJSON", firstInvalidUTF8(bytes)));
  }
  try {
    root = parseJSON(text);
  } catch (e) {
    if (!(e instanceof JSONError)) throw e;
    const id = { dup: "InJSONDup", float: "InJSONFloat", unsafe: "InJSONUnsafe", depth: "InJSONDepth" }[e.kind] || "InJSON";
    throw new InputError("", M(id, te.encode(text.slice(0, e.offset)).length));
  }
  if (!isObj(root)) throw new InputError("", M("InNotObject"));
  const ev = {};
  oneOf(root, "", "format", "WantFormat", ["dice-proof-v1"]);
  ev.scheme = oneOf(root, "", "scheme", "WantScheme", ["tavlarena-v1", "anchored-v1", "per-roll-v1"]);
  if (root.has("settings") || ev.scheme !== "per-roll-v1") {
    parseSettings(ev, object(root, "", "settings"), "settings");
  } else {
    ev.settings = null; ev.opening = "western"; ev.opponent = "human";
  }
  if (root.has("log")) ev.log = parseLog(object(root, "", "log"), "log");
  if (ev.scheme === "tavlarena-v1") {
    const t = {};
    t.gameId = uuid(root, "", "gameId");
    t.seats = pair(root, "", "seats").map(function (v, i) { return uuidValue("seats[" + i + "]", v); });
    t.commitment = hex32(root, "", "commitment");
    t.seed = hex32(root, "", "seed");
    t.contributions = pair(root, "", "contributions").map(function (v, i) { return hex32Value("contributions[" + i + "]", v); });
    t.rolls = parseGameRolls(root);
    ev.tavlarena = t;
  } else if (ev.scheme === "anchored-v1") {
    const a = {};
    a.matchId = str(root, "", "matchId");
    a.gameNo = integer(root, "", "gameNo", 0, MAX_U32, "WantU32");
    a.tokens = pair(root, "", "tokens").map(function (v, i) {
      if (typeof v !== "string" || utf8Len(v) < 1 || utf8Len(v) > 256) want("tokens[" + i + "]", "WantToken", v);
      return v;
    });
    a.fingerprint = hex32(root, "", "fingerprint");
    a.seed = hex32(root, "", "seed");
    const an = object(root, "", "anchor");
    a.anchor = {};
    a.anchor.chain = hex32(an, "anchor", "chain");
    a.anchor.round = integer(an, "anchor", "round", 0, MAX_SAFE, "WantUint");
    const sig = need(an, "anchor", "signature");
    if (typeof sig !== "string" || !/^(?:[0-9a-f]{2})*$/.test(sig)) want("anchor.signature", "WantHex", sig);
    a.anchor.signature = unhex(sig);
    a.anchor.randomness = hex32(an, "anchor", "randomness");
    const sa = need(root, "", "sealedAt");
    const ns = typeof sa === "string" ? parseRFC3339(sa) : null;
    if (ns === null) want("sealedAt", "WantTime", sa);
    a.sealedAt = ns;
    a.rolls = parseGameRolls(root);
    ev.anchored = a;
  } else {
    const p = {};
    p.matchId = uuid(root, "", "matchId");
    p.rolls = array(root, "", "rolls").map(function (v, i) {
      const path = "rolls[" + i + "]";
      if (!isObj(v)) want(path, "WantObject", v);
      return {
        rollId: uuid(v, path, "rollId"),
        commitment: hex32(v, path, "commitment"),
        seed: hex32(v, path, "seed"),
        second: hex32(v, path, "second"),
        secondFrom: oneOf(v, path, "secondFrom", "WantSecondFrom", ["client", "server"]),
        dice: parseDice(v, path),
      };
    });
    ev.perRoll = p;
  }
  return ev;
}

// parseLog reads the log member of a bundle (FORMATS.md §3).
function parseLog(o, path) {
  const l = {};
  const cp = need(o, path, "checkpoint");
  const parsed = typeof cp === "string" ? parseSignedCheckpoint(cp) : null;
  if (!parsed) want(at(path, "checkpoint"), "WantCheckpoint", cp);
  l.checkpoint = cp;
  l.tree = parsed;
  const hs = array(o, path, "hashes");
  const first = new Map();
  l.hashes = hs.map(function (v, i) {
    const field = at(path, "hashes") + "[" + i + "]";
    const h = hex32Value(field, v);
    if (first.has(v)) throw new InputError(field, M("InDupHash", field, first.get(v)));
    first.set(v, i);
    return h;
  });
  const es = array(o, path, "entries");
  if (es.length === 0) want(at(path, "entries"), "WantEntries", es);
  const used = new Array(l.hashes.length).fill(false);
  l.entries = es.map(function (v, i) {
    const ep = at(path, "entries") + "[" + i + "]";
    if (!isObj(v)) want(ep, "WantObject", v);
    const index = integer(v, ep, "index", 0, MAX_SAFE, "WantUint");
    const leaf = need(v, ep, "leaf");
    if (typeof leaf !== "string" || leaf.length === 0 || utf8Len(leaf) > MAX_EVENT) want(at(ep, "leaf"), "WantLeaf", leaf);
    const refs = array(v, ep, "proof");
    if (refs.length > 64) want(at(ep, "proof"), "WantProof", refs);
    const proof = refs.map(function (r, j) {
      const k = intValue(at(ep, "proof") + "[" + j + "]", r, 0, l.hashes.length - 1, "WantHashRef");
      used[k] = true;
      return k;
    });
    return { index: index, leaf: leaf, leafBytes: te.encode(leaf), proof: proof };
  });
  const unused = used.indexOf(false);
  if (unused >= 0) {
    const field = at(path, "hashes") + "[" + unused + "]";
    throw new InputError(field, M("InUnusedHash", field));
  }
  return l;
}

// ---------------------------------------------------------------- notes

function checkLine(s) {
  if (s === "") return false;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) < 0x20) return false;
  return true;
}
function isKeyName(s) { return s !== "" && s.indexOf(" ") < 0 && s.indexOf("+") < 0 && checkLine(s); }

// splitNote checks the signed-note syntax (C2SP signed-note) and returns
// the text (ending in a newline) and the signature lines, or null.
function splitNote(msg) {
  if (utf8Len(msg) > MAX_NOTE) return null;
  for (let i = 0; i < msg.length; i++) {
    const c = msg.charCodeAt(i);
    if (c < 0x20 && c !== 0x0a) return null;
  }
  const split = msg.lastIndexOf("\n\n");
  if (split < 0) return null;
  const text = msg.slice(0, split + 1);
  const sigs = msg.slice(split + 2);
  if (sigs.length === 0 || sigs[sigs.length - 1] !== "\n") return null;
  const lines = [];
  for (const line of sigs.slice(0, -1).split("\n")) {
    if (!line.startsWith("— ")) return null;
    const body = line.slice(2);
    const sp = body.indexOf(" ");
    if (sp < 0) return null;
    const name = body.slice(0, sp);
    const sig = b64(body.slice(sp + 1));
    if (!isKeyName(name) || !sig || sig.length < 5) return null;
    lines.push({ name: name, sig: sig });
  }
  return { text: text, sigs: lines };
}
function parseCheckpoint(text) {
  if (text === "" || text[text.length - 1] !== "\n") return null;
  const lines = text.slice(0, -1).split("\n");
  if (lines.length < 3 || !checkLine(lines[0])) return null;
  if (!/^(0|[1-9][0-9]*)$/.test(lines[1]) || BigInt(lines[1]) > 18446744073709551615n) return null;
  const root = lines[2].length === 44 ? b64canonical(lines[2]) : null;
  if (!root || root.length !== 32) return null;
  for (const e of lines.slice(3)) if (!checkLine(e)) return null;
  return { origin: lines[0], size: BigInt(lines[1]), root: root };
}
function parseSignedCheckpoint(msg) {
  const n = splitNote(msg);
  if (!n) return null;
  const c = parseCheckpoint(n.text);
  if (!c) return null;
  c.note = n;
  return c;
}

// parseLogKey reads a C2SP signed-note verifier key of type Ed25519:
// name+hash+base64(0x01 ‖ key). It returns null if it is not one.
async function parseLogKey(s) {
  const t = s.trim(), i = t.indexOf("+"), j = t.indexOf("+", i + 1);
  if (i < 0 || j < 0) return null;
  const parts = [t.slice(0, i), t.slice(i + 1, j), t.slice(j + 1)];
  if (!isKeyName(parts[0]) || !/^[0-9a-f]{8}$/.test(parts[1])) return null;
  const k = b64(parts[2]);
  if (!k || k.length !== 33 || k[0] !== 1) return null;
  const h = await sha256(concat(te.encode(parts[0] + "\n"), k));
  if (hex(h.subarray(0, 4)) !== parts[1]) return null;
  return { name: parts[0], hash: h.subarray(0, 4), key: k.subarray(1) };
}

// ed25519Supported reports whether WebCrypto verifies Ed25519 here; where
// it does not, ed25519.js verifies with @noble/curves instead.
const ed25519Supported = webCryptoEd25519;

// openNote reports whether the note has a valid signature by key
// (signed-note: a line with the key's name and key hash).
async function openNote(note, key) {
  let ok = false;
  for (const s of note.sigs) {
    if (s.name !== key.name || !eq(s.sig.subarray(0, 4), key.hash)) continue;
    if (s.sig.length !== 68) return false;
    if (!(await ed25519Verify(key.key, te.encode(note.text), s.sig.subarray(4)))) return false;
    ok = true;
  }
  return ok;
}

// ---------------------------------------------------------------- checks

function check(name, status, detail, extra) {
  const c = { name: name, status: status, detail: detail };
  if (extra) Object.assign(c, extra);
  return c;
}
const pass = function (n, d, x) { return check(n, "pass", d, x); };
const fail = function (n, d, x) { return check(n, "fail", d, x); };
const skipped = function (n, d, x) { return check(n, "skipped", d, x); };
const diceStr = function (d) { return d[0] + "-" + d[1]; };

function formatMsg(ev) {
  if (ev.tavlarena) return M("FmtTavlarena", ev.tavlarena.gameId, ev.tavlarena.rolls.length);
  if (ev.anchored) return M("FmtAnchored", ev.anchored.matchId, ev.anchored.gameNo, ev.anchored.rolls.length);
  return M("FmtPerRoll", ev.perRoll.matchId, ev.perRoll.rolls.length);
}

function expectedCheck(opt, c, passId, failId, skip) {
  if (!opt.expected) return skipped("expected-commitment", skip);
  if (expectedMatches(opt.expected, c)) return pass("expected-commitment", M(passId, hex(c), opt.expected.str));
  return fail("expected-commitment", M(failId, opt.expected.str, hex(c), sealCode(c)));
}

async function gameRollsCheck(roll, rolls) {
  if (rolls.length === 0) return pass("rolls", M("RoNone"));
  let bad = 0, ref = null;
  for (let i = 0; i < rolls.length; i++) {
    const got = await roll(rolls[i].n);
    if (got[0] === rolls[i].dice[0] && got[1] === rolls[i].dice[1]) continue;
    if (bad === 0) ref = { index: i, n: rolls[i].n, claimed: rolls[i].dice, recomputed: got };
    bad++;
  }
  if (bad === 0) return pass("rolls", M("RoPass", rolls.length));
  return fail("rolls", M("RoFail", bad, rolls.length, ref.n, diceStr(ref.claimed), diceStr(ref.recomputed)), { roll: ref });
}

const KIND = { opening: "KindOpening", reroll: "KindReroll", turn: "KindTurn" };
function sequenceCheck(opening, rolls) {
  if (rolls.length === 0) return pass("sequence", M("SqNone"));
  const s = new Sequence(opening);
  for (let i = 0; i < rolls.length; i++) {
    const x = rolls[i];
    const due = s.next, w = s.want;
    if (s.accept(x)) continue;
    const ref = { index: i, n: x.n };
    if (x.n !== due) return fail("sequence", M("SqGap", i, x.n, due), { roll: ref });
    let why;
    if (w === "opening" && i === 0) why = "SqWhyFirst";
    else if (w === "opening") why = "SqWhyTie";
    else if (w === "reroll") why = "SqWhyReroll";
    else if (x.kind === "reroll") why = "SqWhyOneReroll";
    else why = "SqWhyDecided";
    return fail("sequence", M("SqKind", x.n, M(KIND[x.kind]), M(KIND[w]), M(why)), { roll: ref });
  }
  let how;
  if (s.starter < 0) how = "SqOpeningPending";
  else if (opening === "western") how = "SqWestern";
  else if (s.want === "reroll") how = "SqTurkishPending";
  else how = "SqTurkishDone";
  return pass("sequence", M("SqPass", rolls.length, rolls.length - 1, M(how)));
}

async function verifyTavlarena(r, ev, opt) {
  const t = ev.tavlarena;
  r.checks.push(pass("format", formatMsg(ev)));
  const sh = await sha256(te.encode(canon(ev.settings)));
  const got = await sha256(concat(CTX_COMMIT, uuidBytes(t.gameId), sh, uuidBytes(t.seats[0]), uuidBytes(t.seats[1]), t.seed));
  r.commitment = hex(t.commitment);
  if (eq(got, t.commitment)) r.checks.push(pass("commitment", M("CmTavPass", hex(got), sealCode(got))));
  else r.checks.push(fail("commitment", M("CmTavFail", hex(got), sealCode(got), hex(t.commitment), sealCode(t.commitment))));
  const exp = expectedCheck(opt, t.commitment, "ExPass", "ExFail", M("ExSkipTav", sealCode(t.commitment)));
  r.checks.push(exp);
  r.checks.push(await gameRollsCheck(await tavlarenaRoller(t), t.rolls));
  r.checks.push(sequenceCheck(ev.opening, t.rolls));

  // What it proves and does not (package verifier's statements).
  r.proves = [M("StTavDice"), exp.status === "pass" ? M("StSealSeen") : M("StSealIf", sealCode(t.commitment))];
  r.notProves = [];
  if (ev.opponent === "computer") {
    r.proves.push(M("StComputerProves"));
    r.notProves.push(M("StComputerPeek"));
  } else {
    r.proves.push(M("StTavPlayers"));
    r.notProves.push(M("StTavServerKnew"));
  }
  if (exp.status !== "pass") r.notProves.push(M("StNoExpected"));
}

async function verifyAnchored(r, ev, opt) {
  const a = ev.anchored;
  r.checks.push(pass("format", formatMsg(ev)));
  const fp = await sha256(a.seed);
  r.commitment = hex(a.fingerprint);
  if (eq(fp, a.fingerprint)) r.checks.push(pass("commitment", M("CmAncPass", hex(fp))));
  else r.checks.push(fail("commitment", M("CmAncFail", hex(fp), hex(a.fingerprint))));
  r.checks.push(expectedCheck(opt, a.fingerprint, "ExAncPass", "ExAncFail", M("ExSkipAnc", sealCode(a.fingerprint))));

  const b = a.anchor;
  const known = hex(b.chain) === QUICKNET;
  const sealed = formatTime(a.sealedAt, "nano");
  const problems = [];
  let roundTime = "";
  if (!known) {
    problems.push(M("AnUnknownChain", hex(b.chain), QUICKNET));
  } else {
    roundTime = formatTime(roundTimeNs(b.round), "");
    if (b.round === 0) problems.push(M("AnRoundZero"));
    else if (!(await verifyQuicknet(b.round, b.signature, sha256))) problems.push(M("AnBadSig"));
  }
  const rnd = await sha256(b.signature);
  if (!eq(rnd, b.randomness)) problems.push(M("AnBadRand", hex(b.randomness), hex(rnd)));
  if (known && b.round !== 0 && a.sealedAt >= roundTimeNs(b.round)) problems.push(M("AnExisted", roundTime, sealed));
  if (problems.length === 0) {
    r.checks.push(pass("anchor", M("AnPass", b.round, roundTime, sealed)));
  } else {
    r.checks.push(fail("anchor", M("AnFail", b.round, problems)));
  }
  r.checks.push(await gameRollsCheck(await anchoredRoller(a), a.rolls));
  r.checks.push(sequenceCheck(ev.opening, a.rolls));

  const exp = r.checks.find(function (c) { return c.name === "expected-commitment"; });
  r.proves = [M("StAncDice", b.round)];
  r.notProves = [];
  if (exp.status === "pass") r.proves.push(M("StFpSeen"));
  if (ev.opponent === "computer") {
    r.proves.push(M("StAncAnchorComputer", b.round, roundTime, sealed), M("StComputerProves"));
    r.notProves.push(M("StComputerPeekAnc", b.round));
  } else {
    r.proves.push(M("StAncAnchor", b.round, roundTime, sealed));
    r.notProves.push(M("StAncServerKnew", b.round));
  }
  r.notProves.push(M("StAncSealTime"));
  if (exp.status !== "pass") r.notProves.push(M("StNoExpectedAnc"));
}

async function verifyPerRoll(r, ev, opt) {
  const p = ev.perRoll;
  r.checks.push(pass("format", formatMsg(ev)));
  let badC = 0, badR = 0, firstC = null, firstR = null, firstFP = null;
  for (let i = 0; i < p.rolls.length; i++) {
    const x = p.rolls[i];
    const fp = await sha256(x.seed);
    if (!eq(fp, x.commitment)) {
      if (badC === 0) { firstC = { index: i, rollId: x.rollId }; firstFP = fp; }
      badC++;
    }
    const got = await perRollDice(p.matchId, x);
    if (got[0] !== x.dice[0] || got[1] !== x.dice[1]) {
      if (badR === 0) firstR = { index: i, rollId: x.rollId, claimed: x.dice, recomputed: got };
      badR++;
    }
  }
  const n = p.rolls.length;
  if (n === 0) r.checks.push(pass("commitment", M("CmPerNone")));
  else if (badC === 0) r.checks.push(pass("commitment", M("CmPerPass", n)));
  else r.checks.push(fail("commitment", M("CmPerFail", badC, n, firstC.index, firstC.rollId, hex(firstFP), hex(p.rolls[firstC.index].commitment)), { roll: firstC }));

  if (!opt.expected) {
    r.checks.push(skipped("expected-commitment", M("ExSkipPer")));
  } else {
    const seen = p.rolls.findIndex(function (x) { return expectedMatches(opt.expected, x.commitment); });
    if (seen >= 0) r.checks.push(pass("expected-commitment", M("ExPerPass", seen, p.rolls[seen].rollId, opt.expected.str)));
    else r.checks.push(fail("expected-commitment", M("ExPerFail", opt.expected.str)));
  }
  if (n === 0) r.checks.push(pass("rolls", M("RoNone")));
  else if (badR === 0) r.checks.push(pass("rolls", M("RoPass", n)));
  else r.checks.push(fail("rolls", M("RoFailPer", badR, n, firstR.index, firstR.rollId, diceStr(firstR.claimed), diceStr(firstR.recomputed)), { roll: firstR }));

  let seq = n === 0 ? pass("sequence", M("SqNone")) : pass("sequence", M("SqPerPass", n));
  const firstIdx = new Map();
  for (let i = 0; i < n; i++) {
    const id = p.rolls[i].rollId;
    if (firstIdx.has(id)) {
      seq = fail("sequence", M("SqPerDup", i, id, firstIdx.get(id)), { roll: { index: i, rollId: id } });
      break;
    }
    firstIdx.set(id, i);
  }
  r.checks.push(seq);

  const seen = opt.expected ? p.rolls.findIndex(function (x) { return expectedMatches(opt.expected, x.commitment); }) : -1;
  const fromServer = p.rolls.filter(function (x) { return x.secondFrom === "server"; }).length;
  r.proves = [M("StPerDice")];
  if (seen >= 0) r.proves.push(M("StPerSeen", seen));
  r.notProves = [M("StPerBefore")];
  if (fromServer > 0) r.notProves.push(M("StPerServer", fromServer, n));
  if (fromServer < n) r.notProves.push(M("StPerClientLabel"));
  if (ev.opponent === "computer") {
    r.proves.push(M("StComputerProves"));
    r.notProves.push(M("StComputerPeek"));
  }
}

async function verifyScheme(r, ev, opt) {
  if (ev.scheme === "tavlarena-v1") await verifyTavlarena(r, ev, opt);
  else if (ev.scheme === "anchored-v1") await verifyAnchored(r, ev, opt);
  else await verifyPerRoll(r, ev, opt);
}
function diceChecks(scheme) {
  return scheme === "anchored-v1" ? ["commitment", "expected-commitment", "anchor", "rolls", "sequence"]
    : ["commitment", "expected-commitment", "rolls", "sequence"];
}

// ---------------------------------------------------------------- the log

function bitLen(x) { let n = 0; while (x > 0n) { n++; x >>= 1n; } return n; }
function onesCount(x) { let n = 0; while (x > 0n) { n += Number(x & 1n); x >>= 1n; } return n; }
function proofLen(index, size) {
  const inner = bitLen(index ^ (size - 1n));
  return inner + onesCount(index >> BigInt(inner));
}
const nodeHash = function (l, r) { return sha256(concat(Uint8Array.of(1), l, r)); };

// inclusionRoot returns the root that an RFC 6962 inclusion proof (hashes
// from the leaf up, of the length proofLen gives) makes of leaf at index in
// a tree of size leaves (both BigInt).
async function inclusionRoot(index, size, leaf, proof) {
  const inner = bitLen(index ^ (size - 1n));
  let h = await sha256(concat(Uint8Array.of(0), leaf));
  for (let j = 0; j < proof.length; j++) {
    h = j < inner && ((index >> BigInt(j)) & 1n) === 0n ? await nodeHash(h, proof[j]) : await nodeHash(proof[j], h);
  }
  return h;
}

// inclusionCheck checks every entry's RFC 6962 inclusion proof against the
// checkpoint's root and names the first that fails.
async function inclusionCheck(l) {
  const size = l.tree.size, root = l.tree.root;
  for (let i = 0; i < l.entries.length; i++) {
    const e = l.entries[i];
    const what = "log.entries[" + i + "]";
    const index = BigInt(e.index);
    if (index >= size) return fail("log-inclusion", M("LiBeyond", what, e.index, size));
    const want = proofLen(index, size);
    if (e.proof.length !== want) return fail("log-inclusion", M("LiLength", what, e.index, e.proof.length, want, size));
    const h = await inclusionRoot(index, size, e.leafBytes, e.proof.map(function (k) { return l.hashes[k]; }));
    if (!eq(h, root)) return fail("log-inclusion", M("LiFail", what, e.index, size));
  }
  return pass("log-inclusion", M("LiPass", l.entries.length, size, hex(root)));
}

async function signatureCheck(l, opt) {
  if (!opt.logKey && opt.witnessPolicy && opt.witnessPolicy.logs.length > 0) {
    for (const v of opt.witnessPolicy.logs) {
      if (l.tree.origin === v.name && (await openNote(l.tree.note, v))) {
        opt.signer = v.name;
        return pass("log-signature", M("LsPolicyPass", v.name, l.tree.size));
      }
    }
    return fail("log-signature", M("LsPolicyFail", l.tree.origin, opt.witnessPolicy.logs.length));
  }
  if (!opt.logKey) return skipped("log-signature", M("LsNoKey"));
  const name = opt.logKey.name;
  if (l.tree.origin !== name) return fail("log-signature", M("LsOrigin", l.tree.origin, name));
  if (!(await openNote(l.tree.note, opt.logKey))) return fail("log-signature", M("LsBad", opt.logKey.str));
  return pass("log-signature", M("LsPass", opt.logKey.str, l.tree.size));
}

// --- events (FORMATS.md §1), as package events parses them

function Reject(code, field) { this.code = code; this.field = field; }
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
  try { v = parseJSON(leaf); } catch (e) { throw new Reject("malformed", ""); }
  if (canon(v) !== leaf) throw new Reject("not-canonical", "");
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

// orderCheck: the entries are the game's events, each once, in log order.
function orderCheck(l, evs, errs) {
  const es = l.entries;
  for (let i = 1; i < es.length; i++) {
    if (es[i].index <= es[i - 1].index) return fail("log-order", M("LoIndex", i, es[i].index, i - 1, es[i - 1].index));
  }
  let commit = -1;
  for (let i = 0; i < evs.length; i++) {
    if (!evs[i]) return fail("log-order", M("LoNotEvent", i, errs[i].code, errs[i].field));
    if (commit < 0 && evs[i].type === "commit") commit = i;
  }
  if (commit < 0) return fail("log-order", M("LoNoCommit"));
  const game = evs[commit].game;
  for (let i = 0; i < evs.length; i++) {
    if (evs[i].game !== game) return fail("log-order", M("LoForeign", i, evs[i].game, game));
  }
  if (commit > 0) return fail("log-order", M("LoBeforeCommit", 0, evs[0].type, evs[0].seq, es[0].index, es[commit].index));
  let beacon = -1;
  for (let i = 0; i < evs.length; i++) {
    const ev = evs[i];
    if (ev.seq !== i) return fail("log-order", M("LoSeq", i, ev.seq, i));
    if (ev.type === "beacon" && beacon < 0) beacon = i;
    else if (ev.type === "contribution" && ev.scheme === "anchored-v1" && beacon >= 0) {
      return fail("log-order", M("LoTokenAfterBeacon", i, es[i].index, es[beacon].index));
    }
  }
  const last = evs[evs.length - 1];
  const final = last.scheme === "per-roll-v1" ? "end" : "reveal";
  if (last.type !== final) return fail("log-order", M("LoNotFinal", last.seq, last.type, final));
  return pass("log-order", M("LoPass", evs.length, game, last.seq, es[0].index));
}

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

// firstDifference walks two values in b's member order and returns the
// first path where they differ: [path, a, b, kind] or null.
function firstDifference(path, a, b) {
  const join = function (k) { return path === "" ? k : path + "." + k; };
  if (isObj(b) && isObj(a)) {
    for (const [k, v] of b) {
      if (!a.has(k)) return [join(k), null, v, "missing"];
      const d = firstDifference(join(k), a.get(k), v);
      if (d) return d;
    }
    for (const [k, v] of a) if (!b.has(k)) return [join(k), v, null, "extra"];
    return null;
  }
  if (Array.isArray(b) && Array.isArray(a)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const d = firstDifference(path + "[" + i + "]", a[i], b[i]);
      if (d) return d;
    }
    if (a.length < b.length) return [path + "[" + a.length + "]", null, b[a.length], "missing"];
    if (a.length > b.length) return [path + "[" + b.length + "]", a[b.length], null, "extra"];
    return null;
  }
  if (!isObj(a) && !isObj(b) && !Array.isArray(a) && !Array.isArray(b) && a === b) return null;
  return [path, a, b, "value"];
}

function agreementCheck(top, derived, n) {
  const d = firstDifference("", evidenceObject(top), evidenceObject(derived));
  if (!d) return pass("log-agreement", M("LaPass", n));
  if (d[3] === "missing") return fail("log-agreement", M("LaMissing", d[0], snippet(d[2])));
  if (d[3] === "extra") return fail("log-agreement", M("LaExtra", d[0], snippet(d[1])));
  return fail("log-agreement", M("LaDiffer", d[0], snippet(d[1]), snippet(d[2])));
}

async function checkBundle(ev, opt) {
  const l = ev.log;
  const evs = [], errs = [];
  for (const e of l.entries) {
    try { evs.push(parseEvent(e.leaf)); errs.push(null); } catch (x) {
      if (!(x instanceof Reject)) throw x;
      evs.push(null); errs.push(x);
    }
  }
  const res = {};
  const incl = await inclusionCheck(l);
  const sig = await signatureCheck(l, opt);
  const order = orderCheck(l, evs, errs);
  let agree = skipped("log-agreement", M("LaNotOrdered"));
  if (order.status === "pass") {
    let g = null;
    try {
      g = await replay(evs);
    } catch (x) {
      if (!x || x.entry === undefined) throw x;
      agree = fail("log-agreement", M("LaRefused", x.entry, x.ev.seq, x.ev.type, x.code, x.field));
    }
    if (g) {
      res.game = g;
      const d = evidenceOf(g);
      if (d.err) agree = fail("log-agreement", d.err);
      else { res.derived = d.ev; agree = agreementCheck(ev, d.ev, evs.length); }
    }
  }
  const wit = await witnessCheck(l, opt);
  res.cosigs = wit.status === "pass" ? wit.cosigs : 0;
  delete wit.cosigs;
  res.checks = [incl, sig, order, agree, wit,
    await emitterCheck(evs, function (i) { return "log.entries[" + i + "]"; }, opt)];
  const settings = res.derived ? res.derived.settings : null;
  const logged = settings && settings.get && settings.get("moves") === "logged";
  res.moves = skipped("moves", logged ? M("BrMovesLogged") : (res.game ? M("MvNotLogged", res.game.moves.length) : M("MvNoGame")),
    logged ? { browserLimit: "moves" } : undefined);
  return res;
}

// witnessCheck: the checkpoint's cosignatures satisfy the witness policy
// (package verifier's witnessCheck).
async function witnessCheck(l, opt) {
  const p = opt.witnessPolicy;
  if (!p) return skipped("log-witnesses", M("LwNone"));
  const v = await verifyCosignatures(l.tree.note, p.witnesses);
  if (!v) return fail("log-witnesses", M("LwBadCosig"));
  if (!quorumMet(p, v.signed)) return fail("log-witnesses", M("LwQuorum", v.count, p.witnesses.length));
  return pass("log-witnesses", M("LwPass", v.count, p.witnesses.length), { cosigs: v.count });
}

// emitterCheck: every binding event carries a valid signature by a key of
// its emitter among opt.emitterKeys (package verifier's emitterCheck).
async function emitterCheck(evs, name, opt) {
  if (!opt.emitterKeys) return skipped("log-emitter-signatures", M("LeNone"));
  let n = 0, emitter = "";
  for (let i = 0; i < evs.length; i++) {
    const ev = evs[i];
    if (!ev) continue; // not an event: log-order says so
    emitter = ev.emitter;
    const keys = opt.emitterKeys.get(ev.emitter);
    if (!keys) return fail("log-emitter-signatures", M("LeUnknown", ev.emitter));
    if (!ev.binding) continue;
    let ok = false;
    for (const k of keys) {
      if (await ed25519Verify(k, ev.signed, ev.sig)) { ok = true; break; }
    }
    if (!ok) return fail("log-emitter-signatures", M("LeBad", name(i), ev.seq, ev.type, ev.emitter));
    n++;
  }
  return pass("log-emitter-signatures", M("LePass", n, emitter));
}

// ---------------------------------------------------------------- verify

// verify checks a file (Uint8Array). opt: {expected: string, logKey:
// string} as a person typed them (empty: not given), and emitterKeys: the
// game servers' verifier keys (strings). It resolves to a report: {scheme,
// exit, checks, summary, failed, notChecked, firstWrongRoll, evidence}.
async function verify(bytes, opt) {
  opt = opt || {};
  if (!subtle) {
    return finish({ scheme: "", checks: [fail("format", M("BrNoCrypto"))], badOptions: true });
  }
  const o = {};
  if (opt.expected && opt.expected.trim() !== "") {
    o.expected = parseExpected(opt.expected);
    if (!o.expected) return finish({ scheme: "", checks: [fail("format", M("BrBadExpected", opt.expected))], badOptions: true });
  }
  if (opt.emitterKeys && opt.emitterKeys.length > 0) {
    o.emitterKeys = new Map();
    for (const vkey of opt.emitterKeys) {
      const k = await parseLogKey(vkey);
      if (!k) return finish({ scheme: "", checks: [fail("format", M("BrBadLogKey", vkey))], badOptions: true });
      if (!o.emitterKeys.has(k.name)) o.emitterKeys.set(k.name, []);
      o.emitterKeys.get(k.name).push(k.key);
    }
  }
  if (opt.witnessPolicy) {
    try {
      o.witnessPolicy = typeof opt.witnessPolicy === "string" ? await parsePolicy(opt.witnessPolicy) : opt.witnessPolicy;
    } catch (e) {
      return finish({ scheme: "", checks: [fail("format", M("BrBadPolicy", String(e.message)))], badOptions: true });
    }
  }
  if (opt.logKey && opt.logKey.trim() !== "") {
    o.logKey = await parseLogKey(opt.logKey);
    if (!o.logKey) return finish({ scheme: "", checks: [fail("format", M("BrBadLogKey", opt.logKey))], badOptions: true });
    o.logKey.str = o.logKey.name;
  }
  if (new TextDecoder().decode(bytes.subarray(0, 23)) === "c2sp.org/tlog-proof@v1\n") {
    return finish({ scheme: "", checks: [fail("format", M("BrTlogProof"))] });
  }
  let ev;
  try {
    ev = parseEvidence(bytes);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    const c = fail("format", e.msg);
    if (e.field) c.field = e.field;
    return finish({ scheme: "", checks: [c] });
  }
  const r = { scheme: ev.scheme, checks: [] };
  if (!ev.log) {
    await verifyScheme(r, ev, o);
    r.checks.push(
      skipped("log-inclusion", M("LgNoLog")),
      o.logKey ? fail("log-signature", M("LgKeyNoLog")) : skipped("log-signature", M("LgNoLog")),
      skipped("log-order", M("LgNoLog")),
      skipped("log-agreement", M("LgNoLog")),
      o.witnessPolicy ? fail("log-witnesses", M("LgPolicyNoLog")) : skipped("log-witnesses", M("LgNoLog")),
      o.emitterKeys ? fail("log-emitter-signatures", M("LgEmitterNoLog")) : skipped("log-emitter-signatures", M("LgNoLog")),
      skipped("moves", M("MvNoLog")));
    r.evidence = ev;
    return finish(r);
  }
  const b = await checkBundle(ev, o);
  if (b.derived) {
    await verifyScheme(r, b.derived, o);
    r.checks[0].detail = M("FmtBundle", r.checks[0].detail, ev.log.entries.length);
    r.evidence = b.derived;
  } else {
    r.checks.push(pass("format", M("FmtBundle", formatMsg(ev), ev.log.entries.length)));
    for (const name of diceChecks(ev.scheme)) r.checks.push(skipped(name, M("SkNoValues")));
    r.evidence = ev;
  }
  r.checks.push(...b.checks, b.moves);
  r.bundle = true;
  bundleStatements(r, ev.log, b, o);
  return finish(r);
}

// bundleStatements adds what a proof bundle's log checks prove and do not
// prove (package verifier's bundleStatements and movesStatements, without
// the moves replay, which is Go's).
function bundleStatements(r, l, b, opt) {
  if (!b.game) { r.proves = []; r.notProves = []; return; }
  r.proves = r.proves || [];
  r.notProves = r.notProves || [];
  r.proves.push(M("StBundle", l.entries.length, l.entries.length - 1, l.tree.size));
  const sig = b.checks.find(function (c) { return c.name === "log-signature"; });
  if (sig.status === "pass") {
    r.proves.push(M("StBundleSigned", opt.logKey ? opt.logKey.str : opt.signer));
    r.notProves = r.notProves.map(function (m) {
      if (m.id === "StNoExpected") return M("StNoExpectedLog");
      if (m.id === "StNoExpectedAnc") return M("StNoExpectedAncLog");
      return m;
    });
  } else {
    r.notProves.push(M("StBundleNoKey"));
  }
  if (b.cosigs > 0) r.proves.push(M("StBundleWitnessed", b.cosigs));
  else if (sig.status === "pass") r.notProves.push(M("StBundleNoWitness"));
  const emi = b.checks.find(function (c) { return c.name === "log-emitter-signatures"; });
  if (emi.status === "pass") r.proves.push(M("StEmitterSigned", b.game.emitter));
  else r.notProves.push(M("StEmitterUnchecked", b.game.emitter));
  const logged = b.moves.browserLimit === "moves";
  if (!logged) r.notProves.push(M("StMovesNotLogged"));
}

// NEEDS_KEY are the checks of a bundle that need a key or a policy the
// caller may not have given.
const NEEDS_KEY = ["log-signature", "log-witnesses", "log-emitter-signatures"];

// finish adds the exit code, the summary and what was not checked here.
function finish(r) {
  r.exit = 0;
  for (const c of r.checks) {
    if (c.status === "fail") {
      if (c.name === "format") { r.exit = 2; break; }
      r.exit = 1;
    }
  }
  r.failed = r.checks.filter(function (c) { return c.status === "fail"; }).map(function (c) { return c.name; });
  const sig = r.checks.find(function (c) { return c.name === "log-signature"; });
  if (r.exit === 2) r.summary = M(r.badOptions ? "BrBadOptions" : "SuInput");
  else if (r.exit === 1) r.summary = M("SuFail", r.failed.join(", "));
  else if (r.bundle && sig && sig.status === "skipped") r.summary = M("SuPassNoKey");
  else r.summary = M("SuPass");
  // What was not checked on this platform or for want of a key: said, not
  // passed over.
  r.notChecked = r.checks.filter(function (c) {
    return c.status === "skipped" && (c.browserLimit || (r.bundle && NEEDS_KEY.indexOf(c.name) >= 0));
  }).map(function (c) { return c.name; });
  const rolls = r.checks.find(function (c) { return c.name === "rolls" && c.status === "fail"; });
  r.firstWrongRoll = rolls ? rolls.roll : null;
  return r;
}

// rollsOf lists a parsed evidence's rolls for display.
function rollsOf(ev) {
  if (!ev) return [];
  if (ev.tavlarena) return ev.tavlarena.rolls;
  if (ev.anchored) return ev.anchored.rolls;
  if (ev.perRoll) return ev.perRoll.rolls;
  return [];
}

// fileErrorReport returns the report of a file that could not be read, as
// the Go zarlog-verify gives it (verifier.FileErrorReport): the format
// check failed, naming the file, exit 2. err is Node's error (its code:
// ENOENT, EACCES, EPERM, EISDIR) or any other; the latter is told by its
// message (verifier.InputErrorReport).
function fileErrorReport(path, err) {
  const id = { ENOENT: "InNoSuchFile", EACCES: "InPermission", EPERM: "InPermission", EISDIR: "InIsDirectory" }[err && err.code];
  const detail = id ? M(id, path) : M("InReadFailed", String((err && err.message) || err));
  return finish({ scheme: "", checks: [fail("format", detail)] });
}

export {
  verify, fileErrorReport, render, sealCode, rollsOf, ed25519Supported, parseLogKey, parseEvent, canon, parseJSON, hex, unhex, sha256,
  perRollDice, M, CROCKFORD, QUICKNET, QUICKNET_PUBLIC_KEY, parseSignedCheckpoint, openNote, proofLen, inclusionRoot,
  concat, eq, b64canonical, verifyQuicknet,
};
