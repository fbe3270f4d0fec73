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

test("checkReceipt: a logged event's leaf, proof and checkpoint", async () => {
  const m = await read("manifest.json");
  const v = m.vectors.find((x) => x.name === "bundle-tavlarena-10-rolls");
  const b = await read(v.file);
  const e = b.log.entries[0];
  const receipt = { index: e.index, checkpoint: b.log.checkpoint, leaf: e.leaf, proof: e.proof.map((i) => b.log.hashes[i]) };
  const ok = await checkReceipt(receipt, v.logKey);
  assert.equal(ok.ok, true, JSON.stringify(ok));
  assert.equal(ok.included, true);
  assert.equal((await checkReceipt({ index: e.index, checkpoint: b.log.checkpoint }, v.logKey)).included, false);
  const bad = await checkReceipt({ ...receipt, leaf: e.leaf.replace('"seq":0', '"seq":1') }, v.logKey);
  assert.equal(bad.ok, false);
  assert.equal(bad.message.id, "LiFail");
  const beyond = await checkReceipt({ index: 1e9, checkpoint: b.log.checkpoint }, v.logKey);
  assert.equal(beyond.message.id, "LiBeyond");
  const otherKey = await checkReceipt(receipt, "log.zarlog.example+00000000+Aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  assert.equal(otherKey.ok, false);
  assert.ok(render(otherKey.message, catalog, 1).length > 0, "the message renders in Turkish");
});

test("checkReceipt with a witness policy: met, and not met", async () => {
  const m = await read("manifest.json");
  for (const [name, ok] of [["bundle-witness-policy-met", true], ["bundle-witness-policy-unmet", false]]) {
    const v = m.vectors.find((x) => x.name === name);
    const b = await read(v.file);
    const policy = await readFile(new URL(v.witnessPolicy, vectors), "utf8");
    const e = b.log.entries[0];
    const key = v.logKey || "";
    const r = await checkReceipt({ index: e.index, checkpoint: b.log.checkpoint }, key || (policy.match(/^log (\S+)/m) || [])[1], policy);
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
