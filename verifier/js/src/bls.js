// The drand quicknet beacon check: BLS12-381 with signatures on G1 (48
// bytes, compressed) and the chain's key on G2, the RFC 9380 hash to G1
// with the DST below, over SHA-256 of the round as a big-endian u64. It is
// the check of package events/drand, with the chain's parameters pinned the
// same way: only quicknet, whose key is written here and whose chain hash
// drand.js pins.
//
// The pairing arithmetic is @noble/curves (MIT, pinned in package.json and
// package-lock.json: audited, the library drand's own JavaScript client
// uses). Nothing else of this package depends on it.

import { bls12_381 } from "@noble/curves/bls12-381.js";

/** The League of Entropy quicknet chain's public key (compressed G2, hex). */
export const QUICKNET_PUBLIC_KEY =
  "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a";

const DST = "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_";

let publicKey = null;

/**
 * verifyQuicknet reports whether signature (48 bytes) is quicknet's beacon
 * signature of round. A signature that is not a compressed G1 point, or not
 * on the curve, is false, never an exception.
 *
 * @param {bigint|number} round
 * @param {Uint8Array} signature
 * @param {(b: Uint8Array) => Promise<Uint8Array>} sha256
 * @returns {Promise<boolean>}
 */
export async function verifyQuicknet(round, signature, sha256) {
  if (signature.length !== 48 || (signature[0] & 0x80) === 0) return false;
  const r = new Uint8Array(8);
  new DataView(r.buffer).setBigUint64(0, BigInt(round));
  const msg = await sha256(r);
  try {
    if (publicKey === null) publicKey = bls12_381.G2.Point.fromHex(QUICKNET_PUBLIC_KEY);
    const sig = bls12_381.G1.Point.fromHex(signature);
    const h = bls12_381.shortSignatures.hash(msg, DST);
    return bls12_381.shortSignatures.verify(sig, h, publicKey);
  } catch (e) {
    return false;
  }
}
