// JSON under the canonical-JSON rules of docs/SCHEMES.md §1 (package
// events/cjson): a strict parser, RFC 8785 output, the path of a member,
// and the short rendering of a value the messages quote. It imports
// nothing.

export const MAX_SAFE = 9007199254740991;
const te = new TextEncoder();

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

// at joins a JSON path and a member's name ("log" + "checkpoint" →
// "log.checkpoint").
export function at(path, key) { return path === "" ? key : path + "." + key; }

export { JSONError, parseJSON, isObj, jcsString, canon, snippet };
