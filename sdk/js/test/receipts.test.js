// Batched receipt requests (receipt protocol version 5): the wire messages
// as the Go package writes and reads them (wire/receipts.go), mutated
// replies, and the ReceiptBatcher against a fake connection: concurrent
// asks share a request, a mixed batch answers each ask as the ledger
// answered its event, a "pending" event is asked again, and a reply that
// does not answer the request is refused. That receipt() checks every
// receipt as before is tested end to end against the Go ledger
// (TestNodeResend, TestNodeSDKAgreement in sdk/).

import { test } from "node:test";
import assert from "node:assert/strict";
import { formatReceiptsRequest, parseReceiptsReply, WireError, MAX_RECEIPT_BATCH } from "../src/wire.js";
import { ReceiptBatcher } from "../src/receipts.js";

const te = new TextEncoder();
const td = new TextDecoder();
const H = "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";

test("wire: batched receipt requests and replies (version 5), as the Go package writes and reads them", function () {
  assert.equal(td.decode(formatReceiptsRequest([{ id: "g:1", seq: 7 }, { id: "g:2", seq: 0 }], 5000)),
    '{"events":[{"id":"g:1","seq":7},{"id":"g:2"}],"v":5,"wait_ms":5000}');
  assert.throws(function () { formatReceiptsRequest([], 0); }, WireError);
  assert.throws(function () { formatReceiptsRequest(new Array(MAX_RECEIPT_BATCH + 1).fill({ id: "g:0" }), 0); }, WireError);
  assert.throws(function () { formatReceiptsRequest([{ id: "bad id" }], 0); }, WireError);
  const r = parseReceiptsReply(te.encode('{"checkpoint":"note\\n","decided":3,"events":[{"id":"g:1","index":1,"proof":["' + H + '"],"status":"ok"},' +
    '{"id":"g:2","index":9,"status":"pending"},{"id":"g:3","status":"pending"},{"id":"g:4","status":"unknown"},' +
    '{"code":"bad-signature","id":"g:5","reason":"no","status":"rejected"}],"last":4,"status":"ok","v":5}'));
  assert.equal(r.checkpoint, "note\n");
  assert.deepEqual(r.state, { decided: 3, last: 4 });
  assert.deepEqual(r.events.map(function (e) { return [e.id, e.status, e.index, e.proof.length, e.code]; }),
    [["g:1", "ok", 1n, 1, ""], ["g:2", "pending", 9n, 0, ""], ["g:3", "pending", null, 0, ""], ["g:4", "unknown", null, 0, ""], ["g:5", "rejected", null, 0, "bad-signature"]]);
  assert.equal(r.events[0].proof[0][0], 1);
  assert.equal(parseReceiptsReply(te.encode('{"code":"busy","reason":"later","status":"error","v":5}')).code, "busy");
  // The Go package's TestReceiptsReplyRefused.
  const hash = '"' + H + '"';
  for (const bad of [
    '{"checkpoint":"c","events":[{"id":"a","index":1,"status":"ok"}],"status":"ok","v":3}',
    '{"events":[{"id":"a","index":1,"status":"ok"}],"status":"ok","v":5}',
    '{"checkpoint":"c","events":[{"id":"a","index":1,"status":"pending"}],"status":"ok","v":5}',
    '{"checkpoint":"c","events":[{"id":"a","status":"ok"}],"status":"ok","v":5}',
    '{"events":[{"id":"a","index":1,"proof":[' + hash + '],"status":"pending"}],"status":"ok","v":5}',
    '{"checkpoint":"c","events":[{"id":"a","index":1,"proof":[],"status":"ok"}],"status":"ok","v":5}',
    '{"checkpoint":"c","events":[{"id":"a","index":1,"proof":["AA=="],"status":"ok"}],"status":"ok","v":5}',
    '{"events":[{"id":"a","index":1,"status":"unknown"}],"status":"ok","v":5}',
    '{"events":[{"code":"x","id":"a","index":1,"status":"rejected"}],"status":"ok","v":5}',
    '{"events":[{"id":"a","status":"rejected"}],"status":"ok","v":5}',
    '{"decided":1,"events":[{"id":"a","status":"pending"}],"last":2,"status":"ok","v":5}',
    '{"decided":1,"events":[{"id":"a","status":"unknown"}],"status":"ok","v":5}',
    '{"events":[],"status":"ok","v":5}',
    '{"events":[{"id":"a","index":1,"status":"logged"}],"status":"ok","v":5}',
    '{"code":"busy","events":[{"id":"a","status":"pending"}],"status":"error","v":5}',
    '{"status":"error","v":5}',
    '{"events":[{"id":"a","status":"pending"}],"status":"pending","v":5}',
    '{"events":[{"id":"a","status":"pending"}],"status":"ok","v":5,"x":1}',
    '{"events":[{"id":"","status":"pending"}],"status":"ok","v":5}',
    '{"events":[{"code":"x","id":"a","reason":"' + "r".repeat(257) + '","status":"rejected"}],"status":"ok","v":5}',
    "[]", "{"]) {
    assert.throws(function () { parseReceiptsReply(te.encode(bad)); }, WireError, bad);
  }
});

test("wire: parseReceiptsReply on mutated replies throws only WireError, and what it accepts fits its status", function () {
  const seeds = ['{"checkpoint":"x\\n","decided":3,"events":[{"id":"g:1","index":1,"proof":["' + H + '"],"status":"ok"},{"id":"g:2","index":9,"status":"pending"},' +
    '{"id":"g:4","status":"unknown"},{"code":"out-of-order","id":"g:5","reason":"r","status":"rejected"}],"last":4,"status":"ok","v":5}',
  '{"code":"busy","reason":"at a limit","status":"error","v":5}'];
  let x = 0x68e31da4;
  const rand = function (n) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; return (x >>> 0) % n; };
  let accepted = 0;
  for (let i = 0; i < 5000; i++) {
    const b = te.encode(seeds[i % seeds.length]);
    for (let k = 1 + rand(3); k > 0; k--) b[rand(b.length)] = " {}[]\":,0123456789abcdefgiklnoprstuvxyz-".charCodeAt(rand(40));
    let r;
    try {
      r = parseReceiptsReply(b);
    } catch (e) {
      assert.ok(e instanceof WireError, "not a WireError: " + e + " for " + td.decode(b));
      continue;
    }
    accepted++;
    assert.ok(r.status === "ok" || r.status === "error");
    for (const e of r.events) {
      assert.ok(["ok", "pending", "unknown", "rejected"].indexOf(e.status) >= 0);
      if (e.status === "ok") assert.notEqual(e.index, null);
      if (e.status !== "ok") assert.equal(e.proof.length, 0);
      if (e.proof.length > 0) for (const h of e.proof) assert.equal(h.length, 32);
    }
    assert.equal(r.events.some(function (e) { return e.status === "ok"; }), r.checkpoint !== "");
    if (r.state !== null) assert.ok(r.events.some(function (e) { return e.status === "unknown"; }));
  }
  assert.ok(accepted > 0, "no mutation accepted");
});

// fakeLedger is a connection whose request() answers batched receipt
// requests with answer(events, n) (events: the request's, n: the request's
// number), after holdMs.
function fakeLedger(answer, holdMs) {
  const f = { requests: [] };
  f.request = async function (subject, data, opts) {
    const q = JSON.parse(td.decode(data));
    f.requests.push(q);
    await new Promise(function (r) { setTimeout(r, holdMs); });
    return { data: te.encode(answer(q.events, f.requests.length)) };
  };
  return f;
}

test("receipts: concurrent asks share a request; a mixed batch answers each ask; a pending event is asked again", async function () {
  const ok = function (id, i) { return { id: id, index: i, proof: [H], status: "ok" }; };
  const nc = fakeLedger(function (events, n) {
    const out = events.map(function (e) {
      switch (e.id) {
        case "g:bad": return { code: "bad-signature", id: e.id, reason: "no", status: "rejected" };
        case "g:nope": return { id: e.id, status: "unknown" };
        case "g:late": return n >= 3 ? ok(e.id, 9) : { id: e.id, index: 9, status: "pending" };
        default: return ok(e.id, Number(e.id.slice(2)));
      }
    });
    const rep = { checkpoint: "note " + n + "\n", events: out, status: "ok", v: 5 };
    if (out.some(function (e) { return e.status === "unknown"; })) Object.assign(rep, { decided: 10, last: 9 });
    return JSON.stringify(rep);
  }, 30);
  const b = new ReceiptBatcher(nc, "zarlog.receipts.e", 2000);
  const ids = ["g:1", "g:2", "g:bad", "g:nope", "g:late", "g:3", "g:4"];
  const reps = await Promise.all(ids.map(function (id, i) { return b.ask(id, i === 3 ? 5 : 0, 5000, null); }));
  assert.ok(nc.requests.length < ids.length, nc.requests.length + " requests for " + ids.length + " asks");
  assert.ok(nc.requests.length >= 3, "g:late answered before it was ok");
  assert.deepEqual(reps.map(function (r) { return [r.id, r.status, r.index, r.code]; }),
    [["g:1", "ok", 1n, ""], ["g:2", "ok", 2n, ""], ["g:bad", "rejected", null, "bad-signature"], ["g:nope", "pending", null, ""],
      ["g:late", "ok", 9n, ""], ["g:3", "ok", 3n, ""], ["g:4", "ok", 4n, ""]]);
  assert.deepEqual(reps[3].state, { decided: 10, last: 9 });
  assert.equal(reps[0].proof.length, 1);
  assert.match(reps[0].checkpoint, /^note \d\n$/);
  assert.equal(reps[4].checkpoint, "note " + nc.requests.length + "\n");
  assert.deepEqual(nc.requests[0].events, [{ id: "g:1" }]);
  assert.ok(nc.requests[1].events.some(function (e) { return e.id === "g:nope" && e.seq === 5; }));
});

test("receipts: a reply that does not answer the request is refused, an old ledger's refusal is passed on", async function () {
  for (const [name, reply] of [
    ["another event", '{"checkpoint":"c","events":[{"id":"g:9","index":1,"status":"ok"}],"status":"ok","v":5}'],
    ["two events", '{"checkpoint":"c","events":[{"id":"g:1","index":1,"status":"ok"},{"id":"g:1","index":1,"status":"ok"}],"status":"ok","v":5}'],
    ["ok without checkpoint", '{"events":[{"id":"g:1","index":1,"status":"ok"}],"status":"ok","v":5}'],
  ]) {
    const b = new ReceiptBatcher(fakeLedger(function () { return reply; }, 0), "s", 2000);
    await assert.rejects(b.ask("g:1", 0, 5000, null), WireError, name);
  }
  const old = new ReceiptBatcher(fakeLedger(function () { return '{"code":"bad-request","id":"","reason":"json: unknown field \\"events\\"","status":"error"}'; }, 0), "s", 2000);
  const r = await old.ask("g:1", 0, 5000, null);
  assert.deepEqual([r.status, r.code, r.v], ["error", "bad-request", 0]);
  const busy = new ReceiptBatcher(fakeLedger(function () { return '{"code":"busy","reason":"later","status":"error","v":5}'; }, 0), "s", 2000);
  const rb = await busy.ask("g:1", 0, 5000, null);
  assert.deepEqual([rb.id, rb.status, rb.code, rb.v], ["g:1", "error", "busy", 5]);
  // An aborted ask is answered with the abort's reason and dropped.
  const ac = new AbortController();
  const slow = new ReceiptBatcher(fakeLedger(function (events) {
    return JSON.stringify({ checkpoint: "c", events: events.map(function (e) { return { id: e.id, index: 1, status: "ok" }; }), status: "ok", v: 5 });
  }, 50), "s", 2000);
  const p = slow.ask("g:1", 0, 5000, ac.signal);
  ac.abort(new Error("stop"));
  await assert.rejects(p, /stop/);
});
