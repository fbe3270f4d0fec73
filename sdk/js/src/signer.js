// The emitter's event-signing key: a C2SP signed-note Ed25519 signer key,
// as `zarlog keygen --emitter NAME` writes it (PRIVATE+KEY+<name>+<hash>+
// <base64(0x01 ‖ 32-byte seed)>), whose name is the emitter id. It signs
// with Node's own Ed25519 (node:crypto); Ed25519 signatures are
// deterministic, so they are byte for byte the Go SDK's.

import { createPrivateKey, createPublicKey, sign as nodeSign } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { concat, hex, b64 } from "zarlog-verify/src/bytes.js";
import { sha256 } from "zarlog-verify/src/sha256.js";

const te = new TextEncoder();
const PKCS8_ED25519 = Uint8Array.from([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]);
const EMITTER = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** A KeyError is a signer key that cannot be used. */
export class KeyError extends Error {}

/**
 * A Signer signs binding events with an emitter's Ed25519 key. name is the
 * emitter id; vkey its verifier key (name+hash+key), the line `zarlog serve
 * --emitters` takes.
 */
export class Signer {
  constructor(name, seed, pub, keyHash) {
    this.name = name;
    this.publicKey = pub;
    this.vkey = name + "+" + hex(keyHash) + "+" + Buffer.from(concat(Uint8Array.of(1), pub)).toString("base64");
    Object.defineProperty(this, "key", { value: createPrivateKey({ key: Buffer.from(concat(PKCS8_ED25519, seed)), format: "der", type: "pkcs8" }) });
  }

  /** sign returns the Ed25519 signature (64 bytes) of msg. */
  sign(msg) { return new Uint8Array(nodeSign(null, msg, this.key)); }

  toString() { return "zarlog-emitter signer " + this.name; }
  toJSON() { return { name: this.name, vkey: this.vkey }; }
  [Symbol.for("nodejs.util.inspect.custom")]() { return this.toString(); }
}

/**
 * parseSignerKey reads a signer key's text (signed-note format) and returns
 * its Signer, checking the key hash and that the name is an emitter id. It
 * throws a KeyError naming what is wrong, never the key.
 */
export async function parseSignerKey(text) {
  // Split as note.NewSigner does (at most 5 fields: the key's base64 may hold "+").
  const all = String(text).trim().split("+");
  const parts = all.length > 5 ? all.slice(0, 4).concat([all.slice(4).join("+")]) : all;
  if (parts.length !== 5 || parts[0] !== "PRIVATE" || parts[1] !== "KEY") throw new KeyError("not a signer key (PRIVATE+KEY+name+hash+key)");
  const [, , name, hash, enc] = parts;
  if (!EMITTER.test(name)) throw new KeyError("the key's name " + JSON.stringify(name) + " is not an emitter id ([a-z0-9][a-z0-9-]{0,62})");
  const raw = b64(enc);
  if (!raw || raw.length !== 33 || raw[0] !== 1) throw new KeyError("the key of " + name + " is not an Ed25519 signer key");
  const seed = raw.subarray(1);
  const der = createPublicKey(createPrivateKey({ key: Buffer.from(concat(PKCS8_ED25519, seed)), format: "der", type: "pkcs8" })).export({ format: "der", type: "spki" });
  const pub = new Uint8Array(der.subarray(der.length - 32));
  const h = (await sha256(concat(te.encode(name + "\n"), Uint8Array.of(1), pub))).subarray(0, 4);
  if (!/^[0-9a-fA-F]{8}$/.test(hash) || hex(h) !== hash.toLowerCase()) throw new KeyError("the key hash of " + name + " is " + hash + ", the key's is " + hex(h));
  return new Signer(name, seed, pub, h);
}

/**
 * readSecretFile reads a key file, refusing one that group or others may
 * read (as zarlog does: chmod 600 it).
 */
export async function readSecretFile(path) {
  const st = await stat(path);
  if ((st.mode & 0o077) !== 0) {
    throw new KeyError(path + " is readable by others (mode " + (st.mode & 0o777).toString(8).padStart(4, "0") + "): chmod 600 it");
  }
  return readFile(path);
}

/** loadSigner reads the emitter's signer key file (mode 0600) that `zarlog keygen --emitter` wrote. */
export async function loadSigner(path) {
  const text = new TextDecoder().decode(await readSecretFile(path));
  try {
    return await parseSignerKey(text);
  } catch (e) {
    if (e instanceof KeyError) throw new KeyError("the event key " + path + ": " + e.message);
    throw e;
  }
}
