// C2SP tlog-proof@v1 files (https://c2sp.org/tlog-proof), parsed as package
// merkle's ParseTlogProof does: the header line, an optional "extra" line
// (zarlog puts the event's leaf there), the index, the inclusion proof's
// hashes and the signed checkpoint.

import { b64canonical } from "./bytes.js";
import { parseSignedCheckpoint } from "./note.js";

const HEADER = "c2sp.org/tlog-proof@v1";
const MAX_NOTE = 64 << 10;
const MAX_PROOF = 64;

/** isTlogProof reports whether bytes start with the tlog-proof header line (a JSON text cannot). */
export function isTlogProof(bytes) {
  return new TextDecoder().decode(bytes.subarray(0, HEADER.length + 1)) === HEADER + "\n";
}

/**
 * parseTlogProof parses a tlog-proof@v1 file (Uint8Array) strictly. It
 * returns {extra (Uint8Array, empty for none), index (BigInt), proof (32-byte
 * hashes), checkpoint (the note's text), tree (the parsed signed
 * checkpoint)}, or null if the file is malformed. Signatures are not
 * checked here.
 */
export function parseTlogProof(b) {
  if (b.length > MAX_NOTE + 4096) return null;
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(b);
  } catch (e) {
    return null; // the header and lines are ASCII, the note UTF-8
  }
  let rest = text;
  const line = function () {
    const i = rest.indexOf("\n");
    if (i < 0) return null;
    const l = rest.slice(0, i);
    rest = rest.slice(i + 1);
    return l;
  };
  if (line() !== HEADER) return null;
  const p = { extra: new Uint8Array(0), index: 0n, proof: [], checkpoint: "", tree: null };
  let l = line();
  if (l !== null && l.startsWith("extra ")) {
    const extra = b64canonical(l.slice(6));
    if (!extra || extra.length === 0) return null;
    p.extra = extra;
    l = line();
  }
  if (l === null || !l.startsWith("index ")) return null;
  const idx = l.slice(6);
  if (!/^(0|[1-9][0-9]*)$/.test(idx) || BigInt(idx) > 18446744073709551615n) return null;
  p.index = BigInt(idx);
  for (;;) {
    const h = line();
    if (h === null) return null;
    if (h === "") break;
    if (p.proof.length === MAX_PROOF) return null;
    const hash = h.length === 44 ? b64canonical(h) : null;
    if (!hash || hash.length !== 32) return null;
    p.proof.push(hash);
  }
  p.tree = parseSignedCheckpoint(rest);
  if (!p.tree) return null;
  p.checkpoint = rest;
  return p;
}
