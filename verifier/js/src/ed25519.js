// Ed25519 verification with the acceptance rules of Go's crypto/ed25519
// (RFC 8032, cofactorless, canonical encodings of the key and of S): the
// platform's WebCrypto where it has Ed25519, and @noble/curves with zip215
// off where it has not, so that no platform says "skipped" for a
// signature. TestEd25519Agreement (Go) and test/ed25519.test.js hold the
// two to crypto/ed25519 on non-canonical and small-order inputs.

import { ed25519 } from "@noble/curves/ed25519";

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

/** nobleVerify is the fallback, exported for the agreement tests. */
export function nobleVerify(pub, msg, sig) {
  try {
    return ed25519.verify(sig, msg, pub, { zip215: false });
  } catch (e) {
    return false;
  }
}
