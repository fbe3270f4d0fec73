// The Client's checked checkpoint notes (receipt.js, CheckedNotes; the Go
// SDK's TestCheckedNotes and TestCheckedNotesConcurrent): a note's
// signature is checked once, and only for the very same text; the receipts
// of one batched reply, checked at once, share that one check; a note that
// fails is refused for every receipt that carries it and never remembered;
// every receipt's leaf and inclusion proof are still checked. The Ed25519
// verifications are counted at WebCrypto, where zarlog-verify makes them.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash, generateKeyPairSync, sign } from "node:crypto";
import { Receipt, BadReceiptError, CheckedNotes, CHECKED_NOTES_SIZE } from "../src/receipt.js";

const te = new TextEncoder();
const ORIGIN = "example.com/notes";

function sha256(...parts) {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}
const leafHash = function (b) { return sha256(Uint8Array.of(0), b); };
const nodeHash = function (l, r) { return sha256(Uint8Array.of(1), l, r); };
const b64 = function (b) { return Buffer.from(b).toString("base64"); };

// A log key: the verifier key's text and a function signing a checkpoint
// note of size and root.
function logKey(name) {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const pub = new Uint8Array(publicKey.export({ format: "der", type: "spki" })).subarray(12);
  const kh = sha256(te.encode(name + "\n"), Uint8Array.of(1), pub).subarray(0, 4);
  const vkey = name + "+" + Buffer.from(kh).toString("hex") + "+" + b64(Buffer.concat([Buffer.of(1), pub]));
  const note = function (size, root) {
    const text = ORIGIN + "\n" + size + "\n" + b64(root) + "\n";
    const sig = sign(null, te.encode(text), privateKey);
    return text + "\n\u2014 " + name + " " + b64(Buffer.concat([kh, sig])) + "\n";
  };
  return { vkey, note };
}

// flipped returns note with a bit of its signature's bytes flipped.
function flipped(note) {
  const i = note.lastIndexOf(" ");
  const sig = Buffer.from(note.slice(i + 1, -1), "base64");
  sig[10] ^= 1;
  return note.slice(0, i + 1) + sig.toString("base64") + "\n";
}

// Count the Ed25519 verifications made through WebCrypto.
let verified = 0;
const subtle = globalThis.crypto.subtle;
const verify = subtle.verify.bind(subtle);
subtle.verify = function (alg, ...rest) {
  if (alg && (alg === "Ed25519" || alg.name === "Ed25519")) verified++;
  return verify(alg, ...rest);
};

test("receipts: a checkpoint note's signature checked once, only for the same text; receipts checked at once share the check", async function () {
  const { vkey, note } = logKey(ORIGIN);
  const a = te.encode("event a\n"), b = te.encode("event b\n");
  const ha = leafHash(a), hb = leafHash(b);
  const good = note(2, nodeHash(ha, hb));
  const bad = flipped(good);
  const notes = new CheckedNotes();

  // Sixteen receipts under the signed note and sixteen under the broken
  // one, checked at once.
  verified = 0;
  const checks = [];
  for (let i = 0; i < 32; i++) {
    const r = new Receipt("e", null, 0n, [hb], i % 2 === 0 ? good : bad);
    checks.push(r.check(a, vkey, notes).then(function (cp) { return { cp, r }; }, function (e) { return { e }; }));
  }
  const got = await Promise.all(checks);
  for (let i = 0; i < got.length; i++) {
    if (i % 2 === 0) {
      assert.ok(!got[i].e, "receipt " + i + " under the signed note: " + (got[i].e && got[i].e.message));
      assert.equal(got[i].cp.size, 2n);
      assert.equal(got[i].r.signatureChecked, true);
    } else {
      assert.ok(got[i].e instanceof BadReceiptError, "receipt " + i + " under the broken note: " + got[i].e);
      assert.match(got[i].e.message, /not signed by the log's key/);
    }
  }
  assert.equal(verified, 2, "32 receipts under two notes at once: " + verified + " verifications, want one a note");

  // Under the checked note: no verification, but the leaf and the proof
  // still checked.
  verified = 0;
  await new Receipt("e", null, 1n, [ha], good).check(b, vkey, notes);
  await assert.rejects(new Receipt("e", null, 0n, [ha], good).check(a, vkey, notes), BadReceiptError);
  await assert.rejects(new Receipt("e", null, 0n, [hb], good).check(b, vkey, notes), BadReceiptError);
  await assert.rejects(new Receipt("e", b, 0n, [hb], good).check(a, vkey, notes), BadReceiptError);
  await assert.rejects(new Receipt("e", null, 2n, [], good).check(a, vkey, notes), BadReceiptError);
  assert.equal(verified, 0);

  // The broken note was not remembered: checked again, refused again.
  await assert.rejects(new Receipt("e", null, 0n, [hb], bad).check(a, vkey, notes), /not signed by the log's key/);
  assert.equal(verified, 1);

  // A note signed by another key of the same name, and one of another
  // origin: refused.
  const other = logKey(ORIGIN);
  await assert.rejects(new Receipt("e", null, 0n, [hb], other.note(2, nodeHash(ha, hb))).check(a, vkey, notes), BadReceiptError);
  const elsewhere = logKey("example.com/elsewhere");
  await assert.rejects(new Receipt("e", null, 0n, [hb], elsewhere.note(2, nodeHash(ha, hb))).check(a, elsewhere.vkey, notes), /origin/);

  // Past CHECKED_NOTES_SIZE other notes, the first is checked again.
  for (let size = 3; size < 3 + CHECKED_NOTES_SIZE; size++) {
    await notes.open(note(size, new Uint8Array(32).fill(size)), vkey);
  }
  verified = 0;
  await new Receipt("e", null, 0n, [hb], good).check(a, vkey, notes);
  assert.equal(verified, 1, "a note forgotten: " + verified + " verifications, want 1");

  // Without the notes (checkReceipt's path) every receipt is checked in full.
  verified = 0;
  await new Receipt("e", null, 0n, [hb], good).check(a, vkey);
  await new Receipt("e", null, 0n, [hb], good).check(a, vkey);
  assert.equal(verified, 2);
});

// The checkpoint a receipt's check or CheckedNotes.open gives back is the
// caller's own (the Go SDK's TestCheckedNotesCopies): changing its root
// changes neither what the note is remembered as opening to nor what a
// later receipt's proof is checked against.
test("receipts: the checkpoint a check returns is a copy; changing its root does not change a later receipt's check", async function () {
  const { vkey, note } = logKey(ORIGIN);
  const a = te.encode("event a\n"), b = te.encode("event b\n");
  const ha = leafHash(a), hb = leafHash(b);
  const root = nodeHash(ha, hb);
  const good = note(2, root);
  const notes = new CheckedNotes();
  const cp = await new Receipt("e", null, 0n, [hb], good).check(a, vkey, notes);
  assert.deepEqual(cp.root, root);
  cp.root.fill(0);
  const opened = await notes.open(good, vkey);
  assert.deepEqual(opened.root, root, "the remembered checkpoint's root changed with the one a check returned");
  opened.root.set(nodeHash(ha, ha));
  // A later receipt under the same note: its proof still leads to the
  // note's root, and one that leads to the root written in is refused.
  verified = 0;
  await new Receipt("e", null, 1n, [ha], good).check(b, vkey, notes);
  await assert.rejects(new Receipt("e", null, 0n, [ha], good).check(a, vkey, notes), BadReceiptError);
  assert.equal(verified, 0, "the note is still remembered");
  assert.deepEqual((await notes.open(good, vkey)).root, root);
});
