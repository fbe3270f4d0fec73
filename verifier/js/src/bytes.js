// Bytes: hex, base64, big-endian integers, comparison, and the syntax of
// the hex and UUID strings the formats carry. The bottom of the package:
// it imports nothing, and every other module may import it.

export const MAX_U32 = 4294967295;
export const HEX32 = /^[0-9a-f]{64}$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const te = new TextEncoder();

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

// utf8Len returns the length of s in UTF-8 bytes.
export function utf8Len(s) { return te.encode(s).length; }

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

export { hex, unhex, concat, u32, u64, eq, uuidBytes, b64, b64canonical };
