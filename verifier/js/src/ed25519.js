// Ed25519 verification with the acceptance rules of Go's crypto/ed25519,
// which the ledger and the Go verifier use: the platform's WebCrypto where
// it has Ed25519, and where it has not, the same equation on @noble/curves'
// point arithmetic, so that no platform says "skipped" for a signature.
//
// Go's rules, which neither of @noble/curves' own verify modes follows
// (strict RFC 8032 refuses small-order and non-canonically encoded keys
// that Go accepts; ZIP 215 is cofactored): the key and R decode leniently
// (any 255-bit y, reduced), S must be below the group order L, and the
// signature holds when the canonical encoding of [S]B − [k]A is the 32
// bytes of R, k = SHA-512(R ‖ A ‖ M) mod L (cofactorless).
// TestEd25519Agreement (publisher) holds both paths to crypto/ed25519 on
// valid, non-reduced, non-canonical and small-order inputs.

import { ed25519 } from "@noble/curves/ed25519.js";
import { sha512 } from "@noble/hashes/sha2.js";

let support = null;

/** webCryptoEd25519 reports whether the platform's WebCrypto verifies Ed25519. */
export async function webCryptoEd25519() {
  if (support === null) {
    try {
      await globalThis.crypto.subtle.importKey("raw", new Uint8Array(32).fill(1), { name: "Ed25519" }, false, ["verify"]);
      support = true;
    } catch (e) {
      support = false;
    }
  }
  return support;
}

/**
 * ed25519Verify reports whether sig (64 bytes) is pub's (32 bytes) Ed25519
 * signature of msg. It never throws on bad input.
 *
 * @param {Uint8Array} pub
 * @param {Uint8Array} msg
 * @param {Uint8Array} sig
 * @returns {Promise<boolean>}
 */
export async function ed25519Verify(pub, msg, sig) {
  if (pub.length !== 32 || sig.length !== 64) return false;
  if (await webCryptoEd25519()) {
    try {
      const k = await globalThis.crypto.subtle.importKey("raw", pub, { name: "Ed25519" }, false, ["verify"]);
      return await globalThis.crypto.subtle.verify({ name: "Ed25519" }, k, sig, msg);
    } catch (e) {
      return false;
    }
  }
  return nobleVerify(pub, msg, sig);
}

const L = ed25519.CURVE.n;

function le(b) {
  let x = 0n;
  for (let i = b.length - 1; i >= 0; i--) x = (x << 8n) | BigInt(b[i]);
  return x;
}

/** nobleVerify is the fallback (Go's rules on @noble/curves' arithmetic), exported for the agreement test. */
export function nobleVerify(pub, msg, sig) {
  if (pub.length !== 32 || sig.length !== 64) return false;
  try {
    const A = ed25519.Point.fromBytes(pub, true);
    const s = le(sig.subarray(32));
    if (s >= L) return false;
    const h = new Uint8Array(64 + msg.length);
    h.set(sig.subarray(0, 32), 0);
    h.set(pub, 32);
    h.set(msg, 64);
    const k = le(sha512(h)) % L;
    const R = ed25519.Point.BASE.multiplyUnsafe(s).subtract(A.multiplyUnsafe(k)).toBytes();
    for (let i = 0; i < 32; i++) if (R[i] !== sig[i]) return false;
    return true;
  } catch (e) {
    return false;
  }
}
