// The evidence file and the proof bundle (docs/SCHEMES.md §7–9,
// docs/FORMATS.md §3), parsed strictly as package verifier's Parse does:
// the first bad field throws an InputError naming it by its JSON path.

import { unhex, utf8Len, HEX32, UUID, MAX_U32 } from "./bytes.js";
import { parseJSON, JSONError, isObj, snippet, at, MAX_SAFE } from "./cjson.js";
import { parseRFC3339 } from "./time.js";
import { parseSignedCheckpoint } from "./note.js";
import { M } from "./render.js";

const te = new TextEncoder();
const MAX_EVIDENCE = 64 << 20;
const MAX_EVENT = 65535;

function InputError(field, m) { this.field = field; this.msg = m; }

// A Parser reads fields and throws an InputError at the first bad one,
// naming it by its JSON path, as package verifier does.
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

export { InputError, parseSettings, parseEvidence, parseLog };
