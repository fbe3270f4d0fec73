// zarlog-verify: check a zarlog game's dice on the player's own device.
// See README.md for the API; index.d.ts for the types.

export { verify, fileErrorReport, render, sealCode, rollsOf, ed25519Supported, QUICKNET_PUBLIC_KEY } from "./core.js";
export { checkRollReveal, checkReceipt, verifyBeacon } from "./app.js";
export { badge } from "./badge.js";
export { catalog, langs, langIndex } from "./messages.js";
export { textReport, jsonReport } from "./report.js";
