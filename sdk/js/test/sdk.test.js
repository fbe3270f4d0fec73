// Unit tests of zarlog-emitter without a network: the wire messages, the
// signer key, receipts, the roll check, and whole games of a device
// backend checked by zarlog-verify. Its agreement with the Go SDK, byte for
// byte, is TestNodeSDKAgreement (sdk/agree_test.go); games against a built
// zarlog serve are TestNodeBackend (cmd/zarlog).

import { test } from "node:test";
import assert from "node:assert/strict";
import { generateKeyPairSync, createHash } from "node:crypto";
import { verify } from "zarlog-verify";
import { parseState } from "zarlog-verify/src/rules/movecheck/state.js";
import { legalPlays } from "zarlog-verify/src/rules/play.js";
import { formatPlay } from "zarlog-verify/src/rules/notation.js";
import {
  Backend, parseSignerKey, KeyError, checkRoll, RollCheckError, RefusedError, NotNowError, Receipt, parseReceipt, BadReceiptError,
  rollSeats, quicknetBeacons, BeaconNotYetError, SeatNamesError,
} from "../src/index.js";
import { parseReceiptReply, parseRejection, formatReceiptRequest, formatStatusRequest, parseStatusReply, joinBatch, lost, WireError, Subjects, MAX_STATUS_EVENTS,
  formatMessageStatusRequest, parseMessageStatusReply, MAX_STATUS_MESSAGES } from "../src/wire.js";

const te = new TextEncoder();

// signerKey makes a signer key text for name, as zarlog keygen --emitter writes it.
function signerKey(name, seed) {
  const { privateKey } = generateKeyPairSync("ed25519");
  const s = seed || privateKey.export({ format: "der", type: "pkcs8" }).subarray(16);
  const pub = Buffer.from(generatePublic(s));
  const hash = createHash("sha256").update(Buffer.concat([Buffer.from(name + "\n"), Buffer.from([1]), pub])).digest().subarray(0, 4).toString("hex");
  return "PRIVATE+KEY+" + name + "+" + hash + "+" + Buffer.concat([Buffer.from([1]), Buffer.from(s)]).toString("base64");
}
import { createPrivateKey, createPublicKey } from "node:crypto";
function generatePublic(seed) {
  const der = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.from(seed)]);
  const spki = createPublicKey(createPrivateKey({ key: der, format: "der", type: "pkcs8" })).export({ format: "der", type: "spki" });
  return spki.subarray(spki.length - 32);
}

test("the signer key: read, its verifier key, refused when it is not one", async function () {
  const s = await parseSignerKey(signerKey("acme", new Uint8Array(32).fill(7)));
  assert.equal(s.name, "acme");
  assert.match(s.vkey, /^acme\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
  assert.equal(s.sign(te.encode("x")).length, 64);
  assert.ok(!String(s).includes("PRIVATE"));
  assert.ok(!JSON.stringify(s).includes("PRIVATE"));
  const good = signerKey("acme");
  await assert.rejects(parseSignerKey(good.replace(/\+([0-9a-f]{8})\+/, "+00000000+")), KeyError);
  await assert.rejects(parseSignerKey(good.replace("+acme+", "+Acme+")), /not an emitter id/);
  await assert.rejects(parseSignerKey("acme+12345678+AAAA"), /not a signer key/);
});

test("wire: receipt replies and rejections are read strictly", function () {
  const ok = parseReceiptReply(te.encode('{"checkpoint":"x\\n","id":"g:0","index":4,"status":"ok","v":2}'));
  assert.equal(ok.index, 4n);
  for (const bad of ['{"id":"g:0","status":"ok","v":2}', '{"id":"g:0","status":"pending","code":"x"}', '{"id":"g:0","status":"weird"}',
    '{"id":"g:0","status":"pending","extra":1}', '{"id":"g:0","status":"ok","index":1,"checkpoint":"c","v":4}', "[]", "{",
    '{"decided":3,"id":"a","status":"pending","v":3}', '{"id":"a","last":3,"status":"pending","v":3}', '{"decided":3,"id":"a","last":4,"status":"pending","v":2}',
    '{"decided":3,"id":"a","index":1,"last":4,"status":"pending","v":3}', '{"code":"x","decided":3,"id":"a","last":4,"status":"rejected","v":3}',
    '{"decided":-1,"id":"a","last":4,"status":"pending","v":3}',
    '{"checkpoint":"c","id":"g:0","index":1,"proof":["AAAA"],"status":"ok","v":2}']) {
    assert.throws(function () { parseReceiptReply(te.encode(bad)); }, WireError, bad);
  }
  const r = parseRejection(te.encode('{"code":"bad-signature","id":"g:1","reason":"no","seq":3,"sha256":"' + "ab".repeat(32) + '"}'));
  assert.equal(r.code, "bad-signature");
  assert.throws(function () { parseRejection(te.encode('{"code":"Bad","reason":"","seq":1,"sha256":"' + "ab".repeat(32) + '"}')); }, WireError);
  assert.equal(new TextDecoder().decode(formatReceiptRequest({ id: "g:0", waitMs: 20000, seq: 7 })), '{"id":"g:0","v":3,"wait_ms":20000,"seq":7}');
  assert.equal(new TextDecoder().decode(formatReceiptRequest({ id: "g:0", waitMs: 20000, seq: 7, v: 2 })), '{"id":"g:0","v":2,"wait_ms":20000,"seq":7}');
  assert.throws(function () { formatReceiptRequest({ id: "g:0", v: 4 }); }, WireError);
  // Version 3: the stream's state in a pending reply without a record.
  const p3 = parseReceiptReply(te.encode('{"decided":5,"id":"g:0","last":0,"status":"pending","v":3}'));
  assert.deepEqual(p3.state, { decided: 5, last: 0 });
  assert.equal(parseReceiptReply(te.encode('{"id":"g:0","status":"pending","v":3}')).state, null);
  assert.equal(parseReceiptReply(te.encode('{"checkpoint":"x\\n","id":"g:0","index":4,"proof":["' + "A".repeat(43) + '="],"status":"ok","v":3}')).proof.length, 1);
  // The resend rule at each side of its bounds: the Go SDK's TestStreamStateLost table.
  for (const [decided, last, seq, want] of [[10, 20, 9, true], [10, 20, 10, false], [10, 20, 15, false], [21, 20, 25, true],
    [20, 20, 25, false], [1, 0, 500, true], [0, 0, 1, false], [31, 30, 30, true]]) {
    assert.equal(lost({ decided: decided, last: last }, seq), want, JSON.stringify([decided, last, seq]));
  }
  assert.deepEqual(Array.from(joinBatch([te.encode("a"), te.encode("bc")])), Array.from(te.encode("a\nbc")));
  assert.throws(function () { joinBatch([te.encode("a\n"), te.encode("b")]); }, WireError);
  assert.throws(function () { new Subjects("a.*"); }, WireError);
  assert.equal(new Subjects().events("acme"), "zarlog.events.acme");
});

test("wire: status requests and replies (receipt protocol version 3), as the Go package writes and reads them", function () {
  assert.equal(new TextDecoder().decode(formatStatusRequest([{ id: "g:3", seq: 1234 }, { id: "g:4", seq: 0 }])),
    '{"events":[{"id":"g:3","seq":1234},{"id":"g:4"}],"v":3}');
  assert.throws(function () { formatStatusRequest([]); }, WireError);
  assert.throws(function () { formatStatusRequest(new Array(MAX_STATUS_EVENTS + 1).fill({ id: "g:0" })); }, WireError);
  assert.throws(function () { formatStatusRequest([{ id: "bad id" }]); }, WireError);
  const r = parseStatusReply(te.encode('{"checkpoint":"x\\n","decided":1240,"events":[{"id":"g:3","index":40,"status":"logged"},' +
    '{"id":"g:4","status":"unknown"},{"id":"g:5","index":41,"status":"appended"},{"code":"out-of-order","id":"g:6","reason":"r","status":"rejected"}],' +
    '"last":1302,"status":"ok","v":3}'));
  assert.deepEqual(r.state, { decided: 1240, last: 1302 });
  assert.deepEqual(r.events.map(function (e) { return [e.id, e.status, e.index, e.code]; }),
    [["g:3", "logged", 40n, ""], ["g:4", "unknown", null, ""], ["g:5", "appended", 41n, ""], ["g:6", "rejected", null, "out-of-order"]]);
  assert.equal(parseStatusReply(te.encode('{"code":"busy","reason":"at a limit","status":"error","v":3}')).code, "busy");
  assert.equal(parseStatusReply(te.encode('{"events":[{"id":"g:4","status":"unknown"}],"status":"ok","v":3}')).state, null);
  for (const bad of [
    '{"events":[{"id":"g:3","index":40,"status":"logged"}],"status":"ok","v":3}', // logged without the checkpoint
    '{"events":[{"id":"g:3","status":"unknown"}],"status":"ok","v":2}',
    '{"decided":1,"events":[{"id":"g:3","status":"unknown"}],"status":"ok","v":3}',
    '{"events":[],"status":"ok","v":3}',
    '{"events":[{"id":"g:3","index":1,"status":"unknown"}],"status":"ok","v":3}',
    '{"events":[{"id":"g:3","status":"appended"}],"status":"ok","v":3}',
    '{"events":[{"id":"g:3","status":"rejected"}],"status":"ok","v":3}',
    '{"events":[{"id":"g:3","status":"gone"}],"status":"ok","v":3}',
    '{"events":[{"id":"g:3","status":"unknown","x":1}],"status":"ok","v":3}',
    '{"events":[{"code":"x","id":"g:3","reason":"' + "r".repeat(257) + '","status":"rejected"}],"status":"ok","v":3}',
    '{"code":"busy","events":[{"id":"g:3","status":"unknown"}],"status":"error","v":3}',
    '{"code":"Busy","status":"error","v":3}',
    '{"id":"g:3","status":"pending","v":3}', "[]", "{"]) {
    assert.throws(function () { parseStatusReply(te.encode(bad)); }, WireError, bad);
  }
});

test("wire: parseStatusReply on mutated replies throws only WireError, and what it accepts fits its status", function () {
  const seeds = ['{"checkpoint":"x\\n","decided":1240,"events":[{"id":"g:3","index":40,"status":"logged"},{"id":"g:4","status":"unknown"},' +
    '{"code":"out-of-order","id":"g:6","reason":"r","status":"rejected"}],"last":1302,"status":"ok","v":3}', '{"code":"busy","reason":"at a limit","status":"error","v":3}'];
  let x = 0x2545f491;
  const rand = function (n) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; return (x >>> 0) % n; };
  let accepted = 0;
  for (let i = 0; i < 5000; i++) {
    const b = te.encode(seeds[i % seeds.length]);
    for (let k = 1 + rand(3); k > 0; k--) b[rand(b.length)] = " {}[]\":,0123456789abcdefglnorstuvxyz-".charCodeAt(rand(37));
    let r;
    try {
      r = parseStatusReply(b);
    } catch (e) {
      assert.ok(e instanceof WireError, "not a WireError: " + e + " for " + new TextDecoder().decode(b));
      continue;
    }
    accepted++;
    assert.ok(r.status === "ok" || r.status === "error");
    for (const e of r.events) {
      assert.ok(["logged", "appended", "unknown", "rejected"].indexOf(e.status) >= 0);
      assert.equal(e.index !== null, e.status === "logged" || e.status === "appended");
    }
    if (r.events.some(function (e) { return e.status === "logged"; })) assert.notEqual(r.checkpoint, "");
  }
  assert.ok(accepted > 0, "no mutation accepted");
});

test("wire: message status requests and replies (version 4), as the Go package writes and reads them", function () {
  const sum = "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=";
  assert.equal(new TextDecoder().decode(formatMessageStatusRequest([{ seq: 1234, sha256: sum }, { seq: 1235, sha256: sum }])),
    '{"messages":[{"seq":1234,"sha256":"' + sum + '"},{"seq":1235,"sha256":"' + sum + '"}],"v":4}');
  assert.throws(function () { formatMessageStatusRequest([]); }, WireError);
  assert.throws(function () { formatMessageStatusRequest(new Array(MAX_STATUS_MESSAGES + 1).fill({ seq: 1, sha256: sum })); }, WireError);
  assert.throws(function () { formatMessageStatusRequest([{ seq: 0, sha256: sum }]); }, WireError);
  assert.throws(function () { formatMessageStatusRequest([{ seq: 1, sha256: "abc" }]); }, WireError);
  const r = parseMessageStatusReply(te.encode('{"checkpoint":"x\\n","decided":1240,"last":1302,"messages":[{"events":200,"index":40,"seq":1234,"status":"logged"},' +
    '{"events":1,"index":41,"seq":1235,"status":"appended"},{"seq":1236,"status":"mixed"},{"seq":1237,"status":"unknown"}],"status":"ok","v":4}'));
  assert.deepEqual(r.state, { decided: 1240, last: 1302 });
  assert.deepEqual(r.messages.map(function (m) { return [m.seq, m.status, m.index, m.events]; }),
    [[1234, "logged", 40n, 200], [1235, "appended", 41n, 1], [1236, "mixed", null, 0], [1237, "unknown", null, 0]]);
  assert.equal(parseMessageStatusReply(te.encode('{"code":"busy","reason":"at a limit","status":"error","v":4}')).code, "busy");
  for (const bad of [
    '{"messages":[{"events":2,"index":1,"seq":3,"status":"logged"}],"status":"ok","v":4}', // logged without the checkpoint
    '{"checkpoint":"c","messages":[{"index":1,"seq":3,"status":"appended"}],"status":"ok","v":4}',
    '{"checkpoint":"c","messages":[{"events":2,"seq":3,"status":"appended"}],"status":"ok","v":4}',
    '{"checkpoint":"c","messages":[{"events":5000,"index":1,"seq":3,"status":"appended"}],"status":"ok","v":4}',
    '{"messages":[{"events":2,"seq":3,"status":"mixed"}],"status":"ok","v":4}',
    '{"messages":[{"seq":0,"status":"unknown"}],"status":"ok","v":4}',
    '{"messages":[{"seq":3,"status":"lost"}],"status":"ok","v":4}',
    '{"messages":[{"seq":3,"status":"unknown","x":1}],"status":"ok","v":4}',
    '{"decided":3,"messages":[{"seq":3,"status":"unknown"}],"status":"ok","v":4}',
    '{"code":"busy","messages":[{"seq":3,"status":"unknown"}],"reason":"r","status":"error","v":4}',
    '{"messages":[{"seq":3,"status":"unknown"}],"status":"ok","v":3}',
    '{"messages":[],"status":"ok","v":4}', "[]", "{"]) {
    assert.throws(function () { parseMessageStatusReply(te.encode(bad)); }, WireError, bad);
  }
});

test("wire: parseMessageStatusReply on mutated replies throws only WireError, and what it accepts fits its status", function () {
  const seeds = ['{"checkpoint":"x\\n","decided":1240,"last":1302,"messages":[{"events":200,"index":40,"seq":1234,"status":"logged"},' +
    '{"seq":1236,"status":"mixed"},{"seq":1237,"status":"unknown"}],"status":"ok","v":4}', '{"code":"busy","reason":"at a limit","status":"error","v":4}'];
  let x = 0x1b873593;
  const rand = function (n) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; return (x >>> 0) % n; };
  let accepted = 0;
  for (let i = 0; i < 5000; i++) {
    const b = te.encode(seeds[i % seeds.length]);
    for (let k = 1 + rand(3); k > 0; k--) b[rand(b.length)] = " {}[]\":,0123456789abcdefglnorstuvxyz-".charCodeAt(rand(37));
    let r;
    try {
      r = parseMessageStatusReply(b);
    } catch (e) {
      assert.ok(e instanceof WireError, "not a WireError: " + e + " for " + new TextDecoder().decode(b));
      continue;
    }
    accepted++;
    assert.ok(r.status === "ok" || r.status === "error");
    for (const m of r.messages) {
      assert.ok(["logged", "appended", "mixed", "unknown"].indexOf(m.status) >= 0);
      assert.ok(m.seq > 0);
      assert.equal(m.index !== null, m.status === "logged" || m.status === "appended");
      assert.equal(m.events > 0, m.status === "logged" || m.status === "appended");
    }
    if (r.messages.some(function (m) { return m.status === "logged"; })) assert.notEqual(r.checkpoint, "");
  }
  assert.ok(accepted > 0, "no mutation accepted");
});

test("who plays a roll and who rolls next", function () {
  const o = function (a, b) { return { kind: "opening", dice: [a, b] }; };
  const t = function () { return { kind: "turn", dice: [1, 2] }; };
  assert.deepEqual(rollSeats("western", [o(3, 3)]), { plays: -1, next: -1 });
  assert.deepEqual(rollSeats("western", [o(3, 3), o(2, 5)]), { plays: 1, next: 0 });
  assert.deepEqual(rollSeats("western", [o(5, 2), t()]), { plays: 1, next: 0 });
  assert.deepEqual(rollSeats("turkish-reroll", [o(5, 2)]), { plays: -1, next: 0 });
  assert.deepEqual(rollSeats("turkish-reroll", [o(5, 2), { kind: "reroll", dice: [6, 6] }]), { plays: 0, next: 1 });
});

async function playDevice(settings) {
  const signer = await parseSignerKey(signerKey("acme"));
  const b = Backend.device({ signer: signer });
  const g = await b.newTavlarena({ seats: ["11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"], settings: settings });
  await g.contribute(1, new Uint8Array(32).fill(1));
  assert.deepEqual(g.withheld(), [false, true]);
  await g.contribute(0, new Uint8Array(32).fill(2));
  return g;
}

test("a device's whole game, every move by the rules engine, verifies; an illegal move is refused with its rule", async function () {
  const g = await playDevice({ opponent: "computer", variant: "portes", moves: "logged" });
  await assert.rejects(g.contribute(0, new Uint8Array(32)), NotNowError);
  let refused = false;
  for (let i = 0; i < 2000; i++) {
    const e = g.boardEnd();
    if (e) { await g.end(e); break; }
    const r = await g.roll();
    if (r.seat < 0) continue;
    const s = parseState(g.state().position);
    if (!refused) {
      await assert.rejects(g.move(r.seat, "24/1"), function (e) { return e instanceof RefusedError && e.code === "illegal-move" && typeof e.cause.rule === "string"; });
      await assert.rejects(g.move(1 - r.seat, "-"), NotNowError);
      refused = true;
    }
    const plays = legalPlays(s.variant, s.position, s.seat, s.dice);
    await g.move(r.seat, plays.length > 0 ? formatPlay(plays[plays.length - 1]) : "-");
  }
  assert.equal(g.state().status, "ended");
  await assert.rejects(g.roll(), RefusedError);
  await g.reveal();
  const rep = await verify(await g.evidence(), {});
  assert.equal(rep.exit, 0, JSON.stringify(rep.failed));
  assert.ok(!String(g).includes(Buffer.from(g.seed || []).toString("hex") || "-"));
});

test("a finished end the board does not give is refused, with the ledger's code", async function () {
  const g = await playDevice({ opponent: "computer", variant: "tavla", moves: "logged" });
  await g.roll();
  await assert.rejects(g.end({ result: "finished", winner: 0, points: 1 }), function (e) { return e instanceof RefusedError && (e.code === "wrong-result" || e.code === "move-owed"); });
  assert.equal(g.state().status, "open");
});

test("per-roll-v1 on a device: the player's check passes, and names the part a tampered reveal fails", async function () {
  const signer = await parseSignerKey(signerKey("acme"));
  const m = await Backend.device({ signer: signer }).newPerRoll({ settings: { opponent: "computer" } });
  const before = await m.commitRoll();
  const sent = new Uint8Array(32).fill(9);
  await m.clientSecond(sent);
  const got = await m.revealRoll();
  assert.deepEqual(await checkRoll(before, sent, got), got.dice);
  const flip = Object.assign({}, got, { dice: [got.dice[0] % 6 + 1, got.dice[1]] });
  await assert.rejects(checkRoll(before, sent, flip), function (e) { return e instanceof RollCheckError && e.part === "dice"; });
  await assert.rejects(checkRoll(before, new Uint8Array(32), got), function (e) { return e instanceof RollCheckError && e.part === "second"; });
  await assert.rejects(checkRoll(Object.assign({}, before, { commitment: "00".repeat(32) }), sent, got), function (e) { return e.part === "commitment"; });
  await m.end({ result: "abandoned", winner: null, points: 0 });
  assert.equal((await verify(await m.evidence(), {})).exit, 0);
});

test("anchored-v1: no beacon before its round, a token after it is refused", async function () {
  const signer = await parseSignerKey(signerKey("acme"));
  let now = new Date("2023-09-15T10:59:00.000Z");
  const b = Backend.device({ signer: signer, now: function () { return now; } });
  const g = await b.newAnchored({ matchId: "m-1", settings: { opponent: "computer" }, rounds: 1 + 657413 - (Math.floor((now.getTime() / 1000 - 1692803367) / 3) + 1) });
  assert.equal(g.anchor.round, 657414);
  const src = await quicknetBeacons();
  await g.token(0, "a");
  now = new Date(g.anchorTime.getTime() + 1000);
  await assert.rejects(g.token(1, "b"), function (e) { return e instanceof RefusedError && e.code === "round-already-existed"; });
  now = new Date("2023-09-15T10:59:30.000Z");
  await g.token(1, "b");
  await assert.rejects(g.recordBeacon(src), BeaconNotYetError);
});

test("a receipt's file round-trips and is checked against the event's bytes", async function () {
  const leaf = te.encode('{"id":"g:0"}');
  // A tree of one leaf: the root is the leaf hash; an unsigned checkpoint.
  const root = createHash("sha256").update(Buffer.concat([Buffer.from([0]), Buffer.from(leaf)])).digest().toString("base64");
  const r = new Receipt("g:0", leaf, 0n, [], "log.example\n1\n" + root + "\n\n— log.example " + Buffer.alloc(68, 1).toString("base64") + "\n");
  const back = parseReceipt(r.format());
  assert.equal(back.format(), r.format());
  assert.equal(back.eventId, "g:0");
  await r.check(leaf, null);
  await assert.rejects(r.check(te.encode('{"id":"g:1"}'), null), BadReceiptError);
});

test("seatNames are published only when the backend opts in (they are public for ever)", async function () {
  const signer = await parseSignerKey(signerKey("tavla-east", new Uint8Array(32).fill(9)));
  const client = { emitter: "tavla-east" }; // never reached: the settings are refused first
  const named = '{"seatNames":["Ayşe","Mehmet"]}';
  const b = new Backend(client, { signer: signer });
  const seats = ["5830ee4d-958f-4449-98bc-13ad18d0ccc2", "9e022821-0565-4564-a1ac-2954b8c9c5f0"];
  await assert.rejects(b.newTavlarena({ seats: seats, settings: named }), SeatNamesError);
  await assert.rejects(b.newAnchored({ matchId: "m", gameNo: 1, settings: named }), SeatNamesError);
  await assert.rejects(b.newPerRoll({ settings: named }), SeatNamesError);
  const dev = Backend.device({ signer: signer });
  await dev.newTavlarena({ seats: seats, settings: '{"opponent":"computer","seatNames":["Ayşe","the computer"]}' });
});

// The Go SDK's TestLingerDecision: the adaptive linger's decision on an
// injected clock (ms), the same cases. A message waits only while the
// emitter's recent rate predicts another event within a quarter of its
// bound and before the bound, and never a quarter of the bound past the
// last event.
test("the linger's decision: a message waits only while the recent rate predicts another event within a quarter of its bound, as the Go SDK's", async function () {
  const { Lingerer, DEFAULT_LINGER } = await import("../src/linger.js");
  const d = DEFAULT_LINGER;
  // name, bound ms, gap ms, n arrivals, first and after (ms after the
  // last arrival), the wait wanted (ms), the rate as of the last arrival.
  for (const [name, bound, gap, n, first, after, want, rmin, rmax] of [
    ["quiet", d, 1000, 20, 0, 0, 0, 9.5, 10.5],
    ["100/s", d, 10, 200, 0, 0, 0, 99, 106],
    ["150/s", d, 1000 / 150, 300, 0, 0, 0, 148, 160],
    ["190/s", d, 1000 / 190, 1000, 0, 0, 0, 194, 196],
    ["200/s", d, 5, 1000, 0, 0, 5, 204, 206],
    ["300/s", d, 1000 / 300, 600, 0, 0, 5, 297, 310],
    ["1000/s", d, 1, 1000, 0, 0, 5, 990, 1010],
    ["1000/s, 17 ms in", d, 1, 1000, -17, 0, 3, 990, 1010],
    ["1000/s, 19.5 ms in", d, 1, 1000, -19.5, 0, 0, 990, 1010],
    ["1000/s, 3 ms since", d, 1, 1000, -7, 3, 2, 990, 1010],
    ["1000/s, an event late", d, 1, 1000, -5, 5, 0, 990, 1010],
    ["1000/s, the window full for 6 ms", d, 1, 1000, 6, 6, 0, 990, 1010],
    ["burst", d, 0, 30, 0, 0, 5, 299, 301],
    ["small burst", d, 0, 15, 0, 0, 0, 149, 151],
    ["gone quiet", d, 1, 1000, 300, 300, 0, 990, 1010],
    ["off", 0, 1, 1000, 0, 0, 0, 0, 0],
    ["5 ms, 1000/s", 5, 1, 1000, 0, 0, 1.25, 990, 1010],
    ["5 ms, 500/s", 5, 2, 1000, 0, 0, 0, 495, 510],
    ["80 ms, 100/s", 80, 10, 200, 0, 0, 20, 99, 106],
  ]) {
    const l = new Lingerer(bound);
    const t0 = 1e6;
    let last = t0;
    for (let i = 0; i < n; i++) {
      last = t0 + i * gap;
      l.arrived(last, 1);
    }
    const r = l.rate(last);
    assert.ok(r >= rmin && r <= rmax, name + ": rate " + r);
    const w = l.wait(last + after, last + first);
    assert.ok(Math.abs(w - want) < 1e-9, name + ": wait " + w + ", want " + want);
  }
  // Arrivals out of order do not move the reference back; a batch of n counts n.
  const l = new Lingerer(20);
  l.arrived(1000, 40);
  l.arrived(999, 10);
  assert.ok(Math.abs(l.rate(1000) - 500) < 1e-6);
  assert.equal(l.wait(1000, 1000), 5);
  assert.equal(l.wait(1020, 999), 0);
  const z = new Lingerer(-1);
  z.arrived(1000, 1000);
  assert.equal(z.wait(1000, 1000), 0);
  assert.equal(z.count, 0);
});

// The Go SDK's TestPublishLinger: with a linger of an hour (any rate
// predicts an event in it) six events published at once go in one message,
// which goes when the sixth fills it; with the default linger (20 ms: it
// waits only at 200 events a second or more) and with none, six published
// one after the other's ack go alone. A fake JetStream counts the messages.
test("the client lingers for more events only when its recent rate predicts one, as the Go SDK does", async function () {
  const { Client, DEFAULT_LINGER } = await import("../src/index.js");
  assert.equal(DEFAULT_LINGER, 20);
  const tick = function () { return new Promise(function (r) { setImmediate(r); }); };
  for (const [linger, want] of [[3600000, [6]], [undefined, [1, 1, 1, 1, 1, 1]], [0, [1, 1, 1, 1, 1, 1]]]) {
    const cfg = { emitter: "e1", maxBatchEvents: 6, followInterval: -1 };
    if (linger !== undefined) cfg.linger = linger;
    const client = new Client({ options: {} }, cfg);
    const got = [];
    client.js = countingJetStream(got);
    const pending = [];
    for (let i = 0; i < 6; i++) {
      const id = "game" + i + ":0";
      const p = client.publishAsync({ id: id, data: te.encode('{"id":"' + id + '"}'), orderKey: "game" + i });
      if (linger === 3600000) {
        pending.push(p);
        await tick();
        if (i < 5) assert.deepEqual(got, [], "linger an hour: event " + i + " held");
      } else {
        await p;
      }
    }
    for (const p of pending) await p;
    assert.deepEqual(got, want, "linger " + linger);
    await client.close();
  }
  assert.throws(function () { new Client({ options: {} }, { emitter: "e1", linger: "5" }); }, RangeError);
});

// The Go SDK's TestLingerCountsPublished: the linger counts an event when
// the application publishes it, not when it goes: events waiting for the
// window, or parked behind their order key's earlier event, are counted at
// once; a copy the follower publishes again is not.
test("the linger counts each event when it is published, as the Go SDK does", async function () {
  const { Client } = await import("../src/index.js");
  const client = new Client({ options: {} }, { emitter: "e1", window: 1, followInterval: -1 });
  const unacked = [];
  let seq = 0;
  client.js = {
    publish: function () {
      return new Promise(function (resolve) { unacked.push(function () { resolve({ stream: "EVENTS", seq: ++seq }); }); });
    },
  };
  const ev = function (id, key) { return { id: id, data: te.encode('{"id":"' + id + '"}'), orderKey: key }; };
  const pending = [];
  const before = performance.now();
  // The first flies; the second waits for the window; the third is parked
  // behind the first (the same game).
  for (const [id, key] of [["g1:0", "g1"], ["g2:0", "g2"], ["g1:1", "g1"]]) {
    pending.push(client.publishAsync(ev(id, key)));
    await new Promise(function (r) { setImmediate(r); });
  }
  const after = performance.now();
  assert.equal(unacked.length, 1, "one message in flight");
  const l = client.lingerer;
  assert.ok(l.count > 2.9 && l.count <= 3, "counted " + l.count + ", want the 3 published");
  assert.ok(l.last >= before && l.last <= after, "the last counted at " + l.last + ", not when published");
  while (unacked.length > 0) {
    unacked.shift()();
    await new Promise(function (r) { setImmediate(r); });
  }
  for (const p of pending) await p;
  assert.ok(l.count <= 3, "counted again when sent: " + l.count);
  await client.close();
});

// close() sends the message the linger holds, as the Go SDK's Close does:
// with a linger of an hour, three events published at once are held, and
// close() publishes them (acknowledged, not failed with a ClosedError).
test("close() sends the message the linger holds", async function () {
  const { Client } = await import("../src/index.js");
  const client = new Client({ options: {} }, { emitter: "e1", maxBatchEvents: 6, followInterval: -1, linger: 3600000 });
  const got = [];
  client.js = countingJetStream(got);
  const pending = [];
  for (let i = 0; i < 3; i++) {
    const id = "game" + i + ":0";
    pending.push(client.publishAsync({ id: id, data: te.encode('{"id":"' + id + '"}'), orderKey: "game" + i }));
    await new Promise(function (r) { setImmediate(r); });
  }
  assert.deepEqual(got, [], "held by the linger");
  await client.close();
  assert.deepEqual(got, [3], "sent by close()");
  for (const p of pending) await p; // acknowledged
});

// The Go SDK's TestPublishPartialFlights: a message that is not full waits
// while partialFlights messages await their ack, packing what queues
// meanwhile; a full one goes as the window allows. A fake JetStream holds
// each message's ack until the test gives it; between steps every promise
// chain runs out (setImmediate), so what has not gone is waiting.
test("the client packs what queues while partialFlights messages await their ack (group commit), as the Go SDK does", async function () {
  const { Client } = await import("../src/index.js");
  const tick = function () { return new Promise(function (r) { setImmediate(r); }); };
  for (const tc of [
    { name: "one", partial: 1, max: 256, steps: [1, 5, 0, 0], want: [[1], [1], [1, 5], [1, 5]] },
    { name: "two", partial: 2, max: 256, steps: [1, 1, 4, 0, 0, 0], want: [[1], [1, 1], [1, 1], [1, 1, 4], [1, 1, 4], [1, 1, 4]] },
    { name: "full", partial: 1, max: 3, steps: [1, 4, 0, 0, 0], want: [[1], [1, 3], [1, 3], [1, 3, 1], [1, 3, 1]] },
    { name: "default", partial: undefined, max: 256, steps: [1, 1, 1, 1, 0, 0, 0, 0], want: [[1], [1, 1], [1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]] },
  ]) {
    const cfg = { emitter: "e1", maxBatchEvents: tc.max, followInterval: -1 };
    if (tc.partial !== undefined) cfg.partialFlights = tc.partial;
    const client = new Client({ options: {} }, cfg); // a connection it never uses: its js is replaced
    const got = [], unacked = [];
    let seq = 0;
    client.js = {
      publish: function (subject, payload, opts) {
        assert.equal(subject, "zarlog.events.e1");
        const h = opts && opts.headers;
        got.push(h ? Number(h.get("Zarlog-Events")) : 1);
        return new Promise(function (resolve) { unacked.push(function () { resolve({ stream: "EVENTS", seq: ++seq }); }); });
      },
    };
    const pending = [];
    let next = 0;
    for (let i = 0; i < tc.steps.length; i++) {
      const k = tc.steps[i];
      if (k === 0) unacked.shift()();
      for (let j = 0; j < k; j++, next++) {
        const id = "game" + next + ":0";
        pending.push(client.publishAsync({ id: id, data: te.encode('{"id":"' + id + '"}'), orderKey: "game" + next }));
      }
      await tick();
      assert.deepEqual(got, tc.want[i], tc.name + ", step " + i);
    }
    while (unacked.length > 0) unacked.shift()();
    for (const p of pending) await p;
    await client.close();
  }
  assert.throws(function () { new Client({ options: {} }, { emitter: "e1", partialFlights: 0 }); }, RangeError);
});

// countingJetStream is a fake JetStream that acknowledges every message and
// records in got how many events each carried.
function countingJetStream(got) {
  let seq = 0;
  return {
    publish: function (subject, payload, opts) {
      const h = opts && opts.headers;
      got.push(h ? Number(h.get("Zarlog-Events")) : 1);
      return Promise.resolve({ stream: "EVENTS", seq: ++seq });
    },
  };
}
