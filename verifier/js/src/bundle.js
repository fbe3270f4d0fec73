// The proof bundle's log checks (package verifier's bundle.go):
// log-inclusion, log-signature, log-order, log-agreement (the game
// replayed, and its evidence compared with the file's), log-witnesses and
// log-emitter-signatures.

import { hex, eq } from "./bytes.js";
import { isObj, snippet } from "./cjson.js";
import { M } from "./render.js";
import { ed25519Verify } from "./ed25519.js";
import { openNote } from "./note.js";
import { proofLen, inclusionRoot } from "./merkle.js";
import { verifyCosignatures, quorumMet } from "./policy.js";
import { parseEvent, Reject } from "./event.js";
import { replay, Refusal } from "./game.js";
import { movesCheck } from "./moves.js";
import { evidenceOf, evidenceObject } from "./format.js";
import { pass, fail, skipped } from "./check.js";

async function inclusionCheck(l) {
  const size = l.tree.size, root = l.tree.root;
  for (let i = 0; i < l.entries.length; i++) {
    const e = l.entries[i];
    const what = "log.entries[" + i + "]";
    const index = BigInt(e.index);
    if (index >= size) return fail("log-inclusion", M("LiBeyond", what, e.index, size));
    const want = proofLen(index, size);
    if (e.proof.length !== want) return fail("log-inclusion", M("LiLength", what, e.index, e.proof.length, want, size));
    const h = await inclusionRoot(index, size, e.leafBytes, e.proof.map(function (k) { return l.hashes[k]; }));
    if (!eq(h, root)) return fail("log-inclusion", M("LiFail", what, e.index, size));
  }
  return pass("log-inclusion", M("LiPass", l.entries.length, size, hex(root)));
}

async function signatureCheck(l, opt) {
  if (!opt.logKey && opt.witnessPolicy && opt.witnessPolicy.logs.length > 0) {
    for (const v of opt.witnessPolicy.logs) {
      if (l.tree.origin === v.name && (await openNote(l.tree.note, v))) {
        opt.signer = v.name;
        return pass("log-signature", M("LsPolicyPass", v.name, l.tree.size));
      }
    }
    return fail("log-signature", M("LsPolicyFail", l.tree.origin, opt.witnessPolicy.logs.length));
  }
  if (!opt.logKey) return skipped("log-signature", M("LsNoKey"));
  const name = opt.logKey.name;
  if (l.tree.origin !== name) return fail("log-signature", M("LsOrigin", l.tree.origin, name));
  if (!(await openNote(l.tree.note, opt.logKey))) return fail("log-signature", M("LsBad", opt.logKey.str));
  return pass("log-signature", M("LsPass", opt.logKey.str, l.tree.size));
}

function orderCheck(l, evs, errs) {
  const es = l.entries;
  for (let i = 1; i < es.length; i++) {
    if (es[i].index <= es[i - 1].index) return fail("log-order", M("LoIndex", i, es[i].index, i - 1, es[i - 1].index));
  }
  let commit = -1;
  for (let i = 0; i < evs.length; i++) {
    if (!evs[i]) return fail("log-order", M("LoNotEvent", i, errs[i].code, errs[i].field));
    if (commit < 0 && evs[i].type === "commit") commit = i;
  }
  if (commit < 0) return fail("log-order", M("LoNoCommit"));
  const game = evs[commit].game;
  for (let i = 0; i < evs.length; i++) {
    if (evs[i].game !== game) return fail("log-order", M("LoForeign", i, evs[i].game, game));
  }
  if (commit > 0) return fail("log-order", M("LoBeforeCommit", 0, evs[0].type, evs[0].seq, es[0].index, es[commit].index));
  let beacon = -1;
  for (let i = 0; i < evs.length; i++) {
    const ev = evs[i];
    if (ev.seq !== i) return fail("log-order", M("LoSeq", i, ev.seq, i));
    if (ev.type === "beacon" && beacon < 0) beacon = i;
    else if (ev.type === "contribution" && ev.scheme === "anchored-v1" && beacon >= 0) {
      return fail("log-order", M("LoTokenAfterBeacon", i, es[i].index, es[beacon].index));
    }
  }
  const last = evs[evs.length - 1];
  const final = last.scheme === "per-roll-v1" ? "end" : "reveal";
  if (last.type !== final) return fail("log-order", M("LoNotFinal", last.seq, last.type, final));
  return pass("log-order", M("LoPass", evs.length, game, last.seq, es[0].index));
}

// firstDifference walks two values in b's member order and returns the
// first path where they differ: [path, a, b, kind] or null.
function firstDifference(path, a, b) {
  const join = function (k) { return path === "" ? k : path + "." + k; };
  if (isObj(b) && isObj(a)) {
    for (const [k, v] of b) {
      if (!a.has(k)) return [join(k), null, v, "missing"];
      const d = firstDifference(join(k), a.get(k), v);
      if (d) return d;
    }
    for (const [k, v] of a) if (!b.has(k)) return [join(k), v, null, "extra"];
    return null;
  }
  if (Array.isArray(b) && Array.isArray(a)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const d = firstDifference(path + "[" + i + "]", a[i], b[i]);
      if (d) return d;
    }
    if (a.length < b.length) return [path + "[" + a.length + "]", null, b[a.length], "missing"];
    if (a.length > b.length) return [path + "[" + b.length + "]", a[b.length], null, "extra"];
    return null;
  }
  if (!isObj(a) && !isObj(b) && !Array.isArray(a) && !Array.isArray(b) && a === b) return null;
  return [path, a, b, "value"];
}

function agreementCheck(top, derived, n) {
  const d = firstDifference("", evidenceObject(top), evidenceObject(derived));
  if (!d) return pass("log-agreement", M("LaPass", n));
  if (d[3] === "missing") return fail("log-agreement", M("LaMissing", d[0], snippet(d[2])));
  if (d[3] === "extra") return fail("log-agreement", M("LaExtra", d[0], snippet(d[1])));
  return fail("log-agreement", M("LaDiffer", d[0], snippet(d[1]), snippet(d[2])));
}

async function checkBundle(ev, opt) {
  const l = ev.log;
  const evs = [], errs = [];
  for (const e of l.entries) {
    try { evs.push(parseEvent(e.leaf)); errs.push(null); } catch (x) {
      if (!(x instanceof Reject)) throw x;
      evs.push(null); errs.push(x);
    }
  }
  const res = {};
  const incl = await inclusionCheck(l);
  const sig = await signatureCheck(l, opt);
  const order = orderCheck(l, evs, errs);
  let agree = skipped("log-agreement", M("LaNotOrdered"));
  if (order.status === "pass") {
    let g = null;
    try {
      g = await replay(evs, null);
    } catch (x) {
      if (!(x instanceof Refusal)) throw x;
      agree = fail("log-agreement", M("LaRefused", x.entry, x.ev.seq, x.ev.type, x.code, x.field));
    }
    if (g) {
      res.game = g;
      const d = evidenceOf(g);
      if (d.err) agree = fail("log-agreement", d.err);
      else { res.derived = d.ev; agree = agreementCheck(ev, d.ev, evs.length); }
    }
  }
  const wit = await witnessCheck(l, opt);
  res.cosigs = wit.status === "pass" ? wit.cosigs : 0;
  delete wit.cosigs;
  res.checks = [incl, sig, order, agree, wit,
    await emitterCheck(evs, function (i) { return "log.entries[" + i + "]"; }, opt)];
  const m = await movesCheck(evs, res.game || null);
  res.moves = m.check;
  res.movesRes = m.res;
  return res;
}

// witnessCheck: the checkpoint's cosignatures satisfy the witness policy
// (package verifier's witnessCheck).
async function witnessCheck(l, opt) {
  const p = opt.witnessPolicy;
  if (!p) return skipped("log-witnesses", M("LwNone"));
  const v = await verifyCosignatures(l.tree.note, p.witnesses);
  if (!v) return fail("log-witnesses", M("LwBadCosig"));
  if (!quorumMet(p, v.signed)) {
    // With opt.witnessesPending (the log's own pages) a quorum not met yet
    // is not a failure (package verifier's Options.WitnessesPending).
    const notMet = opt.witnessesPending ? skipped : fail;
    if (v.count === 0) return notMet("log-witnesses", M("LwNotYet", p.witnesses.length));
    return notMet("log-witnesses", M("LwQuorum", v.count, p.witnesses.length));
  }
  return pass("log-witnesses", M("LwPass", v.count, p.witnesses.length), { cosigs: v.count });
}

// emitterCheck: every binding event carries a valid signature by a key of
// its emitter among opt.emitterKeys (package verifier's emitterCheck).
async function emitterCheck(evs, name, opt) {
  if (!opt.emitterKeys) return skipped("log-emitter-signatures", M("LeNone"));
  let n = 0, emitter = "";
  for (let i = 0; i < evs.length; i++) {
    const ev = evs[i];
    if (!ev) continue; // not an event: log-order says so
    emitter = ev.emitter;
    const keys = opt.emitterKeys.get(ev.emitter);
    if (!keys) return fail("log-emitter-signatures", M("LeUnknown", ev.emitter));
    if (!ev.binding) continue;
    let ok = false;
    for (const k of keys) {
      if (await ed25519Verify(k, ev.signed, ev.sig)) { ok = true; break; }
    }
    if (!ok) return fail("log-emitter-signatures", M("LeBad", name(i), ev.seq, ev.type, ev.emitter));
    n++;
  }
  return pass("log-emitter-signatures", M("LePass", n, emitter));
}

export { checkBundle, signatureCheck, witnessCheck, emitterCheck };
