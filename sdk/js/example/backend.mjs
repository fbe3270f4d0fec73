#!/usr/bin/env node
// A game backend in Node.js that logs its games' dice in a running
// `zarlog serve` through zarlog-emitter: it plays N games between two
// computer players, every roll from the scheme's dice, every move chosen
// among the legal plays and checked by the rules engine, and prints each
// game's id, its seal code (what the game client shows before the first
// roll) and its audit page (what it links the players to after the game).
//
//   node example/backend.mjs --nats URL --emitter NAME --key FILE --nkey FILE --games N
//       [--pages URL] [--log-key VKEY] [--schemes LIST] [--player ID] [--drand-relay URL]... [--clock-start TIME]
//
// The keys are the two files `zarlog keygen --emitter NAME` wrote (NAME.key,
// the event-signing key, and NAME.nkey, the NATS user seed); its line goes
// into the file of `zarlog serve --emitters`. Exit 0 when every game was
// played and logged, 1 when one failed, 2 for a bad command line.

import process from "node:process";
import { Backend, Client, dial, loadSigner, readSecretFile, checkRoll, quicknetBeacons, Relay } from "zarlog-emitter";

const USAGE = `usage: node example/backend.mjs --nats URL --emitter NAME --key FILE --nkey FILE --games N
    [--pages URL] [--log-key VKEY] [--schemes LIST] [--player ID] [--publish-seat-names]
    [--drand-relay URL]... [--clock-start TIME]

  --nats URL          the NATS server of zarlog serve (its "nats" line)
  --emitter NAME      this backend's emitter id
  --key FILE          its event-signing key (zarlog keygen --emitter NAME wrote NAME.key)
  --nkey FILE         its NATS user seed (NAME.nkey)
  --games N           how many games to play (default 3)
  --pages URL         the log's pages, for the audit links (default http://127.0.0.1:8080)
  --log-key VKEY      the log's verifier key (zarlog serve's "vkey" line): check every receipt's signature
  --schemes LIST      the dice schemes to play in turn, comma-separated (default tavlarena-v1,per-roll-v1;
                      anchored-v1 too with --drand-relay or --clock-start)
  --player ID         the seat id (a UUID) of the first player of every tavlarena-v1 game (default: new ones);
                      their page is /players/EMITTER/ID, and /players/EMITTER/ID/export all their games
  --publish-seat-names  put the players' names into the games' settings (seatNames), so that the pages show
                      them: they stay in the public log for ever (docs/PRIVACY.md); by default they are not
  --drand-relay URL   a drand HTTP relay for anchored-v1 games' beacons (repeatable)
  --clock-start TIME  start this backend's clock at an RFC 3339 time and replay drand quicknet's recorded
                      beacons (as zarlog serve --clock-start does): for tests and demos, never in production
`;

function parseArgs(argv) {
  const o = { nats: "", emitter: "", key: "", nkey: "", games: 3, pages: "http://127.0.0.1:8080", logKey: "", schemes: "", relays: [], clockStart: "", player: "", publishSeatNames: false };
  const names = { "--nats": "nats", "--emitter": "emitter", "--key": "key", "--nkey": "nkey", "--games": "games", "--pages": "pages",
    "--log-key": "logKey", "--schemes": "schemes", "--player": "player", "--drand-relay": "relays", "--clock-start": "clockStart" };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i], v;
    if (a === "-h" || a === "--help") return { help: true };
    if (a === "--publish-seat-names") { o.publishSeatNames = true; continue; }
    const eq = a.indexOf("=");
    if (eq > 0) { v = a.slice(eq + 1); a = a.slice(0, eq); }
    const k = names[a];
    if (!k) throw new Error("unknown flag " + a);
    if (v === undefined) {
      if (i + 1 >= argv.length) throw new Error("flag " + a + " needs a value");
      v = argv[++i];
    }
    if (k === "relays") o.relays.push(v);
    else if (k === "games") {
      if (!/^[1-9][0-9]*$/.test(v)) throw new Error("--games " + JSON.stringify(v) + " is not a positive number");
      o.games = Number(v);
    } else o[k] = v;
  }
  for (const k of ["nats", "emitter", "key"]) if (!o[k]) throw new Error("--" + k + " is required");
  if (o.player && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(o.player)) throw new Error("--player " + JSON.stringify(o.player) + " is not a lower-case UUID");
  if (o.clockStart && isNaN(Date.parse(o.clockStart))) throw new Error("--clock-start " + JSON.stringify(o.clockStart) + " is not an RFC 3339 time");
  const replay = o.clockStart !== "" || o.relays.length > 0;
  o.schemeList = (o.schemes || (replay ? "tavlarena-v1,anchored-v1,per-roll-v1" : "tavlarena-v1,per-roll-v1")).split(",");
  for (const s of o.schemeList) {
    if (["tavlarena-v1", "anchored-v1", "per-roll-v1"].indexOf(s) < 0) throw new Error("--schemes: unknown scheme " + JSON.stringify(s));
    if (s === "anchored-v1" && !replay) throw new Error("--schemes anchored-v1 needs a beacon source: --drand-relay URL, or --clock-start for the recorded beacons");
  }
  return o;
}

const VARIANTS = ["backgammon", "portes", "tavla", "plakoto", "fevga"];
const NAMES = [["Ayşe", "Mehmet"], ["Layla", "Omar"], ["Eleni", "Nikos"], ["Emre", "Zeynep"]];
const QUICKNET_GENESIS = 1692803367;
const RECORDED = 657413; // the recorded quicknet beacon the replay anchors to

function pick(xs) { return xs[Math.floor(Math.random() * xs.length)]; }
function uuid() { return globalThis.crypto.randomUUID(); }
function random32() { return globalThis.crypto.getRandomValues(new Uint8Array(32)); }

// playBoard rolls and moves until the game is over on the board (or a
// resignation after maxRolls), and ends it.
async function playBoard(g, roll, maxRolls) {
  for (let rolls = 0; ; ) {
    const end = g.boardEnd();
    if (end) {
      await g.end(end);
      return end;
    }
    if (rolls >= maxRolls) {
      const loser = g.legalPlays() ? g.legalPlays().seat : 0;
      const end2 = { result: "resigned", winner: 1 - loser, points: 1 };
      await g.end(end2);
      return end2;
    }
    const r = await roll();
    rolls++;
    const lp = g.legalPlays();
    if (lp) await g.move(lp.seat, pick(lp.plays));
  }
}

function endText(e) {
  if (e.winner === null) return e.result + ", no winner";
  return e.result + ": seat " + e.winner + " wins " + e.points + " point" + (e.points === 1 ? "" : "s");
}

async function main() {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write("backend.mjs: " + e.message + "\n\n" + USAGE);
    return 2;
  }
  if (o.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const signer = await loadSigner(o.key);
  if (signer.name !== o.emitter) throw new Error("the event key " + o.key + " is emitter " + JSON.stringify(signer.name) + "'s, not " + JSON.stringify(o.emitter) + "'s");
  const seed = o.nkey ? new TextDecoder().decode(await readSecretFile(o.nkey)) : undefined;

  // The clock: the real time, or with --clock-start a replay clock that
  // starts there and runs at the real rate. A replayed anchored-v1 game
  // records its beacon at the round's time (the ledger does not check the
  // beacon against its clock), then goes on at the replay clock.
  const t0 = Date.now();
  const start = o.clockStart ? Date.parse(o.clockStart) : t0;
  let beaconTime = null;
  const now = function () { return beaconTime !== null ? beaconTime : new Date(start + (Date.now() - t0)); };
  const beacons = o.clockStart ? await quicknetBeacons() : o.relays.length > 0 ? new Relay(o.relays) : null;

  const nc = await dial(o.nats, o.emitter, { nkeySeed: seed });
  const client = new Client(nc, { emitter: o.emitter, logKey: o.logKey || undefined });
  const backend = new Backend(client, { signer: signer, now: now, publishSeatNames: o.publishSeatNames });
  const pages = o.pages.replace(/\/+$/, "");
  process.stdout.write("emitter " + signer.vkey + " (its line for zarlog serve --emitters: this key and the public nkey keygen printed)\n");
  let failed = 0;
  for (let i = 0; i < o.games; i++) {
    const scheme = o.schemeList[i % o.schemeList.length];
    const variant = VARIANTS[i % VARIANTS.length];
    const settings = { variant: variant, moves: "logged", opening: i % 2 === 0 ? "western" : "turkish-reroll" };
    if (o.publishSeatNames) settings.seatNames = NAMES[i % NAMES.length];
    if (variant === "backgammon") settings.doublingCube = false;
    try {
      let g, end, rolls = 0;
      if (scheme === "tavlarena-v1") {
        g = await backend.newTavlarena({ seats: [o.player || uuid(), uuid()], settings: settings });
        // The players' apps send their contributions once they have seen the
        // seal code; the first roll waits for the commit's receipt.
        await g.contribute(0, random32());
        await g.contribute(1, random32());
        end = await playBoard(g, async function () { rolls++; return g.roll(); }, 400);
        await g.reveal();
      } else if (scheme === "anchored-v1") {
        let rounds;
        if (o.clockStart) {
          const current = Math.floor((Math.floor(now().getTime() / 1000) - QUICKNET_GENESIS) / 3) + 1;
          rounds = RECORDED - current;
          if (rounds < 1) throw new Error("the replay clock has passed drand round " + RECORDED + ", the recorded beacon: start it earlier");
        }
        g = await backend.newAnchored({ matchId: "match-" + uuid(), gameNo: 1, settings: settings, rounds: rounds });
        await g.token(0, "token of seat 0, game " + (i + 1));
        await g.token(1, "token of seat 1, game " + (i + 1));
        await g.receipt(1);
        await g.receipt(2); // the tokens are logged before the round exists
        if (o.clockStart) beaconTime = g.anchorTime;
        else while (Date.now() < g.anchorTime.getTime()) await new Promise(function (r) { setTimeout(r, 500); });
        try {
          await g.recordBeacon(beacons);
        } finally {
          beaconTime = null;
        }
        end = await playBoard(g, async function () { rolls++; return g.roll(); }, 400);
        await g.reveal();
      } else {
        g = await backend.newPerRoll({ settings: settings });
        end = await playBoard(g, async function () {
          // The player's app sends its second number after the commitment and
          // checks the roll the moment it is revealed.
          const before = await g.commitRoll();
          const sent = random32();
          await g.clientSecond(sent);
          const got = await g.revealRoll();
          rolls++;
          await checkRoll(before, sent, got);
          return got;
        }, 400);
      }
      const last = await g.receipt(g.events().length - 1);
      process.stdout.write("game " + (i + 1) + " " + scheme + " id " + g.id + " seal " + (g.sealCode || "-") + " audit " + pages + "/games/" + g.id +
        " (" + variant + ", " + rolls + " rolls, " + endText(end) + "; its last event logged at index " + last.index + ")\n");
    } catch (e) {
      failed++;
      process.stdout.write("game " + (i + 1) + " " + scheme + " failed: " + e.message + "\n");
    }
  }
  // Every event published is held until the ledger reports it logged or
  // refused (and published again if the stream lost it): wait for that
  // before closing, so nothing is left only in this process's memory.
  try {
    await client.waitLogged({ signal: AbortSignal.timeout(60000) });
  } catch (e) {
    process.stdout.write("not every event was reported logged within a minute (" + client.followStats().held + " held): " + e.message + "\n");
  }
  await client.close();
  await nc.close();
  process.stdout.write((o.games - failed) + " of " + o.games + " games played and logged\n");
  if (o.player) process.stdout.write("player " + pages + "/players/" + o.emitter + "/" + o.player + " (their export: " + pages + "/players/" + o.emitter + "/" + o.player + "/export)\n");
  return failed === 0 ? 0 : 1;
}

main().then(function (code) { process.exitCode = code; }, function (e) {
  process.stderr.write("backend.mjs: " + e.message + "\n");
  process.exitCode = 1;
});
