// The Node side of TestNodeSDKAgreement (sdk/agree_test.go): it plays each
// script of the file given (the same calls, random bytes and clock as the
// Go SDK's run) with zarlog-emitter, publishing to the NATS server given
// (the Go test's real JetStream), and prints what each made: every call's
// result or error, the events' bytes, the evidence file.
//
//   node tools/agree.mjs --nats URL scripts.json > outputs.json

import { readFileSync } from "node:fs";
import process from "node:process";
import { Backend, Client, dial, parseSignerKey, RecordedBeacons, RefusedError, NotNowError, BeaconNotYetError } from "../src/index.js";
import { unhex } from "zarlog-verify/src/bytes.js";
import { QUICKNET } from "zarlog-verify/src/drand.js";
import { sha256 } from "zarlog-verify/src/sha256.js";
import { hex } from "zarlog-verify/src/bytes.js";
import { IllegalMoveError } from "zarlog-verify/src/rules/errors.js";

const args = process.argv.slice(2);
const url = args[args.indexOf("--nats") + 1];
const scripts = JSON.parse(readFileSync(args[args.length - 1], "utf8"));

function errorOf(e) {
  const r = { error: e instanceof RefusedError ? "refused" : e instanceof NotNowError ? "not-now" : e instanceof BeaconNotYetError ? "beacon-not-yet" : "error" };
  if (e instanceof RefusedError) r.code = e.code;
  let c = e.cause;
  if (c instanceof IllegalMoveError) { r.code = "illegal-move"; r.rule = c.rule; }
  if (r.error === "error") r.message = e.message;
  return r;
}

async function run(client, s) {
  const signer = await parseSignerKey(s.key);
  const rand = unhex(s.rand);
  let off = 0;
  let now = new Date(0);
  const b = new Backend(client, {
    signer: signer, now: function () { return now; }, skipCommitReceipt: true,
    rand: function (n) {
      if (off + n > rand.length) throw new Error("EOF");
      const out = rand.slice(off, off + n);
      off += n;
      return out;
    },
  });
  const out = { name: s.name, results: [], leaves: [], evidence: "" };
  let g = null;
  for (const st of s.steps) {
    if (st.at) now = new Date(st.at);
    let res = {};
    try {
      switch (st.call) {
        case "new":
          if (s.scheme === "tavlarena-v1") {
            g = await b.newTavlarena({ gameId: st.gameId, seats: st.seats, settings: JSON.stringify(st.settings) });
            res = { seal: g.sealCode };
          } else if (s.scheme === "anchored-v1") {
            g = await b.newAnchored({ gameId: st.gameId, matchId: st.matchId, gameNo: st.gameNo || 0, settings: JSON.stringify(st.settings), rounds: st.rounds });
            res = { seal: g.sealCode, round: g.anchor.round };
          } else {
            g = await b.newPerRoll({ matchId: st.matchId, settings: JSON.stringify(st.settings) });
          }
          break;
        case "contribute": await g.contribute(st.seat, st.contribution); break;
        case "token": await g.token(st.seat, st.token); break;
        case "beacon": {
          const src = await RecordedBeacons.create([{ chain: QUICKNET, round: st.round, signature: st.signature, randomness: hex(await sha256(unhex(st.signature))) }]);
          await g.recordBeacon(src);
          break;
        }
        case "roll": res = await g.roll(); break;
        case "move": res = await g.move(st.seat, st.play); break;
        case "end": await g.end({ result: st.result, winner: st.winner === undefined || st.winner === -1 ? null : st.winner, points: st.points || 0 }); break;
        case "reveal": await g.reveal(); break;
        case "commitRoll": res = await g.commitRoll(); break;
        case "clientSecond": await g.clientSecond(st.second); break;
        case "serverSecond": await g.serverSecond(); break;
        case "revealRoll": {
          const r = await g.revealRoll();
          res = { index: r.index, rollId: r.rollId, seed: r.seed, second: r.second, secondFrom: r.secondFrom, dice: r.dice, seat: r.seat };
          break;
        }
        default: throw new Error("call " + st.call);
      }
    } catch (e) {
      out.results.push(errorOf(e));
      break;
    }
    out.results.push(res);
  }
  if (g) {
    out.leaves = g.events().map(function (b) { return new TextDecoder().decode(b); });
    try { out.evidence = new TextDecoder().decode(await g.evidence()); } catch (e) { out.evidence = ""; }
  }
  return out;
}

const nc = await dial(url, "tavla-east");
const client = new Client(nc, { emitter: "tavla-east", retryMin: 1, retryMax: 20 });
const outs = [];
for (const s of scripts) outs.push(await run(client, s));
await client.close();
await nc.close();
process.stdout.write(JSON.stringify(outs));
