// drand quicknet, the one chain anchored-v1 pins (package events/drand):
// its chain hash, its round times, and its beacons' BLS signatures
// (bls.js).

export { verifyQuicknet, QUICKNET_PUBLIC_KEY } from "./bls.js";

const QUICKNET = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971";
const GENESIS = 1692803367n;
const PERIOD = 3n;
function roundTimeNs(r) { return (GENESIS + (BigInt(r) - 1n) * PERIOD) * 1000000000n; }

export { QUICKNET, roundTimeNs };
