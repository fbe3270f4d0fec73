// RFC 6962 inclusion proofs, as package merkle checks them.

import { concat } from "./bytes.js";
import { sha256 } from "./sha256.js";

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

export { proofLen, inclusionRoot };
