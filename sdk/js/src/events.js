// Building events (docs/FORMATS.md §1) as the Go package events builds
// them: the envelope, the canonical JSON (RFC 8785, zarlog-verify's
// cjson.js, the same code the verifier reads them with), the signature of
// the binding events, and the verifier's own parser run on the result, so
// that an event this module makes is exactly one the ledger and the Go SDK
// accept and would make.

import { hex } from "zarlog-verify/src/bytes.js";
import { parseJSON, canon, isObj } from "zarlog-verify/src/cjson.js";
import { formatTime } from "zarlog-verify/src/time.js";
import { parseEvent, BINDING, Reject } from "zarlog-verify/src/event.js";

const te = new TextEncoder();

/** The domain-separation prefix of every event signature (FORMATS.md §1.3). */
export const SIG_CONTEXT = "zarlog-event-v1\n";

/**
 * A RefusedError says that an event the call would make is not allowed
 * (the ledger would reject it with code), so the SDK did not make it; the
 * game is unchanged. field names the member concerned; cause, where the
 * rules engine decided, its error (an IllegalMoveError names the rule).
 */
export class RefusedError extends Error {
  constructor(message, code, field, cause) {
    super(message, cause ? { cause: cause } : undefined);
    this.name = "RefusedError";
    this.code = code;
    this.field = field || "";
  }
}

/**
 * canonicalSettings parses a settings object (a JSON text, bytes, or a
 * plain object) under the canonical-JSON rules and returns it as a Map, the
 * form the event's body carries (its canonical text is what the
 * commitment hashes). It throws a RefusedError (malformed) otherwise.
 */
export function canonicalSettings(settings) {
  let text;
  if (settings === undefined || settings === null) text = "{}";
  else if (typeof settings === "string") text = settings;
  else if (settings instanceof Uint8Array) text = new TextDecoder().decode(settings);
  else text = JSON.stringify(settings);
  let v;
  try {
    v = parseJSON(text);
  } catch (e) {
    throw new RefusedError("settings: not canonical JSON's values (integers only, no duplicate member): " + (e.kind || "json") + " at " + (e.offset || 0), "malformed", "body.settings");
  }
  if (!isObj(v)) throw new RefusedError("settings: is not a JSON object", "malformed", "body.settings");
  return v;
}

/**
 * makeEvent makes an event's canonical bytes: h is {scheme, game, seq,
 * emitter, time (nanoseconds since the epoch, a BigInt; the event carries
 * it truncated to the millisecond)}, type its type, body a Map of its
 * members; a binding event is signed by signer (whose name must be the
 * emitter). It returns {leaf (the text), bytes (its UTF-8), ev (the event
 * as zarlog-verify's parser reads it back)}, or throws a RefusedError with
 * the parser's code (an event the ledger would refuse as malformed).
 */
export function makeEvent(h, type, body, signer) {
  const o = new Map([
    ["v", 1], ["id", h.game + ":" + h.seq], ["type", type], ["scheme", h.scheme], ["game", h.game],
    ["seq", h.seq], ["emitter", h.emitter], ["time", formatTime(h.time, "ms")], ["body", body],
  ]);
  if (BINDING.indexOf(type) >= 0) {
    if (!signer) throw new RefusedError("a " + type + " event must be signed: no signer", "bad-signature", "sig");
    if (signer.name !== h.emitter) throw new RefusedError("sign event of emitter " + JSON.stringify(h.emitter) + ": the key is named " + JSON.stringify(signer.name), "bad-signature", "sig");
    const sig = signer.sign(te.encode(SIG_CONTEXT + canon(o)));
    if (sig.length !== 64) throw new RefusedError("the signer returned " + sig.length + " bytes, want an Ed25519 signature of 64", "bad-signature", "sig");
    o.set("sig", hex(sig));
  }
  const leaf = canon(o);
  let ev;
  try {
    ev = parseEvent(leaf);
  } catch (e) {
    if (!(e instanceof Reject)) throw e;
    throw new RefusedError("making the " + type + " event: event rejected (" + e.code + "): " + e.field + (e.detail ? ": " + e.detail : ""), e.code, e.field);
  }
  return { leaf: leaf, bytes: te.encode(leaf), ev: ev };
}
