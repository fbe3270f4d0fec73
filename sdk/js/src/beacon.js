// Beacon sources for anchored-v1 games (the Go SDK's sdk/beacon.go): a
// source answers beacon(chain, round, signal) with {chain, round,
// signature, randomness} (hex). Every beacon is verified against the pinned
// quicknet chain (zarlog-verify's BLS check) before use, whatever the
// source did.

import { hex, unhex } from "zarlog-verify/src/bytes.js";
import { sha256 } from "zarlog-verify/src/sha256.js";
import { QUICKNET, verifyQuicknet } from "zarlog-verify/src/drand.js";

/** A BeaconNotYetError: the drand round is not published yet (call again at the round's time). */
export class BeaconNotYetError extends Error {
  constructor(message) { super(message); this.name = "BeaconNotYetError"; this.code = "beacon-not-yet"; }
}

/** A BadBeaconError: a beacon does not verify against the pinned chain. */
export class BadBeaconError extends Error {
  constructor(message) { super(message); this.name = "BadBeaconError"; this.code = "bad-beacon"; }
}

/** A NoBeaconError: the source does not have the round, and never will. */
export class NoBeaconError extends Error {
  constructor(message) { super(message); this.name = "NoBeaconError"; this.code = "no-beacon"; }
}

/** verifyBeacon checks that b is the quicknet beacon of round on chain; it throws a BadBeaconError otherwise. */
export async function verifyBeacon(b, chain, round) {
  if (b.chain !== chain || b.round !== round) {
    throw new BadBeaconError("bad beacon: it is round " + b.round + " of chain " + String(b.chain).slice(0, 8) + ", want round " + round + " of chain " + chain.slice(0, 8));
  }
  if (chain !== QUICKNET) throw new BadBeaconError("bad beacon: chain " + chain.slice(0, 8) + " is not drand quicknet, the chain zarlog pins");
  if (!(await verifyQuicknet(round, unhex(b.signature), sha256))) throw new BadBeaconError("bad beacon: round " + round + ": the BLS signature does not verify");
  if (hex(await sha256(unhex(b.signature))) !== b.randomness) throw new BadBeaconError("bad beacon: round " + round + ": the randomness is not SHA-256 of the signature");
}

async function beaconOf(round, signature) {
  return { chain: QUICKNET, round: round, signature: signature, randomness: hex(await sha256(unhex(signature))) };
}

/** RecordedBeacons is a source of beacons held in memory (each verified when made). */
export class RecordedBeacons {
  constructor(beacons) { this.m = new Map(beacons.map(function (b) { return [b.chain + ":" + b.round, b]; })); }

  /** create verifies beacons ({chain, round, signature, randomness}) and returns a source of them. */
  static async create(beacons) {
    for (const b of beacons) await verifyBeacon(b, b.chain, b.round);
    return new RecordedBeacons(beacons);
  }

  async beacon(chain, round) {
    const b = this.m.get(chain + ":" + round);
    if (!b) throw new NoBeaconError("zarlog-emitter: round " + round + " of chain " + chain.slice(0, 8) + ": the source does not have it");
    return Object.assign({}, b);
  }
}

/** The four real quicknet beacons of docs/SCHEMES.md §6 (rounds 8, 10, 123 and 657413). */
const QUICKNET_RECORDED = [
  [8, "a0c06b9964123d2e6036aa004c140fc301f4edd3ea6b8396a15dfd7dfd70cc0dce0b4a97245995767ab72cf59de58c47"],
  [10, "ac415e508c484053efed1c6c330e3ae0bf20185b66ed088864dac1ff7d6f927610824986390d3239dac4dd73e6f865f5"],
  [123, "b75c69d0b72a5d906e854e808ba7e2accb1542ac355ae486d591aa9d43765482e26cd02df835d3546d23c4b13e0dfc92"],
  [657413, "b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b"],
];

/** quicknetBeacons returns a source of the four real quicknet beacons, verified (tests with an injected clock). */
export async function quicknetBeacons() {
  const bs = [];
  for (const [r, s] of QUICKNET_RECORDED) bs.push(await beaconOf(r, s));
  return RecordedBeacons.create(bs);
}

/**
 * Relay is a source that fetches beacons from drand HTTP relays (the
 * relays' URLs, tried in turn): api "v2" (default) asks
 * /v2/chains/{chain}/rounds/{round}, "v1" /{chain}/public/{round}. A relay
 * that answers 404 or 425 says the round is not there yet
 * (BeaconNotYetError); a relay that serves a beacon that does not verify
 * is skipped for the next.
 */
export class Relay {
  constructor(urls, api) {
    if (!urls || urls.length === 0) throw new TypeError("zarlog-emitter: a relay needs at least one URL");
    this.urls = urls.map(function (u) { return u.replace(/\/+$/, ""); });
    this.api = api || "v2";
  }

  async beacon(chain, round, signal) {
    const errs = [];
    let notYet = false;
    for (const base of this.urls) {
      const url = this.api === "v1" ? base + "/" + chain + "/public/" + round : base + "/v2/chains/" + chain + "/rounds/" + round;
      try {
        const res = await fetch(url, { signal: signal });
        if (res.status === 404 || res.status === 425) {
          notYet = true;
          errs.push(url + ": " + res.status);
          continue;
        }
        if (!res.ok) { errs.push(url + ": HTTP " + res.status); continue; }
        const o = await res.json();
        if (typeof o.signature !== "string" || o.round !== round) { errs.push(url + ": not the beacon of round " + round); continue; }
        const b = await beaconOf(round, o.signature);
        if (typeof o.randomness === "string" && o.randomness !== b.randomness) { errs.push(url + ": its randomness is not SHA-256 of its signature"); continue; }
        await verifyBeacon(b, chain, round);
        return b;
      } catch (e) {
        if (signal && signal.aborted) throw signal.reason;
        errs.push(url + ": " + e.message);
      }
    }
    const msg = "zarlog-emitter: drand round " + round + ": " + errs.join("; ");
    throw notYet ? new BeaconNotYetError(msg) : new Error(msg);
  }
}
