// Signed notes and checkpoints (C2SP signed-note, tlog-checkpoint), as
// package merkle reads them: the note's syntax, the checkpoint's body, a
// log's Ed25519 verifier key, and its signature on a note.

import { concat, eq, hex, b64, b64canonical, utf8Len } from "./bytes.js";
import { sha256 } from "./sha256.js";
import { ed25519Verify } from "./ed25519.js";

const te = new TextEncoder();
const MAX_NOTE = 64 << 10;

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

export { checkLine, isKeyName, splitNote, parseCheckpoint, parseSignedCheckpoint, parseLogKey, openNote };
