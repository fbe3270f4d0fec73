// The check of a C2SP tlog-proof@v1 file of one event (package verifier's
// tlogproof.go): the proof that an event is in the log, as a publisher
// exports it from a proof bundle (docs/FORMATS.md §3), its leaf in the
// extra line. The checks are format, log-inclusion (the leaf at its index
// in the checkpoint's tree), log-signature, log-witnesses and
// log-emitter-signatures, as for a bundle, except that log-signature fails
// without a key: an inclusion proof without the log's signature shows
// nothing. It says nothing about the dice of the event's game.

import { eq, hex } from "./bytes.js";
import { M } from "./render.js";
import { pass, fail } from "./check.js";
import { proofLen, inclusionRoot } from "./merkle.js";
import { parseEvent, Reject, BINDING } from "./event.js";
import { parseTlogProof } from "./tlog.js";
import { signatureCheck, witnessCheck, emitterCheck } from "./bundle.js";

function inputError(m) { return { scheme: "", tlogProof: true, checks: [fail("format", m)] }; }

// rejectDetail is what Go's VerifyTlogProof says of a leaf that is not an
// event: the member refused, or, for the whole leaf, the error's text.
function rejectDetail(x, leaf) {
  if (x.field !== "") return x.field;
  if (x.code === "too-large") return "event rejected (too-large): event is " + leaf.length + " bytes, the limit is 65535";
  return "event rejected (" + x.code + "): " + (x.detail || "");
}

/**
 * verifyTlogProof checks tlog-proof file bytes with the options of verify
 * (o: the parsed log key, witness policy, emitter keys) and returns the
 * report, before finish: {scheme, tlogProof, event: {index, leaf}, checks,
 * proves, notProves}.
 */
export async function verifyTlogProof(bytes, o) {
  const p = parseTlogProof(bytes);
  if (!p) return inputError(M("InTlogProof"));
  // The leaf: the extra line's, or, in a tlog-proof without one, the
  // caller's (--leaf); given both, they must be the same bytes.
  let raw = p.extra, where = "extra";
  const given = o.leaf && o.leaf.length > 0 ? o.leaf : null;
  if (raw.length === 0 && !given) return inputError(M("InTlogNoExtra"));
  if (raw.length === 0) { raw = given; where = "leaf"; }
  else if (given && !eq(raw, given)) return inputError(M("InTlogLeafDiffers"));
  let leaf, ev;
  try {
    leaf = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(raw);
  } catch (e) {
    return inputError(M("InTlogNotEvent", "malformed", "event rejected (malformed): the leaf is not UTF-8"));
  }
  try {
    ev = parseEvent(leaf);
  } catch (x) {
    if (!(x instanceof Reject)) throw x;
    return inputError(M("InTlogNotEvent", x.code, rejectDetail(x, raw)));
  }
  const cp = p.tree;
  const r = { scheme: ev.scheme, tlogProof: true, event: { index: p.index, leaf: leaf }, checks: [] };
  r.checks.push(pass("format", M("FmtTlog", ev.type, ev.game, ev.seq)));

  let inc;
  if (p.index >= cp.size) inc = fail("log-inclusion", M("LiBeyond", where, p.index, cp.size));
  else if (p.proof.length !== proofLen(p.index, cp.size)) inc = fail("log-inclusion", M("LiLength", where, p.index, p.proof.length, proofLen(p.index, cp.size), cp.size));
  else if (!eq(await inclusionRoot(p.index, cp.size, raw, p.proof), cp.root)) inc = fail("log-inclusion", M("LiFail", where, p.index, cp.size));
  else inc = pass("log-inclusion", M("LiTlogPass", p.index, cp.size, hex(cp.root)));
  const l = { tree: cp };
  let sig = await signatureCheck(l, o);
  if (sig.status === "skipped") sig = fail("log-signature", M("LsTlogNoKey"));
  const signer = sig.status === "pass" ? (o.logKey ? o.logKey.str : o.signer) : "";
  const wit = await witnessCheck(l, o);
  const cosigs = wit.cosigs || 0;
  delete wit.cosigs;
  const emi = await emitterCheck([ev], function () { return where; }, o);
  r.checks.push(inc, sig, wit, emi);

  r.proves = [M("StTlogIn", p.index, cp.size, signer)];
  r.notProves = [];
  if (wit.status === "pass" && cosigs > 0) r.proves.push(M("StBundleWitnessed", cosigs));
  else r.notProves.push(M("StBundleNoWitness"));
  const binding = BINDING.indexOf(ev.type) >= 0;
  if (emi.status === "pass" && binding) r.proves.push(M("StTlogSigned", ev.emitter));
  else if (binding) r.notProves.push(M("StEmitterUnchecked", ev.emitter));
  r.notProves.push(M("StTlogOnly"));
  return r;
}
