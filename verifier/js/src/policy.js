// Witness cosignatures: a C2SP tlog-policy file (the logs accepted and the
// quorum of witnesses, in nested k-of-n groups) and C2SP
// tlog-cosignature/v1 signatures (timestamped Ed25519, key type 0x04), as
// package merkle reads and checks them (ParsePolicy, VerifyCosignatures,
// CheckWitnesses).

import { concat, eq, b64canonical } from "./bytes.js";
import { sha256 } from "./sha256.js";
import { ed25519Verify } from "./ed25519.js";

const te = new TextEncoder();
const MAX_ITEMS = 256;
const MAX_TIMESTAMP = (1n << 63n) - 1n;

function keyName(s) { return s !== "" && !/[\s+]/.test(s) && !/[\x00-\x1f\x7f]/.test(s); }

// parseVKey splits <name>+<8 hex>+<base64(type ‖ key)> and checks the key ID.
async function parseVKey(vkey) {
  const i = vkey.indexOf("+"), j = vkey.indexOf("+", i + 1);
  if (i < 0 || j < 0) return null;
  const name = vkey.slice(0, i), hash = vkey.slice(i + 1, j), key = b64canonical(vkey.slice(j + 1));
  if (!keyName(name) || !/^[0-9a-f]{8}$/.test(hash) || !key || key.length < 2) return null;
  const id = (await sha256(concat(te.encode(name + "\n"), key))).subarray(0, 4);
  if (Array.from(id, function (b) { return b.toString(16).padStart(2, "0"); }).join("") !== hash) return null;
  return { name: name, id: id, type: key[0], key: key.subarray(1) };
}

// goQuote and truncate write a name in an error as package merkle does
// (%q; the first 64 bytes and "…"), so that the command line's words for a
// bad --witness-policy are the Go command's.
function goQuote(x) { return JSON.stringify(x); }
function truncate(x) {
  const b = new TextEncoder().encode(x);
  return b.length > 64 ? new TextDecoder().decode(b.subarray(0, 64)) + "…" : x;
}

/**
 * parsePolicy parses a tlog-policy file as package merkle does. It resolves
 * to {logs, witnesses, quorum} or throws an Error naming the line.
 */
export async function parsePolicy(text) {
  if (text.length > 1 << 20) throw new Error("policy of " + text.length + " bytes is larger than " + (1 << 20) + ": malformed");
  const p = { logs: [], witnesses: [], quorum: null };
  const names = new Map();
  const keys = new Set();
  let groups = 0, haveQuorum = false;
  const lines = text.split("\n");
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    const fail = function (why) { throw new Error("policy line " + (n + 1) + ": " + why + ": malformed"); };
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      if ((c < 0x20 && c !== 9) || c === 0x7f) fail("control character 0x" + c.toString(16).padStart(2, "0"));
    }
    const f = line.split(/[ \t]+/).filter(function (x) { return x !== ""; });
    if (f.length === 0 || f[0].startsWith("#")) continue;
    const newName = function (name) {
      if (name === "none") fail("the name none is reserved");
      if (names.has(name)) fail("name " + goQuote(truncate(name)) + " is defined twice");
    };
    switch (f[0]) {
      case "log": {
        if (f.length < 2 || f.length > 3) fail("want log <vkey> [<url>]");
        const k = await parseVKey(f[1]);
        if (!k || k.type !== 0x01 || k.key.length !== 32) fail("log key is not an Ed25519 verifier key");
        const id = "log" + Array.from(k.key).join(",");
        if (keys.has(id)) fail("duplicate log key");
        keys.add(id);
        if (p.logs.length === MAX_ITEMS) fail("more than " + MAX_ITEMS + " logs");
        p.logs.push({ name: k.name, hash: k.id, key: k.key, str: k.name });
        break;
      }
      case "witness": {
        if (f.length < 3 || f.length > 4) fail("want witness <name> <vkey> [<url>]");
        newName(f[1]);
        const k = await parseVKey(f[2]);
        if (!k || k.type !== 0x04 || k.key.length !== 32) fail("witness " + goQuote(f[1]) + " key: not a cosignature/v1 key");
        const id = "witness" + Array.from(k.key).join(",");
        if (keys.has(id)) fail("duplicate witness key");
        keys.add(id);
        if (p.witnesses.length === MAX_ITEMS) fail("more than " + MAX_ITEMS + " witnesses");
        const w = { name: k.name, id: k.id, key: k.key };
        p.witnesses.push(w);
        names.set(f[1], { witness: w });
        break;
      }
      case "group": {
        if (f.length < 4) fail("want group <name> all|any|<k> <name>...");
        newName(f[1]);
        const g = { k: 0, members: [] };
        const seen = new Set();
        for (const m of f.slice(3)) {
          if (!names.has(m)) fail("group " + goQuote(f[1]) + " member " + goQuote(m) + " is not defined above");
          if (seen.has(m)) fail("group " + goQuote(f[1]) + " lists " + goQuote(m) + " twice");
          seen.add(m);
          g.members.push(names.get(m));
        }
        const n = g.members.length;
        if (f[2] === "all") g.k = n;
        else if (f[2] === "any") g.k = 1;
        else if (/^[0-9]+$/.test(f[2]) && Number(f[2]) >= 1 && Number(f[2]) <= n && !/^0[0-9]/.test(f[2])) g.k = Number(f[2]);
        else fail("group " + goQuote(f[1]) + " threshold " + goQuote(f[2]) + " is not all, any or a decimal from 1 to " + n);
        if (++groups > MAX_ITEMS) fail("more than " + MAX_ITEMS + " groups");
        names.set(f[1], g);
        break;
      }
      case "quorum":
        if (f.length !== 2) fail("want quorum <name>");
        if (haveQuorum) fail("second quorum line");
        haveQuorum = true;
        if (f[1] !== "none") {
          if (!names.has(f[1])) fail("quorum " + goQuote(f[1]) + " is not defined above");
          p.quorum = names.get(f[1]);
        }
        break;
      default:
        fail("unknown keyword " + goQuote(truncate(f[0])));
    }
  }
  if (!haveQuorum) throw new Error("policy has no quorum line: malformed");
  return p;
}

function cosignedMessage(t, text) { return te.encode("cosignature/v1\ntime " + t.toString() + "\n" + text); }

/**
 * verifyCosignatures returns how many valid cosignatures of the policy's
 * witnesses the note carries, or null when one of them does not verify (a
 * note to reject, as C2SP signed-note says). note: {text, sigs: [{name,
 * sig}]}.
 */
export async function verifyCosignatures(note, witnesses) {
  const signed = new Set();
  let n = 0;
  for (const s of note.sigs) {
    const w = witnesses.find(function (x) { return x.name === s.name && eq(x.id, s.sig.subarray(0, 4)); });
    if (!w) continue;
    const raw = s.sig;
    if (raw.length !== 4 + 8 + 64) return null;
    const t = new DataView(raw.buffer, raw.byteOffset + 4, 8).getBigUint64(0);
    if (t > MAX_TIMESTAMP) return null;
    if (!(await ed25519Verify(w.key, cosignedMessage(t, note.text), raw.subarray(12)))) return null;
    signed.add(w);
    n++;
  }
  return { count: n, signed: signed };
}

function satisfied(node, signed) {
  if (node.witness) return signed.has(node.witness);
  let k = 0;
  for (const m of node.members) if (satisfied(m, signed)) k++;
  return k >= node.k;
}

/** quorumMet reports whether the witnesses who cosigned satisfy the policy's quorum. */
export function quorumMet(p, signed) { return p.quorum === null || satisfied(p.quorum, signed); }
