// SHA-256 and HMAC-SHA256 with the platform's own WebCrypto (the browser's,
// or Node's globalThis.crypto). It imports nothing.

const subtle = (globalThis.crypto && globalThis.crypto.subtle) || null;

/** hasWebCrypto reports whether the platform has WebCrypto's SubtleCrypto. */
export function hasWebCrypto() { return subtle !== null; }

async function sha256(b) { return new Uint8Array(await subtle.digest("SHA-256", b)); }
async function hmacKey(key) {
  return subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}
async function hmac(k, msg) { return new Uint8Array(await subtle.sign("HMAC", k, msg)); }

export { sha256, hmacKey, hmac };
