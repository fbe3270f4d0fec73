// The player's app's own checks, the ones a page cannot make for it: the
// per-roll check of seed 004 (each roll checked the moment it is
// revealed, against the commitment the app received before the roll), and
// the receipt check (the commitment is in a checkpoint signed by the log,
// received before the first roll).

import { parsePolicy, verifyCosignatures, quorumMet } from "./policy.js";
import { hex, unhex, eq } from "./bytes.js";
import { sha256 } from "./sha256.js";
import { M } from "./render.js";
import { verifyQuicknet } from "./drand.js";
import { parseLogKey, parseSignedCheckpoint, openNote } from "./note.js";
import { proofLen, inclusionRoot } from "./merkle.js";
import { parseTlogProof } from "./tlog.js";
import { perRollDice } from "./dice.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HEX32 = /^[0-9a-f]{64}$/;
const te = new TextEncoder();

function bytes32(x, what) {
  if (x instanceof Uint8Array && x.length === 32) return x;
  if (typeof x === "string" && HEX32.test(x)) return unhex(x);
  throw new TypeError(what + " must be 32 bytes (a Uint8Array or 64 lower-case hex digits)");
}

/**
 * verifyBeacon reports whether signature (48 bytes, or 96 hex digits) is
 * drand quicknet's BLS signature of round: the check of package
 * events/drand, with the chain's key pinned.
 */
export async function verifyBeacon(round, signature) {
  const sig = typeof signature === "string" ? unhex(signature) : signature;
  if (!sig) return false;
  return verifyQuicknet(round, sig, sha256);
}

/**
 * checkRollReveal is the check a player's app runs on a per-roll-v1 roll
 * the moment it is revealed (docs/SCHEMES.md §4; the Go SDK's CheckRoll).
 *
 * before: {matchId, rollId, commitment} as the app received them before the
 * roll. reveal: {rollId, seed, second, secondFrom, dice} as the server
 * revealed them. sent: the second number the app sent itself, or null when
 * the server made it.
 *
 * It checks, in this order, that the reveal is of the committed roll, that
 * the second number is the app's (and marked "client"), that SHA-256 of the
 * seed is the commitment, and that the dice are the ones the seed gives. It
 * resolves to {ok: true, dice} or {ok: false, part, want, got}, part one of
 * "roll-id", "second", "commitment", "dice".
 */
export async function checkRollReveal(before, reveal, sent) {
  if (!UUID.test(before.matchId) || !UUID.test(before.rollId) || !UUID.test(reveal.rollId)) {
    throw new TypeError("matchId and rollId must be lower-case UUIDs");
  }
  const commitment = bytes32(before.commitment, "before.commitment");
  const seed = bytes32(reveal.seed, "reveal.seed");
  const second = bytes32(reveal.second, "reveal.second");
  const bad = function (part, want, got) { return { ok: false, part: part, want: want, got: got }; };
  if (reveal.rollId !== before.rollId) return bad("roll-id", before.rollId, reveal.rollId);
  if (sent) {
    const s = bytes32(sent, "sent");
    if (!eq(s, second)) return bad("second", hex(s), hex(second));
    if (reveal.secondFrom !== "client") return bad("second", '"secondFrom": "client"', '"secondFrom": ' + JSON.stringify(reveal.secondFrom));
  }
  const h = await sha256(seed);
  if (!eq(h, commitment)) return bad("commitment", hex(commitment), hex(h));
  const d = await perRollDice(before.matchId, { rollId: before.rollId, seed: seed, second: second });
  const got = reveal.dice;
  if (!Array.isArray(got) || got[0] !== d[0] || got[1] !== d[1]) return bad("dice", d[0] + "-" + d[1], String(got && got.join("-")));
  return { ok: true, dice: d };
}

/**
 * checkReceipt checks a ledger's receipt as a player's app does before it
 * trusts that an event was logged (the Go SDK's CheckReceipt). A receipt is
 * a C2SP tlog-proof@v1 of the event (the file the Go SDK's Receipt.Format
 * writes, the log serves at /games/<id>/proofs/<seq>.tlog-proof and
 * zarlog-verify checks): the event's leaf (its extra line), its index, its
 * inclusion proof and the signed checkpoint. receipt is that file's text
 * (or bytes); leaf, if given, is the event as the app knows it (its
 * canonical JSON, a string or bytes) and must be the receipt's. It checks
 * that the checkpoint is a checkpoint note signed by logKey (the log's
 * verifier key, whose name is the log's origin) and that the leaf is at
 * the receipt's index in its tree: the event, these very bytes, is in the
 * log the key signs. A receipt for another event fails, whatever its
 * checkpoint. An app that holds such a receipt for the commit before the
 * first roll knows the game was sealed in the public log before any die
 * was cast.
 *
 * (The form {index, checkpoint, leaf, proof}, proof as hex hashes, of
 * earlier versions is still read; its leaf is then required too.)
 *
 * Given a witness policy (a C2SP tlog-policy file's text), the checkpoint
 * must also carry cosignatures of a quorum of its witnesses: a checkpoint
 * the witnesses have seen cannot be a view shown to this player alone.
 *
 * It resolves to {ok: true, index, size, root, leaf, included: true,
 * cosignatures} or {ok: false, message} (a verifier message: render it
 * with render()).
 */
export async function checkReceipt(receipt, logKey, witnessPolicy, leaf) {
  const key = await parseLogKey(logKey);
  if (!key) return { ok: false, message: M("BrBadLogKey", logKey) };
  let r;
  if (typeof receipt === "string" || receipt instanceof Uint8Array) {
    r = parseTlogProof(typeof receipt === "string" ? te.encode(receipt) : receipt);
    if (!r) return { ok: false, message: M("InTlogProof") };
  } else {
    if (!parseSignedCheckpoint(receipt.checkpoint)) return { ok: false, message: M("InWant", "checkpoint", M("WantCheckpoint"), String(receipt.checkpoint).slice(0, 40)) };
    r = { extra: receipt.leaf === undefined ? null : te.encode(receipt.leaf), index: BigInt(receipt.index),
      proof: (receipt.proof || []).map(function (p) { return bytes32(p, "receipt.proof"); }), checkpoint: receipt.checkpoint };
  }
  let mine = r.extra && r.extra.length > 0 ? r.extra : null;
  if (leaf !== undefined && leaf !== null) {
    const given = typeof leaf === "string" ? te.encode(leaf) : leaf;
    if (mine && !eq(mine, given)) return { ok: false, message: M("InTlogLeafDiffers") };
    mine = given;
  }
  if (!mine) return { ok: false, message: M("InTlogNoExtra") };
  const cp = parseSignedCheckpoint(r.checkpoint);
  if (cp.origin !== key.name) return { ok: false, message: M("LsOrigin", cp.origin, key.name) };
  if (!(await openNote(cp.note, key))) return { ok: false, message: M("LsBad", key.name) };
  const index = r.index;
  if (index >= cp.size) return { ok: false, message: M("LiBeyond", "receipt", Number(index), cp.size) };
  const want = proofLen(index, cp.size);
  if (r.proof.length !== want) return { ok: false, message: M("LiLength", "receipt", Number(index), r.proof.length, want, cp.size) };
  const h = await inclusionRoot(index, cp.size, mine, r.proof);
  if (!eq(h, cp.root)) return { ok: false, message: M("LiFail", "receipt", Number(index), cp.size) };
  const out = { ok: true, index: Number(index), size: Number(cp.size), root: hex(cp.root), leaf: new TextDecoder().decode(mine), included: true, cosignatures: 0 };
  if (witnessPolicy) {
    let p;
    try {
      p = await parsePolicy(witnessPolicy);
    } catch (e) {
      return { ok: false, message: M("BrBadPolicy", String(e.message)) };
    }
    const v = await verifyCosignatures(cp.note, p.witnesses);
    if (!v) return { ok: false, message: M("LwBadCosig") };
    if (!quorumMet(p, v.signed)) return { ok: false, message: M("LwQuorum", v.count, p.witnesses.length) };
    out.cosignatures = v.count;
  }
  return out;
}
