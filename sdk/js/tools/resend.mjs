// The Node side of TestNodeResend and TestNodeFollowing (sdk/resend_test.go): it publishes events
// with zarlog-emitter, or asks for their receipts, against the NATS server
// given (the Go test's real JetStream, whose stream the test cuts between
// the two runs), and prints JSON.
//
//   node tools/resend.mjs --nats URL --emitter E --log-key VKEY publish events.json
//     events.json: [{id, data (base64), orderKey}]; prints [{id, seq}]
//   node tools/resend.mjs --nats URL --emitter E --log-key VKEY receipts events.json
//     events.json: [{id, data, orderKey, seq}] (seq 0: asked without the ack);
//     asks for each receipt in order and prints {receipts: [{id, index,
//     signatureChecked}], resent: [id…]}
//   node tools/resend.mjs --nats URL --emitter E --log-key VKEY follow events.json
//     events.json: [{id, data, orderKey}]; publishes each (a message each),
//     prints [{id, seq}] on a line, then waits for a line on standard input
//     (the test cuts the stream meanwhile), then for Client.waitLogged with
//     the Client's default following, and prints {resent: [id…], stats}

import { readFileSync } from "node:fs";
import process from "node:process";
import { createInterface } from "node:readline";
import { Client, dial } from "../src/index.js";

const args = process.argv.slice(2);
const opt = function (name) { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
const mode = args[args.length - 2];
const evs = JSON.parse(readFileSync(args[args.length - 1], "utf8")).map(function (e) {
  return { id: e.id, data: new Uint8Array(Buffer.from(e.data, "base64")), orderKey: e.orderKey, seq: e.seq || 0 };
});
const emitter = opt("--emitter");
const nc = await dial(opt("--nats"), emitter);
const resent = [];
const client = new Client(nc, { emitter: emitter, logKey: opt("--log-key"), retryMin: 5, retryMax: 100, onResend: function (id) { resent.push(id); } });
const signal = AbortSignal.timeout(60000);
let out;
if (mode === "publish") {
  out = [];
  for (const ev of evs) {
    const ack = await client.publish({ id: ev.id, data: ev.data, orderKey: ev.orderKey }, { signal: signal });
    out.push({ id: ev.id, seq: ack.seq });
  }
} else if (mode === "receipts") {
  out = { receipts: [], resent: resent };
  for (const ev of evs) {
    const r = await client.receipt({ id: ev.id, data: ev.data, orderKey: ev.orderKey }, ev.seq ? { seq: ev.seq } : null, { signal: signal });
    out.receipts.push({ id: ev.id, index: Number(r.index), signatureChecked: r.signatureChecked });
  }
  if (client.resent !== resent.length) throw new Error("client.resent " + client.resent + ", onResend called " + resent.length + " times");
} else if (mode === "follow") {
  const acks = [];
  for (const ev of evs) {
    const ack = await client.publish({ id: ev.id, data: ev.data, orderKey: ev.orderKey }, { signal: signal });
    acks.push({ id: ev.id, seq: ack.seq });
  }
  process.stdout.write(JSON.stringify(acks) + "\n");
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) { if (line === "go") break; }
  lines.close();
  await client.waitLogged({ signal: signal });
  out = { resent: resent, stats: client.followStats() };
} else {
  throw new Error("mode " + mode + " is not publish, receipts or follow");
}
await client.close();
await nc.close();
process.stdout.write(JSON.stringify(out) + "\n");
