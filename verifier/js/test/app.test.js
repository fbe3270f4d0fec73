// The app API: sealCode, checkRollReveal (the per-roll check of seed 004)
// and checkReceipt, on the project's own vectors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { sealCode, checkRollReveal, checkReceipt, verify, render, catalog } from "../src/index.js";
import { unhex } from "../src/bytes.js";

const vectors = new URL("../../../testdata/dice/", import.meta.url);
const read = async (p) => JSON.parse(await readFile(new URL(p, vectors), "utf8"));

test("sealCode of the worked example", () => {
  assert.equal(sealCode(unhex("2b2432fd9fb286c84f19b35297ab6ff81a51fbd05295b96a66ff46e7c27bc0cf")), "5CJ3-5ZCZ");
});

test("checkRollReveal accepts every roll of a per-roll-v1 match and names what is wrong", async () => {
  const m = await read("manifest.json");
  const v = m.vectors.find((x) => x.file.startsWith("evidence/valid/") && x.name.startsWith("per-roll"));
  assert.ok(v, "a valid per-roll-v1 vector");
  const ev = await read(v.file);
  assert.ok(ev.rolls.length > 0);
  for (const r of ev.rolls) {
    const before = { matchId: ev.matchId, rollId: r.rollId, commitment: r.commitment };
    const got = await checkRollReveal(before, r, r.secondFrom === "client" ? r.second : null);
    assert.deepEqual(got, { ok: true, dice: r.dice });
  }
  const r = ev.rolls[0];
  const before = { matchId: ev.matchId, rollId: r.rollId, commitment: r.commitment };
  const otherDice = [r.dice[0] % 6 + 1, r.dice[1]];
  assert.equal((await checkRollReveal(before, { ...r, dice: otherDice }, null)).part, "dice");
  const seed = r.seed.slice(0, 63) + (r.seed[63] === "0" ? "1" : "0");
  assert.equal((await checkRollReveal(before, { ...r, seed }, null)).part, "commitment");
  assert.equal((await checkRollReveal(before, { ...r, rollId: ev.rolls[1] ? ev.rolls[1].rollId : "00000000-0000-4000-8000-000000000000" }, null)).part, "roll-id");
  const sent = "11".repeat(32);
  assert.equal((await checkRollReveal(before, r, sent)).part, "second");
});

// tlogProof formats a bundle entry as a C2SP tlog-proof@v1, the leaf in
// the extra line (as the Go SDK's Receipt.Format and the publisher do).
function tlogProof(b, e, withExtra = true) {
  const b64 = (bytes) => Buffer.from(bytes).toString("base64");
  let s = "c2sp.org/tlog-proof@v1\n";
  if (withExtra) s += "extra " + b64(new TextEncoder().encode(e.leaf)) + "\n";
  s += "index " + e.index + "\n";
  for (const i of e.proof) s += b64(unhex(b.log.hashes[i])) + "\n";
  return s + "\n" + b.log.checkpoint;
}

test("checkReceipt: a receipt is a tlog-proof of the event's bytes", async () => {
  const m = await read("manifest.json");
  const v = m.vectors.find((x) => x.name === "bundle-tavlarena-10-rolls");
  const b = await read(v.file);
  const e = b.log.entries[0], other = b.log.entries[3];
  const file = tlogProof(b, e);
  const ok = await checkReceipt(file, v.logKey);
  assert.equal(ok.ok, true, JSON.stringify(ok));
  assert.equal(ok.included, true);
  assert.equal(ok.index, e.index);
  assert.equal(ok.leaf, e.leaf);
  // The same as bytes, and with the app's own copy of the event.
  assert.equal((await checkReceipt(new TextEncoder().encode(file), v.logKey, undefined, e.leaf)).ok, true);
  // A receipt without the leaf is checked against the app's copy.
  const bare = tlogProof(b, e, false);
  assert.equal((await checkReceipt(bare, v.logKey, undefined, e.leaf)).ok, true);
  assert.equal((await checkReceipt(bare, v.logKey)).message.id, "InTlogNoExtra");
  // A receipt for another event's index proves nothing about this one.
  assert.equal((await checkReceipt(file, v.logKey, undefined, other.leaf)).message.id, "InTlogLeafDiffers");
  assert.equal((await checkReceipt(bare, v.logKey, undefined, other.leaf)).message.id, "LiFail");
  assert.equal((await checkReceipt(tlogProof(b, other), v.logKey, undefined, e.leaf)).message.id, "InTlogLeafDiffers");
  // Changed bytes, a changed index, another key, not a tlog-proof.
  const tampered = await checkReceipt(tlogProof(b, { ...e, leaf: e.leaf.replace('"seq":0', '"seq":1') }), v.logKey);
  assert.equal(tampered.message.id, "LiFail");
  assert.equal((await checkReceipt(file.replace("index " + e.index + "\n", "index 1000000000\n"), v.logKey)).message.id, "LiBeyond");
  const otherKey = await checkReceipt(file, "log.zarlog.example+00000000+Aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  assert.equal(otherKey.ok, false);
  assert.ok(render(otherKey.message, catalog, 1).length > 0, "the message renders in Turkish");
  for (const bad of ["", "c2sp.org/tlog-proof@v1\n", file.replace("index ", "index 0"), file.replace("\n\n", "\n"), file.replace(/^extra (.*)$/m, "extra $1=="), "x" + file]) {
    assert.equal((await checkReceipt(bad, v.logKey)).message.id, "InTlogProof", JSON.stringify(bad.slice(0, 80)));
  }
  assert.equal((await checkReceipt(Uint8Array.of(0xff, 0xfe), v.logKey)).message.id, "InTlogProof");
  // The object form of earlier versions: its leaf is required now.
  const obj = { index: e.index, checkpoint: b.log.checkpoint, leaf: e.leaf, proof: e.proof.map((i) => b.log.hashes[i]) };
  assert.equal((await checkReceipt(obj, v.logKey)).ok, true);
  assert.equal((await checkReceipt({ index: e.index, checkpoint: b.log.checkpoint }, v.logKey)).message.id, "InTlogNoExtra");
});

test("checkReceipt agrees with zarlog-verify on the tlog-proof vectors", async () => {
  const m = await read("manifest.json");
  const vs = m.vectors.filter((x) => x.file.endsWith(".tlog-proof"));
  assert.ok(vs.length >= 5);
  for (const v of vs) {
    const text = await readFile(new URL(v.file, vectors), "utf8");
    const policy = v.witnessPolicy ? await readFile(new URL(v.witnessPolicy, vectors), "utf8") : undefined;
    const r = await checkReceipt(text, v.logKey || "", policy);
    // zarlog-verify's exit 0 is a receipt that checks; every other vector
    // is refused.
    const want = v.exit === 0;
    assert.equal(r.ok, want, v.name + ": " + JSON.stringify(r, (k, x) => typeof x === "bigint" ? String(x) : x));
    if (v.witnessPolicy && want) assert.ok(r.cosignatures >= 2, v.name);
  }
});

test("checkReceipt with a witness policy: met, and not met", async () => {
  const m = await read("manifest.json");
  for (const [name, ok] of [["bundle-witness-policy-met", true], ["bundle-witness-policy-unmet", false]]) {
    const v = m.vectors.find((x) => x.name === name);
    const b = await read(v.file);
    const policy = await readFile(new URL(v.witnessPolicy, vectors), "utf8");
    const e = b.log.entries[0];
    const key = v.logKey || "";
    const r = await checkReceipt(tlogProof(b, e), key || (policy.match(/^log (\S+)/m) || [])[1], policy);
    assert.equal(r.ok, ok, name + ": " + JSON.stringify(r, (k, x) => typeof x === "bigint" ? String(x) : x));
    if (ok) assert.ok(r.cosignatures >= 2);
    else assert.equal(r.message.id, "LwQuorum");
  }
});

test("verify: a tampered die is named", async () => {
  const m = await read("manifest.json");
  const v = m.vectors.find((x) => x.name === "tavlarena-worked-example");
  const text = await readFile(new URL(v.file, vectors), "utf8");
  const ev = JSON.parse(text);
  ev.rolls[ev.rolls.length - 1].dice = [ev.rolls[ev.rolls.length - 1].dice[0] % 6 + 1, ev.rolls[ev.rolls.length - 1].dice[1]];
  const r = await verify(new TextEncoder().encode(JSON.stringify(ev)), {});
  assert.equal(r.exit, 1);
  assert.deepEqual(r.failed, ["rolls"]);
  assert.ok(r.firstWrongRoll);
});
